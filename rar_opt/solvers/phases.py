"""The phases of the exact methods over several models, one function each, in a registry.

A phase is a generator ``(context, best so far) -> Found...``: it reads the instance and
the plan from the :class:`Context`, the best schedule and bound so far from the
:class:`Incumbent`, and yields one :class:`Found` per model it solved: the
:class:`~.record.PhaseRecord` with our status and its numbers, the checked schedule it
found (if any) and the solver's raw outcome. It never changes the incumbent itself; the
loop in :mod:`.decompose` applies what it yields, raises the bound, and stops the run as
soon as the best schedule meets the best bound. A phase that yields several answers (the
probes, the full model's searches) sees the incumbent updated between them.

The questions at the floor (the probes and the GPU bins) are in :mod:`.floor_asks`.

Adding a phase: a generator here (or in a module beside it), one entry in :data:`PHASES`, and its kind in
:class:`~.record.PhaseKind`; a :class:`~.plan.Plan` that runs it after the
prelude names it in its ``stages`` (:data:`~.plan.STAGES`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from rar_opt._version import __version__
from rar_opt.bounds import registry
from rar_opt.check import check
from rar_opt.formulations import cfree, cpsat, modes
from rar_opt.instance import Instance
from rar_opt.schedule import Schedule
from rar_opt.solvers.backend import MIN_SOLVER_SECONDS, RawOutcome
from rar_opt.solvers.budget import Budget, run_seed
from rar_opt.solvers.context import (
    MODEL_METHOD,
    Context,
    Found,
    Incumbent,
    Phase,
    read_model,
    solve_model,
)
from rar_opt.solvers.floor_asks import gpu_bins, probes
from rar_opt.solvers.plan import Improver
from rar_opt.solvers.record import PhaseKind, PhaseRecord
from rar_opt.solvers.result import read_back
from rar_opt.solvers.status import Status
from rar_opt.support.processes import stop_requested

log = logging.getLogger(__name__)


def heuristics(ctx: Context, best: Incumbent) -> Iterator[Found]:
    """The best schedule of the plan's policies that ends within the horizon: the first incumbent."""
    from rar_opt.algorithms import QUICK, run_policy

    if not ctx.policies:
        return
    began = time.perf_counter()
    tried: dict[str, int | None] = {}
    found = Incumbent()
    for name in ctx.policies:
        if found.span is not None and stop_requested() is not None:  # a signal: keep what is found
            break
        late = time.perf_counter() - began > HEURISTICS_GRACE
        if found.span is not None and ctx.budget.expired() and late:  # the command's clock: keep what is found
            break
        run = run_policy(ctx.instance, name, **QUICK.get(name, {}))
        span = check(ctx.instance, run.schedule).result.makespan
        tried[name] = span
        if span is not None and span <= ctx.horizon:
            found.offer(run.schedule.with_meta({**run.schedule.meta, "method": name}), span, name)
    status = Status.FEASIBLE if found.span else Status.NO_SOLUTION
    record = PhaseRecord(
        PhaseKind.HEURISTICS, status, objective=found.span, seconds=time.perf_counter() - began, tried=tried
    )
    yield Found(record, found.schedule, found.span, source=found.source)


def floor(ctx: Context, best: Incumbent) -> Iterator[Found]:
    """The cheap lower bounds of :mod:`rar_opt.bounds.registry` (no model, milliseconds to a
    second): each bound by name, and the best of them as this phase's bound on OPT. When the
    command's clock has already run out, only the bounds that take milliseconds (not the
    registry's ``slow`` ones), so that a short time limit is kept. A best bound past the
    horizon proves that no schedule fits (the run ends ``infeasible``)."""
    if not ctx.plan.structural:
        return
    began = time.perf_counter()
    quick = ctx.budget.expired()
    values = {b.name: b.value for b in registry.cheap(ctx.instance, quick=quick) if b.value is not None}
    best_floor = float(max(values.values()))
    seconds = time.perf_counter() - began
    solver = {
        "name": "rar-opt",
        "interface": "rar_opt.bounds.registry",
        "version": __version__,
    }  # no solver: arithmetic
    record = PhaseRecord(PhaseKind.FLOOR, Status.BOUND, bound=best_floor, seconds=seconds, floors=values)
    if best_floor > ctx.horizon:  # no schedule ends within the horizon: proven, no model needed
        why = f"the structural floor {best_floor:g} is past the horizon of {ctx.horizon} slots: nothing fits"
        raw = RawOutcome(Status.INFEASIBLE, bound=best_floor, termination=why, solver=solver)
        yield Found(record, raw=raw, nothing_fits=True, horizon=ctx.horizon, solver=solver)
        return
    yield Found(record, solver=solver)


