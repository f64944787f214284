"""Evidence for the JCT table (issue 31): which side holds an average-JCT gap back.

Two list schedulers *with backfilling* (at each completion, every waiting job is tried in
priority order, so a later job may start before an earlier one that does not fit yet),
each driven by an iterated local search over the priority order, the sum of completion
times as the score:

* ``servers`` (a real schedule): a job starts on one server that holds it, the one with
  the fewest free GPUs (rule ``best``) or the smallest such server, then the fewest free
  (``small``); with ``reserve`` (EASY backfilling), the first job that must wait keeps
  the server where it could start earliest, and a later job takes that server only if it
  ends by then. When no server holds it and ``splits`` is on, it may start
  split over servers that host no other split job (the ones with the most free GPUs
  first), so no server ever carries two split jobs and every split job sees exactly one
  contender: its time is then ``ceil(F / phi(1, n))`` of the time model
  (:meth:`rar_opt.cluster.timemodel.TimeModel.phi`) for its n servers, and a job on one
  server runs ``Instance.modes.single``. It splits only when that ends earlier than the
  earliest single-server start it could get from the jobs already running. The schedule
  is built and judged by the checker (:func:`rar_opt.check.check`): the sum reported is
  the simulator's.
* ``migratory`` (not a schedule, a measuring stick for bounds): jobs on the pooled GPUs
  with the server classes' capacities (``rar_opt.formulations.flowlp.classes_of``) in
  every slot, at their single-server times, never split. It is a schedule of the
  *migratory* relaxation (docs/exactness.md, "What a slot-by-slot bound cannot see"):
  every bound that checks capacities slot by slot is at most its optimum, so at most this
  sum.

The searches are seeded and stop on wall time, so they are evidence, not a method of
``solve``: a lower sum than ``auto``'s proves that better schedules exist.
"""

from __future__ import annotations

import heapq
import time
from dataclasses import dataclass

import numpy as np

from rar_opt.check import check
from rar_opt.formulations.flowlp import classes_of
from rar_opt.instance import Instance
from rar_opt.schedule import Schedule

NEVER = 1 << 60
RULES = ("best", "small")


@dataclass
class Found:
    """The best order found and what it gives."""

    total: int  # the sum of completion times (re-simulated for ``servers``)
    order: list[int]
    iterations: int
    seconds: float
    split_jobs: int = 0
    violations: int = 0
    schedule: Schedule | None = None
    rule: str = ""  # the placement rule of the ``servers`` search


