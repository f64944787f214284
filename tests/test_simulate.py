"""The simulator against the slot-by-slot reference and hand-derived completion times."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rar_opt import Instance, Schedule, simulate

from .strategies import instance_and_schedule, reference_phi, reference_simulate, reference_tau


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


def test_metrics_by_hand(two_server_contention: Instance) -> None:
    # per-slot rates in the fixture's docstring: alone on a server 4 iterations per slot
    # (10 take 3 slots), split together 2 per slot (5 slots)
    inst = two_server_contention
    together = simulate(inst, Schedule.from_arrays(inst.name, [0, 0], [[1, 1], [1, 1]]))
    assert list(together.completion) == [5, 5] and together.makespan == 5
    staggered = simulate(inst, Schedule.from_arrays(inst.name, [0, 1], [[2, 0], [0, 2]]))
    assert list(staggered.completion) == [3, 4]
    assert (staggered.makespan, staggered.avg_jct, staggered.min_jct, staggered.max_jct) == (4, 3.5, 3, 4)
    summary = staggered.summary()
    assert summary["completion"] == [3, 4] and summary["stalled"] == [] and summary["avg_jct"] == 3.5


def test_a_stalled_job_has_no_metrics() -> None:
    from rar_opt import Cluster, Job

    # three split rings over two 1-GPU servers (over capacity): p = 3 gives tau > 1 slot
    cluster = Cluster(servers=(1, 1), b_inter=1.0, b_intra=10.0, alpha=1.0, xi2=0.0)
    inst = Instance("stall", 60, cluster, tuple(Job(f"j{j}", 2, 4, grad_size=0.5, bwd_time=0.2) for j in range(3)))
    sched = Schedule.from_arrays(inst.name, [0, 0, 0], [[1, 1]] * 3)
    res = simulate(inst, sched)
    assert list(res.completion) == [-1, -1, -1] == reference_simulate(inst, sched, max_slots=200)["completion"]
    assert res.stalled.all() and (res.makespan, res.avg_jct, res.min_jct) == (None, None, None)


def test_paper_scale_serial_schedule(paper_instance: Instance) -> None:
    # every job alone on the largest servers, one after another: each runs uncontended
    # (p = 1 if split), so its slots are ceil(F / phi) with phi from the hand-written tau
    inst = paper_instance
    cap = np.array(inst.cluster.servers)
    order = np.argsort(-cap, kind="stable")
    starts, ys, t = [], [], 0
    for j, job in enumerate(inst.jobs):
        y = np.zeros(len(cap), dtype=int)
        need = job.gpus
        for s in order:
            y[s] = min(need, cap[s])
            need -= y[s]
        n = int((y > 0).sum())
        phi = reference_phi(reference_tau(inst, j, 1 if n >= 2 else 0, n))
        starts.append(t)
        ys.append(y)
        t += -(-job.iterations // phi)
    res = simulate(inst, Schedule.from_arrays(inst.name, starts, ys))
    assert res.makespan == t
    assert list(res.completion) == [*starts[1:], t]
