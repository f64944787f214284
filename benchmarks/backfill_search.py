"""Evidence for the JCT table (issue 31): which side holds an average-JCT gap back.

Two searches over priority orders of list schedulers *with backfilling* (at each event,
every waiting job is tried in priority order, so a later job may start before an earlier
one that does not fit yet), the sum of completion times as the score:

* ``servers`` (a real schedule): the package's policy ``backfill``
  (:mod:`rar_opt.algorithms.backfill`, docs/algorithms.md section 5.5), its builder on
  the servers driven by its local search, run once per rule set: best or small fit, each
  without and with the EASY reservation (the package's defaults otherwise), each from
  the sum orders and the flow LP's mean-start order, on an equal share of the time. The
  best schedule is judged by the checker (:func:`rar_opt.check.check`): the sum reported
  is the simulator's. This mode once had a builder of its own; the package's grew out of
  it and replaced it.
* ``migratory`` (not a schedule, a measuring stick for bounds): jobs on the pooled GPUs
  with the server classes' capacities (``rar_opt.formulations.flowlp.classes_of``) in
  every slot, at their single-server times, never split. It is a schedule of the
  *migratory* relaxation (docs/exactness.md, "What a slot-by-slot bound cannot see"):
  every bound that checks capacities slot by slot is at most its optimum, so at most this
  sum. Nothing in the package computes it; its orders are searched by the package's local
  search (:func:`rar_opt.algorithms.order_search.walk_orders`) until the time is up.

The searches stop on wall time, so they are evidence, not a method of ``solve``: a lower
sum than ``auto``'s proves that better schedules exist.
"""

from __future__ import annotations

import heapq
import time
from dataclasses import dataclass

import numpy as np

from rar_opt.algorithms.backfill import FITS, BackfillParams, backfill_policy
from rar_opt.algorithms.order_search import move, walk_orders
from rar_opt.check import check
from rar_opt.cluster.timemodel import NEVER
from rar_opt.formulations.flowlp import classes_of
from rar_opt.instance import Instance
from rar_opt.schedule import Schedule

ENDLESS = 10**12
"""A move budget no search reaches: the wall time stops it."""


@dataclass
class Found:
    """The best a search found and what it gives."""

    total: int  # the sum of completion times (re-simulated for ``servers``)
    iterations: int  # the moves of the search (of every rule set's, for ``servers``)
    seconds: float
    split_jobs: int = 0
    violations: int = 0
    schedule: Schedule | None = None
    rule: str = ""  # the builder's rules of the best ``servers`` schedule (``best+reserve``)


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

    def total(self, order: list[int]) -> int:
        """The sum of completion times of ``order`` with backfilling."""
        gpus, dur, rel = self.gpus, self.single, self.release
        used = [0] * len(self.capacity)
        running: list[tuple[int, int]] = []
        arrivals = sorted({r for r in rel if r > 0})
        pending, t, total = list(order), 0, 0
        while pending:
            waiting = []
            for j in pending:
                g = gpus[j]
                if rel[j] > t or any(used[q] + g > self.capacity[q] for q in self.member[j]):
                    waiting.append(j)
                    continue
                for q in self.member[j]:
                    used[q] += g
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
        return total


def start_orders(instance: Instance, mean_starts: tuple[float, ...] | None) -> list[list[int]]:
    """Priority orders to start the migratory search from: the smallest area
    G_j min(single_j, split_j) first, and the flow LP's mean starts and mean completions
    (when known)."""
    m = instance.modes
    area = m.gpus * np.minimum(m.single, m.split)
    out = [np.argsort(area, kind="stable").tolist()]
    if mean_starts is not None:
        ms = np.array(mean_starts)
        out += [np.argsort(ms, kind="stable").tolist(), np.argsort(ms + m.rho, kind="stable").tolist()]
    return out


def on_servers(instance: Instance, mean_starts: tuple[float, ...] | None, seconds: float, seed: int = 0) -> Found:
    """The ``servers`` search for ``seconds`` in all, shared equally by the rule sets; the
    best schedule found, judged by the checker."""
    began = time.perf_counter()
    given = None if mean_starts is None else tuple(int(j) for j in np.argsort(np.array(mean_starts), kind="stable"))
    rule_sets = [(fit, reserve) for fit in FITS for reserve in (False, True)]
    best: Found | None = None
    moves = 0
    for fit, reserve in rule_sets:
        params = BackfillParams(
            iterations=ENDLESS,
            time_limit=seconds / len(rule_sets),
            seed=seed,
            fit=fit,
            reserve=reserve,
            start_order=given,
        )
        run = backfill_policy(instance, params)
        assert run.search is not None
        moves += run.search["iterations"]
        report = check(instance, run.schedule)
        total = int(report.result.completion.sum()) if report.result.all_complete else NEVER
        found = Found(total, 0, 0.0, run.search["split"], len(report.violations), run.schedule, run.search["rules"])
        if best is None or (found.violations, found.total) < (best.violations, best.total):
            best = found
    assert best is not None
    best.iterations, best.seconds = moves, time.perf_counter() - began
    return best


def migratory(instance: Instance, mean_starts: tuple[float, ...] | None, seconds: float, seed: int = 0) -> Found:
    """The ``migratory`` search for ``seconds`` (no schedule: a sum of the relaxation)."""
    began = time.perf_counter()
    engine = Migratory(instance)
    stop = began + seconds
    total, order = min(((engine.total(o), o) for o in start_orders(instance, mean_starts)), key=lambda f: f[0])

    def value(candidate: list[int]) -> int | None:
        return engine.total(candidate) if time.perf_counter() < stop else None

    walk = walk_orders(np.random.default_rng(seed), order, total, value, lambda v: (v,), ENDLESS, move)
    return Found(walk.value, walk.moves, time.perf_counter() - began)
