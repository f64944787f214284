"""Ctrl-C, as a terminal sends it (SIGINT to the whole process group), while the local Dask
cluster starts: its worker processes are importing Dask, and must not print a
KeyboardInterrupt traceback each (55-81 lines before), nor multiprocessing's resource tracker
its note about the semaphores they left. The command ends with 130 and one line, and the store
is intact: the same command completes it."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def _descendants(pid: int) -> set[int]:
    """Every process below ``pid`` (its children, theirs, ...), from /proc."""
    found: set[int] = set()
    todo = [pid]
    while todo:
        parent = todo.pop()
        try:
            tasks = list(Path(f"/proc/{parent}/task").iterdir())
        except FileNotFoundError:
            continue
        for task in tasks:
            try:
                kids = {int(c) for c in (task / "children").read_text().split()}
            except FileNotFoundError:
                continue
            todo += kids - found
            found |= kids
    return found


def _spawned_workers(pid: int) -> int:
    """How many of ``pid``'s descendants are processes spawned by multiprocessing (Dask's workers)."""
    count = 0
    for kid in _descendants(pid):
        try:
            if b"multiprocessing.spawn" in Path(f"/proc/{kid}/cmdline").read_bytes():
                count += 1
        except (FileNotFoundError, ProcessLookupError):
            continue
    return count


def _ctrl_c_while_workers_start(argv: list[str], delay: float, cwd: Path) -> subprocess.CompletedProcess:
    """Run ``argv`` in a session of its own; ``delay`` seconds after its first worker process
    appeared (it then imports Dask for a second or more), send SIGINT to the process group, as a
    terminal's Ctrl-C does. The finished process; fails the test if it ends before the signal
    or runs on 30 s after it."""
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd, start_new_session=True
    )
    try:
        while not _spawned_workers(proc.pid):
            if proc.poll() is not None:
                pytest.fail(f"the command ended before its workers started: {proc.communicate()[1]}")
            time.sleep(0.02)
        time.sleep(delay)
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.mark.parametrize(
    "delay", [0.0, pytest.param(0.3, marks=pytest.mark.slow), pytest.param(0.8, marks=pytest.mark.slow)]
)
def test_ctrl_c_while_the_workers_start_is_one_line(tmp_path: Path, delay: float) -> None:
    args = ["study", "run", "s.db", "--family", "tiny", "--count", "6", "--time-limit", "5", "--quiet"]
    argv = [sys.executable, "-m", "rar_opt", *args, "--workers", "2"]
    out = _ctrl_c_while_workers_start(argv, delay, tmp_path)
    assert out.returncode == 128 + signal.SIGINT, out.stderr
    assert "Traceback" not in out.stderr and "KeyboardInterrupt" not in out.stderr, out.stderr
    lines = out.stderr.strip().splitlines()  # no resource tracker's "leaked semaphore objects" either
    assert len(lines) == 1 and lines[0].startswith("interrupted (SIGINT)"), out.stderr
    store = tmp_path / "s.db"
    if store.exists():
        with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as db:
            assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    again = subprocess.run([*argv[:-2], "--workers", "1"], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("6 instances: "), again.stdout
