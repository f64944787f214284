"""The paper's sweeps (rar_opt.studies.experiments): the runs each experiment consists of, rows judged
by the reference simulator, determinism with and without worker processes, summaries."""

from __future__ import annotations

import dataclasses

import pytest

from rar_opt import InputError
from rar_opt.algorithms import POLICIES, run_policy
from rar_opt.bounds import completion_bounds, lower_bounds
from rar_opt.check import check
from rar_opt.instances.generate import nested_cluster, paper, with_arrivals
from rar_opt.studies.experiments import (
    EXPERIMENTS,
    KAPPAS,
    LAMBDAS,
    LOADS,
    SERVERS,
    Run,
    execute,
    load_horizon,
    run_experiment,
    summarise,
)

from ..strategies import reference_simulate

JOBS = 16
BASELINE_RUNS = [("lpt", "lpt", {}), ("sjf-oblivious", "sjf-oblivious", {})]
"""The classical baselines beside the sweeps of SJF-BCO alone (kappa, lambda)."""


def expected_runs(name: str) -> list[tuple[str, str, dict]]:
    """(label, policy, options) of one seed's runs, in order, as experiments.py documents them."""
    return {
        "policies": [(p, p, {}) for p in POLICIES],
        "kappa": [(f"kappa={k}", "sjf-bco", {"kappa": k}) for k in KAPPAS] + BASELINE_RUNS,
        "servers": [(f"{n} servers {p}", p, {}) for n in SERVERS for p in POLICIES],
        "lambda": [(f"lambda={lam:g}", "sjf-bco", {"kappa": 1, "lam": lam}) for lam in LAMBDAS] + BASELINE_RUNS,
        "load": [(f"load={x:g} {p}", p, {}) for x in LOADS for p in POLICIES],
    }[name]


@pytest.mark.parametrize("name", sorted(EXPERIMENTS))
def test_every_experiment_runs_and_is_deterministic(name: str) -> None:
    seeds = [0] if name == "load" else [0, 1]  # load: 75 runs a seed
    rows = run_experiment(name, seeds, jobs=JOBS)
    assert rows == run_experiment(name, seeds, jobs=JOBS)
    expect = expected_runs(name)
    assert [(r["seed"], r["label"], r["policy"], r["options"]) for r in rows] == [
        (s, label, policy, options) for s in seeds for label, policy, options in expect
    ]
    for row in rows[: len(expect)]:  # seed 0: every row judged independently
        if name == "servers":  # one draw on 20 servers; fewer servers are its first ones
            drawn = paper(0, jobs=JOBS, servers=20, horizon=1500)
            inst = nested_cluster(drawn, int(row["label"].split()[0]))
            assert inst.jobs == drawn.jobs and inst.cluster.servers == drawn.cluster.servers[: inst.num_servers]
        elif name == "load":  # the paper's jobs arriving at the load, seeded by the seed
            inst = with_arrivals(paper(0, jobs=JOBS, servers=20, horizon=load_horizon(JOBS)), row["load"], 0)
            assert inst.has_releases and inst.horizon == 1200 + int(inst.releases.max())
        else:
            inst = paper(0, jobs=JOBS, servers=20, horizon=1200)
        assert row["instance"] == inst.name
        result = run_policy(inst, row["policy"], seed=0, **row["options"])
        assert check(inst, result.schedule).feasible or result.exceeds_horizon  # never before a release
        completion = reference_simulate(inst, result.schedule)["completion"]
        assert row["makespan"] == max(completion) >= lower_bounds(inst).best
        assert row["avg_jct"] == pytest.approx(sum(completion) / len(completion))
        assert row["min_jct"] == min(completion)
        assert row["exceeds_horizon"] == (max(completion) > inst.horizon)
        if row["policy"] == "sjf-bco" and "kappa" in row["options"]:
            assert row["kappa"] == row["options"]["kappa"]  # the fixed kappa reached the policy
        if name == "load":
            flow = [c - job.release for c, job in zip(completion, inst.jobs, strict=True)]
            assert row["avg_flow"] == pytest.approx(sum(flow) / len(flow))
            assert row["lower_bound_makespan"] == lower_bounds(inst).best <= row["makespan"]
            bounds = completion_bounds(inst)  # the flow LP proves no more on these small instances
            assert row["lower_bound_avg_flow"] == bounds.mean_flow <= row["avg_flow"] + 1e-9
            assert row["lower_bound_avg_jct"] == bounds.mean_completion <= row["avg_jct"] + 1e-9
        else:
            assert "avg_flow" not in row  # the paper's experiments keep their rows
        best_total = lower_bounds(inst, objective="total", time_limits={"flow_lp": 10.0})
        assert row["lower_bound_total"] == best_total.best and row["lower_bound_avg_jct_by"] == best_total.best_by
        assert row["lower_bound_avg_jct"] == best_total.best / inst.num_jobs <= row["avg_jct"] + 1e-9
        assert row["lower_bound_makespan_by"] == lower_bounds(inst).best_by


