"""The classical baselines beside a worst-case search's verdict: judged at report time on
the instances the search reports (never stored, the search unchanged), through the studies'
own judge, against the proven optimum (makespan) and the best average-JCT lower bound."""

from __future__ import annotations

import dataclasses
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rar_opt.algorithms import BASELINES, with_baselines
from rar_opt.cli import main
from rar_opt.instances.generate import tiny
from rar_opt.studies.beside import JUDGED, STORED, beside
from rar_opt.studies.executors import SerialExecutor
from rar_opt.studies.run import StudyConfig
from rar_opt.studies.store import TaskRow
from rar_opt.studies.tasks import instance_inputs, run_task
from rar_opt.studies.worst import WorstConfig, best_so_far, open_search, search

from .conftest import digest, proven_digest

SEARCH = ["--family", "tiny", "--seed", "5", "--evaluations", "10", "--batch", "4", "--initial", "4"]
SEARCH += ["--time-limit", "5", "--quiet"]
TOL = 1e-9


def _config() -> WorstConfig:
    return WorstConfig(
        StudyConfig(family="tiny", seed=5, policies=("sjf-bco",), time_limit=5.0), "evolve", batch=4, initial=4
    )


def _row(inputs: dict) -> TaskRow:
    """The stored row of the task of ``inputs``, as a store gives it back."""
    result = run_task(inputs)
    return TaskRow(result.key, 0, inputs, result.outputs, result.wall_s, result.timing, result.versions)


def _check_both_metrics(at) -> None:  # type: ignore[no-untyped-def]
    """Every run within T is at least the optimum (makespan) and at least the bound (JCT)."""
    for run in at.runs:
        if not run.feasible:
            continue
        if at.proven:
            assert run.ratio == run.makespan / at.optimum and run.ratio >= 1.0
        assert run.ratio_high >= 1.0 - TOL and run.ratio_low <= run.ratio_high + TOL
        assert run.jct_ratio_high is not None and run.jct_ratio_high >= 1.0 - TOL  # over a lower bound
        assert run.jct_ratio_low is not None and run.jct_ratio_low <= run.jct_ratio_high + TOL


