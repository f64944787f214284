"""Shared helpers of the benchmark scripts: timing and result files with versions."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from rar_opt.support.processes import worker_init
from rar_opt.support.provenance import versions

RESULTS = Path(__file__).resolve().parent / "results"


def timed(fn: Callable[[], Any], repeat: int = 5, min_time: float = 0.2) -> tuple[float, Any]:
    """Median seconds per call over ``repeat`` rounds (each round loops to ``min_time``)."""
    value = fn()
    rounds = []
    for _ in range(repeat):
        calls, began = 0, time.perf_counter()
        while True:
            fn()
            calls += 1
            elapsed = time.perf_counter() - began
            if elapsed >= min_time:
                break
        rounds.append(elapsed / calls)
    return statistics.median(rounds), value


def result_name(text: str) -> str:
    """A results file name from a command line: ``NAME``, ``NAME.json`` or a path to it in
    ``results/`` all give ``NAME``; a path elsewhere is refused before any work starts (an
    ``argparse`` type, so that a long run cannot end by failing to write its file)."""
    path = Path(text)
    name = path.name.removesuffix(".json")
    if not name or (path.parent != Path(".") and path.parent.resolve() != RESULTS):
        raise argparse.ArgumentTypeError(f"results are written to {RESULTS}; give a file name there, not {text!r}")
    return name


def save(name: str, rows: list[dict[str, Any]], **extra: Any) -> Path:
    """Write ``results/NAME.json`` whole or not at all (a sibling file, then a rename), so that
    Ctrl-C during the write leaves the previous file in place."""
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.json"
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(json.dumps({"benchmark": name, "versions": versions(), **extra, "rows": rows}, indent=1) + "\n")
    os.replace(partial, path)
    return path


STOPS = (signal.SIGINT, signal.SIGTERM)
"""The signals that stop a benchmark run: a terminal's Ctrl-C, and ``kill`` (to the script
or to its process group) as a batch system sends it."""


class _Stopped(BaseException):
    """Raised in a benchmark's main process by a signal of :data:`STOPS` (SIGINT arrives as
    KeyboardInterrupt)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise_stopped(signum: int, _frame: Any) -> None:
    raise _Stopped(signum)


def _run_worker_init(parent: int) -> None:
    """A benchmark worker leaves the stop signals to its parent: it ignores them (so that no
    solver in it catches one and carries on with its next phase, and no worker dies before
    the parent has seen the signal) and dies with the parent."""
    for signum in STOPS:
        signal.signal(signum, signal.SIG_IGN)
    worker_init(parent)


@contextlib.contextmanager
def run_pool(workers: int, written: str = "") -> Iterator[ProcessPoolExecutor]:
    """Processes for a benchmark's runs that stop as a terminal's Ctrl-C expects: the signal
    reaches the whole process group, the workers ignore it, and the parent cancels the queued
    runs, kills the running ones and exits with status 130 and one line on stderr (naming
    ``written``, the file that holds the rows finished so far, if any) instead of waiting for
    them and printing a traceback. SIGTERM, to the script or to its group, ends it the same
    way with status 143."""
    pool = ProcessPoolExecutor(max_workers=max(1, workers), initializer=_run_worker_init, initargs=(os.getpid(),))
    before = signal.signal(signal.SIGTERM, _raise_stopped)
    try:
        with pool:
            try:
                yield pool
            except BaseException:
                running = list((getattr(pool, "_processes", None) or {}).values())  # shutdown forgets them
                manager = getattr(pool, "_executor_manager_thread", None)
                pool.shutdown(wait=False, cancel_futures=True)  # do not run the queued runs for nothing
                for process in running:
                    process.kill()
                # The pool's manager thread notices the killed workers and closes its wake-up pipe.
                # Let it finish first: CPython's exit hook writes to that pipe without the pool's
                # lock, and a close racing with that write printed an OSError traceback at exit.
                if manager is not None:
                    manager.join(timeout=5.0)
                raise
    except (KeyboardInterrupt, _Stopped) as stop:
        signum = stop.signum if isinstance(stop, _Stopped) else signal.SIGINT
        kept = f"; the rows finished so far are in {written}" if written and Path(written).exists() else ""
        print(f"interrupted ({signal.Signals(signum).name}){kept}", file=sys.stderr, flush=True)
        raise SystemExit(128 + signum) from None
    finally:
        signal.signal(signal.SIGTERM, before)


def table(rows: list[dict[str, Any]]) -> str:
    keys = list(rows[0])
    cells = [keys] + [[f"{r[k]:.4g}" if isinstance(r[k], float) else str(r[k]) for k in keys] for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(keys))]
    return "\n".join("  ".join(c[i].rjust(widths[i]) for i in range(len(keys))) for c in cells)
