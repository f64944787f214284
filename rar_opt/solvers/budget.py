"""One time budget per call: a deadline with its reserves, and the solver settings.

Every exact method in :mod:`rar_opt.solvers` spends one :class:`Budget`: the caller's time
limit for the whole call (heuristics, builds, hand-offs, solves, checks), measured from
when the call began, with the seed and thread count every backend gets. Phases take their
shares of what is left (:meth:`Budget.share`); a backend gets its share as
:class:`~rar_opt.solvers.backend.SolveOptions` (:meth:`Budget.settings`), whose deadline it
keeps. The reserves are named once, in :mod:`.backend`: the least time any solver is given
(:data:`~.backend.MIN_SOLVER_SECONDS`) and the share of a limit kept for reading back and
checking (:data:`~.backend.FINISH_RESERVE`).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from rar_opt.solvers.backend import FINISH_RESERVE, MIN_SOLVER_SECONDS, SolveOptions, check_settings
from rar_opt.support.checks import SOLVER_MAX_SEED
from rar_opt.support.processes import stop_requested


@dataclass(frozen=True)
class Budget:
    """The time of one call (``limit`` seconds from ``began``; None: no limit), its seed and threads."""

    limit: float | None = None
    began: float = dataclasses.field(default_factory=time.perf_counter)
    threads: int = 1
    seed: int = 0

    @classmethod
    def start(cls, time_limit: float | None = None, threads: int = 1, seed: int = 0) -> Budget:
        """A budget that begins now, with validated settings (:func:`~.backend.check_settings`)."""
        check_settings(time_limit, threads, seed)
        return cls(None if time_limit is None else float(time_limit), time.perf_counter(), threads, seed)

    @property
    def deadline(self) -> float | None:
        """When the call must be back (``time.perf_counter()`` clock), or None."""
        return None if self.limit is None else self.began + self.limit

    def elapsed(self) -> float:
        """Seconds since the budget began."""
        return time.perf_counter() - self.began

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
        return dataclasses.replace(self, limit=None if left is None else left * fraction, began=time.perf_counter())

    def reserving(self) -> Budget:
        """This budget less the :data:`~.backend.FINISH_RESERVE` share of its limit, kept
        for reading the schedule back and checking it after the solver returns."""
        if self.limit is None:
            return self
        return dataclasses.replace(self, limit=self.limit * (1 - FINISH_RESERVE))

    def settings(self, **extra: Any) -> SolveOptions:
        """Solver settings for the time left: a time limit and the deadline that goes with it."""
        left = self.left()
        deadline = None if left is None else time.perf_counter() + left
        return SolveOptions(time_limit=left, threads=self.threads, seed=self.seed, deadline=deadline, **extra)


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
