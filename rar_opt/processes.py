"""Worker processes that die with their client.

A sweep's worker processes (and SCIP's child process) must not outlive the command that
started them, however it ends: Ctrl-C, SIGTERM or SIGKILL. On Linux each worker asks the
kernel for SIGKILL when its parent dies (``prctl(PR_SET_PDEATHSIG)``); elsewhere this is a
no-op and the pool's own shutdown is all there is.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import Any

PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int) -> None:
    """Have the kernel kill this process when its parent ``parent`` dies (Linux); exit at once
    if it is already gone (it may die while this process is still starting)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


def worker_init(parent: int) -> None:
    """Initializer of every worker process (``initargs=(os.getpid(),)``): one BLAS thread,
    and die with the client process ``parent``."""
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = "1"
    die_with_parent(parent)


def seconds_since_start() -> float:
    """Wall seconds since this process started (Linux: from /proc; elsewhere 0). The command
    line counts its time limits from the start of the process, imports included."""
    try:
        with open("/proc/self/stat") as f:
            start_ticks = int(f.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
        return max(0.0, uptime - start_ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return 0.0


def worker_pool(workers: int) -> ProcessPoolExecutor:
    """A pool of ``workers`` spawned processes that die with this one."""
    ctx = multiprocessing.get_context("spawn")
    return ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=worker_init, initargs=(os.getpid(),))


class TimeUp(BaseException):
    """The deadline of :func:`alarm_at` passed while its block ran (a BaseException, like
    KeyboardInterrupt, so that no library's ``except Exception`` swallows it)."""


@contextlib.contextmanager
def alarm_at(deadline: float | None) -> Iterator[None]:
    """Raise :class:`TimeUp` inside the block when ``time.perf_counter()`` passes
    ``deadline`` (a SIGALRM timer). Only the main thread of a process can take signals, so
    elsewhere (and without a deadline) the block runs unguarded. Python code (a model build)
    is interrupted at once; native code only when it returns to Python, so wrap Python work
    only, never a solver call whose result must not be lost."""
    guarded = (
        deadline is not None and hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    )
    if not guarded:
        yield
        return
    assert deadline is not None
    left = deadline - time.perf_counter()
    if left <= 0:
        raise TimeUp

    active = [True]  # False once the block is over: a late ring then does nothing

    def ring(signum: int, frame: Any) -> None:
        if not active[0]:
            return
        # raised where the interpreter happens to be; if that is a place that swallows
        # exceptions (a garbage-collector callback), the timer rings again in 10 ms
        signal.setitimer(signal.ITIMER_REAL, 0.01)
        raise TimeUp

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, left)
    # Pyomo logs a rule it sees fail before re-raising: not news here
    quiet = [logging.getLogger(name) for name in ("pyomo", "pyomo.core", "pyomo.core.base")]
    for logger in quiet:
        logger.addFilter(_not_time_up)
    try:
        yield
    finally:
        while True:  # a ring from here on is a no-op, so the cleanup always runs
            try:
                active[0] = False
                break
            except TimeUp:  # rang in the instant before: try again
                continue
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        for logger in quiet:
            logger.removeFilter(_not_time_up)


def _not_time_up(record: logging.LogRecord) -> bool:
    """Drop Pyomo's reports of a rule interrupted by :class:`TimeUp`."""
    return "TimeUp" not in record.getMessage()
