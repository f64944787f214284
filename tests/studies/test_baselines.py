"""The classical baselines in every study: longest first (the makespan's) and shortest first
(the average JCT's) run whatever the policies asked, and a store made before they were
always run is refused by ``study run`` in so many words, while ``study report`` still
reads it and says what it lacks."""

from __future__ import annotations

import json

import pytest

from rar_opt import InputError
from rar_opt.algorithms import BASELINES
from rar_opt.cli import main
from rar_opt.studies.executors import SerialExecutor
from rar_opt.studies.run import STUDY_KIND, StudyConfig, open_study, run_study
from rar_opt.studies.store import open_store
from rar_opt.studies.tasks import run_task

ASKED = ("sjf-bco",)
ARGS = ["--family", "tiny", "--seed", "300", "--count", "2", "--time-limit", "5", "--policies", *ASKED, "--quiet"]


def _old_store(path) -> None:
    """A store as ``study run --policies sjf-bco`` made it before the baselines were always
    run: its configuration lists the policy asked alone (one row is enough)."""
    old = StudyConfig(family="tiny", seed=300, policies=ASKED, time_limit=5.0)
    with open_store(path, STUDY_KIND, old.to_dict()) as store:
        done = run_task(old.inputs(1)[0])
        store.add(done.key, 0, old.inputs(1)[0], done.outputs, done.wall_s, done.timing, done.versions)


def test_a_study_of_one_policy_runs_the_baselines_too(tmp_path) -> None:
    path = tmp_path / "s.db"
    run_study(path, StudyConfig(family="tiny", seed=300, policies=ASKED, time_limit=5.0), 2, SerialExecutor())
    with open_store(path) as store:
        assert store.config["policies"] == ["sjf-bco", "sjf-oblivious", "lpt"]  # in registry order
        assert all(set(r.outputs["policies"]) == {"sjf-bco", *BASELINES.values()} for r in store.rows())
    # the same configuration opens it again and extends it (the baselines are added alike)
    summary = run_study(path, StudyConfig(family="tiny", seed=300, policies=ASKED, time_limit=5.0), 3, SerialExecutor())
    assert (summary.already, summary.computed) == (2, 1)


def test_the_report_says_the_baselines_always_run(tmp_path, capsys) -> None:
    path = tmp_path / "s.db"
    assert main(["study", "run", str(path), *ARGS]) == 0
    out = capsys.readouterr().out
    rows = {line.split()[0] for line in out.splitlines() if line[:1].isalpha()}
    assert {"sjf-bco", "lpt", "sjf-oblivious"} <= rows, out
    assert "always run, whatever --policies: the classical baselines lpt (longest first" in out
    assert main(["study", "report", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["baselines"] == {"makespan": "lpt", "avg_jct": "sjf-oblivious"} and data["missing_baselines"] == []
    assert set(data["jct"]) == set(data["policies"]) == {"sjf-bco", "lpt", "sjf-oblivious"}


def test_a_store_made_before_the_baselines_is_refused_clearly(tmp_path, capsys) -> None:
    path = tmp_path / "old.db"
    _old_store(path)
    before = path.read_bytes()
    assert main(["study", "run", str(path), *ARGS]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}: was made with the policies sjf-bco, before studies always ran the classical")
    assert "(missing: sjf-oblivious, lpt)" in err and "new store file" in err and err.count("\n") == 1
    with open_store(path) as store:  # untouched: its one row and its configuration
        assert store.count() == 1 and store.config["policies"] == ["sjf-bco"]
    assert path.read_bytes() == before
    with pytest.raises(InputError, match="before studies always ran the classical baselines"):
        open_study(path, StudyConfig(family="tiny", seed=300, policies=ASKED, time_limit=5.0))
    # another configuration is still told by its first difference
    with pytest.raises(InputError, match="another configuration"):
        open_study(path, StudyConfig(family="tiny", seed=301, policies=ASKED, time_limit=5.0))


def test_the_report_of_a_store_without_baselines_says_so(tmp_path, capsys) -> None:
    path = tmp_path / "old.db"
    _old_store(path)
    assert main(["study", "report", str(path)]) == 0
    out = capsys.readouterr().out
    assert "note: this store has no row of the classical baseline(s) lpt, sjf-oblivious" in out
    assert "made before studies always ran them" in out
    assert main(["study", "report", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["missing_baselines"] == ["lpt", "sjf-oblivious"]


def test_a_worst_case_search_keeps_its_one_policy() -> None:
    from rar_opt.studies.worst import WorstConfig

    config = WorstConfig(StudyConfig(family="tiny", seed=5, policies=("ff",), time_limit=5.0))
    assert config.to_dict()["policies"] == ["ff"] and config.policy == "ff"
