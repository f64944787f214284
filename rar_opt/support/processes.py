"""Worker processes that die with their client.

A sweep's worker processes (and SCIP's child process) must not outlive the command that
started them, however it ends: Ctrl-C, SIGTERM or SIGKILL. On Linux each worker asks the
kernel for SIGKILL when its parent dies (``prctl(PR_SET_PDEATHSIG)``); elsewhere this is a
no-op and the pool's own shutdown is all there is.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import gc
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
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


_CALLED_AT: list[float | None] = [None]
"""Where a command run inside another program began (:func:`command_began`), or None."""


def command_began(at: float | None) -> None:
    """Start the command's clock at ``at`` (a ``time.perf_counter()`` value), or, with None,
    at the start of the process. :func:`rar_opt.cli.main` sets it for each command: the
    command line's own process counts from its start (imports included); a command run
    from another program (a test, a notebook) counts from its call, not from that
    program's start, which may be hours before."""
    _CALLED_AT[0] = at


def seconds_since_start() -> float:
    """Wall seconds since the command began (:func:`command_began`): by default since this
    process started (Linux: from /proc; elsewhere 0). The command line counts its time
    limits from the start of the process, imports included."""
    called = _CALLED_AT[0]
    if called is not None:
        return max(0.0, time.perf_counter() - called)
    try:
        with open("/proc/self/stat") as f:
            start_ticks = int(f.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
        return max(0.0, uptime - start_ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return 0.0


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
    main = threading.current_thread() is threading.main_thread()
    guarded = deadline is not None and hasattr(signal, "setitimer") and main
    if not guarded:
        with _python_section(main):
            yield
        return
    assert deadline is not None
    left = deadline - time.perf_counter()
    if left <= 0:
        raise TimeUp

    active = [True]  # False once the block is over: a late ring then does nothing
    due = [False]  # the deadline rang: if the block still ends normally, TimeUp is raised at its end

    def ring(signum: int, frame: Any) -> None:
        if not active[0]:
            return
        due[0] = True
        # raised where the interpreter happens to be; if that is a place that swallows
        # exceptions (a garbage-collector or weakref callback, a __del__), the timer rings
        # again in 10 ms, and a block that ends before that raises TimeUp as it ends
        signal.setitimer(signal.ITIMER_REAL, 0.01)
        if _in_gc_callback(frame):  # it would be printed as an "unraisable" traceback: ring later
            return
        raise TimeUp

    previous = signal.signal(signal.SIGALRM, ring)
    hook = sys.unraisablehook
    sys.unraisablehook = functools.partial(_unraisable, hook)  # a swallowed ring is not news
    # Pyomo logs a rule it sees fail before re-raising: not news here
    quiet = [logging.getLogger(name) for name in ("pyomo", "pyomo.core", "pyomo.core.base")]
    for logger in quiet:
        logger.addFilter(_not_time_up)
    try:  # armed inside the try: however early it rings (a deadline 1 ms away), the cleanup runs
        _STOPS.sections += 1  # a stop request ends the block as its deadline would
        signal.setitimer(signal.ITIMER_REAL, left)
        yield
        late = due[0]  # the block ended normally although the deadline rang (the ring was swallowed)
    finally:
        while True:  # a ring from here on is a no-op, so the cleanup always runs
            try:
                active[0] = False
                _STOPS.sections -= 1
                break
            except TimeUp:  # rang in the instant before: try again
                continue
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        sys.unraisablehook = hook
        for logger in quiet:
            logger.removeFilter(_not_time_up)
    if late:
        raise TimeUp


def _unraisable(hook: Callable[[Any], None], unraisable: Any) -> None:
    """``sys.unraisablehook`` inside :func:`alarm_at` and :func:`graceful_stops`: a
    :class:`TimeUp` raised where Python swallows exceptions (a weakref callback, a
    ``__del__``) is dropped quietly (the alarm rings again, or the block raises it as it
    ends; a stop's request is already recorded); anything else goes to ``hook``."""
    if not isinstance(unraisable.exc_value, TimeUp):
        hook(unraisable)


@contextlib.contextmanager
def _python_section(main: bool) -> Iterator[None]:
    """Mark the block as Python work the main thread may abandon when a stop is requested
    (:func:`graceful_stops` raises :class:`TimeUp` in it); elsewhere a plain block."""
    if not main:
        yield
        return
    _STOPS.sections += 1
    try:
        yield
    finally:
        _STOPS.sections -= 1


def _in_gc_callback(frame: Any) -> bool:
    """Whether ``frame`` runs inside a garbage-collector callback (an exception raised there
    is swallowed and printed, never reaching the block that waits for it)."""
    codes = {getattr(cb, "__code__", None) for cb in gc.callbacks}
    while frame is not None:
        if frame.f_code in codes:
            return True
        frame = frame.f_back
    return False


def _not_time_up(record: logging.LogRecord) -> bool:
    """Drop Pyomo's reports of a rule interrupted by :class:`TimeUp`."""
    return "TimeUp" not in record.getMessage()


# -- stopping on a signal at the next safe point ---------------------------------------------
class _Stops:
    """The process's record of a stop request (a signal number) and of what to call to stop
    the native solver that is running now."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self.stoppers: list[Callable[[], None]] = []
        self.sections = 0  # Python work the main thread may abandon at a stop request (alarm_at blocks)
        self.lock = threading.Lock()


_STOPS = _Stops()


class Interrupted(KeyboardInterrupt):
    """A loop stopped at its safe point because a signal asked the process to stop
    (:func:`stop_requested`): what it had not finished is not kept."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"interrupted by {signal.Signals(signum).name}")
        self.signum = signum


def check_stop() -> None:
    """Raise :class:`Interrupted` if a signal asked the process to stop (a loop's safe point)."""
    signum = _STOPS.signum
    if signum is not None:
        raise Interrupted(signum)


def stop_requested() -> int | None:
    """The signal (SIGINT, SIGTERM) that asked this process to stop, or None. Phases and
    loops read it at their safe points; results made after it are ``interrupted``."""
    return _STOPS.signum


def request_stop(signum: int) -> None:
    """Ask everything running to stop: record ``signum`` (the first one counts) and call the
    stop function of every native solver running now (:func:`on_stop`)."""
    with _STOPS.lock:
        first = _STOPS.signum is None
        if first:
            _STOPS.signum = signum
        stoppers = list(_STOPS.stoppers) if first else []
    for stop in stoppers:
        stop()


@contextlib.contextmanager
def on_stop(stop: Callable[[], None]) -> Iterator[None]:
    """While the block runs (a native solve), a stop request calls ``stop`` (e.g. CP-SAT's
    ``stop_search``, which may be called from any thread); one made before calls it at once."""
    with _STOPS.lock:
        _STOPS.stoppers.append(stop)
        already = _STOPS.signum is not None
    if already:
        stop()
    try:
        yield
    finally:
        with _STOPS.lock:
            _STOPS.stoppers.remove(stop)


def native_sigint() -> bool:
    """Whether a native solver may take Ctrl-C itself (CP-SAT's own handler): only where
    Python's default handler is in place in the main thread, i.e. a library user's script
    or notebook. Inside :func:`graceful_stops` (rar-opt's commands), in worker threads and
    in worker processes, rar-opt decides what a signal does."""
    return (
        threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    )


class SecondSignal(KeyboardInterrupt):
    """A second SIGINT or SIGTERM within :func:`graceful_stops`: the command ends at once,
    without the safe stop the first one asked for (``signum``: the second signal)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@contextlib.contextmanager
def graceful_stops() -> Iterator[_Stops]:
    """Within the block (main thread only), a first SIGINT or SIGTERM does not raise: it asks
    every phase and solver to stop at its next safe point (:func:`stop_requested`), so the
    best schedule and bound so far are kept; a second one raises KeyboardInterrupt.

    A solver deep in native code does not return to Python until it stops, so Python's own
    handler would run too late: the signal's byte on the wakeup fd reaches a watcher thread
    at once, which calls the running solver's stop function (:func:`on_stop`).

    A signal the process was started with ignored (SIG_IGN: SIGINT for a job put in the
    background by a shell without job control) stays ignored for the whole run, as POSIX
    tools do: a Ctrl-C at the terminal is not meant for such a job, before its start-up is
    over or after."""
    with _STOPS.lock:
        _STOPS.signum = None
    calls = [0]

    def handler(signum: int, frame: Any) -> None:
        calls[0] += 1
        request_stop(signum)
        if calls[0] >= 2:
            raise SecondSignal(signum)
        if _STOPS.sections > 0:  # Python work (a model build) that a deadline would cut short too
            raise TimeUp

    read, write = os.pipe()
    os.set_blocking(write, False)

    stopping = (signal.SIGINT, signal.SIGTERM)

    def watch() -> None:
        while True:
            data = os.read(read, 1)
            if not data:  # the write end is closed: the block is over
                return
            # the fd gets a byte for every signal Python handles, the deadline alarm's SIGALRM too
            if data[0] in stopping:
                request_stop(data[0])

    previous = {s: signal.signal(s, handler) for s in stopping if signal.getsignal(s) is not signal.SIG_IGN}
    # the handler's TimeUp can land in a weakref callback or a __del__, where Python prints it
    # as "Exception ignored"; the stop it carries is already requested, so only the print goes
    hook = sys.unraisablehook
    sys.unraisablehook = functools.partial(_unraisable, hook)
    old_fd = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
    watcher = threading.Thread(target=watch, name="rar-opt-stops", daemon=True)
    watcher.start()
    try:
        yield _STOPS
    finally:
        signal.set_wakeup_fd(old_fd)
        for signum, was in previous.items():
            signal.signal(signum, was)
        sys.unraisablehook = hook
        os.close(write)
        watcher.join(timeout=1.0)
        os.close(read)
