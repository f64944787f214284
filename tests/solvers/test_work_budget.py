"""Budgets of work (``work_limit``, rar_opt/solvers/budget.py): the clock that only CP-SAT's
deterministic time and the counted searches advance. What must hold: one seed gives one
run, phase by phase and schedule by schedule, however loaded the machine is; the budget is
refused where it cannot be kept (with a time limit, on several threads, outside the plans)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rar_opt.errors import ParameterError
from rar_opt.instance import Instance
from rar_opt.solvers.backend import WorkMeter
from rar_opt.solvers.budget import Budget
from rar_opt.solvers.record import PhaseKind
from rar_opt.solvers.solve import solve
from rar_opt.solvers.status import Status

from ..helpers import run

FRONTIER = Path(__file__).resolve().parents[2] / "instances" / "frontier"
WORK = 2.5  # units: enough for the probes, the GPU bins, the backfill searches and the full model to run


def _story(result: Any) -> list[dict[str, Any]]:
    """The run's phases without their wall-clock seconds (the only part that may differ)."""
    phases = []
    for phase in result.record.phases:
        row = phase.to_dict()
        row.pop("seconds")
        if isinstance(row.get("tried"), dict):
            row["tried"] = {k: v for k, v in row["tried"].items() if "second" not in k}
        phases.append(row)
    return phases


def _cpu_hogs(count: int) -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]


def test_a_meter_is_the_clock_of_a_work_budget_and_only_charges_move_it() -> None:
    budget = Budget.start(work_limit=10.0)
    assert budget.meter is not None and budget.deadline is None
    half = budget.share(0.5)
    assert half.limit == pytest.approx(5.0) and half.meter is budget.meter
    budget.charge(2.0)
    assert budget.elapsed() == pytest.approx(2.0) and half.elapsed() == pytest.approx(2.0)
    assert budget.left() == pytest.approx(8.0) and not budget.expired()
    settings = half.settings()
    assert settings.meter is budget.meter and settings.deadline is None and settings.time_limit == pytest.approx(3.0)
    budget.charge(8.5)
    assert budget.expired()
    budget.charge(-5.0)  # nothing is ever given back
    assert budget.meter.spent == pytest.approx(10.5)


@pytest.mark.parametrize(
    ("kwargs", "where"),
    [
        ({"time_limit": 5.0, "work_limit": 5.0}, "work_limit"),
        ({"work_limit": 5.0, "threads": 2}, "threads"),
        ({"work_limit": -1.0}, "work_limit"),
        ({"work_limit": float("inf")}, "work_limit"),
        ({"meter": WorkMeter()}, "work_limit"),
    ],
)
def test_a_work_budget_that_cannot_be_kept_is_refused_by_name(kwargs: dict[str, Any], where: str) -> None:
    if kwargs.get("threads", 1) > 1 and __import__("os").cpu_count() == 1:
        pytest.skip("one CPU: two threads are refused for that first")
    with pytest.raises(ParameterError) as err:
        Budget.start(**kwargs)
    assert err.value.where == where


def test_only_the_plans_take_a_work_limit() -> None:
    inst = Instance.read(FRONTIER / "heavy-16x8x100-s2.json")
    for formulation, extra in (("compact", {}), ("cpsat", {}), ("auto", {"objective": "total"})):
        with pytest.raises(ParameterError) as err:
            solve(inst, formulation, work_limit=1.0, **extra)
        assert err.value.where == "work_limit"


@pytest.mark.parametrize(
    ("name", "work", "stages"),
    [
        # below 24 jobs: the probes, the GPU bins, the backfill searches (timed ones, run on counts), the full model
        ("heavy-16x8x100-s2", WORK, {PhaseKind.PROBE, PhaseKind.BINS, PhaseKind.IMPROVE, PhaseKind.FULL}),
        # from 24 jobs on: pack's search and the backfill searches on their counts, capped by their share
        ("heavy-24x8x150-s0", 1.5, {PhaseKind.IMPROVE, PhaseKind.FULL}),
    ],
)
def test_the_same_seed_gives_the_same_run_on_a_loaded_machine(name: str, work: float, stages: set[PhaseKind]) -> None:
    inst = Instance.read(FRONTIER / f"{name}.json")  # not proven at once: the stages run
    first = solve(inst, "auto", work_limit=work, seed=3)
    hogs = _cpu_hogs(3)  # the second run shares the CPUs with three busy processes
    try:
        second = solve(inst, "auto", work_limit=work, seed=3)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    kinds = {p.kind for p in first.record.phases}
    assert stages <= kinds, kinds  # every stage ran under the meter
    assert first.record.options["work_limit"] == work and first.record.options["time_limit"] is None
    spent = first.record.options["work_spent"]
    assert spent > 0 and spent == second.record.options["work_spent"]
    assert _story(first) == _story(second)
    assert (first.status, first.objective, first.bound) == (second.status, second.objective, second.bound)
    assert first.schedule is not None and second.schedule is not None
    assert first.schedule.to_dict()["jobs"] == second.schedule.to_dict()["jobs"]
    assert first.status in (Status.FEASIBLE, Status.OPTIMAL)


def test_the_command_line_records_the_budget_of_work() -> None:
    out = run("solve", str(FRONTIER.parent / "tiny-8x4-s19.json"), "--work-limit", "5", "--json")
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout)
    assert answer["work_limit"] == 5.0 and answer["time_limit"] is None
    options = answer["options"]
    assert options["work_limit"] == 5.0 and options["time_limit"] is None and 0 <= options["work_spent"] <= 5.0 * 1.05
    text = run("solve", str(FRONTIER.parent / "tiny-8x4-s19.json"), "--work-limit", "5")
    assert text.returncode == 0 and " of 5 units" in text.stdout, text.stdout
