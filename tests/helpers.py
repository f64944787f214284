"""Paths and small helpers shared by the test modules.

Test modules import from here, from :mod:`tests.strategies` (hypothesis strategies and the
independent slot-by-slot reference) and from :mod:`tests.bruteforce` (the exhaustive
exact method), never from one another. The instance library is exposed as fixtures in
``tests/conftest.py``; the loaders behind them are here.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from rar_opt import Instance, Schedule, check
from rar_opt.algorithms import POLICIES, run_policy

ROOT = Path(__file__).resolve().parent.parent
INSTANCES = ROOT / "instances"
OPTIMAL = INSTANCES / "optimal"
COUNTEREXAMPLES = INSTANCES / "counterexamples"
MODELS = ROOT / "models"
README = ROOT / "README.md"
PAPER_FILE = INSTANCES / "paper-160x20-s0.json"


# -- the command line ------------------------------------------------------------------
def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """``rar-opt ARGS`` as a real process (``python -m rar_opt``): exit code, stdout, stderr."""
    return subprocess.run(
        [sys.executable, "-m", "rar_opt", *args], capture_output=True, text=True, cwd=cwd, timeout=300
    )


# -- judging schedules -----------------------------------------------------------------
def group_signalled(
    argv: list[str],
    after: float,
    cwd: Path,
    ready: Callable[[], bool] = lambda: True,
    wait_s: float = 20.0,
    signum: int = signal.SIGINT,
) -> tuple[subprocess.CompletedProcess, float]:
    """Run ``argv`` in a session of its own and send ``signum`` (SIGINT: as a terminal's
    Ctrl-C does) to its process group once ``after`` seconds have passed and ``ready()`` holds; the
    finished process and the seconds from the signal to the main process's exit (its stderr
    may stay open a little longer, held by a helper process such as multiprocessing's
    resource tracker). Fails the test if the process ends before the signal or still runs
    ``wait_s`` seconds after it."""
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd, start_new_session=True
    )
    began = time.perf_counter()
    try:
        while time.perf_counter() - began < after or not ready():
            if proc.poll() is not None:
                pytest.fail(f"the command ended before the signal: {proc.communicate()[1]}")
            time.sleep(0.05)
        os.killpg(proc.pid, signum)
        sent = time.perf_counter()
        try:
            proc.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the command still ran {wait_s:.0f} s after signal {signum} to its process group")
        took = time.perf_counter() - sent
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), took


def makespan(instance: Instance, schedule: Schedule) -> int:
    """The makespan of a schedule the checker finds feasible (fails the test otherwise)."""
    report = check(instance, schedule)
    assert report.feasible, [str(v) for v in report.violations]
    assert report.result.makespan is not None
    return report.result.makespan


BEYOND_HORIZON = frozenset({"start_in_horizon", "completion_in_horizon"})
"""What a policy's schedule may violate when it says it ends after T (``exceeds_horizon``)."""


def policy_makespans(instance: Instance, seed: int = 0) -> dict[str, int]:
    """Every registered policy's makespan on ``instance`` (the simulator's).

    A policy's schedule must be feasible, except that it may end after the horizon when no
    trial fitted in T, and then it must say so (``exceeds_horizon``)."""
    out = {}
    for name in POLICIES:
        result = run_policy(instance, name, seed=seed)
        report = check(instance, result.schedule)
        span = report.result.makespan
        assert span is not None, f"{name}: a job stalls"
        allowed = BEYOND_HORIZON if result.exceeds_horizon else frozenset()
        assert report.names() <= allowed, (name, [str(v) for v in report.violations])
        # (the converse, exceeds_horizon => span > T, fails for rand: see tests/algorithms/test_policies.py)
        out[name] = span
    return out


# -- instance files --------------------------------------------------------------------
def instance_dict() -> dict[str, Any]:
    """A small valid instance as its JSON object (one 2-GPU job on two 2-GPU servers):
    the base that the bad-input tests mutate one field at a time."""
    return {
        "format": "rar-opt/instance",
        "version": 1,
        "name": "x",
        "horizon": 50,
        "cluster": {
            "servers": [2, 2],
            "b_inter": 1.0,
            "b_intra": 10.0,
            "reduce_speed": 50.0,
            "alpha": 0.5,
            "xi1": 1.0,
            "xi2": 0.01,
            "contention": "linear",
        },
        "jobs": [
            {
                "name": "a",
                "gpus": 2,
                "iterations": 10,
                "grad_size": 0.05,
                "batch_size": 8,
                "fwd_time": 0.001,
                "bwd_time": 0.1,
            }
        ],
    }


# -- the instance library (instances/, instances/optimal/, instances/counterexamples/) --
@dataclass(frozen=True)
class Known:
    """A library instance with its proven optimum and a stored optimal schedule."""

    name: str
    instance: Instance
    optimum: int
    schedule: Schedule


@dataclass(frozen=True)
class Counterexample:
    """An instance on which SJF-BCO breaks one of the paper's claims (its meta says which)."""

    name: str
    instance: Instance
    claim: str  # "theorem5" or "lemma3"
    optimum: int
    sjf_bco_makespan: int


def _meta(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text()).get("meta", {})


def with_known_optimum(folder: Path) -> list[Path]:
    """The instance files of ``folder`` whose record holds a proven optimum, sorted."""
    return sorted(p for p in folder.glob("*.json") if _meta(p).get("known_optimum") is not None)


LIBRARY_NAMES: tuple[str, ...] = tuple(p.stem for p in with_known_optimum(INSTANCES))
"""The library instances with a proven optimum (every file in instances/ but the paper one)."""

COUNTEREXAMPLE_NAMES: tuple[str, ...] = tuple(sorted(p.stem for p in COUNTEREXAMPLES.glob("*.json")))


def read_instance(name: str) -> Instance:
    """``instances/NAME.json``."""
    return Instance.read(INSTANCES / f"{name}.json")


def load_known(name: str) -> Known:
    inst = read_instance(name)
    return Known(name, inst, int(inst.meta["known_optimum"]), Schedule.read(OPTIMAL / f"{name}.schedule.json"))


def load_counterexample(name: str) -> Counterexample:
    inst = Instance.read(COUNTEREXAMPLES / f"{name}.json")
    meta = inst.meta
    return Counterexample(name, inst, meta["claim"], int(meta["known_optimum"]), int(meta["sjf_bco_makespan"]))


HARD = ROOT / "instances" / "frontier" / "heavy-20x8x120-s0.json"
"""An instance that ``auto`` is still solving seconds into a run: it proves it in 45 s or more,
or not within a minute, depending on the CP-SAT seed (docs/frontier.md); the signal tests
interrupt it after a few seconds."""


def stored_statuses(path: Path) -> list[str]:
    """The status of every task in a study store, read-only; none while it is not created yet."""
    import sqlite3

    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            return [json.loads(row[0])["status"] for row in db.execute("select outputs from tasks")]
    except sqlite3.Error:  # not created yet
        return []
