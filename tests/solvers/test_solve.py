"""The solver layer: statuses (never exceptions) for limits, infeasibility and missing solvers;
the shared finish; verification of backends whose claims are not proofs."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pytest
from pyomo.contrib.appsi.base import TerminationCondition

from rar_opt import InputError, Instance, Schedule, simulate
from rar_opt.algorithms import run_policy
from rar_opt.formulations import compact_start
from rar_opt.instances.generate import generate, tiny
from rar_opt.solvers import BACKENDS, STATUS_TABLES, Capabilities, RawOutcome, SolveOptions, Status, solve
from rar_opt.solvers.record import PhaseKind, ProvedBy
from rar_opt.solvers.status import map_status

from ..helpers import makespan


def test_time_limit_without_incumbent_is_a_status(tiny_8x4_s19: Instance) -> None:
    # an 8-job instance HiGHS needs about a second for, stopped after a millisecond
    res = solve(tiny_8x4_s19, "compact", time_limit=0.001)
    assert res.status in (Status.NO_SOLUTION, Status.FEASIBLE)
    assert res.termination
    if res.status == Status.NO_SOLUTION:
        assert res.schedule is None and res.makespan is None and res.objective is None


def test_time_limit_with_incumbent_keeps_the_warm_start(tiny_8x4_s19: Instance) -> None:
    # room for the build and the hand-off, not necessarily for the proof
    res = solve(tiny_8x4_s19, "compact", time_limit=3.0, warm_start="ls")
    assert res.status in (Status.FEASIBLE, Status.OPTIMAL)
    assert res.schedule is not None
    assert makespan(tiny_8x4_s19, res.schedule) <= makespan(tiny_8x4_s19, run_policy(tiny_8x4_s19, "ls").schedule)


def test_a_limit_too_short_for_the_solver_still_returns_the_warm_start(tiny_8x4_s19: Instance) -> None:
    # the heuristic's schedule is feasible and known before the solver is even asked
    res = solve(tiny_8x4_s19, "compact", time_limit=0.001, warm_start="ls")
    assert res.status == Status.FEASIBLE and res.schedule is not None


@pytest.mark.parametrize("method", ["auto", "decompose", "cpsat"])
def test_cp_methods_under_a_tiny_limit_return_a_status(tiny_8x4_s19: Instance, method: str) -> None:
    res = solve(tiny_8x4_s19, method, time_limit=0.001)
    assert res.status in (Status.OPTIMAL, Status.FEASIBLE, Status.NO_SOLUTION)
    if res.schedule is not None:  # whatever it kept is the simulator's truth
        assert makespan(tiny_8x4_s19, res.schedule) == res.makespan == round(res.objective)
        assert res.bound is None or res.bound <= res.makespan


@pytest.mark.parametrize("method", ["compact", "auto", "decompose", "cpsat"])
def test_infeasible_horizon_is_a_status(method: str) -> None:
    # six 1-GPU jobs on one 1-GPU server, and a horizon for only the longest of them
    inst = tiny(3)
    short = dataclasses.replace(inst, horizon=int(inst.bounds.rho_min.max()))
    res = solve(short, method)
    assert res.status == Status.INFEASIBLE
    assert res.schedule is None


def test_paper_scale_is_refused_before_building(paper_instance: Instance) -> None:
    with pytest.raises(InputError, match="job-server-slot cells"):
        solve(paper_instance, "compact")
    # auto without a time limit: the heuristics and floors prove this one at once (as below)
    res = solve(paper_instance)
    assert res.status == Status.OPTIMAL and res.record.proved_by == ProvedBy.FLOOR
    assert [p.kind for p in res.record.phases] == [PhaseKind.HEURISTICS, PhaseKind.FLOOR]
    assert res.makespan == res.bound == paper_instance.bounds.rho_min.max()
    # where they do not meet, nothing short of the search would: refused, naming both
    loaded = generate("paper", 0, jobs=320, servers=20, preset="contention-heavy")
    with pytest.raises(InputError, match=r"the heuristics and floors do not meet \(best \d+, bound \d+\); give a time"):
        solve(loaded)


def test_auto_at_paper_scale_returns_the_best_schedule_and_bound(paper_instance: Instance) -> None:
    # longest first meets the longest job at the paper's own setting: proven before any model
    res = solve(paper_instance, time_limit=8.0)
    assert res.status == Status.OPTIMAL and res.record.proved_by == ProvedBy.FLOOR
    assert res.makespan == res.bound == paper_instance.bounds.rho_min.max()
    assert [p.kind for p in res.record.phases] == [PhaseKind.HEURISTICS, PhaseKind.FLOOR]
    # where GPUs are scarcer it is not: the improvement search runs, the full model is too large
    loaded = generate("paper", 0, jobs=320, servers=20, preset="contention-heavy")
    res = solve(loaded, time_limit=8.0)
    assert res.status == Status.FEASIBLE and res.schedule is not None
    assert res.record.full_model == "skipped: too large" and res.options["full_model"] == res.record.full_model
    # the improvement search had the time: no contention-free phase after it (they gave
    # nothing at this scale, docs/exactness.md), and it ran up to the limit
    kinds = [p.kind for p in res.record.phases]
    assert kinds == [PhaseKind.HEURISTICS, PhaseKind.FLOOR, PhaseKind.IMPROVE], kinds
    assert res.wall_s > 0.8 * 8.0
    tried = res.record.phase(PhaseKind.HEURISTICS).objective
    improved = res.record.phase(PhaseKind.IMPROVE)
    assert improved is not None and res.makespan <= min(tried, improved.objective)
    # the kept schedule is the simulator's, and the bound is a valid one below it
    assert res.makespan == round(res.objective) and res.bound is not None and res.bound <= res.makespan
    assert res.bound >= loaded.bounds.rho_min.max()


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
    res = solve(wait_beats_start, "compact", warm_start="sjf-bco", seed=3)
    assert res.status == Status.OPTIMAL and res.makespan == 6
    assert res.options["seed"] == 3 and res.options["threads"] == 1 and res.options["mip_start"] is True
    assert res.options["horizon"] == 8  # the warm start's makespan bounds the model
    assert res.solver["name"] == "highs" and res.solver["version"]
    assert res.schedule is not None and res.schedule.meta["versions"]


def test_auto_records_its_phases_and_what_proved(wait_beats_start: Instance) -> None:
    res = solve(wait_beats_start, warm_start="ls", seed=2)
    assert res.status == Status.OPTIMAL and res.makespan == wait_beats_start.meta["known_optimum"]
    assert res.options["formulation"] == "auto" and res.options["seed"] == 2 and res.options["warm_start"] == "ls"
    kinds = [p.kind for p in res.record.phases]
    first = res.record.phases[0]
    assert first.kind == PhaseKind.HEURISTICS and first.tried["ls"] is not None
    # contention decides this instance: the structural floor is 6 (two jobs that must split
    # and contend), and pack's schedule (one split job after the other) meets it: no model
    assert first.tried["pack"] == 6 and first.tried["ls"] == 8
    assert kinds == [PhaseKind.HEURISTICS, PhaseKind.FLOOR]
    assert res.record.proved_by == ProvedBy.FLOOR and res.schedule.meta["method"] == "pack"
    # the JSON form keeps today's keys and names
    recorded = res.options
    assert recorded["phases"][0]["phase"] == "heuristics" and recorded["phases"][0]["tried"]["ls"] is not None
    assert recorded["phases"][1]["floors"]["split_pairs"] == 6 and recorded["proved_by"] == str(ProvedBy.FLOOR)
    assert res.schedule.meta["options"]["proved_by"] == recorded["proved_by"]  # the schedule carries the record
    assert res.solver["name"] == "rar-opt" and res.solver["version"]  # no solver: the floors are arithmetic


def test_auto_hands_milp_only_requests_to_the_compact_model(wait_beats_start: Instance) -> None:
    res = solve(wait_beats_start, objective="total", cuts=True)
    assert res.formulation == "compact" and "cuts" in res.record.auto_choice
    assert res.options["method"] == "auto" and res.options["auto_choice"] == res.record.auto_choice
    assert res.status == Status.OPTIMAL and round(res.objective) == 9
    assert solve(wait_beats_start, objective="flow", backend="highs").formulation == "compact"


def test_auto_answers_total_and_flow_with_the_method_for_sums(wait_beats_start: Instance) -> None:
    for objective in ("total", "flow"):  # no releases: the same optimum, 9 (tests/test_models.py)
        res = solve(wait_beats_start, objective=objective)
        assert res.formulation == "auto" and res.options["objective"] == objective
        assert res.status == Status.OPTIMAL and round(res.objective) == 9 == sum(res.completion)
        # the CP-SAT model fits here: it runs as the last phase unless a bound met a schedule first
        kinds = [p["kind"] for p in res.options["phases"]]
        assert kinds[:2] == ["heuristics", "floor"] and res.record.proof is not None


def test_results_name_the_warm_start_policy(wait_beats_start: Instance) -> None:
    res = solve(wait_beats_start, "compact", warm_start="ls")
    assert res.options["warm_start"] == "ls"  # which heuristic's schedule was the start


# -- fake backends: what the dispatcher does with their claims --------------------------
# (the compact model named, not auto: auto would start it from its heuristics' best schedule,
# and a start better than the claim replaces it: tests/solvers/test_warm_start.py)
@dataclass
class Claims:
    """A backend that loads a given schedule into the compact model and claims ``status``."""

    schedule: Schedule
    instance: Instance
    status: Status
    certified: bool = True
    name: str = "fake"
    bound: float | None = None  # the bound it reports beside its claim

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(mip_start=False, nonconvex=False, time_limit=True, threads=False, certified=self.certified)

    def unavailable(self) -> str | None:
        return None

    def solve(self, model, options: SolveOptions) -> RawOutcome:
        if self.status not in (Status.OPTIMAL, Status.FEASIBLE):
            return RawOutcome(self.status, bound=self.bound, solver={"name": "fake"})
        compact_start.set_start(model, self.instance, self.schedule)
        span = simulate(self.instance, self.schedule).makespan
        return RawOutcome(
            self.status, has_solution=True, objective=float(span), bound=self.bound, solver={"name": "fake"}
        )


def _both_at_once(inst: Instance) -> Schedule:
    return run_policy(inst, "ls").schedule  # makespan 8 on wait-beats-start; OPT is 6


def test_an_uncertified_wrong_optimum_is_relabelled(wait_beats_start: Instance, monkeypatch) -> None:
    fake = Claims(_both_at_once(wait_beats_start), wait_beats_start, Status.OPTIMAL, certified=False)
    monkeypatch.setitem(BACKENDS, "fake", fake)
    res = solve(wait_beats_start, "compact", backend="fake", horizon=8)
    assert res.status == Status.FEASIBLE and "wrongly" in res.message and res.makespan == 8
    assert res.bound == pytest.approx(6)  # the check's proof becomes the bound
    assert res.options["verified_by"] == "compact+highs"


def test_an_uncertified_wrong_infeasible_is_relabelled(wait_beats_start: Instance, monkeypatch) -> None:
    fake = Claims(_both_at_once(wait_beats_start), wait_beats_start, Status.INFEASIBLE, certified=False)
    monkeypatch.setitem(BACKENDS, "fake", fake)
    res = solve(wait_beats_start, "compact", backend="fake", horizon=8)
    assert res.status == Status.NO_SOLUTION and "wrongly" in res.message


def test_an_uncertified_right_optimum_is_confirmed(wait_beats_start: Instance, monkeypatch) -> None:
    serial = Schedule.from_arrays(wait_beats_start.name, [0, 3], [[2, 1, 0], [0, 1, 2]])
    assert makespan(wait_beats_start, serial) == 6
    fake = Claims(serial, wait_beats_start, Status.OPTIMAL, certified=False)
    monkeypatch.setitem(BACKENDS, "fake", fake)
    res = solve(wait_beats_start, "compact", backend="fake", horizon=8)
    assert res.status == Status.OPTIMAL and "confirmed" in res.message and res.makespan == 6


@pytest.mark.parametrize("status", [Status.FEASIBLE, Status.NO_SOLUTION])
def test_an_uncertified_bound_is_never_a_proven_bound(wait_beats_start: Instance, monkeypatch, status) -> None:
    # the fake claims a bound of 7 where OPT is 6: a study would take bound 7 as a proof and
    # call a schedule of 7 optimal, so the bound is set apart, named unverified
    fake = Claims(_both_at_once(wait_beats_start), wait_beats_start, status, certified=False, bound=7.0)
    monkeypatch.setitem(BACKENDS, "fake", fake)
    res = solve(wait_beats_start, "compact", backend="fake", horizon=8)
    assert res.status == status and res.bound is None and res.gap is None
    assert res.record.solver_bound == 7.0 and res.options["solver_bound_unverified"] == 7.0
    # a certified backend's bound is its proof, kept as it is
    monkeypatch.setitem(BACKENDS, "fake", dataclasses.replace(fake, certified=True))
    res = solve(wait_beats_start, "compact", backend="fake", horizon=8)
    assert res.bound == 7.0 and res.record.solver_bound is None and "solver_bound_unverified" not in res.options


def test_an_unverifiable_claim_keeps_no_bound(wait_beats_start: Instance, monkeypatch) -> None:
    # the compact MILP cannot check the claim (here: it refuses the instance), so the claim is
    # unverified, and its bound is no proof either (studies/evaluation.py takes `bound` as one)
    import importlib

    solve_module = importlib.import_module("rar_opt.solvers.solve")
    fake = Claims(_both_at_once(wait_beats_start), wait_beats_start, Status.OPTIMAL, certified=False, bound=8.0)
    monkeypatch.setitem(BACKENDS, "fake", fake)
    real, calls = solve_module.solve_formulation, []

    def check_refuses(inst, name, request, budget):
        calls.append(name)
        if len(calls) == 2:  # the first call is the solve itself, the second the check
            raise InputError("too large for the check", where="instance")
        return real(inst, name, request, budget)

    monkeypatch.setattr(solve_module, "solve_formulation", check_refuses)
    res = solve(wait_beats_start, "compact", backend="fake", horizon=8)
    assert calls == ["compact", "compact"]
    assert res.status == Status.UNVERIFIED and res.bound is None and res.record.solver_bound == 8.0


def test_a_schedule_the_checker_rejects_is_never_handed_out(wait_beats_start: Instance, monkeypatch) -> None:
    # both 3-GPU jobs at slot 0 on the same two servers: 6 GPUs on servers of 2 + 2
    bad = Schedule.from_arrays(wait_beats_start.name, [0, 0], [[2, 1, 0], [1, 2, 0]])
    monkeypatch.setitem(BACKENDS, "fake", Claims(bad, wait_beats_start, Status.OPTIMAL))
    res = solve(wait_beats_start, "compact", backend="fake")
    assert res.status == Status.ERROR and "failed the checker" in res.message
    assert res.schedule is None  # README/result.py: "A schedule the checker rejects is never handed out"


@pytest.mark.parametrize("relaxation", ["lp", "preemptive", "contention-free"])
def test_a_relaxation_solves_to_a_bound_never_a_schedule(library, relaxation: str) -> None:
    for known in library[:4]:
        res = solve(known.instance, relaxation=relaxation, time_limit=20)
        assert res.status == Status.BOUND and res.schedule is None and res.objective is None
        assert res.bound is not None and res.bound <= known.optimum + 1e-6, known.instance.name
        assert res.options["relaxation"] == relaxation


def test_a_relaxation_refuses_a_start(wait_beats_start: Instance) -> None:
    with pytest.raises(InputError, match="relaxation"):
        solve(wait_beats_start, "compact", relaxation="lp", warm_start="ls")


def test_a_build_longer_than_the_limit_is_stopped_at_it() -> None:
    inst = tiny(5, jobs=10, servers=4)  # a build of a good part of a second
    res = solve(inst, "compact", time_limit=0.02)
    assert res.status == Status.NO_SOLUTION and res.schedule is None
    assert res.record.stopped == "build" and "building the model" in res.message
    # with a warm start its schedule is the incumbent, checked and re-simulated; the start's
    # makespan caps the horizon and shrinks the build (to about 0.02 s at 10 jobs), so a
    # larger instance and a shorter limit keep the build longer than the limit
    inst = tiny(5, jobs=16, servers=4)
    res = solve(inst, "compact", time_limit=0.005, warm_start="ls")
    assert res.status == Status.FEASIBLE and res.record.stopped == "build"
    assert res.makespan == makespan(inst, run_policy(inst, "ls").schedule) == round(res.objective)


def test_auto_takes_a_start_and_a_lower_bound(wait_beats_start: Instance) -> None:
    opt = wait_beats_start.meta["known_optimum"]
    given = run_policy(wait_beats_start, "ls").schedule
    res = solve(wait_beats_start, start=given, lower_bound=opt)
    assert res.status == Status.OPTIMAL and res.makespan == opt
    assert res.options["lower_bound"] == opt and res.options["start"] is not None
    # the floor is the optimum itself: the bound reported is at least it
    assert res.bound >= opt


def test_a_solvers_near_integer_objective_and_bound_are_read_as_integers() -> None:
    from rar_opt.formulations import FORMULATIONS
    from rar_opt.solvers.record import SolveRecord
    from rar_opt.solvers.result import finish, integral

    assert integral(905.9999999) == 906.0 and integral(906.0000004) == 906.0
    assert integral(905.3) == 905.3 and integral(None) is None and integral(float("inf")) == float("inf")
    inst = tiny(13, jobs=4, servers=2)
    raw = RawOutcome(Status.FEASIBLE, has_solution=False, objective=905.9999999, bound=870.25)
    res = finish(
        inst, FORMULATIONS["compact"], None, raw, record=SolveRecord("compact", "highs", {}), build_s=0, wall_s=0
    )
    assert res.objective == 906.0 and res.bound == 870.25  # a fractional bound stays as it is
    assert res.gap == pytest.approx((906 - 870.25) / 906)


def test_the_hand_off_estimate_counts_the_model_where_the_build_says_too_much(tiny_8x4_s19: Instance) -> None:
    # the enumerative ILP's build is mostly its enumeration: two seconds of hand-off per second
    # of build refused a solve that needed 0.75 s of hand-off (wait-beats-start, 20 s limit)
    import pyomo.environ as pyo

    from rar_opt.formulations import compact
    from rar_opt.solvers.solve import HANDOFF_PER_BUILD, HANDOFF_PER_ELEMENT, _handoff_seconds

    model = compact.build(tiny_8x4_s19)
    elements = sum(1 for _ in model.component_data_objects(pyo.Var))
    elements += sum(1 for _ in model.component_data_objects(pyo.Constraint, active=True))
    assert _handoff_seconds(model, 1.0, None) == HANDOFF_PER_BUILD  # no limit: the build's estimate
    assert _handoff_seconds(model, 1.0, 5.0) == HANDOFF_PER_BUILD  # within the limit: not counted
    assert _handoff_seconds(model, 100.0, 5.0) == pytest.approx(HANDOFF_PER_ELEMENT * elements)
    assert _handoff_seconds(model, 1e-4, 1e-5) == pytest.approx(HANDOFF_PER_BUILD * 1e-4)  # the lesser


@pytest.mark.parametrize("objective", ["makespan", "total"])
def test_the_objective_is_the_returned_schedules_value(objective: str) -> None:
    # a time-limited CP-SAT run: a split job's free duration let the model count 180 for a
    # schedule whose total is 66, and the gap was reported from 180. SJF-BCO's schedule is the
    # hint, with the horizon left at T: unhinted, CP-SAT's first solution of the sum came after
    # about 2.5 s of search, so a run of 3 s had none when the machine was busy; where CP-SAT
    # still finds none in time, the hint itself is the incumbent (test_warm_start.py), so the
    # status holds however loaded the machine is
    from rar_opt.instances.generate import generate
    from rar_opt.solvers.result import gap

    inst = generate("tiny", seed=11, jobs=16, servers=8)
    res = solve(inst, "cpsat", objective=objective, time_limit=3.0, warm_start="sjf-bco", heuristic_horizon=False)
    assert res.status in (Status.FEASIBLE, Status.OPTIMAL) and res.record.options["mip_start"]
    assert res.schedule is not None and res.completion is not None
    value = max(res.completion) if objective == "makespan" else sum(res.completion)
    assert res.objective == value
    assert res.gap == gap(res.objective, res.bound)


def test_an_unknown_method_lists_every_method(wait_beats_start: Instance) -> None:
    from rar_opt.errors import InputError

    with pytest.raises(InputError, match=r"unknown method 'nosuch' \(known: .*auto.*") as caught:
        solve(wait_beats_start, "nosuch")
    assert "decompose" in str(caught.value) and "compact" in str(caught.value)
