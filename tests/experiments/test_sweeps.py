"""The paper's sweeps (rar_opt.experiments): the runs each experiment consists of, rows judged
by the reference simulator, determinism with and without worker processes, summaries."""

from __future__ import annotations

import pytest

from rar_opt import InputError
from rar_opt.algorithms import POLICIES, run_policy
from rar_opt.bounds import lower_bounds
from rar_opt.experiments import EXPERIMENTS, KAPPAS, LAMBDAS, SERVERS, run_experiment, summarise
from rar_opt.generate import nested_cluster, paper

from ..strategies import reference_simulate

JOBS = 16


def expected_runs(name: str) -> list[tuple[str, str, dict]]:
    """(label, policy, options) of one seed's runs, in order, as experiments.py documents them."""
    return {
        "policies": [(p, p, {}) for p in POLICIES],
        "kappa": [(f"kappa={k}", "sjf-bco", {"kappa": k}) for k in KAPPAS],
        "servers": [(f"{n} servers {p}", p, {}) for n in SERVERS for p in POLICIES],
        "lambda": [(f"lambda={lam:g}", "sjf-bco", {"kappa": 1, "lam": lam}) for lam in LAMBDAS],
    }[name]


@pytest.mark.parametrize("name", sorted(EXPERIMENTS))
def test_every_experiment_runs_and_is_deterministic(name: str) -> None:
    rows = run_experiment(name, [0, 1], jobs=JOBS)
    assert rows == run_experiment(name, [0, 1], jobs=JOBS)
    expect = expected_runs(name)
    assert [(r["seed"], r["label"], r["policy"], r["options"]) for r in rows] == [
        (s, label, policy, options) for s in (0, 1) for label, policy, options in expect
    ]
    for row in rows[: len(expect)]:  # seed 0: every row judged independently
        if name == "servers":  # one draw on 20 servers; fewer servers are its first ones
            drawn = paper(0, jobs=JOBS, servers=20, horizon=1500)
            inst = nested_cluster(drawn, int(row["label"].split()[0]))
            assert inst.jobs == drawn.jobs and inst.cluster.servers == drawn.cluster.servers[: inst.num_servers]
        else:
            inst = paper(0, jobs=JOBS, servers=20, horizon=1200)
        assert row["instance"] == inst.name
        result = run_policy(inst, row["policy"], seed=0, **row["options"])
        completion = reference_simulate(inst, result.schedule)["completion"]
        assert row["makespan"] == max(completion) >= lower_bounds(inst).best
        assert row["avg_jct"] == pytest.approx(sum(completion) / len(completion))
        assert row["min_jct"] == min(completion)
        assert row["exceeds_horizon"] == (max(completion) > inst.horizon)
        if row["policy"] == "sjf-bco" and "kappa" in row["options"]:
            assert row["kappa"] == row["options"]["kappa"]  # the fixed kappa reached the policy


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
    with pytest.raises(InputError, match="at least 1"):
        run_experiment("kappa", [0], workers=0)


def test_kappa_8_and_10_are_the_same_run() -> None:
    """The Philly sizes are 1, 2, 4, 8, 16, 32: kappa = 8 and 10 split them alike."""
    rows = {r["label"]: r for r in run_experiment("kappa", [0], jobs=JOBS)}
    assert rows["kappa=8"]["makespan"] == rows["kappa=10"]["makespan"]
    assert rows["kappa=8"]["avg_jct"] == rows["kappa=10"]["avg_jct"]


def test_a_preset_reaches_every_run() -> None:
    rows = run_experiment("lambda", [0], jobs=JOBS, preset="contention-heavy")
    assert {r["preset"] for r in rows} == {"contention-heavy"} and all(r["instance"].endswith("-heavy") for r in rows)
