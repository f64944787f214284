"""Server orders: a fast local search on the sum that re-lists the unsplit jobs of each server.

Held fixed, as in the exact neighbourhoods (:mod:`rar_opt.solvers.neighbourhoods`): every
split job and every job that cannot run unsplit keeps its interval and its GPUs. Every other
job (:func:`rar_opt.formulations.neighbourhood.movable`) runs on one server for its unsplit
time ``Instance.modes.single``, whatever runs beside it, because contention counts split
jobs only (docs/exactness.md, "Exact neighbourhoods"). So, with the split jobs held, the
total completion time is a sum over servers, and each server's part depends only on which
unsplit jobs it holds and when they start.

The state is, per server, a list of its unsplit jobs. A server's starts are its list's
*serial schedule*: each job in turn at the earliest slot, not before its release, from
which the GPUs the held jobs and the jobs placed before it leave free hold it for its whole
run, ending by the start's makespan (so a makespan cap or the horizon stays kept). This is
the serial schedule-generation scheme of project scheduling, whose schedules are exactly
the active ones (no job can start earlier without delaying another; Kolisch 1996), and the
sum is a regular objective, so for the jobs a server holds some list gives the best
arrangement of them.

Each move changes one or two lists and is judged on those servers alone: move a job to
another server (at a random place in its list), swap two jobs of different servers, or move
a job within its list. A move is kept when the sum does not grow (moves that leave it equal
let the search drift across plateaus). The best lists found are turned into a schedule,
which is re-simulated and checked before it is returned; it is never worse than the start
nor longer. Measured inside ``auto`` for sums in docs/exactness.md, "Server orders".

Randomness comes from ``seed`` only; with ``moves`` given and time to spare two runs give the
same schedule.
"""

from __future__ import annotations

import logging
import time

import numpy as np

from rar_opt.check import check
from rar_opt.formulations import neighbourhood as nb
from rar_opt.instance import Instance
from rar_opt.schedule import Schedule
from rar_opt.solvers.record import Searched
from rar_opt.support.processes import stop_requested

log = logging.getLogger(__name__)

MOVE_SHARES = (0.4, 0.3)
"""The shares of moves to another server and of swaps between servers; the rest move a job
within its server's list (not tuned)."""


Jobs = tuple[list[int], list[int], list[int], int]
"""Per job its GPUs, unsplit length and release, and the slot every job must end by."""


def serial(
    free: np.ndarray, order: list[int], gpus: list[int], length: list[int], release: list[int], last: int
) -> tuple[int, dict[int, int]] | None:
    """The serial schedule of ``order`` on one server whose free GPUs per slot are ``free``
    (slots 0..last-1): each job at the earliest slot from its release at which it fits for
    its whole run. Returns (the sum of their completion times, their starts), or None when a
    job cannot end by ``last``."""
    free = free.copy()
    total, starts = 0, {}
    for j in order:
        g, p, t = gpus[j], length[j], release[j]
        while True:
            if t + p > last:
                return None
            short = np.flatnonzero(free[t : t + p] < g)
            if not len(short):
                break
            t += int(short[-1]) + 1  # past the last slot in the window that is too full
        free[t : t + p] -= g
        starts[j] = t
        total += t + p
    return total, starts


