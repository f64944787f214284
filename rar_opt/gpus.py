"""Concrete GPU ids for a schedule that only gives per-server counts.

The model needs only y_js (GPUs of a server are identical), but users and SJF-BCO talk
about concrete GPUs. For a capacity-feasible schedule, ids always exist: on each server,
the jobs' busy intervals form an interval graph, and handing out the lowest free ids in
order of start slot never needs more than O_s of them.
"""

from __future__ import annotations

import heapq

import numpy as np

from .instance import Instance
from .schedule import Schedule
from .simulate import simulate


def assign_gpu_ids(instance: Instance, schedule: Schedule) -> Schedule:
    """The same schedule with ``gpu_ids`` filled in (lowest free ids, by start slot).

    Raises ``ValueError`` if the schedule exceeds a server's capacity at some slot.
    """
    res = simulate(instance, schedule)
    last = np.where(res.stalled, np.iinfo(np.int64).max, res.end_slot)
    y = schedule.placement_array
    a = schedule.start_array
    ids: list[list[tuple[int, int]]] = [[] for _ in range(instance.num_jobs)]
    for s, cap in enumerate(instance.cluster.servers):
        free = list(range(cap))
        busy: list[tuple[int, int, tuple[int, ...]]] = []  # (last slot, job, ids) heap
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
