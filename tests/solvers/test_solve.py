"""The solver layer: statuses (never exceptions) for limits, infeasibility and missing solvers;
the shared finish; verification of backends whose claims are not proofs."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pytest
from pyomo.contrib.appsi.base import TerminationCondition

from rar_opt import InputError, Instance, Schedule, simulate
from rar_opt.algorithms import run_policy
from rar_opt.formulations import compact
from rar_opt.generate import tiny
from rar_opt.solvers import BACKENDS, STATUS_TABLES, Capabilities, RawOutcome, SolveOptions, Status, solve
from rar_opt.solvers.status import map_status

from ..helpers import makespan


def test_time_limit_without_incumbent_is_a_status(tiny_8x4_s19: Instance) -> None:
    # an 8-job instance HiGHS needs about a second for, stopped after a millisecond
    res = solve(tiny_8x4_s19, time_limit=0.001)
    assert res.status in (Status.NO_SOLUTION, Status.FEASIBLE)
    assert res.termination
    if res.status == Status.NO_SOLUTION:
        assert res.schedule is None and res.makespan is None and res.objective is None


def test_time_limit_with_incumbent_keeps_the_warm_start(tiny_8x4_s19: Instance) -> None:
    # room for the build and the hand-off, not necessarily for the proof
    res = solve(tiny_8x4_s19, time_limit=3.0, warm_start="ls")
    assert res.status in (Status.FEASIBLE, Status.OPTIMAL)
    assert res.schedule is not None
    assert makespan(tiny_8x4_s19, res.schedule) <= makespan(tiny_8x4_s19, run_policy(tiny_8x4_s19, "ls").schedule)


def test_a_limit_too_short_for_the_solver_still_returns_the_warm_start(tiny_8x4_s19: Instance) -> None:
    # the heuristic's schedule is feasible and known before the solver is even asked
    res = solve(tiny_8x4_s19, time_limit=0.001, warm_start="ls")
    assert res.status == Status.FEASIBLE and res.schedule is not None


def test_infeasible_horizon_is_a_status() -> None:
    # six 1-GPU jobs on one 1-GPU server, and a horizon for only the longest of them
    inst = tiny(3)
    short = dataclasses.replace(inst, horizon=int(inst.bounds.rho_min.max()))
    res = solve(short)
    assert res.status == Status.INFEASIBLE
    assert res.schedule is None


def test_paper_scale_is_refused_before_building(paper_instance: Instance) -> None:
    with pytest.raises(InputError, match="job-server-slot cells"):
        solve(paper_instance)


def test_missing_scip_is_a_status_not_a_crash(monkeypatch) -> None:
    from rar_opt.solvers import scip

    monkeypatch.setattr(scip, "scip_available", lambda: False)
    res = solve(tiny(1), "nonconvex", time_limit=1.0)
    assert res.status == Status.ERROR and "pip install" in res.message


def test_the_highs_table_covers_every_termination() -> None:
    # docs: one explicit table over every termination condition Pyomo's appsi can report
    assert set(STATUS_TABLES["highs"]) == set(TerminationCondition)
    assert map_status(STATUS_TABLES["highs"], "something new", True) == Status.ERROR


def test_results_record_how_they_were_made(wait_beats_start: Instance) -> None:
    res = solve(wait_beats_start, warm_start="sjf-bco", seed=3)
    assert res.status == Status.OPTIMAL and res.makespan == 6
    assert res.options["seed"] == 3 and res.options["threads"] == 1 and res.options["mip_start"] is True
    assert res.options["horizon"] == 8  # the warm start's makespan bounds the model
    assert res.solver["name"] == "highs" and res.solver["version"]
    assert res.schedule is not None and res.schedule.meta["versions"]


def test_results_name_the_warm_start_policy(wait_beats_start: Instance) -> None:
    res = solve(wait_beats_start, warm_start="ls")
    assert res.options["warm_start"] == "ls"  # which heuristic's schedule was the start


# -- fake backends: what the dispatcher does with their claims --------------------------
@dataclass
class Claims:
    """A backend that loads a given schedule into the compact model and claims ``status``."""

    schedule: Schedule
    instance: Instance
    status: Status
    certified: bool = True
    name: str = "fake"

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(mip_start=False, nonconvex=False, time_limit=True, threads=False, certified=self.certified)

    def unavailable(self) -> str | None:
        return None

    def solve(self, model, options: SolveOptions) -> RawOutcome:
        if self.status not in (Status.OPTIMAL, Status.FEASIBLE):
            return RawOutcome(self.status, solver={"name": "fake"})
        compact.set_start(model, self.instance, self.schedule)
        span = simulate(self.instance, self.schedule).makespan
        return RawOutcome(self.status, has_solution=True, objective=float(span), solver={"name": "fake"})


def _both_at_once(inst: Instance) -> Schedule:
    return run_policy(inst, "ls").schedule  # makespan 8 on wait-beats-start; OPT is 6


def test_an_uncertified_wrong_optimum_is_relabelled(wait_beats_start: Instance, monkeypatch) -> None:
    fake = Claims(_both_at_once(wait_beats_start), wait_beats_start, Status.OPTIMAL, certified=False)
    monkeypatch.setitem(BACKENDS, "fake", fake)
    res = solve(wait_beats_start, backend="fake", horizon=8)
    assert res.status == Status.FEASIBLE and "wrongly" in res.message and res.makespan == 8
    assert res.bound == pytest.approx(6)  # the check's proof becomes the bound
    assert res.options["verified_by"] == "compact+highs"


def test_an_uncertified_wrong_infeasible_is_relabelled(wait_beats_start: Instance, monkeypatch) -> None:
    fake = Claims(_both_at_once(wait_beats_start), wait_beats_start, Status.INFEASIBLE, certified=False)
    monkeypatch.setitem(BACKENDS, "fake", fake)
    res = solve(wait_beats_start, backend="fake", horizon=8)
    assert res.status == Status.NO_SOLUTION and "wrongly" in res.message


def test_an_uncertified_right_optimum_is_confirmed(wait_beats_start: Instance, monkeypatch) -> None:
    serial = Schedule.from_arrays(wait_beats_start.name, [0, 3], [[2, 1, 0], [0, 1, 2]])
    assert makespan(wait_beats_start, serial) == 6
    fake = Claims(serial, wait_beats_start, Status.OPTIMAL, certified=False)
    monkeypatch.setitem(BACKENDS, "fake", fake)
    res = solve(wait_beats_start, backend="fake", horizon=8)
    assert res.status == Status.OPTIMAL and "confirmed" in res.message and res.makespan == 6


def test_a_schedule_the_checker_rejects_is_never_handed_out(wait_beats_start: Instance, monkeypatch) -> None:
    # both 3-GPU jobs at slot 0 on the same two servers: 6 GPUs on servers of 2 + 2
    bad = Schedule.from_arrays(wait_beats_start.name, [0, 0], [[2, 1, 0], [1, 2, 0]])
    monkeypatch.setitem(BACKENDS, "fake", Claims(bad, wait_beats_start, Status.OPTIMAL))
    res = solve(wait_beats_start, backend="fake")
    assert res.status == Status.ERROR and "failed the checker" in res.message
    assert res.schedule is None  # README/result.py: "A schedule the checker rejects is never handed out"