def test_several_presets_run_in_turn_and_are_summarised_apart() -> None:
    presets = ["paper-literal", "contention-heavy"]
    rows = run_experiment("lambda", [0], jobs=JOBS, preset=presets)
    per_preset = [f"lambda={x:g}" for x in LAMBDAS] + [label for label, _, _ in BASELINE_RUNS]
    assert [r["preset"] for r in rows] == [p for p in presets for _ in per_preset]
    assert rows[: len(per_preset)] == run_experiment("lambda", [0], jobs=JOBS)
    summary = summarise(rows)
    assert [(s["preset"], s["label"]) for s in summary] == [(p, label) for p in presets for label in per_preset]
    assert all(s["runs"] == 1 for s in summary)
    with pytest.raises(InputError, match="each once"):
        run_experiment("lambda", [0], jobs=JOBS, preset=["paper-literal", "paper-literal"])
    with pytest.raises(InputError, match="unknown"):
        run_experiment("lambda", [0], jobs=JOBS, preset=["nope"])


def test_the_load_summary_averages_flow_and_bounds() -> None:
    rows = [
        {"preset": "p", "label": "a", "makespan": 10, "avg_jct": 6.0, "avg_flow": 4.0, "lower_bound_avg_flow": 3.0},
        {"preset": "p", "label": "a", "makespan": 20, "avg_jct": 8.0, "avg_flow": 6.0, "lower_bound_avg_flow": 5.0},
    ]
    (only,) = summarise(rows)
    assert only["mean_avg_flow"] == 5.0 and only["mean_lower_bound_avg_flow"] == 4.0 and only["mean_makespan"] == 15


def test_workers_do_not_change_results() -> None:
    assert run_experiment("kappa", [0, 3], jobs=JOBS, workers=2) == run_experiment("kappa", [0, 3], jobs=JOBS)


def test_summary_means() -> None:
    rows = [
        {"label": "a", "makespan": 10, "avg_jct": 4.0},
        {"label": "a", "makespan": 20, "avg_jct": 6.0, "exceeds_horizon": True},
        {"label": "b", "makespan": 7, "avg_jct": 3.0, "exceeds_horizon": False},
    ]
    by = {r["label"]: r for r in summarise(rows)}
    assert by["a"] == {"label": "a", "runs": 2, "beyond_horizon": 1, "mean_makespan": 15, "mean_avg_jct": 5.0}
    assert by["b"] == {"label": "b", "runs": 1, "beyond_horizon": 0, "mean_makespan": 7, "mean_avg_jct": 3.0}


def test_bad_experiment_input() -> None:
    with pytest.raises(InputError, match="unknown experiment"):
        run_experiment("nope", [0])
    with pytest.raises(InputError, match="seeds"):
        run_experiment("kappa", [])
    with pytest.raises(InputError, match="seeds"):
        run_experiment("kappa", [-1])
    with pytest.raises(InputError, match=r"^workers: must be an integer >= 1, got 0"):
        run_experiment("kappa", [0], workers=0)


def test_kappa_8_and_10_are_the_same_run() -> None:
    """The Philly sizes are 1, 2, 4, 8, 16, 32: kappa = 8 and 10 split them alike."""
    rows = {r["label"]: r for r in run_experiment("kappa", [0], jobs=JOBS)}
    assert rows["kappa=8"]["makespan"] == rows["kappa=10"]["makespan"]
    assert rows["kappa=8"]["avg_jct"] == rows["kappa=10"]["avg_jct"]


def test_a_preset_reaches_every_run() -> None:
    rows = run_experiment("lambda", [0], jobs=JOBS, preset="contention-heavy")
    assert {r["preset"] for r in rows} == {"contention-heavy"} and all(r["instance"].endswith("-heavy") for r in rows)


