"""GPU ids and the realized shares on a topology read the placements by their positive
entries (compressed rows), never as a dense J x S array (issue 21): they give exactly the
answers of the dense code they replace (kept here as the reference), and the judges never
ask for ``Schedule.placement_array``."""

from __future__ import annotations

import heapq

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from rar_opt import Instance, Schedule, check, simulate
from rar_opt.algorithms import run_policy
from rar_opt.gpu_ids import assign_gpu_ids
from rar_opt.shares import _alone_on_links, _tau_on_links, realized_shares

from .strategies import instance_and_schedule
from .topology_strategies import topology_instance_and_schedule


# -- the dense code, as it was ---------------------------------------------------------------
def dense_gpu_ids(instance: Instance, schedule: Schedule) -> Schedule:
    res = simulate(instance, schedule)
    last = np.where(res.stalled, np.iinfo(np.int64).max, res.end_slot)
    y = schedule.placement_array
    a = schedule.start_array
    ids: list[list[tuple[int, int]]] = [[] for _ in range(instance.num_jobs)]
    for s, cap in enumerate(instance.cluster.servers):
        free = list(range(cap))
        busy: list[tuple[int, int, tuple[int, ...]]] = []
        for j in sorted(np.flatnonzero(y[:, s] > 0), key=lambda j: (a[j], j)):
            while busy and busy[0][0] < a[j]:
                for g in heapq.heappop(busy)[2]:
                    heapq.heappush(free, g)
            if len(free) < y[j, s]:
                raise ValueError(f"server {s} has no {y[j, s]} free GPUs for job {j} at slot {a[j]}")
            taken = tuple(heapq.heappop(free) for _ in range(int(y[j, s])))
            ids[j].extend((s, g) for g in taken)
            heapq.heappush(busy, (int(last[j]), int(j), taken))
    return Schedule.from_arrays(schedule.instance, a, y, gpu_ids=ids, meta=schedule.meta)


def dense_tau_on_links(instance, on, n, active, tau_free):
    pair_job, pair_server = np.nonzero(on & (active & (n >= 2))[:, None])
    tau = tau_free.copy()
    if len(pair_job):
        _, _, bw = instance.time_model.link_bandwidths(n, pair_job, pair_server, instance.num_servers)
        split = np.unique(pair_job)
        tau[split] = instance.time_model.tau_at_bandwidth(bw[split], n[split], split)
    return tau


def dense_alone_on_links(instance, on, n, tau_free):
    out = tau_free.copy()
    for j in np.flatnonzero(n >= 2):
        servers = np.flatnonzero(on[j])
        jobs = np.full(len(servers), j)
        _, _, bw = instance.time_model.link_bandwidths(n, jobs, servers, instance.num_servers)
        out[j] = instance.time_model.tau_at_bandwidth(bw[[j]], n[[j]], np.array([j]))[0]
    return out


def _outcome(fn, *args):
    try:
        return fn(*args)
    except ValueError as exc:
        return ("ValueError", str(exc))


@given(st.booleans().flatmap(lambda feasible: instance_and_schedule(feasible=feasible)))
def test_gpu_ids_from_the_entries_equal_the_dense_assignment(pair) -> None:
    # feasible schedules get the same ids; one beyond a server's capacity the same refusal
    inst, sched = pair
    sparse, dense = _outcome(assign_gpu_ids, inst, sched), _outcome(dense_gpu_ids, inst, sched)
    assert sparse == dense
    if isinstance(sparse, Schedule):
        assert sparse.gpu_ids == dense.gpu_ids and sparse.placements == dense.placements
        assert check(inst, sparse).names() == check(inst, sched).names()


@settings(max_examples=60, deadline=None)
@given(topology_instance_and_schedule(feasible=True), st.data())
def test_topology_shares_from_the_entries_equal_the_dense_ones(pair, data) -> None:
    inst, sched = pair
    # a network whose links all match the paper's star is the star (no links): the helpers
    # below are for real links only, as in realized_shares
    assume(inst.time_model.links is not None)
    rows = sched.sparse
    positive = rows.counts > 0
    entry_job, entry_server = rows.jobs()[positive], rows.servers[positive]
    on = sched.placement_array > 0
    n = np.bincount(entry_job, minlength=inst.num_jobs)
    tau_free = data.draw(st.lists(st.floats(0.5, 3.0), min_size=inst.num_jobs, max_size=inst.num_jobs).map(np.array))
    active = np.array(data.draw(st.lists(st.booleans(), min_size=inst.num_jobs, max_size=inst.num_jobs)))
    assert np.array_equal(
        _tau_on_links(inst, entry_job, entry_server, n, active, tau_free),
        dense_tau_on_links(inst, on, n, active, tau_free),
    )
    assert np.array_equal(
        _alone_on_links(inst, entry_job, entry_server, n, tau_free), dense_alone_on_links(inst, on, n, tau_free)
    )
    # and the whole computation, simulating again or from the check's simulation
    judged = check(inst, sched)
    assert realized_shares(inst, sched) == realized_shares(inst, sched, sim=judged.result)


@pytest.fixture
def no_dense_placements(monkeypatch):
    """``Schedule.placement_array`` (the dense J x S array) raises if anything asks for it."""

    def refuse(self):
        raise AssertionError("the dense J x S placement array was built")

    monkeypatch.setattr(Schedule, "placement_array", property(refuse))


def test_check_gpu_ids_and_shares_build_no_dense_array(no_dense_placements) -> None:
    import dataclasses

    from rar_opt.instances.generate import paper

    inst = paper(0, jobs=320, servers=40)
    racks = {"racks": [list(range(r, r + 10)) for r in range(0, 40, 10)], "rack_link": 30.0}
    on_racks = dataclasses.replace(inst, cluster=dataclasses.replace(inst.cluster, topology=racks))
    for instance in (inst, on_racks):
        schedule = run_policy(instance, "ls").schedule
        bare = Schedule(instance.name, schedule.starts, schedule.sparse)  # no ids: the checker's own path
        assert check(instance, schedule).feasible and check(instance, bare).feasible
        with_ids = assign_gpu_ids(instance, bare)
        assert check(instance, with_ids).feasible
        shares = realized_shares(instance, schedule)
        assert shares.contention >= 0 and shares.split >= 0
    with pytest.raises(AssertionError, match="dense"):
        _ = schedule.placement_array  # the guard itself works
