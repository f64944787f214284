"""The deadline alarm: it interrupts Python work at the deadline and never outlives its block."""

from __future__ import annotations

import signal
import sys
import time

import pytest

from rar_opt.support.processes import TimeUp, alarm_at, graceful_stops, stop_requested


def _busy(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        sum(range(200))


def test_the_alarm_stops_python_work_at_the_deadline() -> None:
    began = time.perf_counter()
    with pytest.raises(TimeUp), alarm_at(began + 0.05):
        _busy(5.0)
    assert time.perf_counter() - began < 1.0  # stopped long before the work's 5 s


@pytest.mark.parametrize("margin_ms", [-0.2, 0.0, 0.1, 0.3, 0.6, 1.0])
def test_a_block_ending_at_the_deadline_leaves_no_alarm_behind(margin_ms: float) -> None:
    """Blocks that end just before, at or just after the deadline: whatever happens inside,
    afterwards the previous handler is back and no timer is armed."""
    previous = signal.getsignal(signal.SIGALRM)
    for _ in range(40):
        try:
            with alarm_at(time.perf_counter() + 0.001):
                _busy(0.001 + margin_ms / 1000)
        except TimeUp:
            pass
        assert signal.getsignal(signal.SIGALRM) is previous
        assert signal.getitimer(signal.ITIMER_REAL)[0] == 0.0
    _busy(0.05)  # a stray ring would raise here


def test_no_deadline_means_no_alarm() -> None:
    with alarm_at(None):
        _busy(0.01)
    assert signal.getitimer(signal.ITIMER_REAL)[0] == 0.0


class _SlowToDie:
    """An object whose ``__del__`` runs past the deadline: Python swallows (and prints as
    'unraisable') any exception raised inside it, so the alarm's ring is lost there."""

    def __init__(self, until: float) -> None:
        self.until = until

    def __del__(self) -> None:
        while time.perf_counter() < self.until:
            sum(range(200))


def test_a_ring_swallowed_by_a_finalizer_still_stops_the_block(monkeypatch) -> None:
    # the whole block past the deadline runs inside __del__, where every ring is swallowed;
    # the block must still end with TimeUp (raised as it ends), and nothing is printed
    seen: list = []
    monkeypatch.setattr("sys.unraisablehook", seen.append)
    began = time.perf_counter()
    with pytest.raises(TimeUp), alarm_at(began + 0.02):
        _SlowToDie(began + 0.08)  # dropped at once: its __del__ spans the deadline and two re-rings
    assert seen == []
    assert signal.getitimer(signal.ITIMER_REAL)[0] == 0.0
    assert sys.unraisablehook == seen.append  # the caller's hook is back


def test_a_stop_that_lands_in_a_finalizer_is_not_printed(monkeypatch) -> None:
    # a first Ctrl-C during Python work (a section) raises TimeUp in the main thread; when it
    # lands in a weakref callback, Python swallows it and printed "Exception ignored ...
    # Traceback" (the variants command under a test's Ctrl-C); the stop itself stands
    import weakref

    from rar_opt.support import processes

    seen: list = []
    monkeypatch.setattr("sys.unraisablehook", seen.append)

    class Thing:
        pass

    def lands_here(_ref) -> None:
        raise TimeUp

    with graceful_stops():
        thing = Thing()
        ref = weakref.ref(thing, lands_here)
        del thing  # the callback runs and raises where nothing can catch it
        boom = weakref.ref(Thing(), lambda _ref: 1 / 0)  # any other error still reaches the hook
    assert ref() is None and boom() is None
    assert [type(u.exc_value) for u in seen] == [ZeroDivisionError]
    assert sys.unraisablehook == seen.append  # the caller's hook is back
    assert processes.stop_requested() is None


def test_the_deadline_alarm_is_not_a_stop_request() -> None:
    # inside rar-opt's commands (graceful_stops) a signal's byte on the wakeup fd is a stop
    # request; the alarm's SIGALRM writes one too, and used to end `solve` with exit 142
    # ("interrupted (SIGALRM)") whenever the time limit stopped a model build
    with graceful_stops():
        with pytest.raises(TimeUp), alarm_at(time.perf_counter() + 0.01):
            _busy(1.0)
        _busy(0.2)  # time for the watcher thread to read the byte
        assert stop_requested() is None
