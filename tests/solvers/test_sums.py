"""``auto`` for the total completion and flow time (rar_opt.solvers.sums): the same optimum
as brute force where brute force reaches, a bound never above it, a checked schedule whose
sum is the reported objective, and an answer (schedule and bound) where the model is too
large to build."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings

from rar_opt import Instance, check
from rar_opt.bounds import completion_bounds
from rar_opt.solvers import Status, solve
from rar_opt.solvers.record import PhaseKind

from ..bruteforce import brute_force
from ..strategies import micro_instances, with_releases


def _sum(inst: Instance, res, objective: str) -> int:
    report = check(inst, res.schedule)
    assert report.feasible
    total = int(np.sum(report.result.completion))
    return total - int(inst.releases.sum()) if objective == "flow" else total


@settings(max_examples=10, deadline=None)
@given(with_releases(micro_instances()))
def test_auto_flow_is_the_brute_force_optimum(inst: Instance) -> None:
    res = solve(inst, "auto", time_limit=60, objective="flow")
    assert res.status == Status.OPTIMAL, res.message
    value = _sum(inst, res, "flow")
    assert value == res.objective
    upper = int(inst.releases.max()) + value - int(inst.bounds.rho_min.sum()) + 1
    found = brute_force(inst, max(upper, 1), objective="flow")
    assert found is not None and found[0] == value


@settings(max_examples=10, deadline=None)
@given(micro_instances())
def test_auto_total_bounds_hold_and_phases_are_recorded(inst: Instance) -> None:
    res = solve(inst, "auto", time_limit=60, objective="total")
    assert res.schedule is not None and res.bound is not None
    value = _sum(inst, res, "total")
    assert res.objective == value >= res.bound >= completion_bounds(inst).total
    kinds = [p.kind for p in res.record.phases]
    assert kinds[:2] == [PhaseKind.HEURISTICS, PhaseKind.FLOOR]
    # every phase's bound is at most the best schedule's sum
    assert all(p.bound is None or p.bound <= value for p in res.record.phases)


def test_auto_answers_where_the_model_is_too_large(paper_instance: Instance) -> None:
    res = solve(paper_instance, "auto", time_limit=8, objective="flow")
    assert res.status in (Status.FEASIBLE, Status.OPTIMAL)
    assert res.record.full_model is not None and "cells" in res.record.full_model
    value = _sum(paper_instance, res, "flow")
    assert res.objective == value and res.bound is not None and res.bound <= value
    tried = res.record.phases[0].tried
    assert tried is not None and value <= min(v for v in tried.values() if v is not None)


def test_improve_aimed_at_the_sum_is_never_worse_than_its_starts(paper_instance: Instance) -> None:
    from rar_opt.algorithms import run_policy

    run = run_policy(paper_instance, "improve", objective="total", iterations=30)
    search = run.record()["search"]
    total = int(np.sum(check(paper_instance, run.schedule).result.completion))
    assert search["objective"] == "total" and total <= search["start_total_completion"]
    with pytest.raises(Exception, match="objective"):
        run_policy(paper_instance, "improve", objective="jct")


@settings(max_examples=8, deadline=None)
@given(micro_instances())
def test_a_makespan_cap_is_kept_and_only_costs_the_sum(inst: Instance) -> None:
    free = solve(inst, "auto", time_limit=60, objective="total")
    capped = solve(inst, "auto", time_limit=60, objective="total", makespan_within=1.0)
    cap = capped.record.options["makespan_cap"]
    assert capped.schedule is not None and capped.makespan is not None and capped.makespan <= cap
    assert capped.bound is not None and capped.bound <= capped.objective
    if free.status == Status.OPTIMAL and capped.status == Status.OPTIMAL:
        assert capped.objective >= free.objective  # a cap never helps the sum


@pytest.mark.parametrize("factor", [0.5, float("nan"), float("inf"), -1.0, True])
def test_bad_trade_off_factors_are_refused(wait_beats_start: Instance, factor: float) -> None:
    from rar_opt.errors import ParameterError

    with pytest.raises(ParameterError, match="factor >= 1"):
        solve(wait_beats_start, "auto", time_limit=5, objective="total", makespan_within=factor)