HEURISTICS_GRACE = 1.0
"""Seconds the heuristics phase runs its policies for even when the command's clock has run
out (its start-up counts against the limit): the constructions take hundredths to tenths of
a second each, and the cheap ``lpt``, fourth in ``auto``'s list, is the one that proves
``paper-160x20-s0`` (2026-12-06: with a 1-s limit on a loaded machine only ``sjf-bco`` ran
before). A limit shorter than the start-up is then overrun by this much at most, plus the
policy under way; within it, the phase stops as before."""

IMPROVE_ITERATIONS = 1_000_000
"""The improvement phase stops on its time share, not on a count of iterations."""


LONG = {"pack": {"lanes": 0.8, "lanes_patience": IMPROVE_ITERATIONS}}
"""Options of a policy in the improvement phase beyond its seed, iterations and time: the
lanes search of ``pack`` gets 80% of the time and stops on that share, not on a count of
failures (at paper scale its schedules beat the restarts' where the class applies)."""

WORK = ("iterations", "lanes_tries")
"""What an improvement phase's record keeps of its search's work: restarts or moves, and
``pack``'s buddy-lanes tries; with counted searches (:data:`~.plan.COUNTED_IMPROVERS`) a
count below the one asked says the time cap cut the search short."""

WORK_RATES: dict[str, dict[str, float]] = {
    "pack": {"iterations": 130.0, "lanes_tries": 7_500.0},
    "backfill": {"iterations": 6_500.0},
}
"""Under a budget of work (:mod:`.budget`): how many of a search's counted steps make one
unit of work, the steps it made in the wall-clock time that CP-SAT took for one unit of
deterministic time on the same machine (2026-12-07, 24 x 8 x 150: ``pack``'s 250 restarts in
4.7 s, 589 buddy-lanes tries in 0.2 s, 8,000 backfill moves in 3.1 s; CP-SAT 0.35-0.45 units
a second, :data:`~.backend.UNITS_PER_SECOND`). A search's share of such a budget becomes
these counts, and what it did is charged back at the same rates, so its part of the run
never depends on the machine's pace. A search without rates here does not run under a
work limit."""

WORK_WALL_SECONDS = 3_600.0
"""The wall-clock cap of a search under a budget of work, only a guard: its counts stop it
long before (docs/exactness.md, "Budgets of work")."""

CAPPED = ("backfill",)
"""Searches that score a schedule by the slots it ends past a makespan cap, then by its sum
of completion times: the phase gives them the best proven bound as the cap, so that they
minimise the makespan (``backfill`` aims at the sum otherwise)."""


def improve(ctx: Context, best: Incumbent) -> Iterator[Found]:
    """The plan's improvement searches (``Plan.improvers``, seeded with the budget's seed) in
    turn: where the full model cannot be built (paper scale), for the plan's
    ``improve_share`` of the time left; where it can, for its ``fitting_improve_share`` (None:
    not at all), its ``fitting_improvers`` where given. Each schedule is checked by the
    simulator before it is offered."""
    plan, fits = ctx.plan, ctx.fits(best.within(ctx.horizon))
    if fits:
        yield from _searches(ctx, best, plan.fitting_improvers or plan.improvers, plan.fitting_improve_share)
    else:
        yield from _searches(ctx, best, plan.improvers, plan.improve_share)


def search(ctx: Context, best: Incumbent) -> Iterator[Found]:
    """The stage ``"search"``: the plan's ``searchers`` in turn within its ``search_share``
    of the time left, as :func:`improve` runs its improvers (the searches of :data:`CAPPED`
    aim at the makespan past the best bound so far, which the stages before may have raised).
    With the plan's ``search_rounds`` above 1 the searchers run again, round k with the seed
    :func:`~.budget.run_seed` (seed, k), while the stage's time lasts (a schedule that meets
    the floor ends the run, and so the stage)."""
    yield from _searches(ctx, best, ctx.plan.searchers, ctx.plan.search_share, ctx.plan.search_rounds)


def _searches(
    ctx: Context, best: Incumbent, searches: tuple[Improver, ...], share: float | None, rounds: int = 1
) -> Iterator[Found]:
    left = ctx.budget.left()
    if share is None or left is None or stop_requested() is not None:
        return
    until = ctx.budget.now() + left * share
    for k in range(rounds):
        if until - ctx.budget.now() <= MIN_SOLVER_SECONDS or stop_requested() is not None:
            return
        yield from _round(ctx, best, searches, until, k)


