"""Concrete GPU ids for a schedule that only gives per-server counts.

The model needs only y_js (GPUs of a server are identical), but users and SJF-BCO talk
about concrete GPUs. For a capacity-feasible schedule, ids always exist: on each server,
the jobs' busy intervals form an interval graph, and handing out the lowest free ids in
order of start slot never needs more than O_s of them.

The placements are read by their positive entries (compressed rows), never as a dense
J x S array: at 16,000 jobs on 2,000 servers that array is 256 MB, the entries 31,000.
"""

from __future__ import annotations

import heapq

import numpy as np

from rar_opt.instance import Instance
from rar_opt.schedule import Schedule
from rar_opt.simulate import simulate


def assign_gpu_ids(instance: Instance, schedule: Schedule) -> Schedule:
    """The same schedule with ``gpu_ids`` filled in (lowest free ids, by start slot).

    Raises ``ValueError`` if the schedule exceeds a server's capacity at some slot.
    """
    res = simulate(instance, schedule)
    last = np.where(res.stalled, np.iinfo(np.int64).max, res.end_slot)
    a = schedule.start_array
    rows = schedule.sparse
    positive = rows.counts > 0
    job, server, count = rows.jobs()[positive], rows.servers[positive], rows.counts[positive]
    # by server, then start slot, then job: each server's jobs in the order ids are handed out
    order = np.lexsort((job, a[job], server))
    job, server, count = job[order].tolist(), server[order].tolist(), count[order].tolist()
    ids: list[list[tuple[int, int]]] = [[] for _ in range(instance.num_jobs)]
    i = 0
    for s, cap in enumerate(instance.cluster.servers):
        free = list(range(cap))
        busy: list[tuple[int, int, tuple[int, ...]]] = []  # (last slot, job, ids) heap
        while i < len(job) and server[i] == s:
            j, y = job[i], count[i]
            i += 1
            while busy and busy[0][0] < a[j]:
                for g in heapq.heappop(busy)[2]:
                    heapq.heappush(free, g)
            if len(free) < y:
                raise ValueError(f"server {s} has no {y} free GPUs for job {j} at slot {a[j]}")
            taken = tuple(heapq.heappop(free) for _ in range(y))
            ids[j].extend((s, g) for g in taken)
            heapq.heappush(busy, (int(last[j]), int(j), taken))
    # ids[j] lists job j's GPUs server by server, ascending, as the dense loop over servers did
    return Schedule(
        instance=schedule.instance,
        starts=schedule.starts,
        placements=rows,
        gpu_ids=tuple(tuple(g) for g in ids),
        meta=schedule.meta,
    )