class Servers:
    """The backfilling list scheduler on the servers (module docstring)."""

    def __init__(self, instance: Instance, splits: bool = True, rule: str = "best", reserve: bool = False) -> None:
        if instance.cluster.topology is not None:
            raise ValueError("the backfilling evidence assumes the paper's star network")
        m = instance.modes
        self.instance = instance
        self.gpus = m.gpus.tolist()
        self.single = m.single.tolist()
        self.release = instance.releases.tolist()
        self.cap = instance.cluster.capacity.tolist()
        self.splits = splits
        if rule not in RULES:
            raise ValueError(f"rule must be one of {RULES}, got {rule!r}")
        # servers in the order the rule prefers them among those with room: fewest free
        # GPUs first ("best"), or the smallest servers first, then fewest free ("small")
        self.rule = rule + ("+reserve" if reserve else "")
        self.small_first = rule == "small"
        self.reserve = reserve  # EASY backfilling: the first job that waits keeps its server free for it
        tm = instance.time_model
        jobs, servers = len(self.gpus), len(self.cap)
        split = np.full((jobs, servers + 1), NEVER, dtype=np.int64)
        for n in range(2, servers + 1):
            d = tm.execution_slots(tm.phi(np.ones(jobs), np.full(jobs, n)))
            ok = (n <= m.gpus) & (d < NEVER)
            split[ok, n] = d[ok]
        self.split = split.tolist()

    def run(self, order: list[int]) -> tuple[int, list[int], list[tuple[tuple[int, int], ...]]]:
        """(sum of completions, starts, placements as ((server, gpus), ...)) of ``order``."""
        gpus, single, cap, rel = self.gpus, self.single, self.cap, self.release
        n_srv = len(cap)
        free = list(cap)
        split_busy = [False] * n_srv
        holding: list[list[tuple[int, int]]] = [[] for _ in range(n_srv)]  # (end, gpus) per server
        start = [0] * len(gpus)
        place: list[tuple[tuple[int, int], ...]] = [()] * len(gpus)
        running: list[tuple[int, int]] = []
        arrivals = sorted({r for r in rel if r > 0})
        pending, t, total = list(order), 0, 0
        while pending:
            waiting: list[int] = []
            held, until = -1, 0  # the server kept for the first waiting job, and until when
            for j in pending:
                if rel[j] > t:
                    waiting.append(j)
                    continue
                g = gpus[j]
                best, best_key = -1, (NEVER, NEVER)
                for s in range(n_srv):
                    if free[s] >= g and (s != held or t + single[j] <= until):
                        key = (cap[s], free[s]) if self.small_first else (free[s], 0)
                        if key < best_key:
                            best, best_key = s, key
                if best >= 0:
                    used: tuple[tuple[int, int], ...] = ((best, g),)
                    end = t + single[j]
                else:
                    chosen = self._split(j, t, free, split_busy, holding) if self.splits and g > 1 else None
                    if chosen is not None and held >= 0 and chosen[1] > until and any(s == held for s, _ in chosen[0]):
                        chosen = None
                    if chosen is None:
                        if self.reserve and held < 0 and not waiting:
                            held, until = self._reservation(g, free, holding)
                        waiting.append(j)
                        continue
                    used, end = chosen
                for s, k in used:
                    free[s] -= k
                    holding[s].append((end, k))
                    if len(used) > 1:
                        split_busy[s] = True
                start[j], place[j] = t, used
                total += end
                heapq.heappush(running, (end, j))
            pending = waiting
            if not pending:
                break
            nxt = min([r for r in arrivals if r > t], default=NEVER)
            if running and running[0][0] <= nxt:
                t = running[0][0]
                while running and running[0][0] == t:
                    _, j = heapq.heappop(running)
                    for s, k in place[j]:
                        free[s] += k
                        holding[s].remove((t, k))
                        if len(place[j]) > 1:
                            split_busy[s] = False
            elif nxt < NEVER:
                t = nxt
            else:
                raise RuntimeError("a job fits nowhere on an empty cluster")
        return total, start, place

    def _reservation(self, g: int, free: list[int], holding: list[list[tuple[int, int]]]) -> tuple[int, int]:
        """(server, slot): where and when a job of g GPUs could start unsplit at the
        earliest if nothing else started."""
        best, when = -1, NEVER
        for s in range(len(free)):
            if self.cap[s] < g:
                continue
            room = free[s]
            for e, k in sorted(holding[s]):
                room += k
                if room >= g:
                    if e < when:
                        best, when = s, e
                    break
        return best, when

    def _split(
        self, j: int, t: int, free: list[int], busy: list[bool], holding: list[list[tuple[int, int]]]
    ) -> tuple[tuple[tuple[int, int], ...], int] | None:
        """A contention-free split of job j at slot t, if it ends before waiting would."""
        g = self.gpus[j]
        got, used = 0, []
        for s in sorted((s for s in range(len(free)) if not busy[s] and free[s] > 0), key=lambda s: -free[s]):
            take = min(free[s], g - got)
            used.append((s, take))
            got += take
            if got == g:
                break
        if got < g or len(used) < 2:
            return None
        end = t + self.split[j][len(used)]
        latest = end - self.single[j]  # waiting for one server pays when it can start before this
        for s in range(len(free)):
            if self.cap[s] < g:
                continue
            room = free[s]
            for e, k in sorted(holding[s]):
                if e > latest:
                    break
                room += k
                if room >= g:
                    return None
        return tuple(used), end

    def schedule(self, order: list[int]) -> Schedule:
        """The schedule of ``order`` (placements as GPU counts per server)."""
        _, start, place = self.run(order)
        rows = np.zeros((len(self.gpus), len(self.cap)), dtype=np.int64)
        for j, used in enumerate(place):
            for s, k in used:
                rows[j, s] += k
        return Schedule.from_arrays(self.instance.name, np.array(start, dtype=np.int64), rows)


class Migratory:
    """Jobs on the pooled GPUs with the server classes' capacities, never split (module docstring)."""

    def __init__(self, instance: Instance) -> None:
        m = instance.modes
        self.gpus = m.gpus.tolist()
        self.single = np.minimum(m.single, m.split).tolist()  # single or, where faster, the split time
        self.release = instance.releases.tolist()
        classes = classes_of(instance)
        self.capacity = [m.num_gpus] + [n_a for _, n_a, _ in classes]
        self.member = [[0] + [q + 1 for q, (_, _, o) in enumerate(classes) if g > o] for g in self.gpus]
        # a job faster split than single holds the pool only (as the flow LP's split kind)
        for j in range(len(self.gpus)):
            if m.split[j] < m.single[j]:
                self.member[j] = [0]

    def run(self, order: list[int]) -> tuple[int, list[int], list[tuple[tuple[int, int], ...]]]:
        gpus, dur, rel = self.gpus, self.single, self.release
        used = [0] * len(self.capacity)
        running: list[tuple[int, int]] = []
        arrivals = sorted({r for r in rel if r > 0})
        pending, t, total = list(order), 0, 0
        start = [0] * len(gpus)
        while pending:
            waiting = []
            for j in pending:
                g = gpus[j]
                if rel[j] > t or any(used[q] + g > self.capacity[q] for q in self.member[j]):
                    waiting.append(j)
                    continue
                for q in self.member[j]:
                    used[q] += g
                start[j] = t
                total += t + dur[j]
                heapq.heappush(running, (t + dur[j], j))
            pending = waiting
            if not pending:
                break
            nxt = min([r for r in arrivals if r > t], default=NEVER)
            if running and running[0][0] <= nxt:
                t = running[0][0]
                while running and running[0][0] == t:
                    _, j = heapq.heappop(running)
                    for q in self.member[j]:
                        used[q] -= gpus[j]
            elif nxt < NEVER:
                t = nxt
            else:
                raise RuntimeError("a job fits nowhere on an empty cluster")
        return total, start, []