def test_the_average_jct_bound_is_the_flow_lp_where_it_proves_more() -> None:
    # paper-160x20-s0: the cheap completion_rank proves 19353 (120.96 per job), the flow LP
    # 21262 (132.89, what `rar-opt bounds` proves); the rows took the cheap one
    run = Run("sjf-bco", 0, 160, 20, 1200, "sjf-bco")
    row = execute(run)
    inst = paper(0, jobs=160, servers=20, horizon=1200)
    proven = lower_bounds(inst, objective="total", time_limits={"flow_lp": 10.0})
    assert proven.best_by == "flow_lp" and proven.best > lower_bounds(inst, objective="total").best
    assert (row["lower_bound_total"], row["lower_bound_avg_jct_by"]) == (proven.best, "flow_lp")
    assert row["lower_bound_avg_jct"] == pytest.approx(proven.best / inst.num_jobs)
    assert row["avg_jct"] >= row["lower_bound_avg_jct"]  # a bound, below what the schedule reaches
    longest = int(inst.bounds.rho_min.max())  # the longest job's fastest time: this instance's makespan floor
    assert (row["lower_bound_makespan"], row["lower_bound_makespan_by"]) == (longest, "longest")
    cheap = execute(dataclasses.replace(run, bound_time_limit=0.0))  # no solver bound asked: the cheap one
    cheapest = lower_bounds(inst, objective="total")
    assert (cheap["lower_bound_total"], cheap["lower_bound_avg_jct_by"]) == (cheapest.best, cheapest.best_by)
    assert cheapest.best_by == "completion_rank" and cheapest.best < proven.best


def test_the_bounds_are_computed_once_per_instance(monkeypatch: pytest.MonkeyPatch) -> None:
    import rar_opt.bounds
    import rar_opt.studies.evaluation

    calls: list[str] = []
    real = rar_opt.bounds.lower_bounds

    def counted(inst, *args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(inst.name)
        return real(inst, *args, **kwargs)

    monkeypatch.setattr(rar_opt.bounds, "lower_bounds", counted)
    monkeypatch.setattr(rar_opt.studies.evaluation, "lower_bounds", counted)  # total_bounds' own import
    rows = run_experiment("kappa", [7], jobs=JOBS, bound_time_limit=3.0)  # 9 runs on one instance
    assert len(rows) == len(KAPPAS) + 2 and len({r["instance"] for r in rows}) == 1
    assert len(calls) == 2  # the makespan's and the total's, once
    assert len({(r["lower_bound_total"], r["lower_bound_makespan"]) for r in rows}) == 1


def test_a_bad_bound_time_limit_is_refused() -> None:
    for bad in (-1.0, float("nan"), float("inf")):
        with pytest.raises(InputError, match=r"^bound_time_limit: must be a finite number of seconds >= 0"):
            run_experiment("kappa", [0], jobs=JOBS, bound_time_limit=bad)


def test_a_stop_keeps_the_runs_finished_before_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # Ctrl-C raised through run_experiment and the finished rows were lost (no -o written)
    import signal

    from rar_opt.studies.experiments import complete_seeds
    from rar_opt.support import processes

    monkeypatch.setattr(processes._STOPS, "signum", None)  # the stop below ends with this test
    seen: list[dict] = []

    def arrived(row: dict) -> None:
        seen.append(row)
        if len(seen) == len(KAPPAS) + 3:  # seed 0's 9 runs and one of seed 1's
            processes.request_stop(signal.SIGINT)

    rows = run_experiment("kappa", [0, 1], jobs=JOBS, on_row=arrived)
    assert processes.stop_requested() == signal.SIGINT
    assert rows == seen  # the run that came back after the stop (it may be cut short) is dropped
    assert [r["seed"] for r in rows] == [0] * (len(KAPPAS) + 2) + [1]
    assert complete_seeds("kappa", rows, JOBS) == {"paper-literal": [0]}


def test_a_search_stopped_by_its_wall_time_cap_is_marked() -> None:
    # pack's schedule depends on the machine when its time cap stops it: the row says so
    run = Run("pack", 0, 40, 8, 600, "pack", bound_time_limit=0.0)
    free = execute(dataclasses.replace(run, options={"iterations": 5}))
    capped = execute(dataclasses.replace(run, options={"time_limit": 1e-9}))
    assert free["time_capped"] is False and capped["time_capped"] is True
    assert "time_capped" not in execute(dataclasses.replace(run, label="sjf-bco", policy="sjf-bco"))
    by = {r["label"]: r for r in summarise([capped, {**capped, "label": "other"}, free])}
    assert by["pack"]["time_capped"] == 1 and by["other"]["time_capped"] == 1
    assert "time_capped" not in summarise([free])[0]
