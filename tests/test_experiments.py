from __future__ import annotations

import json

import pytest

from rar_opt import InputError
from rar_opt.experiments import EXPERIMENTS, run_experiment, summarise

from .test_cli import run


@pytest.mark.parametrize("name", sorted(EXPERIMENTS))
def test_every_experiment_runs_and_is_deterministic(name: str) -> None:
    rows = run_experiment(name, [0, 1], jobs=16)
    assert rows == run_experiment(name, [0, 1], jobs=16)
    assert {r["seed"] for r in rows} == {0, 1}
    for row in rows:
        assert row["makespan"] is None or row["makespan"] >= 1


def test_workers_do_not_change_results() -> None:
    assert run_experiment("kappa", [0, 3], jobs=16, workers=2) == run_experiment("kappa", [0, 3], jobs=16)


def test_summary_means() -> None:
    rows = [
        {"label": "a", "makespan": 10, "avg_jct": 4.0},
        {"label": "a", "makespan": 20, "avg_jct": 6.0},
        {"label": "b", "makespan": None, "avg_jct": None},
    ]
    by = {r["label"]: r for r in summarise(rows)}
    assert by["a"]["mean_makespan"] == 15 and by["a"]["mean_avg_jct"] == 5.0 and by["a"]["runs"] == 2
    assert by["b"]["failed"] == 1 and by["b"]["mean_makespan"] is None


def test_bad_experiment_input() -> None:
    with pytest.raises(InputError):
        run_experiment("nope", [0])
    with pytest.raises(InputError):
        run_experiment("kappa", [])


def test_cli_writes_a_result_file_with_versions(tmp_path) -> None:
    out = run("experiment", "lambda", "--seeds", "0", "--jobs", "16", "-o", str(tmp_path / "r.json"))
    assert out.returncode == 0, out.stderr
    record = json.loads((tmp_path / "r.json").read_text())
    assert record["versions"]["rar-opt"] and record["seeds"] == [0]
    assert len(record["runs"]) == 4 and "lambda=8" in out.stdout
