"""The contention-free decomposition: exact, with a valid relaxation and restriction."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings

from rar_opt import Instance
from rar_opt.bounds.rounding import ceil_bound
from rar_opt.errors import InputError
from rar_opt.formulations import cfree
from rar_opt.formulations.cpsat import read_schedule
from rar_opt.solvers import Status, solve
from rar_opt.solvers.backend import RawOutcome, SolveOptions
from rar_opt.solvers.cpsat import SEARCHES, Cpsat
from rar_opt.solvers.decompose import AUTO, DECOMPOSE, decompose
from rar_opt.solvers.plan import LARGE_JOBS
from rar_opt.solvers.record import PhaseKind, PhaseRecord, ProvedBy

from ..bruteforce import brute_force
from ..helpers import COUNTEREXAMPLE_NAMES, load_counterexample, policy_makespans
from ..strategies import communication_heavy_instances, micro_instances, reference_simulate


def _optimum(inst: Instance, method: str = "decompose", time_limit: float | None = None) -> int:
    res = solve(inst, method, time_limit=time_limit)
    assert res.status == Status.OPTIMAL, res.message
    assert max(reference_simulate(inst, res.schedule)["completion"]) == res.makespan == round(res.objective)
    return res.makespan


def _solve_cfree(inst: Instance, restrict: bool):
    model = cfree.build(inst, cfree.Options(restrict=restrict))
    raw = Cpsat().solve(model, SolveOptions())
    return model, raw


@settings(max_examples=25)
@given(micro_instances())
def test_decomposition_and_auto_equal_brute_force(inst: Instance) -> None:
    upper = min(policy_makespans(inst).values())
    bf = brute_force(inst, upper)
    # auto with and without a time limit (probes run only with one, where the
    # contention-free phases do not close)
    assert bf is not None and _optimum(inst) == bf[0] == _optimum(inst, "auto", 60) == _optimum(inst, "auto")


@settings(max_examples=15, deadline=None)
@given(micro_instances())
def test_a_plan_without_the_contention_free_phases_is_exact_without_them(inst: Instance) -> None:
    plan = dataclasses.replace(AUTO, contention_free=False)
    res = decompose(inst, time_limit=60, plan=plan)
    kinds = {p.kind for p in res.record.phases}
    assert not kinds & {PhaseKind.RELAXATION, PhaseKind.RESTRICTION}
    assert res.status == Status.OPTIMAL and res.makespan == _optimum(inst)
    assert max(reference_simulate(inst, res.schedule)["completion"]) == res.makespan


@settings(max_examples=20)
@given(communication_heavy_instances())
def test_relaxation_below_and_restriction_above_the_optimum(inst: Instance) -> None:
    opt = solve(inst).makespan  # the compact MILP
    _, relaxed = _solve_cfree(inst, restrict=False)
    assert relaxed.status == Status.OPTIMAL and relaxed.objective <= opt
    model, restricted = _solve_cfree(inst, restrict=True)
    assert restricted.status == Status.OPTIMAL and restricted.objective >= opt
    # the restriction's makespan is its schedule's true makespan (contention is always 1)
    schedule = read_schedule(model, inst)
    assert max(reference_simulate(inst, schedule)["completion"]) == restricted.objective
    assert _optimum(inst) == opt


def test_where_contention_decides_the_full_model_carries_the_proof(wait_beats_start: Instance) -> None:
    res = solve(wait_beats_start, "decompose")
    assert res.status == Status.OPTIMAL and res.makespan == wait_beats_start.meta["known_optimum"]
    assert res.record.proved_by == ProvedBy.FULL_MODEL
    assert [p.kind for p in res.record.phases] == [PhaseKind.RELAXATION, PhaseKind.RESTRICTION, PhaseKind.FULL]
    # the JSON form keeps the names of earlier versions
    assert res.options["proved_by"] == res.options["phases"][-1]["phase"] == "full cp-sat"


def test_the_full_model_searches_in_turn_reach_the_same_optimum(wait_beats_start: Instance) -> None:
    optimum = wait_beats_start.meta["known_optimum"]
    tried = ((("core", 1.0),), (("core", 0.5), ("default", 1.0)), (("default", 0.1), ("no-lp", 1.0)))
    for searches in (*tried, AUTO.full_searches):
        plan = dataclasses.replace(DECOMPOSE, full_searches=searches)
        res = decompose(wait_beats_start, plan=plan, time_limit=30)
        assert res.status == Status.OPTIMAL and res.makespan == optimum, searches
        last = res.record.phases[-1]
        assert last.kind == PhaseKind.FULL and last.search in {name for name, _ in searches}
        assert res.record.proved_by == ProvedBy.FULL_MODEL and res.record.proof_phase == last.name
    assert AUTO.full_searches[-1][0] == "no-lp" and set(SEARCHES) >= {s for s, _ in AUTO.full_searches}


def test_a_plan_names_a_bad_share_or_search() -> None:
    bad = {
        "relax_share": {"relax_share": 0},
        "restrict_share_open": {"restrict_share_open": 1.5},
        r"full_searches\[0\]": {"full_searches": (("no-lp", -0.1),)},
        "full_searches": {"full_searches": (("simplex", 1.0),)},
        r"improvers\[1\]": {"improvers": (("pack", 0.5), ("improve", 0))},
        "not a policy": {"improvers": (("tabu", 1.0),)},
        r"searchers\[0\]": {"searchers": (("backfill", 2.0),), "search_share": 0.2, "stages": ("search", "full")},
        "needs searchers": {"stages": ("search", "full"), "searchers": ()},  # no searchers
        r"improvers\[0\].*\(name, value\) pairs": {"improvers": (("backfill", 1.0, ("fit",)),)},
        r"improvers\[0\].*pairs": {"improvers": (("backfill", 1.0, (("fit", "best"),), "more"),)},
        "contention_free": {"contention_free": "no"},
        "probe_hint": {"probe_hint": 1},
        r"fitting_improve_share\b.*in \(0, 1\]": {"fitting_improve_share": 0},
        r"large_fitting_improve_share\b.*in \(0, 1\]": {"large_fitting_improve_share": 1.5},
        "bins_share": {"bins_share": 2.0},
        "probe_reversal": {"probe_reversal": True},
        "probe_pricing": {"probe_pricing": "first"},
        "ending with the full model": {"stages": ("full", "probe")},
        "not a stage": {"stages": ("anneal", "full")},
        "at most once": {"stages": ("bins", "probe", "bins", "full")},
        "early_full_share": {"stages": ("full", "probe", "full")},  # an early full model without its share
        r"early_full_share\b.*only": {"early_full_share": 0.3},  # a share with no early full model
        "early_full_stops_one_above": {"early_full_stops_one_above": True},  # with no early full model
        "large_jobs": {"large_jobs": 0},
        "large_stages": {"large_stages": ("full", "probe")},  # not ending with the full model
        r"large_early_full_share\b.*in \(0, 1\]": {"large_early_full_share": 1.5},
        r"large_probe_restart_seconds\b.*positive": {"large_probe_restart_seconds": 0},
        "mid_jobs": {"mid_jobs": True},
        r"mid_jobs\b.*below large_jobs": {"mid_jobs": 24, "large_jobs": 24},
        r"mid_stages\b.*early_full_share": {"mid_jobs": 20, "mid_stages": ("full", "bins", "full")},
        r"mid_stages\b.*ending with": {"mid_jobs": 20, "mid_stages": ("bins",)},
        r"mid_bins_seconds\b.*positive": {"mid_jobs": 20, "mid_bins_seconds": -1},
    }
    for where, change in bad.items():
        with pytest.raises(InputError, match=where):
            dataclasses.replace(AUTO, **change)
    with pytest.raises(InputError, match="at least one search"):
        dataclasses.replace(AUTO, full_searches=())


@pytest.mark.parametrize("early_closes", [True, False])
def test_a_plan_orders_its_stages_and_may_run_the_full_model_early(
    wait_beats_start: Instance, monkeypatch, early_closes: bool
) -> None:
    # bins, then the full model within 30% of the time left, then the probes, then the
    # full model again. The early full model proves 6 at once; when it is made to say
    # nothing (early_closes False), the probes climb from the relaxation's 3 to 6 and prove it
    import rar_opt.solvers.phases as module

    real, limits = module.solve_model, []

    def spy(model, budget, search="default", stop_at=None):
        if search != "no-lp":  # the contention-free phases
            return real(model, budget, search, stop_at)
        limits.append(budget.limit)
        if not early_closes and len(limits) == 1:
            return RawOutcome(Status.NO_SOLUTION, bound=None, termination="made to say nothing"), 0.0
        return real(model, budget, search, stop_at)

    monkeypatch.setattr(module, "solve_model", spy)
    plan = dataclasses.replace(NO_FLOORS, stages=("bins", "full", "probe", "full"), early_full_share=0.3)
    res = decompose(wait_beats_start, plan=plan, time_limit=30)
    kinds = [p.kind for p in res.record.phases]
    assert res.status == Status.OPTIMAL and res.makespan == wait_beats_start.meta["known_optimum"] == 6
    stages = kinds[kinds.index(PhaseKind.BINS) :]
    if early_closes:
        assert stages == [PhaseKind.BINS, PhaseKind.FULL] and res.record.proved_by == ProvedBy.FULL_MODEL
    else:
        assert stages == [PhaseKind.BINS, PhaseKind.FULL] + [PhaseKind.PROBE] * 3  # no at 3, 4, 5
        assert res.record.proved_by == ProvedBy.PROBE
    assert len(limits) == 1 and limits[0] is not None and limits[0] <= 0.3 * 30  # the early share


def test_auto_orders_its_stages_by_the_number_of_jobs(wait_beats_start: Instance, monkeypatch) -> None:
    # below LARGE_JOBS jobs auto asks the probes first; from there on the full model first,
    # with its early share; either way the record says which stages ran and proves the optimum
    import rar_opt.solvers.phases as module

    real, limits = module.solve_model, []

    def spy(model, budget, search="default", stop_at=None):
        if search == "no-lp":
            limits.append(budget.limit)
        return real(model, budget, search, stop_at)

    monkeypatch.setattr(module, "solve_model", spy)
    jobs = wait_beats_start.num_jobs
    plan = dataclasses.replace(NO_FLOORS, large_jobs=jobs + 1)
    assert plan.for_jobs(jobs) is plan and plan.for_jobs(jobs + 1).stages == plan.large_stages
    stages = (PhaseKind.PROBE, PhaseKind.BINS, PhaseKind.FULL)

    def first_stage(res) -> PhaseKind:
        return next(p.kind for p in res.record.phases if p.kind in stages)

    small = decompose(wait_beats_start, plan=plan, time_limit=30)
    assert first_stage(small) == PhaseKind.PROBE
    assert tuple(small.record.options["plan"]["stages"]) == plan.stages
    limits.clear()
    large = decompose(wait_beats_start, plan=dataclasses.replace(plan, large_jobs=jobs), time_limit=30)
    assert first_stage(large) == PhaseKind.FULL and limits[0] is not None and limits[0] <= 0.6 * 30
    assert tuple(large.record.options["plan"]["stages"]) == plan.large_stages
    assert large.record.options["plan"]["large_jobs"] is None and large.record.formulation == plan.name
    for res in (small, large):
        assert res.status == Status.OPTIMAL and res.makespan == wait_beats_start.meta["known_optimum"]


def test_a_middle_tier_runs_its_own_stages_between_the_sizes(wait_beats_start: Instance) -> None:
    # from mid_jobs on, below large_jobs: the stages of mid_stages, no early full model,
    # large_fitting_improve_share and mid_bins_seconds; below mid_jobs the plan itself, from
    # large_jobs on the large plan; a tier's plan switches no further
    jobs = wait_beats_start.num_jobs
    plan = dataclasses.replace(
        NO_FLOORS, mid_jobs=jobs, large_jobs=jobs + 2, large_fitting_improve_share=0.2, mid_bins_seconds=3.0
    )
    assert plan.for_jobs(jobs - 1) is plan
    for n in (jobs, jobs + 1):
        mid = plan.for_jobs(n)
        assert mid.stages == plan.mid_stages and mid.early_full_share is None and mid.bins_seconds == 3.0
        assert mid.fitting_improve_share == 0.2 and mid.mid_jobs is None and mid.large_jobs is None
        assert mid.for_jobs(jobs + 5) is mid
    assert plan.for_jobs(jobs + 2).stages == plan.large_stages
    res = decompose(wait_beats_start, plan=plan, time_limit=30)
    kinds = [p.kind for p in res.record.phases]
    assert PhaseKind.PROBE not in kinds and kinds.index(PhaseKind.BINS) < kinds.index(PhaseKind.FULL)
    assert tuple(res.record.options["plan"]["stages"]) == plan.mid_stages
    assert res.status == Status.OPTIMAL and res.makespan == wait_beats_start.meta["known_optimum"]


def _probes(res) -> list[tuple[int, PhaseRecord]]:
    """The probe phases of a result: (slot asked, phase)."""
    return [(p.asked, p) for p in res.record.phases if p.kind == PhaseKind.PROBE]


def _floor(res, inst: Instance) -> int:
    """The floor the probes start from: the relaxation's bound, at least the longest job."""
    relaxed = res.record.phase(PhaseKind.RELAXATION)
    return max(ceil_bound(relaxed.bound), int(inst.bounds.rho_min.max()))


