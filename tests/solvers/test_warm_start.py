"""A checked warm start is never lost: a single model that ends without a schedule, or
with a worse one, returns the start (``feasible``); and ``auto``, where it hands a request
to one model (a network with racks), starts that model from the best of its heuristics."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from rar_opt import Instance, Schedule
from rar_opt.algorithms import QUICK, run_policy
from rar_opt.check import check
from rar_opt.formulations import compact_start
from rar_opt.instances.generate import generate
from rar_opt.instances.library import load_instance
from rar_opt.solvers import BACKENDS, Capabilities, RawOutcome, SolveOptions, Status, solve
from rar_opt.solvers.appsi_highs import AppsiHighs
from rar_opt.solvers.cpsat import Cpsat
from rar_opt.solvers.plan import AUTO
from rar_opt.solvers.record import PhaseKind
from rar_opt.solvers.result import gap
from rar_opt.solvers.sum_best import SUM_POLICIES

TOPOLOGY = "topology-6x4-two-rack"


def _finds_nothing(self, model, options: SolveOptions) -> RawOutcome:
    """A solver stopped before its first solution, with a bound (as CP-SAT's UNKNOWN is)."""
    return RawOutcome(Status.NO_SOLUTION, bound=3.0, termination="UNKNOWN", solver={"name": self.name})


def _value(instance: Instance, schedule: Schedule, objective: str) -> int:
    report = check(instance, schedule)
    assert report.feasible
    completion = report.result.completion
    return int(max(completion)) if objective == "makespan" else int(np.sum(completion))


def _same(a: Schedule, b: Schedule) -> bool:
    return np.array_equal(a.start_array, b.start_array) and np.array_equal(a.placement_array, b.placement_array)


@pytest.mark.parametrize("objective", ["makespan", "total"])
def test_cpsat_without_a_solution_returns_the_warm_start(objective: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # the audit's case: SJF-BCO's schedule was handed in, CP-SAT ended UNKNOWN, and the
    # result had no schedule at all
    monkeypatch.setattr(Cpsat, "solve", _finds_nothing)
    inst = generate("tiny", seed=11, jobs=16, servers=8)
    res = solve(inst, "cpsat", objective=objective, warm_start="sjf-bco")
    start = run_policy(inst, "sjf-bco").schedule
    assert res.status == Status.FEASIBLE and res.schedule is not None
    assert _same(res.schedule, start) and res.schedule.meta["method"] == "sjf-bco"
    value = _value(inst, start, objective)  # the simulator's value of the start, not a model's
    assert res.objective == value == (res.makespan if objective == "makespan" else sum(res.completion))
    assert res.bound == 3.0 and res.gap == gap(res.objective, res.bound)  # the solver's bound, kept
    assert res.options["warm_start"] == "sjf-bco" and res.options["mip_start"] and res.termination == "UNKNOWN"
    assert "warm start (sjf-bco" in res.message


def test_without_a_start_nothing_is_made_up(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Cpsat, "solve", _finds_nothing)
    res = solve(generate("tiny", seed=11, jobs=16, servers=8), "cpsat")
    assert res.status == Status.NO_SOLUTION and res.schedule is None and res.objective is None


@dataclass
class Returns:
    """A compact-MILP backend that loads ``schedule`` (or nothing) and claims ``status``."""

    schedule: Schedule | None
    instance: Instance
    status: Status
    name: str = "fake"

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(mip_start=False, nonconvex=False, time_limit=True, threads=False)

    def unavailable(self) -> str | None:
        return None

    def solve(self, model, options: SolveOptions) -> RawOutcome:
        if self.schedule is None:
            return RawOutcome(self.status, termination="made to find nothing", solver={"name": self.name})
        compact_start.set_start(model, self.instance, self.schedule)
        value = float(_value(self.instance, self.schedule, "makespan"))
        return RawOutcome(self.status, has_solution=True, objective=value, bound=value, solver={"name": self.name})


@pytest.mark.parametrize("status", [Status.FEASIBLE, Status.OPTIMAL])
def test_a_worse_schedule_from_the_solver_gives_way_to_the_start(
    wait_beats_start: Instance, status: Status, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the solver hands back both jobs at once (8), the caller's start runs them in turn (6)
    serial = Schedule.from_arrays(wait_beats_start.name, [0, 3], [[2, 1, 0], [0, 1, 2]])
    both = run_policy(wait_beats_start, "ls").schedule
    monkeypatch.setitem(BACKENDS, "fake", Returns(both, wait_beats_start, status))
    res = solve(wait_beats_start, "compact", backend="fake", start=serial, heuristic_horizon=False)
    assert res.status == Status.FEASIBLE and res.makespan == 6 == res.objective  # never "optimal" from a start
    assert _same(res.schedule, serial)
    assert res.bound is None  # the solver's 8 is above a schedule of 6: no bound at all


def test_a_start_past_the_horizon_asked_for_is_not_handed_out(wait_beats_start: Instance, monkeypatch) -> None:
    both = run_policy(wait_beats_start, "ls").schedule  # ends at 8
    monkeypatch.setitem(BACKENDS, "fake", Returns(None, wait_beats_start, Status.NO_SOLUTION))
    res = solve(wait_beats_start, "compact", backend="fake", start=both, horizon=7)
    assert res.status == Status.NO_SOLUTION and res.schedule is None
    res = solve(wait_beats_start, "compact", backend="fake", start=both, horizon=8)
    assert res.status == Status.FEASIBLE and res.makespan == 8


def _best_heuristic(instance: Instance, policies: tuple[str, ...], objective: str) -> int:
    return min(_value(instance, run_policy(instance, p, **QUICK.get(p, {})).schedule, objective) for p in policies)


@pytest.mark.parametrize("objective", ["makespan", "total"])
def test_auto_on_racks_starts_the_milp_from_its_heuristics(objective: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # the MILP finds nothing: auto's answer is still the best of the heuristics it runs first
    monkeypatch.setattr(AppsiHighs, "solve", _finds_nothing)
    inst = load_instance(TOPOLOGY)
    res = solve(inst, objective=objective)
    assert res.formulation == "compact" and "topology" in res.record.auto_choice
    assert res.status == Status.FEASIBLE and res.schedule is not None and check(inst, res.schedule).feasible
    policies = AUTO.heuristics if objective == "makespan" else SUM_POLICIES
    best = _best_heuristic(inst, policies, objective)
    assert _value(inst, res.schedule, objective) == res.objective == best
    named = res.options["warm_start"]  # which heuristic gave the start, as for a warm start
    assert (
        named in policies and _value(inst, run_policy(inst, named, **QUICK.get(named, {})).schedule, objective) == best
    )
    heuristics = res.record.phases[0]
    assert heuristics.kind == PhaseKind.HEURISTICS and heuristics.objective == best
    assert set(heuristics.tried) == set(policies)


def test_auto_on_racks_within_a_tiny_limit_is_never_worse_than_its_heuristics() -> None:
    inst = load_instance(TOPOLOGY)
    res = solve(inst, time_limit=0.01)  # the build, or the solver, is cut short
    assert res.status in (Status.FEASIBLE, Status.OPTIMAL) and check(inst, res.schedule).feasible
    assert res.makespan <= _best_heuristic(inst, AUTO.heuristics, "makespan")
    res = solve(inst, time_limit=30)
    assert res.status == Status.OPTIMAL and res.makespan <= _best_heuristic(inst, AUTO.heuristics, "makespan")
