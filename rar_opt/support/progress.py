"""Progress reports while something runs: one home for every progress channel.

A channel is a context variable holding the current listener; code that makes progress
reports to it, and whoever watches (the command line's progress bars, a notebook)
listens for the duration of a block. Nothing is reported when nobody listens. Two
channels exist:

* :data:`TRIALS`: a policy's list-scheduling trials, ``(trial, placed, jobs)``: the
  trial's number in the run (from 1), the jobs it has placed, the jobs to place
  (:mod:`rar_opt.algorithms.engine`);
* :data:`SEARCH`: an exact method's standing, ``(best, bound, phase)``: the best makespan
  so far, the best bound (rounded up) and the phase that just answered
  (:mod:`rar_opt.solvers.decompose`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any, Generic, TypeVar

L = TypeVar("L")


class Channel(Generic[L]):
    """One kind of progress report, with at most one listener in a context."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._listener: ContextVar[Any] = ContextVar(f"rar_opt_progress_{name}", default=None)

    @contextlib.contextmanager
    def listening(self, listener: L | None) -> Iterator[None]:
        """Within the block, ``listener`` hears every report (None: nobody does)."""
        token = self._listener.set(listener)
        try:
            yield
        finally:
            self._listener.reset(token)

    def listener(self) -> L | None:
        """The listener of this context, or None."""
        found: L | None = self._listener.get()
        return found


TRIALS: Channel[Any] = Channel("trials")
"""A policy's trials (the engine keeps a per-run trial count beside the listener)."""

SEARCH: Channel[Any] = Channel("search")
"""An exact method's best schedule and bound after every phase."""


def report_search(best: int | None, bound: int | None, phase: str) -> None:
    """Tell the search listener, if any, where the run stands after ``phase``."""
    listener = SEARCH.listener()
    if listener is not None:
        listener(best, bound, phase)