LIST_ONLY = dataclasses.replace(AUTO, heuristics=tuple(h for h in AUTO.heuristics if h != "pack"), contention_free=True)
"""auto with list heuristics only: pack alone finds wait-beats-start's optimum (6), so the
tests of what later phases find leave it out (the heuristics' best is then 8). It keeps the
contention-free phases (auto leaves them out since stop 27), whose bound and schedule the
tests of the probes build on."""

NO_FLOORS = dataclasses.replace(LIST_ONLY, structural=False, step_probe_share=None)
"""auto without its structural floors, whose split-pairs bound alone proves 6 on wait-beats-start:
the tests of the later phases use it so that those phases have something to prove; and
without the step probe, so that the probes climb from the floor one slot at a time."""


def test_a_fitting_improve_share_searches_first_and_the_stages_still_prove(wait_beats_start: Instance) -> None:
    # where the full model fits, Plan.fitting_improve_share gives the improvement searches a
    # share before the stages (None, the default below 24 jobs: no such phase); the stages
    # after it still run and prove the optimum
    plan = dataclasses.replace(
        NO_FLOORS, improvers=(("improve", 1.0),), fitting_improvers=None, fitting_improve_share=0.2
    )
    res = decompose(wait_beats_start, plan=plan, time_limit=30)
    kinds = [p.kind for p in res.record.phases]
    assert kinds[:3] == [PhaseKind.HEURISTICS, PhaseKind.IMPROVE, PhaseKind.RELAXATION], kinds
    improved = res.record.phase(PhaseKind.IMPROVE)
    assert improved.search == "improve" and improved.objective is not None and improved.objective <= 8
    assert res.status == Status.OPTIMAL and res.makespan == wait_beats_start.meta["known_optimum"]
    plain = decompose(wait_beats_start, plan=NO_FLOORS, time_limit=30)
    assert PhaseKind.IMPROVE not in [p.kind for p in plain.record.phases]
    assert plain.makespan == res.makespan
    large = dataclasses.replace(AUTO, large_fitting_improve_share=0.1)
    assert large.for_jobs(LARGE_JOBS).fitting_improve_share == 0.1 and large.for_jobs(LARGE_JOBS - 1) is large
    # from LARGE_JOBS jobs on the race at the floor takes the probes' place, after the bins cut
    # at 4 s; below, the probes keep all their time (a refutation there needs it)
    large_plan = AUTO.for_jobs(LARGE_JOBS)
    assert "probe" in AUTO.stages and "race" not in AUTO.stages
    assert "probe" not in large_plan.stages and "race" in large_plan.stages and large_plan.race_share is not None
    assert AUTO.bins_seconds is None and large_plan.bins_seconds == 4.0
    restarted = dataclasses.replace(AUTO, large_probe_restart_seconds=8.0)
    assert restarted.probe_restart_seconds is None and restarted.for_jobs(LARGE_JOBS).probe_restart_seconds == 8.0


