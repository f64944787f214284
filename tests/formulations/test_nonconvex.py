"""RAR-DDLS (1)-(9) as the non-convex MINLP it is: fixed at a schedule, it reproduces the makespan."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rar_opt import Instance
from rar_opt.algorithms import POLICIES, run_policy
from rar_opt.formulations import nonconvex
from rar_opt.formulations.values import violated
from rar_opt.solvers import solve

from ..strategies import feasible_schedules, micro_instances, reference_simulate


@settings(max_examples=20)
@given(micro_instances(), st.data())
def test_nonconvex_model_evaluates_to_the_reference_makespan(inst: Instance, data: st.DataObject) -> None:
    # at an optimal schedule, at heuristics' schedules and at a random feasible one
    scheds = [solve(inst).schedule, data.draw(feasible_schedules(inst))]
    scheds += [
        run_policy(inst, name).schedule for name in data.draw(st.sets(st.sampled_from(sorted(POLICIES)), max_size=2))
    ]
    for sched in scheds:
        model = nonconvex.build(inst, nonconvex.Options(horizon=inst.horizon))
        nonconvex.fix_to(model, inst, sched)
        assert violated(model) == []
        assert nonconvex.pyo.value(model.obj) == max(reference_simulate(inst, sched)["completion"])


@settings(max_examples=10)
@given(micro_instances())
def test_nonconvex_model_rejects_a_wrong_completion(inst: Instance) -> None:
    sched = run_policy(inst, "ls").schedule
    model = nonconvex.build(inst, nonconvex.Options(horizon=inst.horizon))
    nonconvex.fix_to(model, inst, sched)
    completion = reference_simulate(inst, sched)["completion"]
    j = max(range(inst.num_jobs), key=lambda j: completion[j])
    model.D[j, completion[j] - 1].fix(0)  # claim the job is still running in its last slot
    assert violated(model)
