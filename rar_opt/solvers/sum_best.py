"""The incumbent of ``auto`` for the sums (:mod:`rar_opt.solvers.sums`) and the heuristics
that give its first schedules: every schedule is judged by the simulator and the checker
(:func:`sum_of`), and the best one within the makespan cap, if any, is kept (:class:`Best`)."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from rar_opt.check import check
from rar_opt.instance import Instance
from rar_opt.schedule import Schedule
from rar_opt.solvers.record import PhaseKind, PhaseRecord
from rar_opt.solvers.status import Status
from rar_opt.support.processes import stop_requested

SUM_POLICIES = ("sjf-bco", "ff", "ls", "consolidate", "online-sf", "online-ff")
"""The list-scheduling policies tried first (the cheap ones built for completion times)."""

SPAN_POLICIES = ("lpt", "pack")
"""Added under a makespan cap: they find the short makespans the cap is taken from."""


@dataclass
class Best:
    """The best schedule so far whose makespan is within ``cap`` (no cap: any)."""

    schedule: Schedule | None = None
    value: int | None = None
    source: str = ""
    cap: int | None = None
    shortest: int | None = None  # the shortest makespan seen, within the cap or not

    def offer(self, schedule: Schedule, value: tuple[int, int] | None, source: str) -> bool:
        """Keep ``schedule`` if its ``value`` (sum, makespan; None: the checker refused it)
        is within the cap and its sum is lower than the best so far; whether it was kept."""
        if value is None:
            return False
        total, span = value
        self.shortest = span if self.shortest is None else min(self.shortest, span)
        if self.cap is not None and span > self.cap:
            return False
        if self.value is None or total < self.value:
            self.schedule, self.value, self.source = schedule, total, source
            return True
        return False

    def recorded(self, value: tuple[int, int] | None) -> tuple[Status, int | None]:
        """A search phase's status and sum for its record: a schedule that the checker
        rejects, or whose makespan is past the cap, is no answer (the searches treat the
        cap as a penalty, so their best may end past it)."""
        if value is None or (self.cap is not None and value[1] > self.cap):
            return Status.NO_SOLUTION, None
        return Status.FEASIBLE, value[0]


def sum_of(instance: Instance, schedule: Schedule, objective: str) -> tuple[int, int] | None:
    """The schedule's total completion time (or flow time) and its makespan, from the
    simulator; None when the checker rejects it."""
    report = check(instance, schedule)
    if not report.feasible or report.result.makespan is None:
        return None
    total = int(np.sum(report.result.completion))
    return (total - int(instance.releases.sum()) if objective == "flow" else total), int(report.result.makespan)


def capped(instance: Instance, objective: str, best: Best, heuristics: PhaseRecord, cap: int) -> Best:
    """The heuristics' schedules offered again under the makespan cap."""
    from rar_opt.algorithms import QUICK, run_policy

    kept = Best(cap=cap, shortest=best.shortest)
    for name in heuristics.tried or {}:
        run = run_policy(instance, name, **QUICK.get(name, {}))
        kept.offer(run.schedule, sum_of(instance, run.schedule, objective), name)
    return kept


def heuristics(instance: Instance, objective: str, best: Best, policies: tuple[str, ...]) -> PhaseRecord:
    """Each of ``policies`` once (pack's construction only), its schedule offered to
    ``best``; the phase's record with every policy's sum (None where the checker refused
    its schedule). A stop request ends the phase once a schedule is kept."""
    from rar_opt.algorithms import QUICK, run_policy

    began, tried = time.perf_counter(), {}
    for name in policies:
        if best.value is not None and stop_requested() is not None:
            break
        run = run_policy(instance, name, **QUICK.get(name, {}))
        value = sum_of(instance, run.schedule, objective)
        tried[name] = None if value is None else value[0]
        best.offer(run.schedule, value, name)
    status = Status.FEASIBLE if best.value is not None else Status.NO_SOLUTION
    return PhaseRecord(PhaseKind.HEURISTICS, status, best.value, None, time.perf_counter() - began, tried=tried)