def test_auto_floors_prove_what_the_relaxation_cannot(wait_beats_start: Instance) -> None:
    # two jobs that must split and share a server contend: the split-pairs floor is 6, the
    # optimum, while the relaxation's bound is 3; pack's schedule (split jobs one after the
    # other) meets the floor at once, before any model
    optimum = wait_beats_start.meta["known_optimum"]
    res = decompose(wait_beats_start, plan=AUTO, time_limit=30)
    assert res.status == Status.OPTIMAL and res.makespan == res.bound == optimum
    floor = res.record.phase(PhaseKind.FLOOR)
    assert floor is not None and floor.bound == optimum and floor.floors["split_pairs"] == optimum
    assert res.record.proved_by == ProvedBy.FLOOR and not _probes(res)
    assert res.record.phase(PhaseKind.HEURISTICS).tried["pack"] == optimum
    assert res.record.phase(PhaseKind.RELAXATION) is None  # no model was built
    assert res.record.phase(PhaseKind.FULL) is None
    # the plan as first stated has no floor phase
    assert decompose(wait_beats_start, plan=DECOMPOSE).record.phase(PhaseKind.FLOOR) is None


def test_auto_probes_the_floor_upward_before_the_full_model(wait_beats_start: Instance) -> None:
    # without the floors, the relaxation's bound is 3 and the restriction's schedule 6, the
    # optimum: the probes at 3, 4 and 5 each raise the floor by a slot until it meets the schedule
    optimum = wait_beats_start.meta["known_optimum"]
    res = decompose(wait_beats_start, plan=NO_FLOORS, time_limit=30)
    assert res.status == Status.OPTIMAL and res.makespan == res.bound == optimum
    asked = [h for h, _ in _probes(res)]
    assert asked == list(range(_floor(res, wait_beats_start), optimum)) and len(asked) >= 2
    assert all(p.status == Status.INFEASIBLE and p.bound == h + 1 for h, p in _probes(res))
    assert res.record.proved_by == ProvedBy.PROBE and res.solver["name"] == "cpsat" and res.solver["version"]
    # without a time limit there is no share to give them: the full model proves it alone
    res = decompose(wait_beats_start, plan=NO_FLOORS)
    assert res.status == Status.OPTIMAL and res.makespan == optimum and not _probes(res)


