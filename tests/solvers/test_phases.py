"""Each phase of the exact methods alone, the run record's JSON form, and the time budget.

The instance is `wait-beats-start` (three 2-GPU servers; its optimum 6 needs contention):
every job alone takes 3 slots, the heuristics end at 8, the contention-free restriction
at 6, and the split-pairs floor is 6.
"""

from __future__ import annotations

import dataclasses
import time

import pytest
from hypothesis import given, settings

from rar_opt import Instance
from rar_opt.check import check
from rar_opt.errors import InputError, ParameterError
from rar_opt.formulations import cpsat
from rar_opt.instances.library import instance_path
from rar_opt.solvers import Budget, PhaseKind, PhaseRecord, ProvedBy, SolveRecord, Status
from rar_opt.solvers.backend import MIN_SOLVER_SECONDS, RawOutcome, SolveOptions
from rar_opt.solvers.budget import run_seed
from rar_opt.solvers.context import Context, Found, Incumbent
from rar_opt.solvers.cpsat import Cpsat
from rar_opt.solvers.phases import PHASES, full_model
from rar_opt.solvers.plan import AUTO, DECOMPOSE, LARGE_JOBS

from ..bruteforce import brute_force
from ..helpers import policy_makespans
from ..strategies import micro_instances, reference_simulate


def _context(inst: Instance, plan=AUTO, limit: float | None = 30.0, policies=("sjf-bco", "ls", "ff")) -> Context:
    return Context(inst, plan, Budget.start(limit), inst.horizon, True, policies)


WITH_CF = dataclasses.replace(AUTO, contention_free=True)
"""auto with the contention-free phases, which it leaves out since stop 27 (docs/exactness.md)."""


def _only(found: list[Found]) -> Found:
    assert len(found) == 1, found
    return found[0]


def test_every_phase_kind_has_a_function() -> None:
    assert set(PHASES) == set(PhaseKind)


def test_the_heuristics_phase_keeps_the_best_policy(wait_beats_start: Instance) -> None:
    ctx = _context(wait_beats_start)
    found = _only(list(PHASES[PhaseKind.HEURISTICS](ctx, Incumbent())))
    assert found.record.status == Status.FEASIBLE and found.span == min(found.record.tried.values()) == 8
    assert found.source in ctx.policies and found.schedule.meta["method"] == found.source
    assert check(wait_beats_start, found.schedule).result.makespan == found.span
    # no policies: nothing to report
    assert list(PHASES[PhaseKind.HEURISTICS](_context(wait_beats_start, policies=()), Incumbent())) == []