def test_the_search_and_its_store_are_the_same_with_the_baselines_beside(tmp_path, capsys) -> None:
    # the command (which judges the baselines at the worst instance) against the bare search
    assert main(["study", "worst", str(tmp_path / "cli.db"), "--policy", "sjf-bco", *SEARCH, "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    config = _config()
    with open_search(tmp_path / "bare.db", config) as store:
        bare = search(store, config, 10, SerialExecutor())
    assert record["best_so_far"] == best_so_far(bare)
    assert record["worst_fitness"] == bare.worst.fitness and record["found_at"] == bare.worst.index
    # nothing more stored, nothing else; of two separate runs' solves, only what is proven is
    # compared (which optimal schedule a 5-s auto returns, among equal ones, is the machine's)
    assert proven_digest(tmp_path / "cli.db") == proven_digest(tmp_path / "bare.db")
    # reporting them (text and JSON) stores nothing either, and the search resumes as before
    before = digest(tmp_path / "cli.db")
    assert main(["study", "report", str(tmp_path / "cli.db")]) == 0
    assert main(["study", "report", str(tmp_path / "cli.db"), "--json"]) == 0
    capsys.readouterr()
    assert digest(tmp_path / "cli.db") == before
    with open_search(tmp_path / "cli.db", config) as store:
        again = search(store, config, 10, SerialExecutor())
    assert again.computed == 0
    assert [(e.key, e.fitness, e.parent) for e in again.evaluations] == [
        (e.key, e.fitness, e.parent) for e in bare.evaluations
    ]


def test_the_worst_case_report_shows_the_baselines_on_both_metrics(tmp_path, capsys) -> None:
    path = tmp_path / "w.db"
    assert main(["study", "worst", str(path), "--policy", "ff", *SEARCH, "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    at = record["beside_worst"]
    assert at["instance"] == record["worst_instance"] and at["policy"] == "ff"
    assert list(at["runs"]) == ["ff", "lpt", "sjf-oblivious"]  # the policy, then the baselines (makespan, JCT)
    assert at["runs"]["ff"]["source"] == STORED and at["runs"]["ff"]["ratio"] == record["worst_ratio"]
    assert at["runs"]["lpt"]["baseline_for"] == ["makespan"]
    assert at["runs"]["sjf-oblivious"]["baseline_for"] == ["avg_jct"]
    assert at["proven"] and at["jct_lower"] > 0
    for name in BASELINES.values():
        run = at["runs"][name]
        assert run["source"] == JUDGED and run["feasible"]
        assert run["ratio"] == run["makespan"] / at["optimum"] >= 1.0  # against the proven optimum
        assert run["jct_ratio_high"] == run["avg_jct"] / at["jct_lower"] >= 1.0 - TOL  # against the bound
    # the text: one table row per policy, with its ALG/OPT and its JCT ratio
    assert main(["study", "worst", str(path), "--policy", "ff", *SEARCH]) == 0
    out = capsys.readouterr().out
    names = ("ff", *BASELINES.values())
    lines = {line.split()[0]: line for line in out.splitlines() if line.split()[:1] and line.split()[0] in names}
    for name in names:
        assert f"{at['runs'][name]['ratio']:.4f}" in lines[name]
        assert f"{at['runs'][name]['jct_ratio_high']:.4f}" in lines[name]
    assert "makespan against OPT" in out and ("JCT vs OPT" if at["jct_proven"] else "JCT vs bound") in out
    # study report of the search's store: the baselines at the table's worst instance
    assert main(["study", "report", str(path)]) == 0
    out = capsys.readouterr().out
    assert "runs its one policy" not in out and "the table is ff's alone" in out
    assert "baseline, makespan" in out and "baseline, average JCT" in out
    assert main(["study", "report", str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["beside_worst"]["instance"] == report["policies"]["ff"]["worst"]
    assert set(report["beside_worst"]["runs"]) == {"ff", *BASELINES.values()}


def test_the_exported_worst_instances_carry_the_baselines(tmp_path, capsys) -> None:
    path = tmp_path / "w.db"
    assert main(["study", "worst", str(path), "--policy", "sjf-bco", *SEARCH, "-o", str(tmp_path / "w.json")]) == 0
    assert main(["study", "export", str(path), "--worst", "2", "-o", str(tmp_path / "out")]) == 0
    capsys.readouterr()
    files = sorted((tmp_path / "out").glob("*.json"))
    assert len(files) == 2
    for spelling in ("--output", "--dir"):  # -o's long form, as in every command, and its older spelling
        assert main(["study", "export", str(path), "--worst", "2", spelling, str(tmp_path / spelling[2:])]) == 0
        assert sorted(p.name for p in (tmp_path / spelling[2:]).glob("*.json")) == [f.name for f in files]
    capsys.readouterr()
    for file in [*files, tmp_path / "w.json"]:
        study = json.loads(file.read_text())["meta"]["study"]
        at = study["beside"]
        assert at["key"] == study["key"] and set(at["runs"]) == {"sjf-bco", *BASELINES.values()}
        assert at["runs"]["sjf-bco"]["ratio"] == study["ratio"]
        assert all(at["runs"][b]["ratio"] >= 1.0 for b in BASELINES.values())


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 5_000), policy=st.sampled_from(["sjf-bco", "ff", "rand", "lpt"]))
def test_the_baselines_judged_now_are_what_a_study_task_stores(seed: int, policy: str) -> None:
    instance = tiny(seed)
    alone = _row(instance_inputs(instance, (policy,), "auto", 5.0, 0))  # a search's candidate
    every = run_task(instance_inputs(instance, tuple(with_baselines([policy])), "auto", 5.0, 0)).outputs  # a study's
    at = beside(alone, policy, 5.0)
    _check_both_metrics(at)
    assert at.run(policy).source == STORED
    for name in with_baselines([policy]):
        run, stored = at.run(name), every["policies"][name]
        assert (run.makespan, run.avg_jct, run.feasible) == (stored["makespan"], stored["avg_jct"], stored["feasible"])
        if name != policy:
            assert run.source == JUDGED
        if at.proven and every["proven"] and run.feasible:
            assert run.ratio == stored["ratio"]  # the same optimum, the same definition
    # a row that has every baseline already (a study's) judges nothing anew
    full = TaskRow("k", 0, instance_inputs(instance, (), "auto", 5.0, 0), every, 0.0, {}, {})
    assert all(r.source == STORED for r in beside(full, policy, 5.0).runs)


def test_an_unproven_row_gives_every_run_a_range_around_the_true_ratio() -> None:
    row = _row(instance_inputs(tiny(11), ("sjf-bco",), "auto", 5.0, 0))
    proven = beside(row, "sjf-bco", 5.0)
    assert proven.proven
    opt = proven.optimum
    # the same row as if the solve had stopped with a bound one below OPT and no better schedule than OPT + 1
    assert opt >= 2
    weaker = {**row.outputs, "proven": False, "optimum": None, "lower_bound": opt - 1, "best_makespan": opt + 1}
    at = beside(dataclasses.replace(row, outputs=weaker), "sjf-bco", 5.0)
    assert not at.proven and at.optimum is None and at.lower_bound == opt - 1
    assert opt <= at.best_makespan <= opt + 1  # a baseline's shorter schedule lowers the best known
    for run in at.runs:
        assert run.ratio is None and run.feasible
        true = run.makespan / opt
        assert run.ratio_low <= true + TOL and run.ratio_high >= true - TOL
