"""study report (statistics, JSON, pictures) and study export (instance files, tables),
checked against the store's rows and the judge of schedules."""

from __future__ import annotations

import csv
import dataclasses
import json

import numpy as np
import pytest

from rar_opt import Instance, Schedule, check
from rar_opt.studies.executors import SerialExecutor
from rar_opt.studies.export import worst_rows
from rar_opt.studies.report import report
from rar_opt.studies.run import run_study
from rar_opt.studies.store import open_store

from ..helpers import run


@pytest.fixture(scope="module")
def store(tmp_path_factory, config):
    path = tmp_path_factory.mktemp("study") / "s.db"
    run_study(path, config, 10, SerialExecutor())
    return path


def test_report_statistics_follow_the_rows(store) -> None:
    with open_store(store) as s:
        rows = list(s.rows())
    rep = report(rows)
    assert rep.instances == 10 and rep.proven == sum(r.outputs["proven"] for r in rows)
    for name, stats in rep.policies.items():
        ratios = np.array([r.outputs["policies"][name]["ratio"] for r in rows if r.outputs["proven"]])
        assert stats.proven == len(ratios)
        assert stats.mean_ratio == pytest.approx(ratios.mean())
        assert stats.max_ratio == ratios.max() and stats.median_ratio == pytest.approx(np.median(ratios))
        assert 1.0 <= stats.mean_ci95[0] <= stats.mean_ratio <= stats.mean_ci95[1]
        assert stats.optimal_share == pytest.approx(np.mean(ratios == 1.0))
        if stats.max_ratio == 1.0:  # never suboptimal: no worst instance to name
            assert stats.worst is None
            continue
        worst = next(r for r in rows if r.outputs["instance"] == stats.worst)
        assert worst.outputs["policies"][name]["ratio"] == stats.max_ratio
    out = run("study", "report", str(store), "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert {"instances", "proven", "policies"} <= set(data)
    for stats in data["policies"].values():
        assert {"count", "optimal_share", "mean_ratio", "p95_ratio", "max_ratio", "worst"} <= set(stats)
    # every task also solves the total completion time: tiny instances prove it within the limit
    assert data["jct_proven"] == rep.jct_proven == sum(bool(r.outputs["flow"]["proven"]) for r in rows) == 10
    for name, stats in data["jct"].items():
        assert stats["mean_ratio"] == pytest.approx(rep.jct[name].mean_ratio) and stats["basis"] == "ALG/OPT"


def test_the_average_jct_side_follows_the_rows(store, capsys) -> None:
    from rar_opt.cli import main
    from rar_opt.studies.report import jct_reference

    with open_store(store) as s:
        rows = list(s.rows())
    rep = report(rows)
    refs = [jct_reference(r) for r in rows]
    assert all(ref is not None and ref.proven for ref in refs)  # each task proved the total's optimum
    for name, stats in rep.jct.items():
        avg = np.array([r.outputs["policies"][name]["avg_jct"] for r in rows])
        high = avg / np.array([ref.lower for ref in refs])  # over the optimal average JCT
        low = avg / np.array([ref.best for ref in refs])
        stored_high = np.array([r.outputs["policies"][name]["jct_ratio_high"] for r in rows])
        stored_low = np.array([r.outputs["policies"][name]["jct_ratio_low"] for r in rows])
        cheap = avg / np.array([r.outputs["lower_bound_avg_jct"] for r in rows])  # the cheap bounds alone
        assert stats.count == stats.bounded == stats.proven == len(rows) and stats.basis == "ALG/OPT"
        assert stats.mean_ratio == pytest.approx(high.mean()) and stats.max_ratio == pytest.approx(high.max())
        assert stats.median_ratio == pytest.approx(np.median(high))
        assert stats.mean_ratio_best == pytest.approx(low.mean()) == pytest.approx(high.mean())  # proven: one value
        assert stats.best_share == pytest.approx(np.mean(np.isclose(low, 1.0)))
        assert high.min() >= 1.0 and np.all(cheap >= high - 1e-9)  # the cheap bound is weaker than the optimum
        # the rows store the ratios the report computes: over the same reference, not the cheap bound
        assert stored_high == pytest.approx(high) and stored_low == pytest.approx(low)
        if stats.max_ratio <= 1.0 + 1e-9:  # never above its reference: no worst instance, as for the makespan
            assert stats.worst is None
            continue
        worst = next(r for r in rows if r.outputs["instance"] == stats.worst)
        assert worst.outputs["policies"][name]["avg_jct"] / jct_reference(worst).lower == pytest.approx(stats.max_ratio)
    assert main(["study", "report", str(store)]) == 0
    text = capsys.readouterr().out
    assert "JCT vs" in text and "over the proven optimum on 10 of 10 instances" in text
    line = next(t for t in text.splitlines() if t.startswith("sjf-bco "))
    assert " OPT " in line and f"{rep.jct['sjf-bco'].mean_ratio:.4f}" in line


def test_each_picture_is_a_png(store, tmp_path) -> None:
    pytest.importorskip("matplotlib")
    from rar_opt.studies.plots import ecdf, ratio_vs_parameters, worst_gantt

    with open_store(store) as s:
        rows = list(s.rows())
    row, policy, _ = worst_rows(rows, 1)[0]
    for draw, name in ((ecdf, "e.png"), (ratio_vs_parameters, "r.png")):
        draw(rows, tmp_path / name)
    worst_gantt(row, policy, tmp_path / "w.png")
    for name in ("e.png", "r.png", "w.png"):
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_plots_are_written(store, tmp_path) -> None:
    pytest.importorskip("matplotlib")
    out = run("study", "report", str(store), "--plots", str(tmp_path / "pics"))
    assert out.returncode == 0, out.stderr
    pictures = sorted(p.name for p in (tmp_path / "pics").iterdir())
    assert "ecdf.png" in pictures and "ratio-vs-parameters.png" in pictures
    assert any(p.startswith("worst-") for p in pictures)
    assert "provenance.json" in pictures
    for p in (tmp_path / "pics").glob("*.png"):
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_export_writes_the_worst_instances_with_both_schedules(store, tmp_path) -> None:
    out = run("study", "export", str(store), "--worst", "3", "-o", str(tmp_path / "worst"),
              "--tables", str(tmp_path / "tables"))  # fmt: skip
    assert out.returncode == 0, out.stderr
    with open_store(store) as s:
        rows = list(s.rows())
    expected = worst_rows(rows, 3)
    files = [tmp_path / "worst" / f"{r.outputs['instance']}.json" for r, _, _ in expected]
    assert sorted(p.name for p in (tmp_path / "worst").iterdir()) == sorted(p.name for p in files)
    ratios = [ratio for _, _, ratio in expected]
    assert ratios == sorted(ratios, reverse=True)
    assert ratios[0] == max(max(p["ratio"] for p in r.outputs["policies"].values()) for r in rows)
    for path, (_, policy, ratio) in zip(files, expected, strict=True):
        inst = Instance.read(path)
        study = inst.meta["study"]
        mine = check(inst, Schedule.from_dict(study["schedules"][policy])).result.makespan
        best = check(inst, Schedule.from_dict(study["schedules"]["optimum"])).result.makespan
        assert best == study["optimum"] == inst.meta["known_optimum"]
        assert mine / best == pytest.approx(ratio) == study["ratio"]
    with (tmp_path / "tables" / "policies.csv").open() as f:
        table = list(csv.DictReader(f))
    assert len(table) == sum(len(r.outputs["policies"]) for r in rows)


def test_export_says_when_the_store_has_fewer_worst_instances_than_asked(store, tmp_path) -> None:
    with open_store(store) as s:
        proven = len(worst_rows(list(s.rows()), 10**6))
    out = run("study", "export", str(store), "--worst", str(proven + 5), "-o", str(tmp_path / "worst"))
    assert out.returncode == 0, out.stderr
    assert f"the store has {proven} proven instance(s): writing {proven} of the {proven + 5} asked" in out.stdout
    assert len(list((tmp_path / "worst").iterdir())) == proven


def test_export_of_a_store_with_no_proven_instance_makes_no_directory(store, tmp_path) -> None:
    from rar_opt.studies.export import export_worst

    with open_store(store) as s:
        rows, config = list(s.rows()), s.config
    unproven = [dataclasses.replace(r, outputs={**r.outputs, "proven": False}) for r in rows]
    assert export_worst(unproven, 2, tmp_path / "worst", str(store), config) == []
    assert not (tmp_path / "worst").exists()
    assert export_worst(rows, 1, tmp_path / "worst", str(store), config)  # with a proven one it writes


def test_export_needs_a_target(store) -> None:
    out = run("study", "export", str(store), "--worst", "2")
    assert out.returncode == 2 and "-o DIR" in out.stderr


def test_a_bad_count_of_worst_instances_makes_no_directory(store, tmp_path) -> None:
    out = run("study", "export", str(store), "--worst", "0", "-o", str(tmp_path / "worst"))
    assert out.returncode == 2 and "--worst" in out.stderr and "Traceback" not in out.stderr
    assert not (tmp_path / "worst").exists()


def _row(i: int, proven: bool, ratio: float, low: float, high: float, name: str = "ls"):
    from rar_opt.studies.store import TaskRow

    policy = {"ratio": ratio if proven else None, "ratio_low": low, "ratio_high": high, "optimal": ratio == 1.0}
    outputs = {"instance": f"i{i}", "proven": proven, "policies": {name: policy}, "theorem5_bound": 3.0}
    return TaskRow(f"k{i}", i, {"seed": i}, outputs, {}, 0.0, 0.0)


def test_unproven_instances_are_counted_apart() -> None:
    rows = [_row(0, True, 1.0, 1.0, 1.0), _row(1, True, 1.5, 1.5, 1.5), _row(2, False, 0, 1.1, 1.9)]
    stats = report(rows).policies["ls"]
    assert (stats.count, stats.proven, stats.unproven) == (3, 2, 1)
    assert stats.max_ratio == 1.5 and stats.mean_ratio == 1.25 and stats.optimal_share == 0.5
    assert stats.unproven_ratio_range == (1.1, 1.9)  # never mixed into the proven statistics
    assert stats.worst == "i1" and stats.theorem5_at_worst is None  # Theorem 5 is SJF-BCO's claim, not ls's
    sjf = [_row(0, True, 1.0, 1.0, 1.0, "sjf-bco"), _row(1, True, 1.5, 1.5, 1.5, "sjf-bco")]
    assert report(sjf).policies["sjf-bco"].theorem5_at_worst == 3.0
    assert report(rows[:1]).policies["ls"].worst is None  # optimal everywhere: no worst instance
    jct = report(rows).jct["ls"]  # rows without an average JCT (an older store): nothing to say
    assert (jct.count, jct.bounded, jct.basis, jct.mean_ratio) == (3, 0, None, None)


def test_the_interval_of_two_ratios_is_cut_at_1_and_otherwise_students() -> None:
    from scipy import stats

    from rar_opt.studies.report import ci95

    two = np.array([1.0, 1.34])  # Student's t with one degree of freedom reaches below 0
    low, high = stats.t.interval(0.95, 1, loc=two.mean(), scale=stats.sem(two))
    assert low < 0 and ci95(two) == (1.0, pytest.approx(high))
    many = np.array([1.2, 1.3, 1.25, 1.22, 1.28])
    expected = stats.t.interval(0.95, 4, loc=many.mean(), scale=stats.sem(many))
    assert expected[0] > 1 and ci95(many) == pytest.approx(expected)
    assert ci95(np.array([1.1])) == (1.1, 1.1)


def test_a_tiny_store_measures_the_average_jct_against_its_proven_optimum(store) -> None:
    from rar_opt.studies.report import JCT_OPT, jct_reference

    with open_store(store) as s:
        rows = list(s.rows())
    for r in rows:
        flow = r.outputs["flow"]  # every generated task solves the total (no releases: flow = total)
        ref = jct_reference(r)
        assert ref is not None and ref.lower is not None and ref.lower <= ref.best
        if flow["proven"]:
            optimum = flow["optimum"] / r.outputs["jobs"]
            assert ref.proven and ref.lower == pytest.approx(optimum) == pytest.approx(ref.best)
            for name, p in r.outputs["policies"].items():  # no policy beats the proven optimum
                assert p["avg_jct"] >= optimum - 1e-9, name
    rep = report(rows)
    assert rep.flow == {}  # the flow section is the arrival families'; here it is the JCT columns
    assert rep.jct_proven == sum(bool(r.outputs["flow"]["proven"]) for r in rows) > 0
    if rep.jct_proven == len(rows):
        assert all(j.basis == JCT_OPT for j in rep.jct.values() if j.mean_ratio is not None)


def test_a_bound_that_a_policy_meets_proves_the_optimum_without_a_solve() -> None:
    from rar_opt.instances.library import instance_path
    from rar_opt.studies.evaluation import evaluate

    inst = Instance.read(instance_path("tiny-4x2-s13"))
    ev = evaluate(inst, ("sjf-bco", "lpt", "pack"))  # no exact method: the floors and the policies only
    assert ev.solve is None and ev.bounds.best == min(r.makespan for r in ev.runs.values())
    assert ev.optimum == ev.lower == ev.best == 5  # the library's proven optimum
    assert ev.ratios("lpt")["ratio"] == ev.runs["lpt"].makespan / 5


@pytest.mark.parametrize("where", ["a-file", "missing/pics"])
def test_a_plots_path_that_cannot_be_a_folder_is_refused_before_the_report(store, tmp_path, capsys, where) -> None:
    # the report was printed, then "note: no pictures ...", exit 0
    from rar_opt.cli import main

    (tmp_path / "a-file").write_text("not a folder")
    target = tmp_path / where
    assert main(["study", "report", str(store), "--plots", str(target)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(f"error: {target}: --plots: ") and err.count("\n") == 1, err
    expected = "is not a directory" if where == "a-file" else "does not exist"
    assert expected in err and (tmp_path / "a-file").read_text() == "not a folder"
    assert not (tmp_path / "missing").exists()


def test_export_refuses_a_tables_path_before_writing_any_instance(store, tmp_path, capsys) -> None:
    from rar_opt.cli import main

    (tmp_path / "a-file").write_text("")
    argv = ["study", "export", str(store), "--worst", "2", "-o", str(tmp_path / "worst"), "--tables"]
    assert main([*argv, str(tmp_path / "a-file")]) == 2
    assert "--tables: is not a directory" in capsys.readouterr().err
    assert not (tmp_path / "worst").exists()  # nothing half-written: the instance files came first


def test_a_policy_never_above_its_jct_reference_has_no_worst_instance() -> None:
    # the JCT side named an instance at a max ratio of 1.0; the makespan side names none
    from rar_opt.studies.store import TaskRow

    def row(i: int, avg: float) -> TaskRow:
        policy = {"makespan": 10, "avg_jct": avg, "ratio": 1.0, "ratio_low": 1.0, "ratio_high": 1.0, "optimal": True}
        outputs = {"instance": f"i{i}", "jobs": 4, "proven": True, "lower_bound_avg_jct": 5.0, "best_avg_jct": 5.0}
        return TaskRow(f"k{i}", i, {"seed": i}, {**outputs, "policies": {"ls": policy}}, {}, 0.0, 0.0)

    rep = report([row(0, 5.0), row(1, 5.0)])
    assert rep.policies["ls"].worst is None and rep.jct["ls"].max_ratio == 1.0 and rep.jct["ls"].worst is None
    assert report([row(0, 5.0), row(1, 6.0)]).jct["ls"].worst == "i1"
