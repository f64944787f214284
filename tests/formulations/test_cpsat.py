"""The CP-SAT model: equal to brute force, to the compact MILP, and to every proven optimum."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from rar_opt import Instance
from rar_opt.formulations import cpsat as cpsat_model
from rar_opt.solvers import SolveResult, Status, solve

from ..bruteforce import brute_force
from ..helpers import instance_dict, policy_makespans
from ..strategies import communication_heavy_instances, contended_instances, micro_instances, reference_simulate


def assert_optimal(inst: Instance, res: SolveResult) -> int:
    """The optimum, after checking what any exact solve must satisfy."""
    assert res.status == Status.OPTIMAL, (res.status, res.message)
    completion = reference_simulate(inst, res.schedule)["completion"]
    assert res.makespan == max(completion) == round(res.objective)  # the model's C_j are the true ones
    return res.makespan


@settings(max_examples=25)
@given(micro_instances())
def test_cpsat_equals_brute_force(inst: Instance) -> None:
    upper = min(policy_makespans(inst).values())
    bf = brute_force(inst, upper)
    assert bf is not None
    assert assert_optimal(inst, solve(inst, "cpsat")) == bf[0]


@settings(max_examples=20)
@given(communication_heavy_instances())
def test_both_forms_of_the_server_rows_give_the_optimum(inst: Instance) -> None:
    # (2) over the demands y_js (the default) or over optional intervals: the same schedules
    plain = assert_optimal(inst, solve(inst, "cpsat"))
    assert assert_optimal(inst, solve(inst, "cpsat", server_intervals=True)) == plain


def test_a_job_wider_than_a_server_enters_it_only_split() -> None:
    # 3 GPUs on servers of 2 + 2: no "whole" interval exists for it, so it must split
    raw = instance_dict()
    raw["jobs"][0]["gpus"] = 3
    raw["jobs"].append({**raw["jobs"][0], "name": "b", "gpus": 1})
    inst = Instance.from_dict(raw)
    model = cpsat_model.build(inst, cpsat_model.Options(server_intervals=True))
    intervals = [c.name for c in model.model.proto.constraints if c.has_interval()]
    assert {"W1_0", "W1_1", "P0_0", "P0_1"} <= set(intervals)  # job 1 may sit whole anywhere
    assert not [n for n in intervals if n.startswith("W0_")]  # job 0 (3 GPUs) never whole on a 2-GPU server
    res = solve(inst, "cpsat", server_intervals=True)
    assert assert_optimal(inst, res) and sum(c > 0 for c in res.schedule.placements[0]) == 2


@settings(max_examples=20)
@given(communication_heavy_instances())
def test_cpsat_equals_the_compact_milp_where_contention_decides(inst: Instance) -> None:
    assert assert_optimal(inst, solve(inst, "cpsat")) == assert_optimal(inst, solve(inst))


@settings(max_examples=20)
@given(contended_instances())
def test_cpsat_optimum_is_at_most_every_heuristic(inst: Instance) -> None:
    opt = assert_optimal(inst, solve(inst, "cpsat", warm_start="sjf-bco"))
    assert opt <= min(policy_makespans(inst).values())


def test_every_library_optimum(library) -> None:
    for known in library:
        res = solve(known.instance, "cpsat", time_limit=60)
        assert assert_optimal(known.instance, res) == known.optimum, known.instance.name


def test_counterexamples_keep_their_optima(counterexample) -> None:
    res = solve(counterexample.instance, "cpsat")
    assert assert_optimal(counterexample.instance, res) == counterexample.optimum


def test_statuses_time_limit_and_infeasible_horizon(tiny_8x4_s19: Instance, wait_beats_start: Instance) -> None:
    limited = solve(tiny_8x4_s19, "cpsat", time_limit=0.001)
    assert limited.status in (Status.NO_SOLUTION, Status.FEASIBLE, Status.OPTIMAL)
    opt = wait_beats_start.meta["known_optimum"]
    short = solve(wait_beats_start, "cpsat", horizon=opt - 1)
    assert short.status == Status.INFEASIBLE and short.schedule is None
    with pytest.raises(Exception, match="cannot be solved by the highs backend"):
        solve(wait_beats_start, "cpsat", backend="highs")
