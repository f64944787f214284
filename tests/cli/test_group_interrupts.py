"""Ctrl-C as a terminal sends it: SIGINT to the command's whole process group (its worker
processes too), not only to the main process. Each command ends with 130 within
:data:`GROUP_EXIT_S` of the signal, without a traceback; a study keeps its finished rows and a
second run on the same store completes (issue 32: a study with Dask workers waited for ever)."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from ..helpers import HARD, group_signalled, stored_statuses

GROUP_EXIT_S = 5.0
"""From the signal to the main process's exit."""


def _group_signalled(
    args: list[str], after: float, cwd: Path, ready: Callable[[], bool] = lambda: True
) -> tuple[subprocess.CompletedProcess, float]:
    """``rar-opt ARGS`` signalled as :func:`tests.helpers.group_signalled` does."""
    return group_signalled([sys.executable, "-m", "rar_opt", *args], after, cwd, ready, wait_s=4 * GROUP_EXIT_S)


def _ended_by_ctrl_c(out: subprocess.CompletedProcess, took: float) -> None:
    assert out.returncode == 130, out.stderr
    assert took < GROUP_EXIT_S, (took, out.stderr)
    assert "Traceback" not in out.stderr and "interrupted (SIGINT)" in out.stderr, out.stderr


def test_solve(tmp_path: Path) -> None:
    out, took = _group_signalled(["solve", str(HARD), "--time-limit", "300", "--quiet"], 5.0, tmp_path)
    _ended_by_ctrl_c(out, took)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_probe_says_it_was_stopped(tmp_path: Path, signum: int) -> None:
    # a probe undecided for minutes (heavy-24x8x150-s1 at 83), stopped: its answer is
    # "undecided", told as such, and the one line of the signal follows (it was a KeyError)
    hard = Path(__file__).resolve().parents[2] / "instances" / "frontier" / "heavy-24x8x150-s1.json"
    argv = [sys.executable, "-m", "rar_opt", "probe", str(hard), "--makespan", "83", "--time-limit", "300", "--quiet"]
    out, took = group_signalled(argv, 5.0, tmp_path, wait_s=4 * GROUP_EXIT_S, signum=signum)
    assert out.returncode == 128 + signum and took < GROUP_EXIT_S, (took, out.stderr)
    assert "Traceback" not in out.stderr and "Error" not in out.stderr, out.stderr
    assert f"interrupted ({signal.Signals(signum).name})" in out.stderr, out.stderr
    assert "undecided: stopped by a signal" in out.stdout and "interrupted" in out.stdout, out.stdout


