"""The classical orders (lpt, laf) and the improvement search (improve): feasible schedules
judged by the reference, the list order they claim, determinism by seed, never worse than
their start, and bad parameters named."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rar_opt import Cluster, Instance, Job, check
from rar_opt.algorithms import PLACEMENTS, run_policy
from rar_opt.algorithms.engine import Trial
from rar_opt.algorithms.search import score
from rar_opt.errors import InputError
from rar_opt.instances.generate import paper

from ..helpers import BEYOND_HORIZON
from ..strategies import reference_simulate, reference_violations, tiny_instances

PLACEMENT_NAMES = sorted(PLACEMENTS)


def _score(inst: Instance, result) -> tuple[int, int]:
    """(makespan, sum of completion times) by the reference simulator."""
    completion = reference_simulate(inst, result.schedule)["completion"]
    return max(completion), sum(completion)


def _assert_feasible(inst: Instance, result) -> None:
    allowed = BEYOND_HORIZON if result.exceeds_horizon else frozenset()
    assert reference_violations(inst, result.schedule) <= allowed
    assert check(inst, result.schedule).names() <= allowed
    span = max(reference_simulate(inst, result.schedule)["completion"])
    assert result.exceeds_horizon == (span > inst.horizon)


@given(tiny_instances(), st.sampled_from(["lpt", "laf"]), st.sampled_from(PLACEMENT_NAMES))
def test_classical_orders_are_feasible_and_start_in_their_order(inst: Instance, name: str, placement: str) -> None:
    result = run_policy(inst, name, placement=placement)
    _assert_feasible(inst, result)
    rho = inst.bounds.rho_min
    key = rho if name == "lpt" else rho * inst.arrays.gpus
    order = np.argsort(-key, kind="stable")
    starts = np.asarray(result.schedule.starts)[order]
    assert np.all(np.diff(starts) >= 0)  # a list scheduler starts the jobs in list order
    assert result.schedule.meta["params"]["placement"] == placement


@settings(max_examples=30)
@given(
    tiny_instances(max_jobs=5),
    st.integers(0, 2**31 - 1),
    st.integers(0, 12),
    st.sampled_from(["order+placement", "order"]),
)
def test_improve_is_feasible_deterministic_and_never_worse_than_its_start(
    inst: Instance, seed: int, iterations: int, moves: str
) -> None:
    result = run_policy(inst, "improve", seed=seed, iterations=iterations, moves=moves)
    _assert_feasible(inst, result)
    assert result == run_policy(inst, "improve", seed=seed, iterations=iterations, moves=moves)
    starts = [run_policy(inst, n, placement=p) for n in ("lpt", "laf") for p in PLACEMENT_NAMES]
    best_start = min(_score(inst, r) for r in starts)
    assert _score(inst, result) <= best_start
    assert (result.search["start_makespan"], result.search["start_total_completion"]) == best_start
    assert result.search["iterations"] == iterations and not result.search["capped"]


def test_lpt_reaches_the_longest_job_on_the_paper_instance(paper_instance: Instance) -> None:
    # the issue's observation: longest first with consolidation is optimal here (276 = the longest job)
    longest = int(paper_instance.bounds.rho_min.max())
    assert check(paper_instance, run_policy(paper_instance, "lpt").schedule).result.makespan == longest
    assert check(paper_instance, run_policy(paper_instance, "sjf-bco").schedule).result.makespan > longest


def test_improve_lowers_average_jct_at_the_same_makespan() -> None:
    inst = paper(0, jobs=60, servers=8)
    start = check(inst, run_policy(inst, "lpt").schedule).result
    found = run_policy(inst, "improve", iterations=60)
    res = check(inst, found.schedule).result
    assert (res.makespan, res.avg_jct) < (start.makespan, start.avg_jct)
    assert found.search["improvements"] >= 1
    # another seed walks another path
    other = run_policy(inst, "improve", iterations=60, seed=1)
    assert other.schedule != found.schedule


def _tight_horizon() -> Instance:
    """One 4-GPU server and 2-GPU jobs: a long one (10 slots) listed first, three short ones
    (4 slots each), T = 12. Shortest first ends the long job at 14, past T, with the
    smallest sum (30); the long job first (the list order, so fewest GPUs first) ends
    everything by 12 with a sum of 34."""
    cluster = Cluster(servers=(4,), b_inter=1.0, b_intra=10.0)
    short = tuple(Job(f"short{i}", gpus=2, iterations=4, bwd_time=1.0) for i in range(3))
    return Instance("tight", 12, cluster, (Job("long", gpus=2, iterations=10, bwd_time=1.0), *short))


@pytest.mark.parametrize("iterations", [0, 40])
def test_improve_for_the_sum_gets_within_the_horizon_before_shortening_the_sum(iterations: int) -> None:
    inst = _tight_horizon()
    result = run_policy(inst, "improve", objective="total", iterations=iterations)
    report = check(inst, result.schedule)
    assert report.feasible and report.result.makespan <= inst.horizon
    assert int(report.result.completion.sum()) == 34  # the best sum within T, not the 30 past it


def test_the_horizon_comes_before_either_objective_and_its_cap() -> None:
    completion = np.array([3, 9])
    trial = Trial(np.zeros(2, dtype=np.int64), ((), ()), completion, 9, 1.0)
    assert score(trial, horizon=12) == (0, 9, 12)
    assert score(trial, horizon=7) == (2, 9, 12)
    assert score(trial, total_cap=10, horizon=7) == (2, 2, 9, 12)
    assert score(trial, "total", horizon=7) == (2, 12, 9)
    assert score(trial, "total", cap=5, horizon=12) == (0, 4, 12, 9)
    # past T by a slot loses to a schedule within T whatever its sum or cap
    within = Trial(np.zeros(2, dtype=np.int64), ((), ()), np.array([8, 8]), 8, 1.0)
    assert score(within, "total", horizon=8) < score(trial, "total", horizon=8)
    assert score(within, total_cap=10, horizon=8) < score(trial, total_cap=12, horizon=8)


def test_the_time_cap_stops_the_search_and_says_so() -> None:
    inst = paper(1, jobs=40, servers=6)
    result = run_policy(inst, "improve", iterations=10**6, time_limit=1e-6)
    assert result.search["capped"] and result.search["iterations"] <= 1
    _ = check(inst, result.schedule).result.makespan  # still a complete schedule
    assert result.schedule.meta["search"]["capped"] is True


@pytest.mark.parametrize(
    ("name", "options", "field"),
    [
        ("lpt", {"placement": "nope"}, "placement"),
        ("laf", {"placement": "best-fit"}, "placement"),
        ("lpt", {"iterations": 3}, "iterations"),  # not an option of lpt
        ("improve", {"time_limit": 0}, "time_limit"),
        ("improve", {"time_limit": -1.0}, "time_limit"),
        ("improve", {"time_limit": math.nan}, "time_limit"),
        ("improve", {"time_limit": math.inf}, "time_limit"),
        ("improve", {"iterations": -1}, "iterations"),
        ("improve", {"iterations": True}, "iterations"),
        ("improve", {"iterations": 2.5}, "iterations"),
        ("improve", {"seed": -1}, "seed"),
        ("improve", {"seed": 2**31}, "seed"),
        ("improve", {"moves": "swap"}, "moves"),
        ("improve", {"placement": "consolidate"}, "placement"),  # the search chooses placements itself
    ],
)
def test_bad_options_are_input_errors_naming_the_field(name: str, options: dict, field: str) -> None:
    inst = paper(0, jobs=10, servers=3)
    seed = options.pop("seed", 0)
    with pytest.raises(InputError, match=field):
        run_policy(inst, name, seed=seed, **options)
