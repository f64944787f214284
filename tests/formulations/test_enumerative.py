"""The paper's enumeration ILP (10)-(13) and load ILP (14)-(16)."""

from __future__ import annotations

from hypothesis import given, settings

from rar_opt import Instance
from rar_opt.bounds import load_bound, lower_bounds
from rar_opt.solvers import Status, solve

from ..bruteforce import brute_force
from ..helpers import policy_makespans
from ..strategies import micro_instances, reference_simulate, reference_violations


@settings(max_examples=12)
@given(micro_instances())
def test_enumerative_ilp_agrees_and_load_bound_is_below_the_optimum(inst: Instance) -> None:
    upper = min(policy_makespans(inst).values())
    bf = brute_force(inst, upper)
    assert bf is not None
    enum = solve(inst, formulation="enumerative", warm_start="sjf-bco")
    assert enum.status == Status.OPTIMAL and enum.schedule is not None
    assert reference_violations(inst, enum.schedule) == set()
    assert max(reference_simulate(inst, enum.schedule)["completion"]) == round(enum.objective) == bf[0]
    # the load ILP's tightest theta and the simple bounds never exceed the optimum
    theta = load_bound(inst, max_start=upper)
    assert theta is not None and theta <= bf[0]
    lb = lower_bounds(inst, load=theta)
    assert lb.longest <= bf[0] and lb.work <= bf[0] and lb.best == max(lb.longest, lb.work, theta)


@settings(max_examples=8)
@given(micro_instances())
def test_total_objective_agrees_with_the_compact_milp(inst: Instance) -> None:
    # both range over every schedule that completes within the same horizon (here the best
    # heuristic's makespan, which keeps the enumeration short)
    horizon = min(policy_makespans(inst).values())
    enum = solve(inst, formulation="enumerative", objective="total", horizon=horizon)
    assert enum.status == Status.OPTIMAL and enum.schedule is not None
    assert reference_violations(inst, enum.schedule) == set()
    total = sum(reference_simulate(inst, enum.schedule)["completion"])
    assert round(enum.objective) == total == round(solve(inst, objective="total", horizon=horizon).objective)