def _round(ctx: Context, best: Incumbent, searches: tuple[Improver, ...], until: float, index: int) -> Iterator[Found]:
    """One round of ``searches`` until ``until`` (a value of the budget's clock), with the
    seed of round ``index`` (the budget's own seed in round 0). Under a budget of work each
    search runs on counts (:func:`_work_counts`) and its work is charged to the meter."""
    from rar_opt.algorithms import run_policy
    from rar_opt.algorithms.backfill import NoTimeToBuild

    seed = run_seed(ctx.budget.seed, index)
    for entry in searches:
        name, part, given = entry[0], entry[1], dict(entry[2]) if len(entry) > 2 else {}
        named = {k: v for k, v in given.items() if k not in WORK}  # a count of work is in the record's work
        if index:  # a later round: the seed tells its walk apart
            named = {**named, "seed": seed}
        label = name if not named else f"{name} ({', '.join(f'{k}={v}' for k, v in named.items())})"
        budget = (until - ctx.budget.now()) * part
        if budget <= MIN_SOLVER_SECONDS or stop_requested() is not None:
            return
        metered = ctx.budget.meter is not None
        if metered and name not in WORK_RATES:
            log.warning("the search %s counts no work, so it does not run under a work limit", name)
            continue
        began = time.perf_counter()
        options: dict[str, Any] = {
            "iterations": IMPROVE_ITERATIONS,
            "time_limit": budget,
            **LONG.get(name, {}),
            **given,
        }
        if metered:
            options = {**options, **_work_counts(name, budget, given), "time_limit": WORK_WALL_SECONDS}
        if name in CAPPED and best.floor is not None:  # scored past the cap first: the makespan above the floor
            options["makespan_cap"] = max(1, best.floor)
        try:
            run = run_policy(ctx.instance, name, seed=seed, **options)
        except NoTimeToBuild:  # not one schedule built in its share: the next search gets the time
            continue
        span = check(ctx.instance, run.schedule).result.makespan
        fits = span is not None and span <= ctx.horizon
        schedule = run.schedule.with_meta({**run.schedule.meta, "method": label}) if fits else None
        status = Status.FEASIBLE if fits else Status.NO_SOLUTION
        work = {k: v for k in WORK if isinstance(v := (run.search or {}).get(k), int) and not isinstance(v, bool)}
        if metered:
            ctx.budget.charge(sum(work.get(k, 0) / rate for k, rate in WORK_RATES[name].items()))
        seconds = time.perf_counter() - began
        record = PhaseRecord(PhaseKind.IMPROVE, status, span, seconds=seconds, search=label, work=work or None)
        yield Found(record, schedule, span if fits else None, source=label)


def _work_counts(name: str, units: float, given: dict[str, Any]) -> dict[str, int]:
    """The counts a search runs on within ``units`` of work (:data:`WORK_RATES`): its share
    turned into counts at the rates (at least one of each), and no more than the plan gives
    it (a counted search, :data:`~.plan.COUNTED_IMPROVERS`, whose share is then only a cap, as
    its seconds are under a time limit)."""
    counts = {key: max(1, int(units * rate)) for key, rate in WORK_RATES[name].items()}
    return {key: min(count, int(given[key])) if key in given else count for key, count in counts.items()}


def relaxation(ctx: Context, best: Incumbent) -> Iterator[Found]:
    """The contention-free relaxation over the best makespan so far: a lower bound on OPT,
    or the proof that nothing fits (every job alone at its uncontended rate)."""
    if not ctx.plan.contention_free or (best.schedule is not None and stop_requested() is not None):
        return  # left out by the plan, or a signal: keep what is found
    if cfree.too_large(ctx.instance) is not None:
        return  # over the contention-free model's size guard (formulations/cfree.py)
    horizon = best.within(ctx.horizon)
    model = cfree.build(ctx.instance, cfree.Options(restrict=False, horizon=horizon, symmetry=ctx.symmetry))
    # when the full model cannot be built even over this horizon, the two contention-free
    # phases get all the time: half for the bound, the rest for the restriction's schedule
    share = ctx.plan.relax_share if ctx.fits(horizon) else 0.5
    raw, seconds = solve_model(model, ctx.budget.share(share))
    record = PhaseRecord(PhaseKind.RELAXATION, raw.status, raw.objective, raw.bound, seconds)
    yield Found(record, raw=raw, nothing_fits=raw.status == Status.INFEASIBLE, horizon=horizon, solver=raw.solver)


