"""The CP-SAT models' objectives (docs/arrivals.md): the total completion and the total
flow time, equal to the compact MILP's and brute force's optima with releases; the
contention-free relaxation and restriction bracket the flow optimum."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from rar_opt import InputError, Instance, check
from rar_opt.formulations import cfree, cpsat
from rar_opt.formulations.cpsat import read_schedule
from rar_opt.solvers import Status, solve
from rar_opt.solvers.backend import SolveOptions
from rar_opt.solvers.cpsat import Cpsat

from ..bruteforce import brute_force
from ..strategies import communication_heavy_instances, micro_instances, reference_simulate, with_releases


def _flow(inst: Instance, completion: list[int]) -> int:
    return sum(completion) - int(inst.releases.sum())


def _optimal(inst: Instance, formulation: str, objective: str) -> tuple[int, list[int]]:
    res = solve(inst, formulation, objective=objective)
    assert res.status == Status.OPTIMAL, res.message
    assert res.schedule is not None and check(inst, res.schedule).feasible
    return round(res.objective), reference_simulate(inst, res.schedule)["completion"]


@settings(max_examples=12, deadline=None)
@given(with_releases(micro_instances()))
def test_cpsat_flow_equals_compact_and_brute_force(inst: Instance) -> None:
    value, completion = _optimal(inst, "cpsat", "flow")
    assert value == _flow(inst, completion)  # the value reported is the schedule's true flow
    assert value == _optimal(inst, "compact", "flow")[0]
    releases = [job.release for job in inst.jobs]
    upper = max(releases) + value - int(inst.bounds.rho_min.sum()) + 1  # as in test_releases.py
    bf = brute_force(inst, upper, objective="flow")
    assert bf is not None and bf[0] == value
    total, completion = _optimal(inst, "cpsat", "total")
    assert total == sum(completion) == value + sum(releases)


@settings(max_examples=10, deadline=None)
@given(with_releases(communication_heavy_instances(), max_release=4))
def test_cpsat_flow_equals_compact_where_contention_matters(inst: Instance) -> None:
    assert _optimal(inst, "cpsat", "flow")[0] == _optimal(inst, "compact", "flow")[0]


@settings(max_examples=10, deadline=None)
@given(with_releases(communication_heavy_instances(), max_release=4))
def test_contention_free_models_bracket_the_flow_optimum(inst: Instance) -> None:
    opt = _optimal(inst, "compact", "flow")[0]
    relaxed = cfree.build(inst, cfree.Options(objective="flow"))
    low = Cpsat().solve(relaxed, SolveOptions())
    assert low.status == Status.OPTIMAL and low.objective <= opt
    restricted = cfree.build(inst, cfree.Options(restrict=True, objective="flow"))
    high = Cpsat().solve(restricted, SolveOptions())
    assert high.status == Status.OPTIMAL and high.objective >= opt
    # the restriction's flow is its schedule's true flow (contention is always 1)
    completion = reference_simulate(inst, read_schedule(restricted, inst))["completion"]
    assert _flow(inst, completion) == round(high.objective)


def test_flow_is_the_total_less_the_releases(wait_beats_start: Instance) -> None:
    import dataclasses

    late = dataclasses.replace(
        wait_beats_start, jobs=tuple(dataclasses.replace(j, release=i) for i, j in enumerate(wait_beats_start.jobs))
    )
    model = cpsat.build(late, cpsat.Options(objective="flow"))
    assert model.rar.extra["flow_offset"] == sum(range(late.num_jobs))
    assert len(model.model.proto.objective.vars) == late.num_jobs  # sum_j e_j, not the makespan
    assert round(model.model.proto.objective.offset) == -sum(range(late.num_jobs))
    flow, total = solve(late, "cpsat", objective="flow"), solve(late, "cpsat", objective="total")
    assert round(total.objective) == round(flow.objective) + model.rar.extra["flow_offset"]


def test_a_bad_objective_is_named() -> None:
    with pytest.raises(InputError, match=r"options\.objective: must be one of makespan, total, flow"):
        cpsat.Options(objective="weighted")
    with pytest.raises(InputError, match=r"options\.objective"):
        cfree.Options(objective="lexicographic")
