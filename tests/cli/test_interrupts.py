"""A real Ctrl-C (and SIGTERM) on real processes: every phase and backend stops at its next
safe point, the best schedule and bound are kept and written, the exit status is 128 + the
signal, the status says ``interrupted`` (never a time limit), and a study stores no task
that a signal cut short."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from rar_opt import Instance, Schedule, check
from rar_opt.instances.generate import tiny

from ..helpers import HARD, stored_statuses

SAFE_POINT_S = 30.0  # a sanity bound on how long a stop may take, not a benchmark


def _signalled(
    args: list[str], signum: int, after: float, cwd: Path, ready: Callable[[], bool] = lambda: True
) -> tuple[subprocess.CompletedProcess, float]:
    """Run ``rar-opt ARGS``, send ``signum`` once ``after`` seconds have passed and ``ready()``
    holds; the finished process and the seconds it took to end after the signal."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "rar_opt", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd
    )
    began = time.perf_counter()
    while time.perf_counter() - began < after or not ready():
        if proc.poll() is not None:
            pytest.fail(f"the command ended before the signal: {proc.stderr.read() if proc.stderr else ''}")
        time.sleep(0.05)
    proc.send_signal(signum)
    sent = time.perf_counter()
    out, err = proc.communicate(timeout=120)
    took = time.perf_counter() - sent
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), took


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_one_signal_stops_auto_and_keeps_its_best(tmp_path: Path, signum: int) -> None:
    out, took = _signalled(
        ["solve", str(HARD), "--time-limit", "300", "--json", "-o", "best.json"], signum, 8.0, tmp_path
    )
    assert out.returncode == 128 + signum, out.stderr
    assert took < SAFE_POINT_S and "Traceback" not in out.stderr
    assert f"interrupted ({signal.Signals(signum).name})" in out.stderr
    data = json.loads(out.stdout)
    assert data["status"] == "interrupted" and data["options"]["interrupted"] == signal.Signals(signum).name
    assert "time limit" not in data["termination"]
    if data["makespan"] is not None:  # the best schedule so far, written and checked
        schedule = Schedule.read(tmp_path / "best.json")
        report = check(Instance.read(HARD), schedule)
        assert report.feasible and report.result.makespan == data["makespan"]
        assert data["bound"] is None or data["bound"] <= data["makespan"]


def test_ctrl_c_in_a_highs_solve_keeps_the_incumbent(tmp_path: Path) -> None:
    tiny(4, jobs=16, servers=8).write(tmp_path / "i.json")  # HiGHS runs long on it (issue 21)
    args = ["solve", "i.json", "--model", "compact-makespan", "--warm-start", "sjf-bco", "--time-limit", "300"]
    out, took = _signalled([*args, "--json", "-o", "x.json"], signal.SIGINT, 10.0, tmp_path)
    assert out.returncode == 130 and took < SAFE_POINT_S and "Traceback" not in out.stderr, out.stderr
    data = json.loads(out.stdout)
    assert data["status"] == "interrupted", data["termination"]
    # the warm start is an incumbent from the first moment: it (or better) is written
    schedule = Schedule.read(tmp_path / "x.json")
    report = check(Instance.read(tmp_path / "i.json"), schedule)
    assert report.feasible and report.result.makespan == data["makespan"]


def test_a_study_never_stores_an_interrupted_task(tmp_path: Path) -> None:
    args = ["study", "run", "s.db", "--family", "tiny", "--jobs", "10", "--servers", "4", "--count", "30", "--quiet"]
    store = tmp_path / "s.db"
    # the signal comes while tasks are still to do: after the first row is stored
    out, took = _signalled(
        args, signal.SIGINT, 0.0, tmp_path, lambda: store.exists() and len(stored_statuses(store)) >= 1
    )
    assert out.returncode == 130 and took < SAFE_POINT_S and "Traceback" not in out.stderr, out.stderr
    statuses = stored_statuses(tmp_path / "s.db")
    assert "interrupted" not in statuses and all(s == "optimal" for s in statuses), statuses
    # the resume computes what is missing, and only that
    again = subprocess.run(
        [sys.executable, "-m", "rar_opt", *args], capture_output=True, text=True, cwd=tmp_path, timeout=600
    )
    assert again.returncode == 0, again.stderr
    assert len(stored_statuses(tmp_path / "s.db")) == 30


START_UP_DELAYS = (0.15, 0.3, 0.5, 0.7)
"""Seconds after the process starts at which Ctrl-C lands in rar-opt's own start-up (imports,
the command line, the command's module) on the shared machine. Before about 0.1 s it lands
in Python's start-up (its site module), before any of rar-opt's code runs."""


@pytest.mark.parametrize("how", ["-m", "script"])
def test_ctrl_c_during_the_imports_is_one_line_and_130(tmp_path: Path, how: str) -> None:
    import shutil

    script = shutil.which("rar-opt", path=str(Path(sys.executable).parent))
    if how == "script" and script is None:
        pytest.skip("the rar-opt console script is not installed beside this Python")
    command = [sys.executable, "-m", "rar_opt"] if how == "-m" else [str(script)]
    # solve imports the most (Pyomo, HiGHS, OR-Tools) before it starts; this one then solves
    # for seconds, so that the signal never lands after the command's work (a solve that ends
    # within the delays exits 0, which says nothing about the start-up)
    args = [*command, "solve", "tiny-8x4-s19", "--formulation", "compact"]
    for delay in START_UP_DELAYS:
        for _ in range(2):
            proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
            time.sleep(delay)
            assert proc.poll() is None, (delay, proc.communicate()[1])  # still starting or solving
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=120)
            assert proc.returncode == 130, (delay, err)
            assert "Traceback" not in err, (delay, err)
            lines = err.strip().splitlines()
            assert lines and lines[-1].startswith("interrupted (SIGINT)"), (delay, err)
            if "while starting" in err:  # nothing ran: the one line is all there is
                assert len(lines) == 1, (delay, err)


def test_importing_rar_opt_leaves_ctrl_c_to_the_program() -> None:
    # the start-up handler belongs to the command only: a program (or a worker process
    # spawned by one, which inherits sys.argv but not sys.orig_argv) keeps Python's
    code = "import signal, rar_opt; print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "True", out.stderr
    from rar_opt._startup import _started_as_command

    assert _started_as_command(["python", "-m", "rar_opt", "solve"])
    assert _started_as_command(["python", "-mrar_opt"])
    assert _started_as_command(["/usr/bin/python3", "/venv/bin/rar-opt", "schedule", "x"])
    assert _started_as_command(["python", "-I", "/venv/bin/rar-opt"])
    assert not _started_as_command(["python", "-m", "pytest", "rar-opt"])
    assert not _started_as_command(["python", "-c", "from multiprocessing.spawn import spawn_main", "rar-opt"])
    assert not _started_as_command(["python", "my_script.py"])
    assert not _started_as_command(["python"])
