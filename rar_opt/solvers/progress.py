"""Progress of an exact method while it runs: the best schedule and the best bound so far.

The loop of :mod:`.decompose` reports after every phase's answer; whoever watches (the
command line's progress bar, a notebook) subscribes with :func:`observe` for the duration
of a block. Nothing is reported when nobody watches.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar

Observer = Callable[[int | None, int | None, str], None]
"""Called with the best makespan so far, the best bound so far (rounded up) and the phase."""

_OBSERVER: ContextVar[Observer | None] = ContextVar("rar_opt_progress", default=None)


@contextlib.contextmanager
def observe(observer: Observer) -> Iterator[None]:
    """Within the block, ``observer`` hears of every improvement of the best schedule or bound."""
    token = _OBSERVER.set(observer)
    try:
        yield
    finally:
        _OBSERVER.reset(token)


def report(best: int | None, bound: int | None, phase: str) -> None:
    """Tell the observer, if any, where the run stands after ``phase``."""
    observer = _OBSERVER.get()
    if observer is not None:
        observer(best, bound, phase)
