"""Every exact model takes releases (docs/arrivals.md): optima equal brute force over the
schedules that respect them, for the makespan and the total flow time."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings

from rar_opt import Cluster, Instance, Job, check
from rar_opt.formulations import compact, nonconvex
from rar_opt.solvers import Status, solve

from ..bruteforce import brute_force
from ..strategies import micro_instances, reference_simulate, reference_violations, with_releases


def _optimal(inst: Instance, formulation: str = "compact", **options) -> tuple[int, list[int]]:
    """The proven optimum's objective and its completion times, the schedule checked."""
    res = solve(inst, formulation, **options)
    assert res.status == Status.OPTIMAL, res.message
    assert res.schedule is not None and reference_violations(inst, res.schedule) == set()
    assert check(inst, res.schedule).feasible
    return round(res.objective), reference_simulate(inst, res.schedule)["completion"]


@settings(max_examples=15, deadline=None)
@given(with_releases(micro_instances()))
def test_compact_makespan_with_releases_equals_brute_force(inst: Instance) -> None:
    value, completion = _optimal(inst, objective="makespan")
    assert value == max(completion)
    # every schedule with makespan <= value starts before it: the search is complete
    bf = brute_force(inst, value)
    assert bf is not None and bf[0] == value
    assert all(a >= job.release for a, job in zip(bf[1].starts, inst.jobs, strict=True))


@settings(max_examples=12, deadline=None)
@given(with_releases(micro_instances()))
def test_compact_flow_with_releases_equals_brute_force(inst: Instance) -> None:
    value, completion = _optimal(inst, objective="flow")
    releases = [job.release for job in inst.jobs]
    assert value == sum(completion) - sum(releases)  # the reported value is the flow, not the total
    # with flow <= value, C_j - r_j <= value - sum_{i != j} rho_min_i, so a_j <= r_j + value - sum rho_min
    upper = max(releases) + value - int(inst.bounds.rho_min.sum()) + 1
    bf = brute_force(inst, upper, objective="flow")
    assert bf is not None and bf[0] == value
    total, _ = _optimal(inst, objective="total")
    assert total == value + sum(releases)  # flow = total - sum r_j: the same optimum


@settings(max_examples=10, deadline=None)
@given(with_releases(micro_instances()))
def test_cpsat_and_the_decomposition_agree_with_compact_under_releases(inst: Instance) -> None:
    best, _ = _optimal(inst, objective="makespan")
    assert _optimal(inst, "cpsat")[0] == best
    assert _optimal(inst, "decompose")[0] == best


@settings(max_examples=3, deadline=None)  # the enumeration is the slow side (60 s for 6 examples)
@given(with_releases(micro_instances(), max_release=2))
def test_enumerative_with_releases_equals_compact(inst: Instance) -> None:
    assert _optimal(inst, "enumerative", objective="flow")[0] == _optimal(inst, objective="flow")[0]
    assert _optimal(inst, "enumerative")[0] == _optimal(inst)[0]


def _late_job() -> Instance:
    fast = Job("a", 2, 20, bwd_time=0.1)  # 10 iterations per slot: 2 slots
    return Instance("late", 12, Cluster(servers=(2,)), (fast, dataclasses.replace(fast, name="b", release=5)))


def test_a_release_moves_the_optimum_by_hand() -> None:
    inst = _late_job()
    # a runs 0-1; b may start only at 5: makespan 7, total 2 + 7 = 9, flow 2 + 2 = 4
    assert _optimal(inst)[0] == 7
    assert _optimal(inst, objective="total")[0] == 9
    assert _optimal(inst, objective="flow")[0] == 4
    model = compact.build(inst)
    assert min(t for (j, t) in model.x if j == 1) == 5


def test_nonconvex_model_fixes_starts_before_release() -> None:
    inst = _late_job()
    model = nonconvex.build(inst, nonconvex.Options(horizon=inst.horizon))
    assert [model.x[1, t].fixed for t in range(7)] == [True] * 5 + [False] * 2
    assert not any(model.x[0, t].fixed for t in range(inst.horizon))