def test_the_step_probe_asks_one_slot_above_the_floor_first(wait_beats_start: Instance) -> None:
    # floor 3, schedule 6: the step probe at 4 says no, which proves 5 at once; the probe
    # at 5 is then the last question (one slot below the schedule) and says no: optimal
    optimum = wait_beats_start.meta["known_optimum"]
    res = decompose(wait_beats_start, plan=dataclasses.replace(NO_FLOORS, step_probe_share=0.15), time_limit=30)
    assert res.status == Status.OPTIMAL and res.makespan == res.bound == optimum
    floor = _floor(res, wait_beats_start)
    assert [(h, p.status, p.bound) for h, p in _probes(res)] == [
        (floor + 1, Status.INFEASIBLE, floor + 2),
        *[(h, Status.INFEASIBLE, h + 1) for h in range(floor + 2, optimum)],
    ]


def test_a_probe_that_finds_a_schedule_at_the_floor_proves_it(wait_beats_start: Instance, monkeypatch) -> None:
    # without the restriction's schedule (6), the best is a heuristic's 8, and the probes
    # at 3, 4, 5 refute, the one at 6 finds a schedule: optimal, found and proven by probes
    real = Cpsat.solve

    def no_restriction(self, model, options):
        if model.rar.formulation == "cfree-restriction":
            return RawOutcome(Status.NO_SOLUTION, termination="left out by the test")
        return real(self, model, options)

    monkeypatch.setattr(Cpsat, "solve", no_restriction)
    optimum = wait_beats_start.meta["known_optimum"]
    res = decompose(wait_beats_start, plan=dataclasses.replace(LIST_ONLY, step_probe_share=None), time_limit=30)
    assert res.status == Status.OPTIMAL and res.makespan == res.bound == optimum
    probes = _probes(res)
    assert [p.status for _, p in probes] == [Status.INFEASIBLE] * (len(probes) - 1) + [Status.FEASIBLE]
    assert probes[-1][0] == optimum and probes[-1][1].objective == optimum
    assert res.record.proved_by == ProvedBy.PROBE and res.schedule.meta["method"] == "probe"
    assert max(reference_simulate(wait_beats_start, res.schedule)["completion"]) == optimum


