"""The checker: every violated constraint by name, against the slot-by-slot reference and planted faults."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from rar_opt import Instance, Schedule, check
from rar_opt.gpu_ids import assign_gpu_ids

from .strategies import instance_and_schedule, reference_violations


def feasible_pair() -> st.SearchStrategy[tuple[Instance, Schedule]]:
    return instance_and_schedule(feasible=True)


def _with(inst: Instance, sched: Schedule, starts=None, ys=None, ids=None) -> Schedule:
    return Schedule.from_arrays(
        inst.name,
        sched.start_array if starts is None else starts,
        sched.placement_array if ys is None else ys,
        gpu_ids=ids,
    )


@pytest.mark.parametrize("feasible", [True, False])
@given(data=st.data())
def test_checker_agrees_with_the_reference(feasible: bool, data: st.DataObject) -> None:
    # feasible schedules are verified independently; arbitrary ones (overlaps beyond
    # capacity, late completions, stalls) must be reported with exactly the same names
    inst, sched = data.draw(instance_and_schedule(feasible=feasible))
    report = check(inst, sched)
    assert report.names() == reference_violations(inst, sched)
    assert report.feasible == (not report.names())
    if report.feasible:
        assert report.result.makespan is not None and report.result.makespan <= inst.horizon


@given(feasible_pair(), st.data())
def test_planted_start_outside_horizon(pair, data) -> None:
    inst, sched = pair
    j = data.draw(st.integers(0, inst.num_jobs - 1))
    starts = np.array(sched.start_array)
    starts[j] = data.draw(st.sampled_from([-1, inst.horizon]))
    assert "start_in_horizon" in check(inst, _with(inst, sched, starts=starts)).names()


@given(feasible_pair(), st.data())
def test_planted_gang_size(pair, data) -> None:
    inst, sched = pair
    j = data.draw(st.integers(0, inst.num_jobs - 1))
    ys = np.array(sched.placement_array)
    s = int(np.flatnonzero(ys[j] > 0)[0])
    ys[j, s] += data.draw(st.sampled_from([-1, 1]))
    report = check(inst, _with(inst, sched, ys=ys))
    assert "gang_size" in report.names()


@given(feasible_pair(), st.data())
def test_planted_negative_placement(pair, data) -> None:
    inst, sched = pair
    assume(inst.num_servers >= 2)
    j = data.draw(st.integers(0, inst.num_jobs - 1))
    ys = np.array(sched.placement_array)
    s = int(np.flatnonzero(ys[j] > 0)[0])
    other = (s + 1) % inst.num_servers
    shift = ys[j, other] + 1
    ys[j, other] -= shift  # now -1; gang size kept: the violation is the sign alone
    ys[j, s] += shift
    report = check(inst, _with(inst, sched, ys=ys))
    assert "placement_nonnegative" in report.names()
    assert "gang_size" not in report.names()


@given(feasible_pair())
def test_planted_capacity(pair) -> None:
    inst, sched = pair
    if sum(job.gpus for job in inst.jobs) > inst.cluster.num_gpus:
        # everyone at slot 0 cannot fit anywhere
        report = check(inst, _with(inst, sched, starts=np.zeros(inst.num_jobs, dtype=int)))
    else:
        ys = np.array(sched.placement_array)
        ys[0, 0] += inst.cluster.servers[0] + 1
        report = check(inst, _with(inst, sched, ys=ys))
    assert "server_capacity" in report.names()


@given(feasible_pair())
def test_planted_short_horizon(pair) -> None:
    inst, sched = pair
    makespan = check(inst, sched).result.makespan
    assume(makespan - 1 >= int(inst.bounds.rho_min.max()))
    shorter = dataclasses.replace(inst, horizon=makespan - 1)
    assert "completion_in_horizon" in check(shorter, sched).names()


@given(feasible_pair(), st.data())
def test_gpu_ids_assigned_then_broken(pair, data) -> None:
    inst, sched = pair
    with_ids = assign_gpu_ids(inst, sched)
    assert check(inst, with_ids).feasible
    ids = [list(g) for g in with_ids.gpu_ids]
    j = data.draw(st.integers(0, inst.num_jobs - 1))
    kind = data.draw(st.sampled_from(["outside", "repeat", "count"]))
    if kind == "outside":
        s, _ = ids[j][0]
        ids[j][0] = (s, inst.cluster.servers[s])
    elif kind == "repeat":
        assume(len(ids[j]) >= 2)
        ids[j][1] = ids[j][0]
    else:
        ids[j] = ids[j][:-1]
    assert "gpu_ids" in check(inst, _with(inst, sched, ids=ids)).names()


@given(feasible_pair())
def test_planted_shared_gpu(pair) -> None:
    inst, sched = pair
    with_ids = assign_gpu_ids(inst, sched)
    res = check(inst, sched).result
    a, e = sched.start_array, res.end_slot
    ys = sched.placement_array
    pairs = [
        (j, k, s)
        for j in range(inst.num_jobs)
        for k in range(j + 1, inst.num_jobs)
        for s in range(inst.num_servers)
        if ys[j, s] > 0 and ys[k, s] > 0 and a[j] <= e[k] and a[k] <= e[j]
    ]
    assume(pairs)
    j, k, s = pairs[0]
    ids = [list(g) for g in with_ids.gpu_ids]
    mine = next(i for i, g in enumerate(ids[k]) if g[0] == s)
    ids[k][mine] = next(g for g in ids[j] if g[0] == s)
    assert "gpu_exclusive" in check(inst, _with(inst, sched, ids=ids)).names()


def test_every_violation_is_reported_not_just_the_first(two_server_contention: Instance) -> None:
    inst = two_server_contention
    bad = Schedule.from_arrays(inst.name, [-1, inst.horizon], [[3, 0], [2, 1]])
    names = check(inst, bad).names()
    assert {"start_in_horizon", "gang_size", "server_capacity"} <= names
    assert len(check(inst, bad).violations) >= 4


def test_planted_stall_is_reported_not_looped_on() -> None:
    from rar_opt import Cluster, Job

    # p_worst = min(J, max O_s) = 1 keeps the instance valid; three split rings squeezed
    # onto two 1-GPU servers (a capacity violation) see p = 3 and cannot finish an iteration
    cluster = Cluster(servers=(1, 1), b_inter=1.0, b_intra=10.0, alpha=1.0, xi2=0.0)
    jobs = tuple(Job(f"j{j}", gpus=2, iterations=4, grad_size=0.5, bwd_time=0.2) for j in range(3))
    inst = Instance("stall", 60, cluster, jobs)
    sched = Schedule.from_arrays(inst.name, [0, 0, 0], [[1, 1]] * 3)
    report = check(inst, sched)
    assert {"job_stalls", "server_capacity"} <= report.names()
    assert report.result.makespan is None and report.result.stalled.all()


@given(feasible_pair(), st.data())
def test_the_fast_gpu_id_verdict_agrees_with_the_full_listing(pair, data) -> None:
    # check() decides the GPU ids in numpy and lists violations job by job only when that
    # finds any: the two must agree on every schedule, broken in any of these ways or not
    from rar_opt.check import _gpu_id_violations, _gpu_ids_hold

    inst, sched = pair
    ids: list = [list(g) for g in assign_gpu_ids(inst, sched).gpu_ids]
    big = max(inst.cluster.servers)
    for _ in range(data.draw(st.integers(0, 3))):
        j = data.draw(st.integers(0, inst.num_jobs - 1))
        kind = data.draw(st.sampled_from(["any", "drop", "repeat", "none", "borrow", "borrow", "empty"]))
        if kind == "any" and ids[j]:
            i = data.draw(st.integers(0, len(ids[j]) - 1))
            ids[j][i] = (data.draw(st.integers(-1, inst.num_servers)), data.draw(st.integers(-1, big)))
        elif kind == "drop" and ids[j]:
            ids[j] = ids[j][:-1]
        elif kind == "repeat" and ids[j]:
            ids[j] = [*ids[j], ids[j][0]]
        elif kind == "none":
            ids[j] = None
        elif kind == "borrow":  # one of j's GPUs swapped for a GPU of another job on the same server
            shared = [
                (i, g)
                for k in range(inst.num_jobs)
                if k != j
                for i, mine in enumerate(ids[j] or [])
                for g in ids[k] or []
                if g[0] == mine[0]
            ]
            if shared:
                i, g = data.draw(st.sampled_from(shared))
                ids[j][i] = g
        elif kind == "empty":
            ids[j] = []
    if all(g is None for g in ids):
        ids[0] = []
    broken = _with(inst, sched, ids=ids)
    result = check(inst, sched).result
    assert _gpu_ids_hold(inst, broken, result) == (not _gpu_id_violations(inst, broken, result))
