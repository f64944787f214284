from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rar_opt import Instance, Schedule, check, simulate

from .strategies import feasible_schedules, placements, reference_simulate, tiny_instances


@st.composite
def instance_and_schedule(draw: st.DrawFn, feasible: bool = True) -> tuple[Instance, Schedule]:
    inst = draw(tiny_instances())
    if feasible:
        return inst, draw(feasible_schedules(inst))
    starts = [draw(st.integers(0, 6)) for _ in range(inst.num_jobs)]
    ys = [draw(placements(inst, j)) for j in range(inst.num_jobs)]
    return inst, Schedule.from_arrays(inst.name, starts, ys)


@pytest.mark.parametrize("feasible", [True, False])
@given(data=st.data())
def test_event_jumping_matches_slot_by_slot(feasible: bool, data: st.DataObject) -> None:
    # infeasible schedules (overlapping jobs beyond capacity) only raise contention, up to
    # stalls; completion times and every recorded slot must agree all the same
    inst, sched = data.draw(instance_and_schedule(feasible=feasible))
    res = simulate(inst, sched)
    ref = reference_simulate(inst, sched)
    assert list(res.completion) == ref["completion"]
    trace = res.trace()
    for row in range(len(trace.iterations)):
        cont, its = ref["trace"][trace.origin + row]
        assert list(trace.iterations[row]) == its, f"slot {trace.origin + row}"
        assert list(trace.contention[row]) == cont, f"slot {trace.origin + row}"


@given(instance_and_schedule(feasible=True))
def test_random_feasible_schedules_pass_the_checker(pair: tuple[Instance, Schedule]) -> None:
    inst, sched = pair
    report = check(inst, sched)
    assert report.feasible, report.violations
    assert report.result.makespan is not None and report.result.makespan <= inst.horizon


def test_metrics(two_server_contention: Instance) -> None:
    inst = two_server_contention
    together = simulate(inst, Schedule.from_arrays(inst.name, [0, 0], [[1, 1], [1, 1]]))
    apart = simulate(inst, Schedule.from_arrays(inst.name, [0, 0], [[2, 0], [0, 2]]))
    assert together.makespan > apart.makespan  # contention of two split rings
    assert apart.avg_jct == np.mean(apart.completion)
    assert apart.min_jct <= apart.avg_jct <= apart.max_jct == apart.makespan


def test_paper_scale_serial_schedule(paper_instance: Instance) -> None:
    # every job alone on the largest servers, one after another: completion = sum of rho
    inst = paper_instance
    cap = np.array(inst.cluster.servers)
    order = np.argsort(-cap, kind="stable")
    starts, ys, t = [], [], 0
    for job in inst.jobs:
        y = np.zeros(len(cap), dtype=int)
        need = job.gpus
        for s in order:
            y[s] = min(need, cap[s])
            need -= y[s]
        starts.append(t)
        ys.append(y)
        tau = inst.time_model.tau(
            np.array([1 if (y > 0).sum() >= 2 else 0]), np.array([(y > 0).sum()]), np.array([len(starts) - 1])
        )
        phi = int(np.floor((1 / tau[0]) * (1 + 1e-9)))
        t += -(-job.iterations // phi)
    res = simulate(inst, Schedule.from_arrays(inst.name, starts, ys))
    assert res.makespan == t