def test_the_heuristics_phase_runs_its_grace_past_the_clock(
    wait_beats_start: Instance, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A clock run out before the phase began (the start-up ate the limit): every policy
    still runs within HEURISTICS_GRACE; with no grace the first alone does, as before."""
    from rar_opt.solvers import phases

    def spent() -> Context:
        budget = Budget(limit=0.01, began=time.perf_counter() - 1.0)
        return Context(wait_beats_start, AUTO, budget, wait_beats_start.horizon, True, ("sjf-bco", "ls", "lpt"))

    assert spent().budget.expired()
    found = _only(list(phases.heuristics(spent(), Incumbent())))
    assert list(found.record.tried) == ["sjf-bco", "ls", "lpt"]
    monkeypatch.setattr(phases, "HEURISTICS_GRACE", 0.0)
    found = _only(list(phases.heuristics(spent(), Incumbent())))
    assert list(found.record.tried) == ["sjf-bco"] and found.span == found.record.tried["sjf-bco"]


def test_the_floor_phase_reports_each_bound_and_the_best(wait_beats_start: Instance) -> None:
    found = _only(list(PHASES[PhaseKind.FLOOR](_context(wait_beats_start), Incumbent())))
    assert found.record.status == Status.BOUND and found.record.bound == max(found.record.floors.values()) == 6
    assert found.record.lower_bound() == 6 and found.schedule is None
    assert list(PHASES[PhaseKind.FLOOR](_context(wait_beats_start, DECOMPOSE), Incumbent())) == []  # off


def test_a_floor_phase_past_the_clock_leaves_out_the_slow_floors(wait_beats_start: Instance) -> None:
    # a clock run out before the floor phase (a short limit, a slow start-up): only the floors
    # that take milliseconds, so that the limit is kept; the others give the same values
    from rar_opt.bounds import registry

    slow = set(registry.SLOW_FLOORS)
    full = _only(list(PHASES[PhaseKind.FLOOR](_context(wait_beats_start), Incumbent()))).record.floors
    spent = Context(
        wait_beats_start, AUTO, Budget(limit=0.01, began=time.perf_counter() - 1.0), wait_beats_start.horizon, True, ()
    )
    quick = _only(list(PHASES[PhaseKind.FLOOR](spent, Incumbent()))).record.floors
    assert slow and slow <= set(full) and not slow & set(quick)
    assert quick == {name: value for name, value in full.items() if name not in slow}


def test_auto_leaves_out_the_contention_free_phases(wait_beats_start: Instance) -> None:
    for kind in (PhaseKind.RELAXATION, PhaseKind.RESTRICTION):
        assert list(PHASES[kind](_context(wait_beats_start), Incumbent(span=8))) == []


def test_the_contention_free_phases_are_left_out_over_their_size_guard(
    wait_beats_start: Instance, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rar_opt.formulations import cfree

    monkeypatch.setattr(cfree.too_large, "__defaults__", (2,))  # wait-beats-start: 2 jobs x 3 servers
    for kind in (PhaseKind.RELAXATION, PhaseKind.RESTRICTION):
        assert list(PHASES[kind](_context(wait_beats_start, WITH_CF), Incumbent(span=8))) == []


def test_the_relaxation_phase_bounds_below(wait_beats_start: Instance) -> None:
    found = _only(list(PHASES[PhaseKind.RELAXATION](_context(wait_beats_start, WITH_CF), Incumbent(span=8))))
    assert found.record.status == Status.OPTIMAL and found.record.lower_bound() == 3  # each job alone: 3 slots
    assert found.horizon == 8 and not found.nothing_fits and found.schedule is None


def test_the_restriction_phase_finds_a_schedule_of_exact_makespan(wait_beats_start: Instance) -> None:
    found = _only(list(PHASES[PhaseKind.RESTRICTION](_context(wait_beats_start, WITH_CF), Incumbent(span=8))))
    assert found.record.status == Status.OPTIMAL and found.span == round(found.record.objective) == 6
    assert max(reference_simulate(wait_beats_start, found.schedule)["completion"]) == 6
    assert found.record.lower_bound() is None  # a schedule's makespan is never a bound


def test_the_probe_phase_raises_the_floor_while_it_refutes(wait_beats_start: Instance) -> None:
    for step, want in ((None, [3, 4, 5]), (0.15, [4, 5])):  # the step probe at 4 proves 5 at once
        best = Incumbent(bound=3.0)
        best.offer(*_restriction_schedule(wait_beats_start), "restriction")
        asked = []
        plan = dataclasses.replace(AUTO, step_probe_share=step)
        for found in PHASES[PhaseKind.PROBE](_context(wait_beats_start, plan), best):  # the loop's part: keep the bound
            asked.append((found.record.asked, found.record.status))
            best.raise_bound(found.record.lower_bound())
        assert asked == [(h, Status.INFEASIBLE) for h in want]
        assert best.closed and best.floor == 6
    # without a time limit there is no share for probes
    assert list(PHASES[PhaseKind.PROBE](_context(wait_beats_start, limit=None), Incumbent(span=6, bound=3))) == []


def test_which_probes_carry_the_reversal_and_pricing_rows(wait_beats_start: Instance, monkeypatch) -> None:
    # the reversal row never goes on the step probe (it asks with slack); the pricing rows go
    # where Plan.probe_pricing says: every probe ("all", auto's), the probes at the floor, none
    from rar_opt.solvers import floor_asks

    real, asked = floor_asks.probe, []

    def recording(inst, makespan, **kwargs):
        asked.append((makespan, kwargs["reversal"], kwargs["pricing"]))
        return real(inst, makespan, **kwargs)

    monkeypatch.setattr(floor_asks, "probe", recording)
    assert AUTO.probe_pricing == "all"
    for pricing, on_step in (("floor", False), ("all", True), ("none", False)):
        asked.clear()
        best = Incumbent(bound=3.0)
        best.offer(*_restriction_schedule(wait_beats_start), "restriction")
        plan = dataclasses.replace(AUTO, step_probe_share=0.15, probe_pricing=pricing)
        for found in PHASES[PhaseKind.PROBE](_context(wait_beats_start, plan), best):
            best.raise_bound(found.record.lower_bound())
        assert asked == [(4, False, on_step), (5, True, pricing != "none")]  # step at 4, then the floor 5
        assert best.closed and best.floor == 6


def test_the_full_model_phase_proves_the_optimum(wait_beats_start: Instance) -> None:
    best = Incumbent(bound=3.0)
    found = _only(list(PHASES[PhaseKind.FULL](_context(wait_beats_start), best)))
    assert found.record.status == Status.OPTIMAL and found.record.search == "no-lp" and found.span == 6
    assert found.record.name == "full cp-sat (no-lp)" and found.record.lower_bound() == 6


def _restriction_schedule(inst: Instance):
    found = _only(list(PHASES[PhaseKind.RESTRICTION](_context(inst, WITH_CF), Incumbent())))
    return found.schedule, found.span


def _bins_standing_in(real_bins, refute: bool):
    """The GPU bins' answers as they are, or a refutation of the floor standing in for them."""

    def bins(inst, floor, top, stage, symmetry=True, growth=2.0, opening=None):
        if refute:
            yield floor, RawOutcome(Status.INFEASIBLE), 0.1
            return
        yield from real_bins(inst, floor, top, stage, symmetry, growth, opening)

    return bins


def _probe_stage(inst: Instance, plan, best: Incumbent) -> list[tuple]:
    """The probe stage run to its end, its answers applied as ``decompose`` applies them:
    (kind, slot asked, status) of each."""
    seen = []
    for found in PHASES[PhaseKind.PROBE](_context(inst, plan, limit=100.0), best):
        seen.append((found.record.kind, found.record.asked, found.record.status))
        best.raise_bound(found.record.lower_bound())
        best.phases.append(found.record)
    return seen


def test_the_record_keeps_the_json_keys_of_earlier_versions() -> None:
    phases = (
        PhaseRecord(PhaseKind.RELAXATION, Status.OPTIMAL, 3.0, 3.0, 0.12345),
        PhaseRecord(PhaseKind.PROBE, Status.INFEASIBLE, None, 4.0, 0.5, asked=3),
        PhaseRecord(PhaseKind.FULL, Status.OPTIMAL, 6.0, 6.0, 1.0, search="no-lp"),
    )
    record = SolveRecord("auto", "cpsat", {"seed": 0}, phases).proved(phases[-1])
    out = record.to_dict()
    assert [p["phase"] for p in out["phases"]] == ["relaxation", "probe 3", "full cp-sat (no-lp)"]
    assert {"phase", "status", "objective", "bound", "seconds"} <= set(out["phases"][0])
    assert out["phases"][0]["seconds"] == 0.123 and out["proved_by"] == "full cp-sat (no-lp)"
    assert out["formulation"] == "auto" and out["backend"] == "cpsat" and out["seed"] == 0
    assert SolveRecord("auto", "cpsat", phases=phases).proved(phases[1]).to_dict()["proved_by"] == "probe"
    assert record.proved_by == ProvedBy.FULL_MODEL and record.relaxation_bound() == (3.0, True)
    # a relaxation phase that proved nothing gives no bound
    assert (
        SolveRecord("x", "y", phases=(PhaseRecord(PhaseKind.RELAXATION, Status.INFEASIBLE),)).relaxation_bound() is None
    )


def test_the_budget_shares_what_is_left() -> None:
    budget = Budget.start(10.0, threads=1, seed=3)
    assert budget.deadline == pytest.approx(budget.began + 10.0) and not budget.expired()
    half = budget.share(0.5)
    assert half.limit == pytest.approx(5.0, abs=0.05) and half.seed == 3 and half.threads == 1
    settings = budget.settings()
    assert settings.time_limit == pytest.approx(10.0, abs=0.05) and settings.deadline is not None and settings.seed == 3
    assert budget.reserving().limit == pytest.approx(10.0 * 0.97)
    spent = Budget(limit=0.01, began=time.perf_counter() - 1.0)
    assert spent.expired() and spent.left() == MIN_SOLVER_SECONDS  # a solver always gets its least time
    free = Budget.start(None)
    assert free.left() is None and free.deadline is None and not free.expired() and free.settings().time_limit is None


@pytest.mark.parametrize(
    ("limit", "threads", "seed", "parameter"),
    [(0, 1, 0, "time_limit"), (float("inf"), 1, 0, "time_limit"), (1, -1, 0, "threads"), (1, 1, -2, "seed")],
)
def test_a_bad_budget_names_the_parameter(limit, threads, seed, parameter) -> None:
    with pytest.raises(ParameterError) as err:
        Budget.start(limit, threads, seed)
    assert err.value.where == parameter


def test_the_improve_phase_runs_only_where_the_full_model_cannot(wait_beats_start: Instance) -> None:
    import dataclasses

    ctx = _context(wait_beats_start, limit=5.0)
    assert list(PHASES[PhaseKind.IMPROVE](ctx, Incumbent())) == []  # the full model fits: the exact phases decide
    assert AUTO.improvers == (("pack", 1.0),)  # auto's: pack alone (benchmarks/improvers.py)
    both = dataclasses.replace(AUTO, improvers=(("pack", 0.75), ("improve", 1.0)))
    too_large = dataclasses.replace(ctx, max_cells=0, plan=both)
    founds = list(PHASES[PhaseKind.IMPROVE](too_large, Incumbent()))
    assert [f.source for f in founds] == ["pack", "improve"]  # the plan's improvers, in turn
    assert [f.record.name for f in founds] == ["improve (pack)", "improve"]
    for found in founds:
        assert found.record.status == Status.FEASIBLE
        assert check(wait_beats_start, found.schedule).result.makespan == found.span == found.record.objective
    assert founds[1].span <= 8  # never worse than the list schedules it starts from
    assert founds[0].span == 6  # pack runs the two split jobs one after the other: the optimum
    without = dataclasses.replace(too_large, plan=DECOMPOSE)  # no share for it in the plan as first stated
    assert list(PHASES[PhaseKind.IMPROVE](without, Incumbent())) == []


def test_an_improver_takes_its_options_and_backfill_aims_at_the_makespan_past_the_floor(
    wait_beats_start: Instance, monkeypatch: pytest.MonkeyPatch
) -> None:
    import dataclasses

    from rar_opt import algorithms

    asked: list[dict] = []
    real = algorithms.run_policy

    def spy(instance, name, **options):
        asked.append({"name": name, **options})
        return real(instance, name, **options)

    monkeypatch.setattr(algorithms, "run_policy", spy)
    rules = (("backfill", 0.5, (("fit", "large"), ("split", "choose"))), ("backfill", 1.0))
    plan = dataclasses.replace(AUTO, improvers=rules)
    ctx = dataclasses.replace(_context(wait_beats_start, limit=5.0), max_cells=0, plan=plan)
    founds = list(PHASES[PhaseKind.IMPROVE](ctx, Incumbent(bound=5.5)))
    assert [f.source for f in founds] == ["backfill (fit=large, split=choose)", "backfill"]
    assert [f.schedule.meta["method"] for f in founds] == [f.source for f in founds]
    assert [(a["fit"], a["split"]) for a in asked[:1]] == [("large", "choose")] and "fit" not in asked[1]
    assert [a["makespan_cap"] for a in asked] == [6, 6]  # the floor, rounded up: scored past it first
    for found in founds:  # the backfill builder never lets split jobs share a server: the optimum, 6
        assert check(wait_beats_start, found.schedule).result.makespan == found.span == 6
    asked.clear()
    list(PHASES[PhaseKind.IMPROVE](ctx, Incumbent()))  # no bound yet: no cap, the sum decides
    assert all("makespan_cap" not in a for a in asked)


def test_auto_from_24_jobs_on_counts_the_work_of_its_first_searches() -> None:
    from rar_opt.solvers.phases import IMPROVE_ITERATIONS
    from rar_opt.solvers.plan import AUTO_LARGE, COUNTED_IMPROVERS

    assert AUTO.fitting_improve_share is None  # below 24 jobs: no such phase
    assert AUTO_LARGE.fitting_improvers == COUNTED_IMPROVERS and AUTO_LARGE.fitting_improve_share is not None
    for entry in COUNTED_IMPROVERS:  # each may take what is left of the phase: the seconds are a cap
        assert len(entry) == 3 and entry[1] == 1.0
        assert 0 < dict(entry[2])["iterations"] < IMPROVE_ITERATIONS
    assert dict(COUNTED_IMPROVERS[0][2])["lanes_tries"] > 0


def test_counted_searches_hand_on_the_same_schedule_whatever_the_time() -> None:
    # the schedule the first full model starts from is a function of the instance and the
    # seed once the searches stop on counts: a tenfold time limit changes nothing
    inst = Instance.read(instance_path("heavy-20x8x120-s0"))
    counted = (
        ("pack", 1.0, (("iterations", 8), ("lanes_tries", 500))),
        ("backfill", 1.0, (("fit", "best"), ("split", "choose"), ("iterations", 150))),
    )
    plan = dataclasses.replace(AUTO, fitting_improve_share=0.5, fitting_improvers=counted)
    short, long = (
        list(PHASES[PhaseKind.IMPROVE](_context(inst, plan, limit), Incumbent(bound=57.0))) for limit in (30.0, 300.0)
    )
    assert [f.record.name for f in short] == ["improve (pack)", "improve (backfill (fit=best, split=choose))"]
    assert [f.source for f in short] == [f.source for f in long] and [f.span for f in short] == [f.span for f in long]
    assert [f.schedule for f in short] == [f.schedule for f in long]
    pack, backfill = (f.record.work for f in short)
    assert pack is not None and pack["iterations"] == 8 and pack["lanes_tries"] >= 1
    assert backfill == {"iterations": 150}  # the record's work: what the search did, the count asked
    assert short[0].record.to_dict()["work"] == dict(pack)


def test_the_search_stage_runs_rounds_with_new_seeds_while_its_share_lasts(monkeypatch: pytest.MonkeyPatch) -> None:
    # Plan.search_rounds: round k of the searchers walks with run_seed(seed, k), its label
    # names that seed, and the rounds stop at the count asked; each round's search is the
    # search that seed gives alone (counted moves: the time is only a cap)
    from rar_opt import algorithms
    from rar_opt.solvers.phases import search

    seeds: list[int] = []
    real = algorithms.run_policy

    def spy(instance, name, **options):
        seeds.append(options["seed"])
        return real(instance, name, **options)

    monkeypatch.setattr(algorithms, "run_policy", spy)
    inst = Instance.read(instance_path("heavy-20x8x120-s0"))
    searcher = ("backfill", 1.0, (("fit", "best"), ("split", "choose"), ("iterations", 60)))
    plan = dataclasses.replace(AUTO, searchers=(searcher,), search_share=0.5, search_rounds=3)
    ctx = dataclasses.replace(_context(inst, plan, 60.0), budget=Budget.start(60.0, seed=4))
    founds = list(search(ctx, Incumbent(bound=57.0)))
    assert seeds == [4, run_seed(4, 1), run_seed(4, 2)] and len(set(seeds)) == 3
    assert [f.source for f in founds] == [
        "backfill (fit=best, split=choose)",
        *(f"backfill (fit=best, split=choose, seed={s})" for s in seeds[1:]),
    ]
    for found, seed in zip(founds, seeds, strict=True):
        alone = real(inst, "backfill", seed=seed, iterations=60, fit="best", split="choose", makespan_cap=57)
        assert found.schedule.starts == alone.schedule.starts and found.record.work == {"iterations": 60}
    # one round: the stage as before, with the budget's seed
    seeds.clear()
    once = dataclasses.replace(ctx, plan=dataclasses.replace(plan, search_rounds=1))
    assert [f.source for f in search(once, Incumbent(bound=57.0))] == [founds[0].source] and seeds == [4]


@pytest.mark.parametrize("rounds", [0, -1, True, 1.5, "2"])
def test_a_plan_refuses_a_number_of_search_rounds_that_is_not_a_positive_count(rounds) -> None:
    with pytest.raises(InputError) as info:
        dataclasses.replace(AUTO, search_rounds=rounds)
    assert info.value.where == "search_rounds"


def test_a_full_model_that_cannot_be_built_in_time_is_not_started() -> None:
    # paper 160 x 10, seed 6, over 330 slots: 264,000 cells, under the size guard, but its
    # build (plain Python, no time limit reaches it) took 125 s on our machine
    from rar_opt.formulations import cpsat
    from rar_opt.instances.generate import paper
    from rar_opt.solvers.context import build_seconds

    inst = paper(6, jobs=160, servers=10)
    assert cpsat.count_cells(inst, 330) <= cpsat.Options().max_cells
    assert build_seconds(inst, 330) > 60
    assert _context(inst, limit=60.0).too_large(330) == "too large for the time left"
    assert _context(inst, limit=None).too_large(330) is None  # without a limit only the size counts
    assert _context(inst, limit=None).too_large(inst.horizon) == "too large"
    small = paper(0, jobs=12, servers=4)  # a frontier-sized model: built in about a second
    assert _context(small, limit=30.0).too_large(small.horizon) is None


def test_the_gpu_bins_phase_raises_the_floor_where_the_floors_stop() -> None:
    # heavy-20x8x120-s0: the floors say 57, the optimum is 58 (instances/frontier); the
    # relaxation refutes 57, then (with the growth cap of 2, auto's before the thirty-ninth
    # session) has at most twice those seconds for 58, which it cannot refute
    inst = Instance.read(instance_path("heavy-20x8x120-s0"))
    assert inst.meta["known_optimum"] == 58  # the record the numbers below rest on
    best = Incumbent(span=60, bound=57.0)
    plan = dataclasses.replace(AUTO, bins_share=1.0, bins_growth=2.0)
    answers = []
    for found in PHASES[PhaseKind.BINS](_context(inst, plan, limit=120.0), best):  # the loop's part
        answers.append(found.record)
        best.raise_bound(found.record.lower_bound())
    assert [(r.name, r.status, r.lower_bound()) for r in answers][:1] == [("gpu bins 57", Status.INFEASIBLE, 58)]
    assert len(answers) == 2 and answers[1].asked == 58 and answers[1].lower_bound() is None
    assert answers[1].seconds <= 2 * answers[0].seconds + 1.0  # the cap after a refutation
    assert best.floor == 58 and answers[0].proves == ProvedBy.BINS
    # left out without a time limit, or by a plan without a share
    assert list(PHASES[PhaseKind.BINS](_context(inst, limit=None), best)) == []
    assert list(PHASES[PhaseKind.BINS](_context(inst, DECOMPOSE), best)) == []


@pytest.mark.parametrize("growth", [2.0, 8.0, None])
def test_the_slot_after_a_refutation_gets_the_bins_growth(monkeypatch, growth) -> None:
    # Plan.bins_growth: after a refutation that took 1 s the next slot may take growth x 1 s,
    # or what is left of the stage (None); the answers here stand in for CP-SAT's
    import rar_opt.solvers.floor_asks as module

    limits: list[float] = []

    class Refuting:
        def solve(self, model, options):
            limits.append(options.time_limit)
            clock[0] += 1.0  # each answer takes one second of the stage's clock
            return RawOutcome(Status.INFEASIBLE)

    clock = [0.0]
    monkeypatch.setattr(module, "Cpsat", Refuting)
    monkeypatch.setattr(module.gpubins, "build", lambda instance, options: None)
    stage = Budget(limit=40.0, began=0.0)
    monkeypatch.setattr(Budget, "now", lambda self: clock[0])
    inst = Instance.read(instance_path("wait-beats-start"))
    answers = list(module.bins_answers(inst, 3, 6, stage, growth=growth))
    assert [a for a, _, _ in answers] == [3, 4, 5]  # each refuted, up to the slot below the top
    assert limits[0] == pytest.approx(40.0, abs=1.0)  # the first ask has the whole stage
    for k, limit in enumerate(limits[1:], start=1):  # later ones: growth x 1 s, or the stage's rest
        assert limit == pytest.approx(40.0 - k if growth is None else growth, abs=0.6)


@pytest.mark.parametrize("growth", [None, 2.0])
def test_the_bins_stage_passes_the_plans_growth(wait_beats_start: Instance, monkeypatch, growth) -> None:
    # auto's bins_growth is None (the next slot may use the rest of the stage); a plan's own reaches the bins
    import rar_opt.solvers.floor_asks as module

    seen: list[float | None] = []

    def spy(instance, floor, top, stage, symmetry=True, growth=2.0, opening=None):
        seen.append(growth)
        return iter(())

    monkeypatch.setattr(module, "bins_answers", spy)
    assert AUTO.bins_growth is None
    plan = dataclasses.replace(AUTO, bins_growth=growth)
    list(PHASES[PhaseKind.BINS](_context(wait_beats_start, plan, limit=100.0), Incumbent(span=6, bound=3.0)))
    assert seen == [growth]


def test_an_undecided_gpu_bins_phase_ends_the_stage(wait_beats_start: Instance) -> None:
    # on wait-beats-start the relaxation has a solution at every slot from 3 (no contention):
    # one answer, no bound, and the stage ends
    best = Incumbent(span=8, bound=3.0)
    found = _only(list(PHASES[PhaseKind.BINS](_context(wait_beats_start), best)))
    assert found.record.status == Status.FEASIBLE and found.record.lower_bound() is None
    assert found.record.name == "gpu bins 3" and found.schedule is None


@pytest.mark.parametrize(
    ("choice", "rows"), [("first", [True, False, False]), ("all", [True] * 3), ("none", [False] * 3)]
)
def test_the_plan_says_which_probes_carry_the_reversal_row(
    wait_beats_start: Instance, monkeypatch, choice, rows
) -> None:
    import rar_opt.solvers.floor_asks as module

    real, seen = module.probe, []

    def spy(*args, **kwargs):
        seen.append(kwargs["reversal"])
        return real(*args, **kwargs)

    monkeypatch.setattr(module, "probe", spy)
    best = Incumbent(bound=3.0)
    best.offer(*_restriction_schedule(wait_beats_start), "restriction")
    plan = dataclasses.replace(AUTO, probe_reversal=choice, step_probe_share=None)
    for found in PHASES[PhaseKind.PROBE](_context(wait_beats_start, plan), best):
        best.raise_bound(found.record.lower_bound())
    assert seen == rows and best.floor == 6


@pytest.mark.parametrize(("last", "span", "share"), [(0.9, 6, 0.9), (0.9, 7, 0.5), (None, 6, 0.5), (0.3, 6, 0.5)])
def test_the_last_open_question_gets_the_last_probe_share(
    wait_beats_start: Instance, monkeypatch, last, span: int, share: float
) -> None:
    # floor 5: with the best schedule at 6 the probe at 5 is all that is left to ask and
    # may use last_probe_share of the time left (never less than its stage's share); at 7
    # it gets the probe stage's share, as without the knob
    import rar_opt.solvers.floor_asks as module

    seen: list[float] = []

    def spy(*args, **kwargs):
        seen.append(kwargs["time_limit"])
        raise RuntimeError("stop here")  # the stage logs it and ends

    monkeypatch.setattr(module, "probe", spy)
    plan = dataclasses.replace(AUTO, probe_share=0.5, last_probe_share=last, step_probe_share=None)
    best = Incumbent(span=span, bound=5.0)
    list(PHASES[PhaseKind.PROBE](_context(wait_beats_start, plan, limit=100.0), best))
    assert len(seen) == 1 and seen[0] == pytest.approx(share * 100.0, rel=0.01)


@pytest.mark.parametrize(
    ("decisive", "span", "share"), [(0.9, 7, 0.9), (0.9, 8, 0.15), (None, 7, 0.15), (0.1, 7, 0.15)]
)
def test_a_decisive_step_probe_gets_its_share(
    wait_beats_start: Instance, monkeypatch, decisive, span: int, share: float
) -> None:
    # floor 5: with the best schedule at 7 the step probe at 6 decides whether 7 is optimal
    # and may use decisive_step_share of the time left (never less than step_probe_share);
    # at 8 it asks with slack and gets step_probe_share, as without the knob
    import rar_opt.solvers.floor_asks as module

    seen: list[tuple[int, float]] = []

    def spy(*args, **kwargs):
        seen.append((args[1], kwargs["time_limit"]))
        raise RuntimeError("stop here")  # the stage logs it and ends

    monkeypatch.setattr(module, "probe", spy)
    plan = dataclasses.replace(AUTO, step_probe_share=0.15, decisive_step_share=decisive)
    best = Incumbent(span=span, bound=5.0)
    list(PHASES[PhaseKind.PROBE](_context(wait_beats_start, plan, limit=100.0), best))
    assert len(seen) == 1 and seen[0][0] == 6 and seen[0][1] == pytest.approx(share * 100.0, rel=0.02)


@pytest.mark.parametrize("search", ["no-lp", "no-lp-dff"])
def test_the_probes_search_as_the_plan_says(wait_beats_start: Instance, monkeypatch, search: str) -> None:
    # every probe of the stage (the step probe and the floor's) runs the plan's probe_search
    import rar_opt.solvers.floor_asks as module

    real, seen = module.probe, []

    def spy(*args, **kwargs):
        seen.append((args[1], kwargs["search"]))
        return real(*args, **kwargs)

    monkeypatch.setattr(module, "probe", spy)
    best = Incumbent(bound=3.0)
    best.offer(*_restriction_schedule(wait_beats_start), "restriction")
    plan = dataclasses.replace(AUTO, probe_search=search)
    for found in PHASES[PhaseKind.PROBE](_context(wait_beats_start, plan, limit=100.0), best):
        assert found.record.status in (Status.INFEASIBLE, Status.FEASIBLE)
        best.raise_bound(found.record.lower_bound())
    assert seen == [(4, search), (5, search)] and best.floor == 6
    with pytest.raises(InputError) as caught:
        dataclasses.replace(AUTO, probe_search="fast")
    assert caught.value.where == "probe_search"


@pytest.mark.parametrize(
    "reversal, rows", [("first", [False, True, False, False]), ("repeats", [False, True, True, False])]
)
def test_a_repeated_question_carries_the_reversal_row_under_repeats(
    wait_beats_start: Instance, monkeypatch, reversal: str, rows: list[bool]
) -> None:
    # floor 3, schedule 6 (the optimum): the step probe at 4 is made undecided, the probe at 3
    # refutes, and the probe at 4 asks the step probe's question again: with "repeats" it
    # carries the row; the probe at 5 is a new question and does not
    import rar_opt.solvers.floor_asks as module

    real, seen = module.probe, []

    def spy(*args, **kwargs):
        seen.append((args[1], kwargs["reversal"]))
        answer = real(*args, **kwargs)
        if len(seen) == 1:  # the step probe: undecided, whatever CP-SAT said
            return dataclasses.replace(answer, status=Status.NO_SOLUTION, schedule=None, schedule_makespan=None)
        return answer

    monkeypatch.setattr(module, "probe", spy)
    best = Incumbent(bound=3.0)
    best.offer(*_restriction_schedule(wait_beats_start), "restriction")
    plan = dataclasses.replace(AUTO, probe_reversal=reversal)
    for found in PHASES[PhaseKind.PROBE](_context(wait_beats_start, plan, limit=100.0), best):
        best.raise_bound(found.record.lower_bound())
    assert [h for h, _ in seen] == [4, 3, 4, 5] and [r for _, r in seen] == rows and best.floor == 6


def test_the_step_probe_carries_no_reversal_row_and_its_own_share(wait_beats_start: Instance, monkeypatch) -> None:
    # floor 3, schedule 6: the step probe at 4 (15% of the time left, no reversal row: it
    # looks for a schedule), then the floor's probes, the first of them with the row
    import rar_opt.solvers.floor_asks as module

    real, seen = module.probe, []

    def spy(*args, **kwargs):
        seen.append((args[1], kwargs["reversal"], kwargs["time_limit"]))
        return real(*args, **kwargs)

    monkeypatch.setattr(module, "probe", spy)
    best = Incumbent(bound=3.0)
    best.offer(*_restriction_schedule(wait_beats_start), "restriction")
    for found in PHASES[PhaseKind.PROBE](_context(wait_beats_start, limit=100.0), best):
        best.raise_bound(found.record.lower_bound())
    assert [(h, r) for h, r, _ in seen] == [(4, False), (5, True)] and best.floor == 6
    assert seen[0][2] == pytest.approx(0.15 * 100.0, rel=0.02)


@pytest.mark.parametrize(("gap", "row"), [(3, True), (2, True), (4, False), (None, False)])
def test_a_wide_gap_gives_the_step_probe_the_reversal_row(
    wait_beats_start: Instance, monkeypatch, gap: int | None, row: bool
) -> None:
    # floor 3, schedule 6: the best schedule is three slots above the floor, so the step
    # probe at 4 carries the row exactly when Plan.step_reversal_gap is at most 3
    import rar_opt.solvers.floor_asks as module

    real, seen = module.probe, []

    def spy(*args, **kwargs):
        seen.append((args[1], kwargs["reversal"]))
        return real(*args, **kwargs)

    monkeypatch.setattr(module, "probe", spy)
    best = Incumbent(bound=3.0)
    best.offer(*_restriction_schedule(wait_beats_start), "restriction")
    plan = dataclasses.replace(AUTO, step_reversal_gap=gap)
    for found in PHASES[PhaseKind.PROBE](_context(wait_beats_start, plan, limit=100.0), best):
        best.raise_bound(found.record.lower_bound())
    assert seen[0] == (4, row) and seen[1:] == [(5, True)] and best.floor == 6


@pytest.mark.parametrize("momentum", [0.5, None])
def test_a_probe_after_a_no_may_go_past_the_stage_under_momentum(
    wait_beats_start: Instance, monkeypatch, momentum: float | None
) -> None:
    # floor 3, schedule 6, a probe stage of 2% of 100 s: the probe at 3 says no; with
    # Plan.probe_momentum the probe at 4 may use half of all the time left, past the stage's
    # end; without it, what is left of the stage's 2 s at most
    import rar_opt.solvers.floor_asks as module

    real, seen = module.probe, []

    def spy(*args, **kwargs):
        seen.append((args[1], kwargs["time_limit"]))
        return real(*args, **kwargs)

    monkeypatch.setattr(module, "probe", spy)
    best = Incumbent(bound=3.0)
    best.offer(*_restriction_schedule(wait_beats_start), "restriction")
    plan = dataclasses.replace(AUTO, probe_share=0.02, step_probe_share=None, probe_momentum=momentum)
    for found in PHASES[PhaseKind.PROBE](_context(wait_beats_start, plan, limit=100.0), best):
        best.raise_bound(found.record.lower_bound())
    assert [h for h, _ in seen][:2] == [3, 4]
    if momentum is None:
        assert seen[0][1] <= 2.0 + 1e-6 and seen[1][1] < 2.0
    else:
        assert seen[1][1] > 40.0  # half of the ~99 s left, not the stage's remnant


@pytest.mark.parametrize("gap", [1, 0, 2.5, True, "3"])
def test_a_step_reversal_gap_must_be_two_slots_or_more(gap) -> None:
    with pytest.raises(InputError, match="step_reversal_gap"):
        dataclasses.replace(AUTO, step_reversal_gap=gap)


def test_an_undecided_probe_at_the_floor_is_asked_again_with_the_next_seed(
    wait_beats_start: Instance, monkeypatch
) -> None:
    # Plan.probe_restart_seconds: the probe at the floor 5 is undecided twice (the spy says
    # so), then refutes 5; each ask gets at most the restart's seconds, the next CP-SAT seed
    # and the same rows, all within the time the first ask had; then 6 is asked afresh
    import rar_opt.solvers.floor_asks as module

    real, seen = module.probe, []

    def spy(*args, **kwargs):
        seen.append((args[1], kwargs["seed"], kwargs["time_limit"], kwargs["reversal"]))
        if len(seen) <= 2:
            answer = real(*args, **kwargs)
            return dataclasses.replace(answer, status=Status.NO_SOLUTION, schedule=None, schedule_makespan=None,
                                       lower_bound=None)  # fmt: skip
        return real(*args, **kwargs)

    monkeypatch.setattr(module, "probe", spy)
    plan = dataclasses.replace(AUTO, step_probe_share=None, probe_restart_seconds=2.0)
    best = Incumbent(bound=5.0)
    best.offer(*_restriction_schedule(wait_beats_start), "restriction")
    ctx = Context(wait_beats_start, plan, Budget.start(100.0, seed=7), wait_beats_start.horizon, True, ("ff",))
    for found in PHASES[PhaseKind.PROBE](ctx, best):
        best.raise_bound(found.record.lower_bound())
    assert [(h, seed, reversal) for h, seed, _, reversal in seen[:3]] == [(5, 7, True), (5, 8, True), (5, 9, True)]
    assert all(limit <= 2.0 for _, _, limit, _ in seen) and best.floor == 6


def test_an_undecided_last_full_model_is_asked_again_with_the_next_seed(
    wait_beats_start: Instance, monkeypatch
) -> None:
    # Plan.full_restart_seconds: the spy makes the first two asks undecided (no answer); each
    # ask gets at most the restart's seconds but the last (which takes what is left), the
    # seeds of run_seed in turn, and stops once the model decides; the early full model asks once
    import rar_opt.solvers.phases as module

    real, seen = module.solve_model, []

    def spy(model, budget, search="default", stop_at=None):
        seen.append((budget.seed, budget.left()))
        raw, seconds = real(model, budget, search, stop_at)
        if len(seen) <= 2:
            return dataclasses.replace(raw, status=Status.NO_SOLUTION, has_solution=False, objective=None), seconds
        return raw, seconds

    best = Incumbent(bound=3.0)
    best.offer(*_restriction_schedule(wait_beats_start), "restriction")
    monkeypatch.setattr(module, "solve_model", spy)
    plan = dataclasses.replace(AUTO, full_restart_seconds=2.0)
    ctx = Context(wait_beats_start, plan, Budget.start(100.0, seed=7), wait_beats_start.horizon, True, ("ff",))
    answers = []
    for found in full_model(ctx, best):
        answers.append(found.record.status)
        best.phases.append(found.record)
        best.offer(found.schedule, found.span, "full")
    assert answers == [Status.NO_SOLUTION, Status.NO_SOLUTION, Status.OPTIMAL] and best.span == 6
    assert [seed for seed, _ in seen] == [7, run_seed(7, 1), run_seed(7, 2)]
    assert all(limit is not None and limit <= 2.0 for _, limit in seen)
    # an early full model (a share) is asked once, and so is the last one without the field
    seen.clear()
    assert len(list(full_model(ctx, Incumbent(span=6, bound=3.0), share=0.5))) == 1
    assert len(list(full_model(_context(wait_beats_start, AUTO, limit=100.0), Incumbent(span=6, bound=3.0)))) == 1
    assert len(seen) == 2 and seen[1][1] > 2.0  # without restarts the one ask has all the time


def test_the_last_full_ask_takes_what_is_left(wait_beats_start: Instance, monkeypatch) -> None:
    # with 5 s left and 2-s restarts: 2 s, then the last 3 s in one ask (not 2 + 1)
    import rar_opt.solvers.phases as module

    seen: list[float] = []

    def undecided(model, budget, search="default", stop_at=None):
        seen.append(budget.left())
        time.sleep(budget.left())
        return RawOutcome(Status.NO_SOLUTION, termination="time limit"), seen[-1]

    monkeypatch.setattr(module, "solve_model", undecided)
    plan = dataclasses.replace(AUTO, full_restart_seconds=2.0)
    ctx = _context(wait_beats_start, plan, limit=5.0)
    found = list(full_model(ctx, Incumbent(span=8, bound=3.0)))
    assert [f.record.status for f in found] == [Status.NO_SOLUTION] * 2
    assert seen[0] <= 2.0 and 2.5 < seen[1] <= 3.1


def test_a_plan_names_a_bad_restart() -> None:
    for bad in (0, -1.0, float("inf"), float("nan"), "8", True):
        with pytest.raises(InputError) as caught:
            dataclasses.replace(AUTO, probe_restart_seconds=bad)
        assert caught.value.where == "probe_restart_seconds"
        with pytest.raises(InputError) as caught:
            dataclasses.replace(AUTO, full_restart_seconds=bad)
        assert caught.value.where == "full_restart_seconds"


@pytest.mark.parametrize(("stop_at", "stops"), [(None, False), (8, True), (6, True), (5, False)])
def test_cpsat_stops_at_the_first_solution_within_stop_at(wait_beats_start: Instance, stop_at, stops: bool) -> None:
    # the optimum is 6: a target at or above a solution's objective stops the search there
    # (feasible, not proven); a target below the optimum never fires, and the search proves 6
    model = cpsat.build(wait_beats_start, cpsat.Options(horizon=8))
    raw = Cpsat().solve(model, SolveOptions(time_limit=30, stop_at=stop_at))
    assert raw.has_solution and raw.objective is not None and raw.objective >= 6
    if stops:
        assert raw.status == Status.FEASIBLE and raw.objective <= stop_at
    else:
        assert raw.status == Status.OPTIMAL and raw.objective == 6


@pytest.mark.parametrize("stops", [True, False])
def test_an_early_full_model_may_stop_one_slot_above_the_floor(
    wait_beats_start: Instance, monkeypatch, stops: bool
) -> None:
    # floor 5: with the rule, the early full model asks CP-SAT to stop at a schedule of 6
    # (the test above shows that it does); the last full model never stops early
    import rar_opt.solvers.phases as module

    real, asked = module.solve_model, []

    def spy(model, budget, search="default", stop_at=None):
        asked.append(stop_at)
        return real(model, budget, search, stop_at)

    monkeypatch.setattr(module, "solve_model", spy)
    plan = dataclasses.replace(
        AUTO, stages=("full", "probe", "full"), early_full_share=0.5, early_full_stops_one_above=stops
    )
    early = _only(list(full_model(_context(wait_beats_start, plan), Incumbent(bound=5.0), share=0.5)))
    last = _only(list(full_model(_context(wait_beats_start, plan), Incumbent(bound=5.0))))
    assert asked == [6 if stops else None, None]
    assert early.span == last.span == 6 and early.schedule is not None


@pytest.mark.parametrize("reseed", [True, False])
def test_a_later_full_model_may_search_with_another_seed(wait_beats_start: Instance, monkeypatch, reseed: bool) -> None:
    # Plan.full_reseed: the run's first full model keeps the run's seed; the k-th after it
    # gets run_seed(seed, k), so it does not repeat the first one's search from the same hint
    import rar_opt.solvers.phases as module
    from rar_opt.solvers.budget import run_seed

    real, seeds = module.solve_model, []

    def spy(model, budget, search="default", stop_at=None):
        seeds.append(budget.seed)
        return real(model, budget, search, stop_at)

    monkeypatch.setattr(module, "solve_model", spy)
    plan = dataclasses.replace(AUTO, stages=("full", "probe", "full"), early_full_share=0.5, full_reseed=reseed)
    ctx = Context(wait_beats_start, plan, Budget.start(30.0, seed=7), wait_beats_start.horizon, True, ("ff",))
    best = Incumbent(bound=5.0)
    for share in (0.5, None, None):
        for found in full_model(ctx, best, share=share):
            best.phases.append(found.record)
            assert found.span == 6  # every seed reaches the optimum of this instance
    assert seeds == ([7, run_seed(7, 1), run_seed(7, 2)] if reseed else [7, 7, 7])
    assert len(set(seeds)) == (3 if reseed else 1)


def test_a_plan_names_a_bad_reseed() -> None:
    for bad in (1, "yes", None):
        with pytest.raises(InputError) as caught:
            dataclasses.replace(AUTO, full_reseed=bad)
        assert caught.value.where == "full_reseed"


def test_the_fitting_improvers_run_where_the_full_model_fits_the_improvers_elsewhere(
    wait_beats_start: Instance,
) -> None:
    import dataclasses

    plan = dataclasses.replace(
        AUTO, fitting_improve_share=0.2, improvers=(("pack", 1.0),), fitting_improvers=(("backfill", 1.0),)
    )
    fits = dataclasses.replace(_context(wait_beats_start, limit=5.0), plan=plan)
    assert [f.source for f in PHASES[PhaseKind.IMPROVE](fits, Incumbent())] == ["backfill"]
    too_large = dataclasses.replace(fits, max_cells=0)
    assert [f.source for f in PHASES[PhaseKind.IMPROVE](too_large, Incumbent())] == ["pack"]
    # without fitting improvers, the improvers run in both places
    fresh = _context(wait_beats_start, limit=5.0)  # pack above had all the time left
    both = dataclasses.replace(fresh, plan=dataclasses.replace(plan, fitting_improvers=None))
    assert [f.source for f in PHASES[PhaseKind.IMPROVE](both, Incumbent())] == ["pack"]


def test_a_search_that_builds_nothing_in_its_share_is_skipped_not_raised(
    wait_beats_start: Instance, monkeypatch: pytest.MonkeyPatch
) -> None:
    import dataclasses

    from rar_opt.algorithms.backfill import Builder

    never = lambda self, order, deadline=None, unsplit=frozenset(): None  # noqa: E731 (never built in time)
    monkeypatch.setattr(Builder, "plan", never)
    rules = (("backfill", 0.5), ("pack", 1.0))
    plan = dataclasses.replace(AUTO, fitting_improve_share=0.5, fitting_improvers=rules)
    ctx = dataclasses.replace(_context(wait_beats_start, limit=5.0), plan=plan)
    assert [f.source for f in PHASES[PhaseKind.IMPROVE](ctx, Incumbent(bound=6.0))] == ["pack"]


@pytest.mark.parametrize(
    ("share", "step_decides", "refute"),
    [(0.1, False, False), (0.1, False, True), (None, False, False), (0.1, True, False)],
)
def test_the_bins_follow_an_undecided_step_probe(
    wait_beats_start: Instance, monkeypatch, share, step_decides: bool, refute: bool
) -> None:
    # Plan.step_bins_share: floor 3, schedule 6; the step probe at 4 is made undecided (unless
    # step_decides); the GPU bins then ask at the floor 3 before the probe there. Their real
    # answer at 3 is a relaxed solution (the floor stands); a refutation (stood in for) raises
    # the floor to 4, where the probes go on. Without the share, or after a step probe that
    # decided, no bins run inside the probe stage.
    import rar_opt.solvers.floor_asks as module

    real_probe, real_bins = module.probe, module.bins_answers
    asks: list[int] = []

    def spy(*args, **kwargs):
        answer = real_probe(*args, **kwargs)
        asks.append(args[1])
        if len(asks) == 1 and not step_decides:  # the step probe at 4
            return dataclasses.replace(answer, status=Status.NO_SOLUTION, schedule=None, schedule_makespan=None,
                                       lower_bound=None)  # fmt: skip
        return answer

    monkeypatch.setattr(module, "probe", spy)
    monkeypatch.setattr(module, "bins_answers", _bins_standing_in(real_bins, refute))
    plan = dataclasses.replace(AUTO, step_probe_share=0.15, step_bins_share=share)
    best = Incumbent(bound=3.0)
    best.offer(*_restriction_schedule(wait_beats_start), "restriction")
    seen = _probe_stage(wait_beats_start, plan, best)
    bins_seen = [s for s in seen if s[0] == PhaseKind.BINS]
    if share is None or step_decides:
        assert bins_seen == []
    else:
        assert seen[0][:2] == (PhaseKind.PROBE, 4) and seen[0][2] == Status.NO_SOLUTION
        assert seen[1] == (PhaseKind.BINS, 3, Status.INFEASIBLE if refute else Status.FEASIBLE)
        assert seen[2][:2] == (PhaseKind.PROBE, 4 if refute else 3)  # the probes go on at the floor
    assert best.closed and best.floor == 6


@pytest.mark.parametrize(("opening", "refute"), [(2.0, False), (2.0, True), (None, False)])
def test_the_opening_bins_come_before_the_probes(wait_beats_start: Instance, monkeypatch, opening, refute) -> None:
    # Plan.opening_bins_seconds: floor 3, schedule 6; the GPU bins ask at the floor before any
    # probe, their first ask within the opening's seconds. Their real answer at 3 is a relaxed
    # solution (the floor stands, and the probes begin there); a refutation (stood in for)
    # raises the floor to 4 first. Without the opening the probes come first.
    import rar_opt.solvers.floor_asks as module

    firsts: list[float | None] = []
    real_bins = _bins_standing_in(module.bins_answers, refute)

    def bins(inst, floor, top, stage, symmetry=True, growth=2.0, opening=None):
        firsts.append(opening)
        yield from real_bins(inst, floor, top, stage, symmetry, growth, opening)

    monkeypatch.setattr(module, "bins_answers", bins)
    plan = dataclasses.replace(AUTO, opening_bins_seconds=opening)
    best = Incumbent(bound=3.0)
    best.offer(*_restriction_schedule(wait_beats_start), "restriction")
    seen = _probe_stage(wait_beats_start, plan, best)
    if opening is None:
        assert firsts == [] and seen[0][0] == PhaseKind.PROBE
    else:
        assert firsts == [opening]  # the stage's clock has no meter here: seconds as given
        assert seen[0] == (PhaseKind.BINS, 3, Status.INFEASIBLE if refute else Status.FEASIBLE)
        assert [s[0] for s in seen[1:]] == [PhaseKind.PROBE] * (len(seen) - 1)
        assert seen[1][1] >= (4 if refute else 3)  # the probes begin at the floor the bins left
    assert best.closed and best.floor == 6


@pytest.mark.parametrize(("share", "refute"), [(0.1, False), (0.1, True), (None, False)])
def test_the_bins_follow_a_step_probe_that_says_no(
    wait_beats_start: Instance, monkeypatch, share, refute: bool
) -> None:
    # Plan.refuted_step_bins_share: floor 3, schedule 6; the step probe at 4 says no (its real
    # answer: the optimum is 6), so the floor is 5 and the GPU bins ask there before the probe
    # at 5. A refutation (stood in for) raises the floor to 6, which closes the run with no
    # probe at the floor; without the share no bins run inside the probe stage.
    import rar_opt.solvers.floor_asks as module

    monkeypatch.setattr(module, "bins_answers", _bins_standing_in(module.bins_answers, refute))
    plan = dataclasses.replace(AUTO, step_probe_share=0.15, refuted_step_bins_share=share)
    best = Incumbent(bound=3.0)
    best.offer(*_restriction_schedule(wait_beats_start), "restriction")
    seen = _probe_stage(wait_beats_start, plan, best)
    assert seen[0] == (PhaseKind.PROBE, 4, Status.INFEASIBLE)
    if share is None:
        assert [s[0] for s in seen] == [PhaseKind.PROBE, PhaseKind.PROBE] and seen[1][1] == 5
    elif refute:
        assert seen[1:] == [(PhaseKind.BINS, 5, Status.INFEASIBLE)]
    else:
        assert seen[1][:2] == (PhaseKind.BINS, 5) and seen[1][2] != Status.INFEASIBLE
        assert seen[2][:2] == (PhaseKind.PROBE, 5)
    assert best.closed and best.floor == 6


def test_the_bins_stage_skips_a_floor_the_bins_left_standing(wait_beats_start: Instance) -> None:
    # the bins after the step probe asked at 3 and found a relaxed solution: the stage does
    # not ask at 3 again; at another floor it does
    ctx = _context(wait_beats_start, limit=100.0)
    standing = PhaseRecord(PhaseKind.BINS, Status.FEASIBLE, asked=3)
    best = Incumbent(span=6, bound=3.0, phases=[standing])
    assert list(PHASES[PhaseKind.BINS](ctx, best)) == []
    best = Incumbent(span=6, bound=2.0, phases=[standing])
    assert [f.record.asked for f in PHASES[PhaseKind.BINS](ctx, best)][:1] == [2]
    # an undecided answer at the floor (the step bins' short share ran out) is asked again
    undecided = PhaseRecord(PhaseKind.BINS, Status.NO_SOLUTION, asked=3)
    best = Incumbent(span=6, bound=3.0, phases=[undecided])
    assert [f.record.asked for f in PHASES[PhaseKind.BINS](ctx, best)][:1] == [3]


@pytest.mark.parametrize(("cap", "most"), [(None, 25.0), (2.0, 2.0), (40.0, 25.0)])
def test_the_bins_stage_lasts_at_most_its_seconds(wait_beats_start: Instance, monkeypatch, cap, most) -> None:
    # Plan.bins_seconds cuts the stage's share of the time left (a quarter of 100 s here)
    import rar_opt.solvers.floor_asks as module

    limits: list[float] = []

    def spy(instance, floor, top, stage, symmetry=True, growth=2.0, opening=None):
        limits.append(stage.limit)
        return iter(())

    monkeypatch.setattr(module, "bins_answers", spy)
    plan = dataclasses.replace(AUTO, bins_share=0.25, bins_seconds=cap)
    assert (
        list(PHASES[PhaseKind.BINS](_context(wait_beats_start, plan, limit=100.0), Incumbent(span=6, bound=3.0))) == []
    )
    assert len(limits) == 1 and most - 0.5 < limits[0] <= most


def test_the_large_plan_takes_its_own_bins_seconds() -> None:
    plan = dataclasses.replace(AUTO, bins_seconds=6.0, large_bins_seconds=3.0)
    assert plan.for_jobs(LARGE_JOBS - 1).bins_seconds == 6.0 and plan.for_jobs(LARGE_JOBS).bins_seconds == 3.0
    assert dataclasses.replace(plan, large_bins_seconds=None).for_jobs(LARGE_JOBS).bins_seconds == 6.0
    for where in ("bins_seconds", "large_bins_seconds"):
        for bad in (0, -1.0, float("inf"), "4", True):
            with pytest.raises(InputError) as caught:
                dataclasses.replace(AUTO, **{where: bad})
            assert caught.value.where == where


@pytest.mark.parametrize("formulation", ["cfree", "modes"])
@pytest.mark.parametrize(("floor", "found"), [(6, True), (5, False)])
def test_the_restrict_stage_asks_the_restriction_by_the_floor(
    wait_beats_start: Instance, floor: int, found: bool, formulation: str
) -> None:
    # the stage "restrict": the contention-free restriction over exactly the floor's slots; its
    # optimum here is 6, so by 6 it gives a schedule that meets the floor, and by 5 it has none,
    # which proves nothing about the instance (the bound stays); either model of it
    from rar_opt.solvers.phases import restricted

    plan = dataclasses.replace(
        AUTO, stages=("restrict", "full"), restrict_floor_share=0.5, restrict_formulation=formulation
    )
    ctx = _context(wait_beats_start, plan)
    best = Incumbent(bound=float(floor))
    first = _only(list(PHASES[PhaseKind.HEURISTICS](ctx, Incumbent())))
    best.offer(first.schedule, first.span, "heuristics")
    assert best.span == 8
    answer = _only(list(restricted(ctx, best)))
    assert answer.record.name == f"restriction {floor}" and answer.record.lower_bound() is None
    if found:
        assert answer.schedule is not None and answer.span == 6
        assert check(wait_beats_start, answer.schedule).result.makespan == 6
    else:
        assert answer.schedule is None and answer.record.status == Status.INFEASIBLE
    # nothing to ask where the best schedule meets the floor already, or without the share
    best.offer(*_restriction_schedule(wait_beats_start), "restriction")
    assert floor < 6 or list(restricted(ctx, best)) == []
    assert list(restricted(_context(wait_beats_start, AUTO), Incumbent(span=8, bound=6.0))) == []


def test_the_restrict_stage_with_modes_skips_an_instance_over_the_mode_guard(
    wait_beats_start: Instance, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rar_opt.formulations import modes
    from rar_opt.solvers.phases import restricted

    plan = dataclasses.replace(
        AUTO, stages=("restrict", "full"), restrict_floor_share=0.5, restrict_formulation="modes"
    )
    ctx = _context(wait_beats_start, plan)
    monkeypatch.setattr(modes, "MAX_MODES", modes.count_modes(wait_beats_start) - 1)

    def never(*args, **kwargs):
        raise AssertionError("the mode restriction was built")

    monkeypatch.setattr(modes, "whole", never)
    assert list(restricted(ctx, Incumbent(span=8, bound=6.0))) == []
    for field, bad in (("restrict_formulation", "patterns"), ("restrict_search", "fast")):
        with pytest.raises(InputError) as caught:
            dataclasses.replace(plan, **{field: bad})
        assert caught.value.where == field


@pytest.mark.parametrize("search", ["no-lp", "default"])
def test_the_restrict_stage_searches_as_the_plan_says(
    wait_beats_start: Instance, monkeypatch: pytest.MonkeyPatch, search: str
) -> None:
    import rar_opt.solvers.phases as module

    asked: list[tuple[str, float | None]] = []
    real = module.solve_model

    def spy(model, budget, name="default", stop_at=None):
        asked.append((name, stop_at))
        return real(model, budget, name, stop_at)

    monkeypatch.setattr(module, "solve_model", spy)
    plan = dataclasses.replace(
        AUTO,
        stages=("restrict", "full"),
        restrict_floor_share=0.5,
        restrict_formulation="modes",
        restrict_search=search,
    )
    answer = _only(list(module.restricted(_context(wait_beats_start, plan), Incumbent(span=8, bound=6.0))))
    assert asked == [(search, 6)] and answer.span == 6  # stopped at the floor, which it meets
    assert check(wait_beats_start, answer.schedule).result.makespan == 6


def test_a_plan_with_the_restrict_stage_needs_its_share() -> None:
    with pytest.raises(InputError) as caught:
        dataclasses.replace(AUTO, stages=("restrict", "full"))
    assert caught.value.where == "restrict_floor_share"
    with pytest.raises(InputError) as caught:
        dataclasses.replace(AUTO, stages=("restrict", "restrict", "full"), restrict_floor_share=0.5)
    assert caught.value.where == "stages"
    for bad in (0, 1.5, float("nan"), "half"):
        with pytest.raises(InputError) as caught:
            dataclasses.replace(AUTO, stages=("restrict", "full"), restrict_floor_share=bad)
        assert caught.value.where == "restrict_floor_share"


def test_the_lns_stage_searches_from_the_best_schedule_towards_the_floor(wait_beats_start: Instance) -> None:
    # the stage "lns": a checked schedule no later than the best one, recorded as a search
    # with its steps; it proves nothing, and asks nothing where the best meets the floor
    from rar_opt.solvers import floor_lns

    plan = dataclasses.replace(AUTO, stages=("lns", "full"), lns_share=0.5)
    ctx = _context(wait_beats_start, plan)
    best = Incumbent(bound=6.0)
    first = _only(list(PHASES[PhaseKind.HEURISTICS](ctx, Incumbent())))
    best.offer(first.schedule, first.span, "heuristics")
    answer = _only(list(floor_lns.stage(ctx, best)))
    record = answer.record
    assert record.kind == PhaseKind.IMPROVE and record.name.startswith("improve (floor-lns")
    assert record.lower_bound() is None and record.work is not None and "steps" in record.work
    if answer.schedule is None:  # the heuristics' best may have two split jobs on a server at once
        assert "refused" in record.name and record.work["steps"] == 0
    else:
        assert check(wait_beats_start, answer.schedule).result.makespan == answer.span <= 8
    assert list(floor_lns.stage(_context(wait_beats_start, AUTO), best)) == []  # no share
    assert list(floor_lns.stage(ctx, Incumbent(schedule=first.schedule, span=6, bound=6.0))) == []


def test_a_plan_with_the_lns_stage_needs_its_share() -> None:
    with pytest.raises(InputError) as caught:
        dataclasses.replace(AUTO, stages=("lns", "full"))
    assert caught.value.where == "lns_share"
    with pytest.raises(InputError) as caught:
        dataclasses.replace(AUTO, stages=("lns", "lns", "full"), lns_share=0.5)
    assert caught.value.where == "stages"
    for bad in (0, 1.5, float("nan"), "half"):
        with pytest.raises(InputError) as caught:
            dataclasses.replace(AUTO, stages=("lns", "full"), lns_share=bad)
        assert caught.value.where == "lns_share"


def test_every_stage_name_has_its_phase_in_the_run() -> None:
    from rar_opt.solvers import floor_lns, race
    from rar_opt.solvers.decompose import STAGE_KINDS, steps
    from rar_opt.solvers.phases import restricted, search
    from rar_opt.solvers.plan import STAGES

    assert set(STAGE_KINDS) == set(STAGES)
    plan = dataclasses.replace(
        AUTO,
        stages=("full", "bins", "search", "restrict", "lns", "race", "probe", "full"),
        early_full_share=0.3,
        restrict_floor_share=0.5,
        lns_share=0.5,
        race_share=0.5,
    )
    staged = steps(plan)[-8:]
    assert [kind for kind, _ in staged] == [STAGE_KINDS[s] for s in plan.stages]
    assert staged[2][1] is search and staged[3][1] is restricted and staged[4][1] is floor_lns.stage
    assert staged[5][1] is race.stage
    assert staged[0][1] is not PHASES[PhaseKind.FULL] and staged[-1][1] is PHASES[PhaseKind.FULL]  # early, last


@settings(max_examples=8, deadline=None)
@given(micro_instances())
def test_the_restriction_by_a_slot_gives_only_checked_schedules_by_that_slot(inst: Instance) -> None:
    # restriction_by never claims what is not there: below the brute-force optimum it finds
    # nothing (every solution of the restriction is a schedule), and what it finds at or
    # above it passes the checker and ends by the slot asked
    from rar_opt.solvers.phases import restriction_by

    bf = brute_force(inst, min(policy_makespans(inst).values()))
    assert bf is not None
    optimum = bf[0]
    for slot in range(max(optimum - 1, 1), min(optimum + 1, inst.horizon) + 1):  # the model holds at most T slots
        raw, schedule, span, _ = restriction_by(inst, slot, Budget.start(10.0))
        assert (schedule is None) == (span is None)
        if slot < optimum:
            assert schedule is None and raw.status == Status.INFEASIBLE
        elif schedule is not None:
            report = check(inst, schedule)
            assert report.feasible and report.result.makespan == span and optimum <= span <= slot