def search(
    instance: Instance, schedule: Schedule, *, time_limit: float, seed: int = 0, moves: int | None = None
) -> Searched:
    """Improve ``schedule``'s total completion time by re-listing each server's unsplit jobs
    (module docstring) for ``time_limit`` seconds or ``moves`` moves; never returns a schedule
    worse than ``schedule``, nor one whose makespan is longer."""
    began = time.perf_counter()
    runs = nb.Runs.of(instance, schedule)
    first, last = runs.total(), int(runs.end.max())
    modes = instance.modes
    movable = [int(j) for j in nb.movable(runs)]
    n_servers = instance.num_servers
    held = np.setdiff1d(np.arange(instance.num_jobs), movable)
    free = np.repeat(modes.capacity[:, None], last, axis=1).astype(np.int64)
    for h in held:
        for on in np.flatnonzero(runs.placements[h]):
            free[on, runs.start[h] : runs.end[h]] -= runs.placements[h, on]
    gpus, length = modes.gpus.tolist(), modes.single.tolist()
    release = instance.releases.astype(np.int64).tolist()
    server = runs.server
    lists = [
        sorted((j for j in movable if server[j] == s), key=lambda j: (int(runs.start[j]), j)) for s in range(n_servers)
    ]
    placed = [serial(free[s], lists[s], gpus, length, release, last) for s in range(n_servers)]
    if not movable or any(p is None for p in placed):  # a list the start itself cannot re-list: keep it
        return Searched(schedule, first, first, 0, 0, time.perf_counter() - began)
    value = [p[0] for p in placed if p is not None]
    where = {j: s for s in range(n_servers) for j in lists[s]}
    hosts = {j: [int(s) for s in np.flatnonzero(modes.capacity >= gpus[j])] for j in movable}
    rng = np.random.default_rng(seed)
    best, best_lists, now = sum(value), [list(x) for x in lists], sum(value)
    done = kept = 0

    def judged(new: dict[int, list[int]]) -> dict[int, int] | None:
        """Each changed server's sum, or None when a job would end past the makespan."""
        values = {}
        for s, order in new.items():
            found = serial(free[s], order, gpus, length, release, last)
            if found is None:
                return None
            values[s] = found[0]
        return values

    while time.perf_counter() - began < time_limit and (moves is None or done < moves):
        if done % 256 == 0 and stop_requested() is not None:
            break
        done += 1
        j = movable[int(rng.integers(len(movable)))]
        a, kind = where[j], rng.random()
        if kind < MOVE_SHARES[0]:  # to another server
            b = hosts[j][int(rng.integers(len(hosts[j])))]
            if b == a:
                continue
            new = {a: [x for x in lists[a] if x != j], b: list(lists[b])}
            new[b].insert(int(rng.integers(len(new[b]) + 1)), j)
        elif kind < MOVE_SHARES[0] + MOVE_SHARES[1]:  # a swap with a job of another server
            k = movable[int(rng.integers(len(movable)))]
            b = where[k]
            if b == a or modes.capacity[b] < gpus[j] or modes.capacity[a] < gpus[k]:
                continue
            new = {a: [k if x == j else x for x in lists[a]], b: [j if x == k else x for x in lists[b]]}
        else:  # within its server
            order = [x for x in lists[a] if x != j]
            if not order:
                continue
            order.insert(int(rng.integers(len(order) + 1)), j)
            new = {a: order}
        values = judged(new)
        if values is None:
            continue
        change = sum(v - value[s] for s, v in values.items())
        if change > 0:
            continue
        kept += 1
        for s, order in new.items():
            lists[s], value[s] = order, values[s]
            for x in order:
                where[x] = s
        now += change
        if now < best:
            best, best_lists = now, [list(x) for x in lists]
    held_total = int(runs.end[held].sum())
    found = _schedule(instance, runs, free, best_lists, (gpus, length, release, last))
    report = check(instance, found)
    total = int(report.result.completion.sum()) if report.feasible else None
    if total is None or total != held_total + best or int(report.result.completion.max()) > last:
        log.warning("server orders: the schedule found does not match the simulator; the start is kept")
        total = None
    if total is None or total >= first:
        return Searched(schedule, first, first, done, kept, time.perf_counter() - began)
    return Searched(found, total, first, done, kept, time.perf_counter() - began)


def _schedule(instance: Instance, runs: nb.Runs, free: np.ndarray, lists: list[list[int]], jobs: Jobs) -> Schedule:
    """The schedule of ``lists``: each server's serial schedule, the held jobs as they were."""
    start, placements = runs.start.copy(), runs.placements.copy()
    for s, order in enumerate(lists):
        placed = serial(free[s], order, *jobs)
        assert placed is not None  # these lists were judged feasible
        for j, t in placed[1].items():
            start[j], placements[j] = t, 0
            placements[j, s] = instance.modes.gpus[j]
    return Schedule.from_arrays(instance.name, start, placements, meta={"method": "server-orders"})