def test_a_ctrl_c_the_command_was_started_to_ignore_stays_ignored(tmp_path: Path) -> None:
    # a shell without job control starts a background job with SIGINT ignored: a Ctrl-C at the
    # terminal is not meant for it, neither during its start-up nor after; SIGTERM still stops
    # it as documented (before, the command took SIGINT over once its start-up was done)
    import os
    import shlex
    import time

    argv = [sys.executable, "-m", "rar_opt", "solve", str(HARD), "--time-limit", "300", "--quiet"]
    proc = subprocess.Popen(
        ["sh", "-c", f"trap '' INT; exec {shlex.join(argv)}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        start_new_session=True,
    )
    try:
        for wait in (0.3, 4.0):  # during the start-up, then while it solves
            time.sleep(wait)
            os.killpg(proc.pid, signal.SIGINT)
        time.sleep(1.0)
        assert proc.poll() is None, proc.communicate()[1]
        os.killpg(proc.pid, signal.SIGTERM)
        _, err = proc.communicate(timeout=4 * GROUP_EXIT_S)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 143 and "interrupted (SIGTERM)" in err and "Traceback" not in err, err
    assert "interrupted (SIGINT)" not in err


def test_bounds(tmp_path: Path) -> None:
    args = ["bounds", str(HARD), "--relaxation-time", "120", "--bins-time", "120", "--quiet"]
    out, took = _group_signalled(args, 5.0, tmp_path)
    _ended_by_ctrl_c(out, took)
    assert "interrupted (SIGINT): the bounds above are proven; not run:" in out.stdout, out.stdout


def test_bounds_json_says_it_was_stopped(tmp_path: Path) -> None:
    import json

    args = ["bounds", str(HARD), "--relaxation-time", "120", "--bins-time", "120", "--quiet", "--json"]
    out, took = _group_signalled(args, 5.0, tmp_path)
    _ended_by_ctrl_c(out, took)
    data = json.loads(out.stdout)
    listed = {b["name"] for b in data["bounds"]} | {b["name"] for b in data["total_bounds"]}
    assert data["interrupted"] == "SIGINT" and data["not_run"]["makespan"] + data["not_run"]["total"]
    assert not listed & set(data["not_run"]["makespan"] + data["not_run"]["total"])
    assert "load" not in data["not_run"]["makespan"]  # never asked without a time limit of its own


def test_experiment(tmp_path: Path) -> None:
    args = ["experiment", "policies", "--seeds", *map(str, range(20)), "--jobs", "160", "--quiet"]
    out, took = _group_signalled(args, 5.0, tmp_path)
    _ended_by_ctrl_c(out, took)


@pytest.mark.parametrize("workers", [1, pytest.param(2, marks=pytest.mark.slow)])  # two workers: the slow tier
def test_study_keeps_its_rows_and_resumes(tmp_path: Path, workers: int) -> None:
    args = ["study", "run", "s.db", "--family", "tiny", "--jobs", "10", "--servers", "4", "--count", "6"]
    args += ["--quiet", "--workers", str(workers)]
    store = tmp_path / "s.db"
    out, took = _group_signalled(args, 0.0, tmp_path, lambda: store.exists() and len(stored_statuses(store)) >= 1)
    _ended_by_ctrl_c(out, took)
    kept = stored_statuses(store)
    assert 1 <= len(kept) < 6 and all(s == "optimal" for s in kept), kept
    again = subprocess.run(
        [sys.executable, "-m", "rar_opt", *args], capture_output=True, text=True, cwd=tmp_path, timeout=600
    )
    assert again.returncode == 0, again.stderr
    assert len(stored_statuses(store)) == 6


def test_solve_for_the_total_says_the_signal_ended_it(tmp_path: Path) -> None:
    # the sums' run named only its best schedule and bound as why it ended
    args = ["solve", "paper-160x20-s0", "--objective", "total", "--time-limit", "120", "--quiet"]
    out, took = _group_signalled(args, 6.0, tmp_path)
    _ended_by_ctrl_c(out, took)
    stopped = next(line for line in out.stdout.splitlines() if line.startswith("stopped"))
    assert "interrupted (signal 2)" in stopped, out.stdout


@pytest.mark.parametrize("workers", [1, pytest.param(2, marks=pytest.mark.slow)])  # two workers: the slow tier
def test_experiment_writes_the_runs_finished(tmp_path: Path, workers: int) -> None:
    # `experiment servers --seeds 0 1 2 -o e.json` stopped by Ctrl-C said "what was finished is
    # kept" and wrote no file; now it writes every run finished before the signal, marked
    import json

    from rar_opt.algorithms import POLICIES

    per_seed, seeds = len(POLICIES), 300  # far more than 10 s of work, whatever the machine
    args = ["experiment", "policies", "--seeds", *map(str, range(seeds)), "--jobs", "40", "--workers", str(workers)]
    out, took = _group_signalled([*args, "-o", "e.json", "--quiet"], 10.0, tmp_path)
    _ended_by_ctrl_c(out, took)
    assert "what was finished is kept" in out.stderr
    data = json.loads((tmp_path / "e.json").read_text())
    assert data["interrupted"] == "SIGINT" and data["runs_planned"] == seeds * per_seed
    runs = data["runs"]
    assert 1 <= data["runs_finished"] == len(runs) < data["runs_planned"], out.stdout
    assert all(r["makespan"] >= r["lower_bound_makespan"] and r["lower_bound_avg_jct_by"] for r in runs)
    complete = data["complete_seeds"]["paper-literal"]
    assert all(sum(r["seed"] == s for r in runs) == per_seed for s in complete)  # every policy of those seeds
    assert sum(s["runs"] for s in data["summary"]) == per_seed * len(complete)  # the table: complete seeds only
    assert f"interrupted (SIGINT): {len(runs)} of {seeds * per_seed} runs finished, written to e.json" in out.stdout
    assert [p.name for p in tmp_path.iterdir()] == ["e.json"]  # written whole: no temporary file left


def test_study_report_stops_drawing_at_once(tmp_path: Path) -> None:
    # Ctrl-C during --plots let every picture be drawn before the command ended (seconds)
    from rar_opt.studies.executors import SerialExecutor
    from rar_opt.studies.run import StudyConfig, run_study

    run_study(tmp_path / "s.db", StudyConfig(family="tiny", seed=500, time_limit=5.0), 24, SerialExecutor())
    pics = tmp_path / "pics"
    args = ["study", "report", "s.db", "--plots", "pics", "--quiet"]
    out, took = _group_signalled(args, 0.0, tmp_path, lambda: (pics / "ecdf.png").exists())
    assert out.returncode == 130 and took < 2.0, (took, out.stderr)
    assert "Traceback" not in out.stderr and "interrupted (SIGINT)" in out.stderr, out.stderr
    drawn = sorted(p.name for p in pics.iterdir())
    assert "ecdf.png" in drawn and "provenance.json" not in drawn, drawn  # the ones drawn stay, whole
    assert all(p.suffix == ".png" and p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in pics.iterdir())


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_variants_stops_between_runs_and_marks_its_output(tmp_path: Path, signum: int) -> None:
    # `variants` went on through every remaining (instance, spec) pair after Ctrl-C (minutes),
    # labelled the runs after it no_solution, and wrote -o with no mark of the signal
    import json

    args = ["variants", "tiny-8x4-s19", "--time-limit", "20", "-o", "v.json", "--quiet"]
    argv = [sys.executable, "-m", "rar_opt", *args]
    out, took = group_signalled(argv, 6.0, tmp_path, wait_s=4 * GROUP_EXIT_S, signum=signum)
    name = signal.Signals(signum).name
    assert out.returncode == 128 + signum and took < GROUP_EXIT_S, (took, out.stderr)
    assert "Traceback" not in out.stderr and f"interrupted ({name})" in out.stderr, out.stderr
    data = json.loads((tmp_path / "v.json").read_text())
    rows, statuses = data["rows"], [r["status"] for r in data["rows"]]
    assert data["interrupted"] == name and data["runs_planned"] == len(data["specs"]) > len(rows)
    # the runs before the signal are whole; the one it reached, if any, is the last and says so
    assert "interrupted" not in statuses[:-1], statuses
    assert data["runs_finished"] == sum(s != "interrupted" for s in statuses)
    if statuses and statuses[-1] == "interrupted":
        assert f"stopped by {name}" in rows[-1]["message"], rows[-1]
    finished = f"{data['runs_finished']} of {data['runs_planned']} runs finished, written to v.json"
    assert f"interrupted ({name}): {finished}" in out.stdout, out.stdout
    assert [p.name for p in tmp_path.iterdir()] == ["v.json"]  # written whole: no temporary file left