@pytest.mark.parametrize("answer", ["undecided", "error"])
def test_an_undecided_or_failed_probe_leaves_the_proof_to_the_full_model(
    wait_beats_start: Instance, monkeypatch, caplog, answer: str
) -> None:
    import rar_opt.solvers.floor_asks as module
    from rar_opt.solvers.probe import Probe, ProbeRecord

    def stuck(instance, makespan, **_):
        if answer == "error":
            raise RuntimeError("CP-SAT ended the probe with MODEL_INVALID")
        record = ProbeRecord(f"does a schedule end by slot {makespan}?", "cpsat", None, 0, 1, True, "no-lp", {}, {})
        return Probe(makespan, Status.NO_SOLUTION, None, None, None, 0.01, "UNKNOWN", record)

    monkeypatch.setattr(module, "probe", stuck)
    res = decompose(wait_beats_start, plan=NO_FLOORS, time_limit=30)
    assert res.status == Status.OPTIMAL and res.makespan == wait_beats_start.meta["known_optimum"]
    assert [p.status for _, p in _probes(res)] == [Status.NO_SOLUTION if answer == "undecided" else Status.ERROR]
    assert res.record.proved_by == ProvedBy.FULL_MODEL and res.record.phases[-1].search == "no-lp"
    assert ("failed" in caplog.text) is (answer == "error")


