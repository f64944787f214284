"""One time budget per call: a deadline with its reserves, and the solver settings.

Every exact method in :mod:`rar_opt.solvers` spends one :class:`Budget`: the caller's time
limit for the whole call (heuristics, builds, hand-offs, solves, checks), measured from
when the call began, with the seed and thread count every backend gets. Phases take their
shares of what is left (:meth:`Budget.share`); a backend gets its share as
:class:`~rar_opt.solvers.backend.SolveOptions` (:meth:`Budget.settings`), whose deadline it
keeps. The reserves are named once, in :mod:`.backend`: the least time any solver is given
(:data:`~.backend.MIN_SOLVER_SECONDS`) and the share of a limit kept for reading back and
checking (:data:`~.backend.FINISH_RESERVE`).

A budget may instead be given in units of work (``work_limit``): its clock is then a
:class:`~.backend.WorkMeter`, which only CP-SAT's deterministic time and the counted
searches advance, so that every share, every slice and every solver limit of the run is the
same on a fast machine and on a loaded one, and one seed gives one result (docs/exactness.md,
"Budgets of work").
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Any, overload

import numpy as np

from rar_opt.errors import ParameterError
from rar_opt.solvers.backend import (
    FINISH_RESERVE,
    MIN_SOLVER_SECONDS,
    UNITS_PER_SECOND,
    SolveOptions,
    WorkMeter,
    check_settings,
)
from rar_opt.support.checks import SOLVER_MAX_SEED, seconds_problem
from rar_opt.support.processes import stop_requested


@dataclass(frozen=True)
class Budget:
    """The time of one call (``limit`` seconds from ``began``; None: no limit), its seed and
    threads; with a ``meter``, ``limit`` and ``began`` are units of work on that meter."""

    limit: float | None = None
    began: float = dataclasses.field(default_factory=time.perf_counter)
    threads: int = 1
    seed: int = 0
    meter: WorkMeter | None = dataclasses.field(default=None, compare=False)
    wall_began: float = dataclasses.field(default_factory=time.perf_counter, compare=False)

    @classmethod
    def start(
        cls,
        time_limit: float | None = None,
        threads: int = 1,
        seed: int = 0,
        *,
        work_limit: float | None = None,
        meter: WorkMeter | None = None,
    ) -> Budget:
        """A budget that begins now, with validated settings (:func:`~.backend.check_settings`):
        ``time_limit`` seconds, or ``work_limit`` units of work (one thread only, since
        CP-SAT repeats itself only on one; not both), charged to ``meter`` if given (a
        caller's budget of work, of which this call is a part) or to a new one."""
        check_settings(time_limit, threads, seed)
        if work_limit is None:
            if meter is not None:
                raise ParameterError("a work meter needs a work limit", where="work_limit")
            now = time.perf_counter()
            return cls(None if time_limit is None else float(time_limit), now, threads, seed, wall_began=now)
        if problem := seconds_problem(work_limit, unit="units of work"):
            raise ParameterError(problem, where="work_limit")
        if time_limit is not None:
            raise ParameterError("give a time limit or a work limit, not both", where="work_limit")
        if threads != 1:
            raise ParameterError(
                f"a work limit runs on one thread (CP-SAT repeats itself only there), got {threads}", where="threads"
            )
        meter = WorkMeter() if meter is None else meter
        return cls(float(work_limit), meter.spent, threads, seed, meter)

    @property
    def deadline(self) -> float | None:
        """When the call must be back (``time.perf_counter()`` clock), or None (also under a
        work limit, which no wall clock bounds)."""
        return None if self.limit is None or self.meter is not None else self.began + self.limit

    def now(self) -> float:
        """The budget's clock: ``time.perf_counter()``, or the work spent on its meter."""
        return time.perf_counter() if self.meter is None else self.meter.spent

    @overload
    def per_seconds(self, seconds: float) -> float: ...

    @overload
    def per_seconds(self, seconds: None) -> None: ...

    def per_seconds(self, seconds: float | None) -> float | None:
        """A span given in seconds (a plan's constant, None: not set) on this budget's clock:
        the same seconds, or :data:`~.backend.UNITS_PER_SECOND` units of work for each."""
        if seconds is None or self.meter is None:
            return seconds
        return seconds * UNITS_PER_SECOND

    def elapsed(self) -> float:
        """Seconds (or units of work) since the budget began."""
        return self.now() - self.began

    def wall_elapsed(self) -> float:
        """Wall-clock seconds since the budget began (the same as :meth:`elapsed` without a meter)."""
        return time.perf_counter() - self.wall_began

    def expired(self) -> bool:
        """Whether the limit is used up, or a signal asked the process to stop."""
        if stop_requested() is not None:
            return True
        return self.limit is not None and self.elapsed() >= self.limit

    def left(self) -> float | None:
        """Seconds left (at least :data:`~.backend.MIN_SOLVER_SECONDS`), or None without a limit."""
        return None if self.limit is None else max(self.limit - self.elapsed(), MIN_SOLVER_SECONDS)

    def share(self, fraction: float) -> Budget:
        """A budget of ``fraction`` of what is left, beginning now (a phase's time)."""
        left = self.left()
        return dataclasses.replace(
            self, limit=None if left is None else left * fraction, began=self.now(), wall_began=time.perf_counter()
        )

    def reserving(self) -> Budget:
        """This budget less the :data:`~.backend.FINISH_RESERVE` share of its limit, kept
        for reading the schedule back and checking it after the solver returns."""
        if self.limit is None:
            return self
        return dataclasses.replace(self, limit=self.limit * (1 - FINISH_RESERVE))

    def settings(self, **extra: Any) -> SolveOptions:
        """Solver settings for the time left: a time limit and the deadline that goes with it
        (under a work limit, the work left and the meter to charge, without a deadline)."""
        left = self.left()
        if self.meter is not None:
            return SolveOptions(time_limit=left, threads=self.threads, seed=self.seed, meter=self.meter, **extra)
        deadline = None if left is None else time.perf_counter() + left
        return SolveOptions(time_limit=left, threads=self.threads, seed=self.seed, deadline=deadline, **extra)

    def charge(self, units: float) -> None:
        """Charge ``units`` of work done outside CP-SAT (a counted search) to the meter, if any."""
        if self.meter is not None:
            self.meter.charge(units)


def run_seed(seed: int, run: int) -> int:
    """The seed of the ``run``-th of several runs of one search (a restart): ``seed`` itself
    for the first, so that one run is the search it always was, and a seed drawn from
    (``seed``, ``run``) for the others; the same for the same pair."""
    if run == 0:
        return seed
    return int(np.random.SeedSequence((seed, run)).generate_state(1)[0]) % (SOLVER_MAX_SEED + 1)


def after_startup(time_limit: float | None, used: float) -> float | None:
    """A command's time limit less the ``used`` seconds its start-up took (the limit is the
    whole command's clock), never below :data:`~.backend.MIN_SOLVER_SECONDS`. A limit that
    is not a positive finite number is passed on unchanged, for :meth:`Budget.start` to refuse."""
    if not isinstance(time_limit, int | float) or isinstance(time_limit, bool) or not 0 < time_limit < float("inf"):
        return time_limit
    return max(time_limit - used, MIN_SOLVER_SECONDS)
