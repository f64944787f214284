"""What a study report records to be reproduced: family, generator ranges, seeds, count,
method, time limit, versions; the worst-case warning; captions and a provenance file
beside the pictures, also for a store where no optimum is proven."""

from __future__ import annotations

import json

import pytest

from rar_opt._version import __version__
from rar_opt.instances.generate import GENERATOR_RANGES
from rar_opt.studies.executors import SerialExecutor
from rar_opt.studies.report import WORST_CASE_WARNING, describe
from rar_opt.studies.run import StudyConfig, run_study
from rar_opt.studies.store import TaskRow

from ..helpers import run


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    path = tmp_path_factory.mktemp("prov") / "s.db"
    run_study(
        path,
        StudyConfig(family="tiny", seed=40, jobs=3, time_limit=5.0, policies=("sjf-bco", "ff")),
        3,
        SerialExecutor(),
    )
    return path


def test_report_json_describes_the_study(small) -> None:
    out = run("study", "report", str(small), "--json")
    assert out.returncode == 0, out.stderr
    about = json.loads(out.stdout)["provenance"]
    assert about["family"] == "tiny" and about["count"] == 3 and about["seed_range"] == [40, 42]
    assert (
        about["method"] == "auto"
        and about["time_limit"] == 5.0
        and about["policies"]
        == [
            "sjf-bco",
            "ff",
            "sjf-oblivious",
            "lpt",
        ]
    )  # the classical baselines always run
    # the configuration fixed the jobs; the servers keep the generator's range
    assert about["generator_ranges"]["jobs"] == 3
    assert about["generator_ranges"]["servers"] == GENERATOR_RANGES["tiny"]["servers"]
    assert about["observed_ranges"]["jobs"] == [3, 3]
    assert about["created_with"]["rar-opt"] == __version__
    assert len(about["computed_with"]) == 1 and about["computed_with"][0]["python"]
    assert about["reported_with"]["packages"]["highspy"]
    assert "warning" not in about


def test_report_text_heads_with_the_study(small) -> None:
    out = run("study", "report", str(small))
    assert out.returncode == 0, out.stderr
    head = out.stdout.splitlines()[:3]
    assert head[0].startswith("family tiny: jobs 3, servers 1-4")
    assert "3 instances, seeds 40-42, method auto, time limit 5.0 s" in head[1]
    assert f"store created with rar-opt {__version__}" in head[2] and "reported with rar-opt" in head[2]
    assert "WARNING" not in out.stdout


def test_a_worst_case_store_warns(tmp_path) -> None:
    store = tmp_path / "w.db"
    made = run(
        "study",
        "worst",
        str(store),
        "--policy",
        "ff",
        "--family",
        "tiny",
        "--evaluations",
        "3",
        "--batch",
        "3",
        "--initial",
        "3",
        "--elite",
        "1",
        "--time-limit",
        "5",
    )
    assert made.returncode == 0, made.stderr
    text = run("study", "report", str(store))
    assert text.returncode == 0 and f"WARNING: {WORST_CASE_WARNING}" in text.stdout
    as_json = run("study", "report", str(store), "--json")
    assert json.loads(as_json.stdout)["provenance"]["warning"] == WORST_CASE_WARNING
    assert WORST_CASE_WARNING in as_json.stderr  # the JSON stays clean; the warning is on stderr


def _unproven(i: int) -> TaskRow:
    policy = {"ratio": None, "ratio_low": 1.0, "ratio_high": 1.2 + 0.1 * i, "optimal": None, "contention_share": 0.1}
    outputs = {"instance": f"i{i}", "proven": False, "jobs": 3 + i, "policies": {"ls": policy}}
    return TaskRow(f"k{i}", i, {"seed": i}, outputs, {}, 0.0, 0.0)


def test_an_unproven_study_draws_alg_over_the_lower_bound(tmp_path) -> None:
    pytest.importorskip("matplotlib")
    from rar_opt.studies.plots import write_plots

    rows = [_unproven(i) for i in range(3)]
    about = describe("study", {"family": "tiny", "method": "auto", "time_limit": 1.0, "policies": ["ls"]}, rows, {})
    written = write_plots(rows, tmp_path / "pics", about)
    names = sorted(p.name for p in written)
    assert names == ["ecdf.png", "provenance.json", "ratio-vs-parameters.png"]  # no optimum: no worst charts
    record = json.loads((tmp_path / "pics" / "provenance.json").read_text())
    assert record["study"]["seed_range"] == [0, 2] and record["drawn_with"]["rar-opt"] == __version__
    assert record["caption"].startswith("study: family tiny, 3 instances, seeds 0-2, method auto")


def test_describe_marks_a_search() -> None:
    about = describe("worst", {"family": "tiny", "strategy": "evolve", "objective": "ratio"}, [], {})
    assert about["warning"] == WORST_CASE_WARNING and about["search"]["strategy"] == "evolve"
    assert about["seed_range"] is None and about["count"] == 0