def test_auto_with_a_time_limit_keeps_every_known_optimum(library) -> None:
    # with a limit the probes run (without the floors, which close most of these at once);
    # on some of these instances they carry the proof
    cases = [(k.instance, k.optimum) for k in library]
    cases += [(c.instance, c.optimum) for c in map(load_counterexample, COUNTEREXAMPLE_NAMES)]
    probed = 0
    for inst, optimum in cases:
        res = decompose(inst, plan=NO_FLOORS, time_limit=60)
        assert res.status == Status.OPTIMAL and res.makespan == optimum, inst.name
        assert max(reference_simulate(inst, res.schedule)["completion"]) == optimum
        for asked, phase in _probes(res):  # a "no" below the optimum, a "yes" at it
            assert phase.status == (Status.INFEASIBLE if asked < optimum else Status.FEASIBLE), (inst.name, phase)
        probed += bool(_probes(res))
    assert probed >= 1  # the probes did run somewhere


def test_a_horizon_only_the_full_model_rules_out_is_infeasible(wait_beats_start: Instance) -> None:
    # 5 slots: the relaxation (each job alone, 3 slots) fits, no heuristic does, and without
    # the floors only the full model, with contention, proves that nothing fits; auto's
    # split-pairs floor (6) is past the horizon, so it proves it before any model
    for plan, proof in ((AUTO, ProvedBy.FLOOR), (NO_FLOORS, ProvedBy.FULL_MODEL), (DECOMPOSE, ProvedBy.FULL_MODEL)):
        res = decompose(wait_beats_start, plan=plan, horizon=5, time_limit=30)
        assert res.status == Status.INFEASIBLE and res.schedule is None, plan.name
        assert res.record.proved_by == proof, plan.name