def restriction(ctx: Context, best: Incumbent) -> Iterator[Found]:
    """The contention-free restriction (split jobs sharing a server never overlap): a
    schedule whose makespan the model knows exactly (a mismatch is a bug, raised)."""
    if not ctx.plan.contention_free or cfree.too_large(ctx.instance) is not None:
        return  # left out by the plan, or over the model's size guard
    model = cfree.build(ctx.instance, cfree.Options(restrict=True, horizon=ctx.horizon, symmetry=ctx.symmetry))
    relaxed = best.last(PhaseKind.RELAXATION)
    share = ctx.plan.restrict_share
    if relaxed is not None and relaxed.status != Status.OPTIMAL and ctx.plan.restrict_share_open is not None:
        share = ctx.plan.restrict_share_open
    if not ctx.fits(best.within(ctx.horizon)):
        share = 1.0  # no full model to come: the restriction may use all that is left
    raw, seconds = solve_model(model, ctx.budget.share(share))
    schedule, span = read_model(ctx, model, raw)
    if span is not None and raw.objective is not None and span != round(raw.objective):
        raise RuntimeError(f"the restriction's makespan {raw.objective} is not its schedule's {span}")
    record = PhaseRecord(PhaseKind.RESTRICTION, raw.status, raw.objective, raw.bound, seconds)
    yield Found(record, schedule, span, raw=raw, horizon=ctx.horizon, solver=raw.solver)


def restriction_by(
    instance: Instance,
    slot: int,
    budget: Budget,
    symmetry: bool = True,
    formulation: str = "cfree",
    search: str = "no-lp",
) -> tuple[RawOutcome, Schedule | None, int | None, float]:
    """The contention-free restriction asked for a schedule that ends by ``slot`` (horizon
    ``slot``, the CP-SAT ``search``, stopping at the first solution) within ``budget``:
    CP-SAT's answer, the schedule read back and checked (or None), its makespan and the
    seconds. The restriction's solutions are schedules of the instance, so one found here
    ends by ``slot``; no solution proves nothing about the instance. ``formulation``: the
    restriction of :mod:`~rar_opt.formulations.cfree` or, ``"modes"``, the same restriction
    with each job's placements written out (:func:`~rar_opt.formulations.modes.whole`), or,
    ``"shared"``, that one with the split modes that lose no slot at contention 2 sharing
    links in pairs (``sharing=True``)."""
    began = time.perf_counter()
    if formulation in ("modes", "shared"):
        model = modes.whole(instance, slot, symmetry, sharing=formulation == "shared")
    else:
        model = cfree.build(instance, cfree.Options(restrict=True, horizon=slot, symmetry=symmetry))
    raw, _ = solve_model(model, budget, search, stop_at=slot)
    judged = read_back(instance, cpsat.read_schedule(model, instance), MODEL_METHOD) if raw.has_solution else None
    schedule, span = (None, None) if judged is None else judged
    if span is not None and span > slot:
        raise RuntimeError(f"the restriction by {slot} gave a schedule of makespan {span}")
    return raw, schedule, span, time.perf_counter() - began


def restriction_fits(instance: Instance, formulation: str) -> bool:
    """Whether the restriction ``formulation`` may be built for ``instance`` (its size guard:
    :data:`~rar_opt.formulations.modes.MAX_MODES` or :func:`~rar_opt.formulations.cfree.too_large`)."""
    if formulation in ("modes", "shared"):
        return modes.count_modes(instance) <= modes.MAX_MODES
    return cfree.too_large(instance) is None


def restricted(ctx: Context, best: Incumbent) -> Iterator[Found]:
    """The stage ``"restrict"``: the contention-free restriction asked for a schedule that
    ends by the floor L (horizon L, stopping at the first one), within the plan's
    ``restrict_floor_share`` of the time left. Its solutions are schedules of the instance,
    so one by L meets the floor and is optimal; it proves nothing else (no solution in the
    restriction is no answer about the instance), so the stage ends after one ask."""
    share, formulation = ctx.plan.restrict_floor_share, ctx.plan.restrict_formulation
    if share is None or ctx.budget.limit is None:
        return
    if not restriction_fits(ctx.instance, formulation):
        return
    if best.span is None or best.floor is None or best.floor >= best.span:
        return
    asked = best.floor
    raw, schedule, span, seconds = restriction_by(
        ctx.instance, asked, ctx.budget.share(share), ctx.symmetry, formulation, ctx.plan.restrict_search
    )
    record = PhaseRecord(PhaseKind.RESTRICTION, raw.status, span, None, seconds, asked=asked)
    yield Found(record, schedule, span, raw=raw, horizon=asked, solver=raw.solver)