def search(
    engine: Servers | Migratory, starts: list[list[int]], seconds: float, seed: int = 0, restart: int = 3000
) -> tuple[int, list[int], int]:
    """Iterated local search over priority orders from the best of ``starts``: a move
    shifts one job up to 10 places, swaps two neighbours or re-inserts 2-5 jobs at random
    places; a candidate no worse than the current order replaces it; after ``restart``
    moves without a gain the search returns to the best order. (sum, order, moves)."""
    rng = np.random.default_rng(seed)
    best, best_order = min(((engine.run(o)[0], list(o)) for o in starts), key=lambda x: x[0])
    cur, cur_value, since, moves = list(best_order), best, 0, 0
    n = len(cur)
    stop = time.perf_counter() + seconds
    while time.perf_counter() < stop and n > 1:
        moves += 1
        since += 1
        order = list(cur)
        draw = rng.random()
        if draw < 0.5:
            i = int(rng.integers(n))
            order.insert(int(np.clip(i + rng.integers(-10, 11), 0, n - 1)), order.pop(i))
        elif draw < 0.8:
            i = int(rng.integers(n - 1))
            order[i], order[i + 1] = order[i + 1], order[i]
        else:
            picked = sorted(rng.choice(n, int(rng.integers(2, min(6, n + 1))), replace=False).tolist(), reverse=True)
            for job in [order.pop(i) for i in picked]:
                order.insert(int(rng.integers(len(order) + 1)), job)
        value = engine.run(order)[0]
        if value <= cur_value:
            since = 0 if value < cur_value else since
            cur, cur_value = order, value
            if value < best:
                best, best_order = value, list(order)
        if since > restart:
            cur, cur_value, since = list(best_order), best, 0
    return best, best_order, moves


def start_orders(instance: Instance, mean_starts: tuple[float, ...] | None) -> list[list[int]]:
    """Priority orders to start from: the flow LP's mean starts (when known), its mean
    completions, and the smallest area G_j single_j first."""
    m = instance.modes
    area = m.gpus * np.minimum(m.single, m.split)
    out = [np.argsort(area, kind="stable").tolist()]
    if mean_starts is not None:
        ms = np.array(mean_starts)
        out += [np.argsort(ms, kind="stable").tolist(), np.argsort(ms + m.rho, kind="stable").tolist()]
    return out


def on_servers(
    instance: Instance, mean_starts: tuple[float, ...] | None, seconds: float, splits: bool = True, seed: int = 0
) -> Found:
    """The ``servers`` search for ``seconds`` in all, shared equally by the placement rules
    with and without a reservation; the best schedule found, judged by the checker."""
    began = time.perf_counter()
    starts = start_orders(instance, mean_starts)
    engines = [Servers(instance, splits, rule, reserve) for rule in RULES for reserve in (False, True)]
    found = [(*search(e, starts, seconds / len(engines), seed), e) for e in engines]  # an equal share each
    _, order, _, engine = min(found, key=lambda f: f[0])
    moves = sum(f[2] for f in found)
    sched = engine.schedule(order)
    report = check(instance, sched)
    total = int(report.result.completion.sum()) if report.result.all_complete else NEVER
    split_jobs = sum(1 for j in range(instance.num_jobs) if len(sched.sparse.row_entries(j)[0]) > 1)
    seconds_used = time.perf_counter() - began
    return Found(total, order, moves, seconds_used, split_jobs, len(report.violations), sched, engine.rule)


def migratory(instance: Instance, mean_starts: tuple[float, ...] | None, seconds: float, seed: int = 0) -> Found:
    """The ``migratory`` search for ``seconds`` (no schedule: a sum of the relaxation)."""
    began = time.perf_counter()
    engine = Migratory(instance)
    total, order, moves = search(engine, start_orders(instance, mean_starts), seconds, seed)
    return Found(total, order, moves, time.perf_counter() - began)