def test_auto_and_decompose_take_symmetry_on_or_off(wait_beats_start: Instance) -> None:
    optimum = wait_beats_start.meta["known_optimum"]
    for method in ("auto", "decompose"):
        for flag in (True, False):
            res = solve(wait_beats_start, method, symmetry=flag)
            assert res.status == Status.OPTIMAL and res.makespan == optimum
            assert res.options["symmetry"] is flag and res.record.auto_choice is None  # not handed to the MILP
    with pytest.raises(InputError, match="symmetry"):
        solve(wait_beats_start, "auto", symmetry="no")


def test_every_library_optimum(library) -> None:
    for known in library:
        assert _optimum(known.instance) == known.optimum, known.instance.name
        assert _optimum(known.instance, "auto") == known.optimum, known.instance.name


def test_auto_keeps_the_counterexamples_optima(counterexample) -> None:
    assert _optimum(counterexample.instance, "auto") == counterexample.optimum


@settings(max_examples=10)
@given(communication_heavy_instances())
def test_auto_equals_the_compact_milp_where_contention_decides(inst: Instance) -> None:
    assert _optimum(inst, "auto", 60) == solve(inst, "compact").makespan


@settings(max_examples=15)
@given(communication_heavy_instances())
def test_auto_phases_bound_below_and_above(inst: Instance) -> None:
    res = solve(inst, "auto", time_limit=60)
    opt = res.makespan
    for phase in res.record.phases:
        if phase.kind == PhaseKind.PROBE:  # a "no" below the optimum, a "yes" from it on
            below = phase.asked < opt  # (undecided only if its share ran out)
            assert phase.status in (Status.INFEASIBLE if below else Status.FEASIBLE, Status.NO_SOLUTION), phase
        if phase.lower_bound() is not None:  # every bound a phase proves is at most OPT
            assert phase.lower_bound() <= opt + 1e-6, phase
        if phase.kind in (PhaseKind.RESTRICTION, PhaseKind.HEURISTICS) and phase.objective is not None:
            assert phase.objective >= opt


def test_an_infeasible_horizon_is_proven_by_the_relaxation() -> None:
    from rar_opt.instances.generate import tiny

    inst = tiny(3)  # six 1-GPU jobs on one 1-GPU server; a horizon for the longest only
    short = dataclasses.replace(inst, horizon=int(inst.bounds.rho_min.max()))
    for method, proof in (("decompose", ProvedBy.RELAXATION), ("auto", ProvedBy.FLOOR)):
        res = solve(short, method)
        assert res.status == Status.INFEASIBLE and res.record.proved_by == proof
    # auto: the work bound (six jobs on one GPU) is past the horizon, so no model is built
    assert [p.kind for p in res.record.phases] == [PhaseKind.HEURISTICS, PhaseKind.FLOOR]
    assert res.bound > short.horizon and res.schedule is None


def test_the_search_stage_aims_at_the_bound_and_credits_the_phase_that_proved_it(wait_beats_start: Instance) -> None:
    # the heuristics end at 8; the stage's backfill search, scored past the proven bound, runs
    # the two split jobs one after the other (6), which meets the bound: the phase that proved
    # the bound is credited, not the search
    from rar_opt.solvers.budget import Budget
    from rar_opt.solvers.decompose import run_plan

    searchers = (("backfill", 1.0, (("split", "choose"),)),)
    plan = dataclasses.replace(
        AUTO, heuristics=("sjf-bco",), stages=("search", "full"), searchers=searchers, search_share=0.5
    )
    res = run_plan(wait_beats_start, plan, Budget.start(20.0))
    assert res.status == Status.OPTIMAL and res.makespan == 6
    names = [p.name for p in res.record.phases]
    assert names[-1] == "improve (backfill (split=choose))" and not any(n.startswith("full") for n in names)
    prover = next(p for p in res.record.phases if p.name == res.record.proof_phase)
    assert prover.kind != PhaseKind.IMPROVE and ceil_bound(prover.lower_bound()) == 6
    assert res.record.proved_by == prover.proves
