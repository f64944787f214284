"""The pricing rows (``formulations/pricing.py``): every schedule satisfies them, so the
priced relaxation (``cfree.Options(priced=True)``) is a lower bound at least the
contention-free relaxation's, and the full model and the probes with them (the probes'
default) keep every answer: brute force, the compact MILP where contention decides,
known optima (docs/exactness.md, "Pricing contention on intervals")."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rar_opt import Instance, check
from rar_opt.errors import InputError
from rar_opt.formulations import cfree, cpsat
from rar_opt.formulations.pricing import contention_rates
from rar_opt.instances.library import instance_path
from rar_opt.solvers import Status
from rar_opt.solvers.backend import SolveOptions
from rar_opt.solvers.cpsat import Cpsat
from rar_opt.solvers.probe import probe

from ..bruteforce import brute_force
from ..helpers import policy_makespans
from ..strategies import communication_heavy_instances, contended_instances, feasible_schedules, micro_instances


def _optimum(model) -> float:
    raw = Cpsat().solve(model, SolveOptions(time_limit=30.0))
    assert raw.status == Status.OPTIMAL and raw.objective is not None
    return raw.objective


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_every_schedule_satisfies_the_pricing_rows(data: st.DataObject) -> None:
    # its starts, completions and placements fixed, the priced relaxation still has a point
    inst = data.draw(contended_instances())
    schedule = data.draw(feasible_schedules(inst))
    report = check(inst, schedule)
    assert report.feasible
    span = int(report.result.makespan)
    # the symmetry rows keep one schedule per orbit, not necessarily this one: left out
    model = cfree.build(inst, cfree.Options(priced=True, horizon=max(span, inst.horizon), symmetry=False))
    for j in range(inst.num_jobs):
        model.model.add(model.start[j] == int(schedule.starts[j]))
        model.model.add(model.end[j] == int(report.result.completion[j]))
        for s in range(inst.num_servers):
            model.model.add(model.y[j][s] == int(schedule.placements[j][s]))
    assert round(_optimum(model)) == span


@settings(max_examples=15, deadline=None)
@given(micro_instances())
def test_the_priced_relaxation_and_the_priced_model_meet_brute_force(inst: Instance) -> None:
    bf = brute_force(inst, min(policy_makespans(inst).values()))
    assert bf is not None
    assert _optimum(cfree.build(inst, cfree.Options(priced=True))) <= bf[0]
    assert round(_optimum(cpsat.build(inst, cpsat.Options(pricing=True)))) == bf[0]


@settings(max_examples=8, deadline=None)
@given(communication_heavy_instances())
def test_the_priced_relaxation_lies_between_the_relaxation_and_the_optimum(inst: Instance) -> None:
    from rar_opt.solvers import solve

    res = solve(inst, "compact")
    assert res.status == Status.OPTIMAL
    plain = _optimum(cfree.build(inst, cfree.Options()))
    priced = _optimum(cfree.build(inst, cfree.Options(priced=True)))
    assert plain <= priced <= res.makespan
    assert round(_optimum(cpsat.build(inst, cpsat.Options(pricing=True)))) == res.makespan
    below = probe(inst, res.makespan - 1, time_limit=30.0) if res.makespan > 1 else None
    assert below is None or below.status == Status.INFEASIBLE  # the probes price by default
    assert probe(inst, res.makespan, time_limit=30.0).status == Status.FEASIBLE


def test_the_pricing_rows_never_refute_a_known_optimum() -> None:
    # undecided within the time is allowed; a "no" would be a bug
    for name, optimum in (("heavy-16x8x100-s1", 46), ("heavy-16x8x100-s2", 45), ("tiny-20x8x120-s0", 54)):
        inst = Instance.read(instance_path(name))
        assert contention_rates(inst)  # contention costs something there: the rows are in
        model = cfree.build(inst, cfree.Options(priced=True, horizon=optimum))
        raw = Cpsat().solve(model, SolveOptions(time_limit=2.0))
        assert raw.status != Status.INFEASIBLE, name


def test_options_are_checked() -> None:
    with pytest.raises(InputError, match="priced"):
        cfree.Options(priced=True, restrict=True)
    with pytest.raises(InputError, match="priced"):
        cfree.Options(priced="yes")
    with pytest.raises(InputError, match="pricing"):
        cpsat.Options(pricing="yes")