def full_model(ctx: Context, best: Incumbent, share: float | None = None) -> Iterator[Found]:
    """The full CP-SAT model, once per search of the plan, each over the best makespan so
    far, hinted with the best schedule and (if the plan says so) floored by the best bound;
    every search after the first only while time is left. ``share``: the model runs early,
    before other stages, within this share of the time left (each search's share scaled
    by it); None: the last stage, with its searches' own shares. With the plan's
    ``full_reseed``, the k-th full model of the run (k >= 1) searches with the seed
    :func:`~.budget.run_seed` (seed, k). With its ``full_restart_seconds``, the last stage's
    model still undecided after that many seconds is built and asked again (over the best
    makespan then, hinted with the best schedule then) with the next seed of
    :func:`~.budget.run_seed`, within the time its search had; a last ask shorter than
    half of that joins the one before it."""
    restart = ctx.budget.per_seconds(ctx.plan.full_restart_seconds) if share is None else None
    for k, (search, part) in enumerate(ctx.plan.full_searches):
        if k and ctx.budget.expired():
            return
        stop_at = None
        if share is not None and ctx.plan.early_full_stops_one_above and best.floor is not None:
            stop_at = best.floor + 1  # then the probe at the floor is the last question
        attempt, stage = 0, None
        while True:
            horizon, model = _full_build(ctx, best)
            if stage is None:  # the search's time, counted from its first model's build
                stage = ctx.budget.share(part if share is None else part * share)
                earlier = sum(1 for p in best.phases if p.kind == PhaseKind.FULL)
                if ctx.plan.full_reseed and earlier:
                    stage = replace(stage, seed=run_seed(ctx.budget.seed, earlier))
            ask = stage if attempt == 0 else replace(stage, seed=run_seed(stage.seed, attempt))
            left = stage.left()
            if restart is not None and left is not None and left > 1.5 * restart:
                ask = ask.share(restart / left)
            found = _full_answer(ctx, model, horizon, search, ask, stop_at)
            yield found
            decided = found.raw is not None and found.raw.status in (Status.OPTIMAL, Status.INFEASIBLE)
            if restart is None or decided or found.record.status == Status.ERROR or best.closed:
                break
            if stage.expired() or (stage.left() or 0.0) <= MIN_SOLVER_SECONDS or stop_requested() is not None:
                break
            attempt += 1


def _full_build(ctx: Context, best: Incumbent) -> tuple[int, Any]:
    """The full model over the best makespan so far, hinted with the best schedule and (if
    the plan says so) floored by the best bound; its horizon and the model."""
    horizon = best.within(ctx.horizon)
    model = cpsat.build(ctx.instance, cpsat.Options(horizon=horizon, symmetry=ctx.symmetry))
    if best.schedule is not None:
        cpsat.set_start(model, ctx.instance, best.schedule)
    if ctx.plan.floor and best.floor is not None:
        model.model.add(model.makespan >= best.floor)
    return horizon, model


def _full_answer(ctx: Context, model: Any, horizon: int, search: str, budget: Budget, stop_at: float | None) -> Found:
    """The full model's answer within ``budget`` (:func:`full_model`), read back and checked."""
    raw, seconds = solve_model(model, budget, search, stop_at)
    schedule, span = read_model(ctx, model, raw)
    status = raw.status
    if raw.has_solution and schedule is None:
        log.warning("the full model's schedule fails the checker; it is not used")
        status = Status.ERROR if raw.status == Status.OPTIMAL else raw.status
    record = PhaseRecord(PhaseKind.FULL, status, raw.objective, raw.bound, seconds, search=search)
    nothing = raw.status == Status.INFEASIBLE
    return Found(record, schedule, span, raw=raw, nothing_fits=nothing, horizon=horizon, solver=raw.solver)


PHASES: dict[PhaseKind, Phase] = {
    PhaseKind.HEURISTICS: heuristics,
    PhaseKind.FLOOR: floor,
    PhaseKind.IMPROVE: improve,
    PhaseKind.RELAXATION: relaxation,
    PhaseKind.RESTRICTION: restriction,
    PhaseKind.BINS: gpu_bins,
    PhaseKind.PROBE: probes,
    PhaseKind.FULL: full_model,
}
"""Every phase by kind; a plan's ``steps`` name them in order."""
