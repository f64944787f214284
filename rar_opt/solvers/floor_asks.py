"""The questions asked at the floor L: the probes (is there a schedule that ends by L?) and
the GPU-bins relaxation (do the jobs fit on the GPUs in L slots?), two stages of ``auto``.

A no from either raises the floor by one slot; a yes from a probe is a schedule that meets
the floor, so it is optimal. Both stages are phases (:data:`.phases.PHASES` runs them by
kind); the race at the floor (:mod:`.race`) asks single probes through :func:`ask_probe`
and ``decompose`` the bins through :func:`bins_answers`. Why the probes carry which rows,
and how their time is shared: docs/exactness.md, "Probes" and "GPU bins with servers".
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator

from rar_opt.formulations import gpubins
from rar_opt.instance import Instance
from rar_opt.solvers.backend import MIN_SOLVER_SECONDS, RawOutcome
from rar_opt.solvers.budget import Budget
from rar_opt.solvers.context import Context, Found, Incumbent
from rar_opt.solvers.cpsat import Cpsat
from rar_opt.solvers.probe import probe
from rar_opt.solvers.record import PhaseKind, PhaseRecord
from rar_opt.solvers.status import Status
from rar_opt.support.processes import stop_requested

log = logging.getLogger(__name__)


def bins_answers(
    instance: Instance,
    floor: int,
    top: int,
    stage: Budget,
    symmetry: bool = True,
    growth: float | None = 2.0,
    opening: float | None = None,
) -> Iterator[tuple[int, RawOutcome, float]]:
    """The GPU-bins relaxation (:mod:`rar_opt.formulations.gpubins`) asked at ``floor``,
    then one slot higher while it refutes, below ``top``, within ``stage``: each slot
    asked, CP-SAT's answer and its seconds. After a refutation the next slot gets at most
    ``growth`` times the seconds that the refutation took (None: what is left of the
    stage): a slot higher leaves more room, and what comes after needs the time more than
    an undecided answer. With ``opening`` (on the stage's clock), the first ask gets at most
    that much: where the bins refute at all, the first refutation is quick."""
    asked, last = floor, None
    while asked < top:
        if stage.expired() or (stage.left() or 0.0) <= MIN_SOLVER_SECONDS or stop_requested() is not None:
            return
        began, spent = time.perf_counter(), stage.now()
        model = gpubins.build(instance, gpubins.Options(makespan=asked, symmetry=symmetry))
        budget = stage
        if last is None and opening is not None:  # the first ask, cut short (Plan.opening_bins_seconds)
            budget = stage.share(min(1.0, opening / (stage.left() or 1.0)))
        if last is not None and growth is not None:  # the slot after a refutation (Plan.bins_growth)
            budget = stage.share(min(1.0, growth * last / (stage.left() or 1.0)))
        raw = Cpsat().solve(model, budget.settings(params=gpubins.PARAMS))
        seconds = time.perf_counter() - began
        yield asked, raw, seconds
        if raw.status != Status.INFEASIBLE:
            return
        asked, last = asked + 1, max(stage.now() - spent, MIN_SOLVER_SECONDS)


def gpu_bins(ctx: Context, best: Incumbent) -> Iterator[Found]:
    """The GPU-bins relaxation at the floor while it refutes it (:func:`bins_answers`),
    within the plan's share of the time left: no assignment of the jobs to the GPUs within
    H slots proves OPT >= H + 1. A relaxed solution (it is never a schedule), an undecided
    answer or a model over :data:`~rar_opt.formulations.gpubins.MAX_CELLS` ends the stage,
    which is skipped when the bins after the step probe (:func:`probes`) found a relaxed
    solution at the same floor (an undecided answer there is asked again, with this share)."""
    if ctx.plan.bins_share is None or ctx.budget.limit is None:
        return  # as the probes: without a time limit there is no share to give
    asked = best.last(PhaseKind.BINS)
    if asked is not None and asked.asked == best.floor and asked.status == Status.FEASIBLE:
        return  # the bins after the step probe found a relaxed solution at this floor: it stands
    yield from _bins(ctx, best, ctx.plan.bins_share)


def _bins(ctx: Context, best: Incumbent, share: float, opening: float | None = None) -> Iterator[Found]:
    """The GPU bins at the floor while they refute it, within ``share`` of the time left
    (the stage :func:`gpu_bins`, or the bins before the probes or after a step probe that was
    undecided or said no, in :func:`probes`), the first ask within ``opening`` seconds if given."""
    if best.span is None or best.floor is None or gpubins.too_large(ctx.instance) is not None:
        return
    cap, left = ctx.budget.per_seconds(ctx.plan.bins_seconds), ctx.budget.left()
    if cap is not None and left is not None and left * share > cap:  # Plan.bins_seconds
        share = cap / left
    stage = ctx.budget.share(share)
    first = ctx.budget.per_seconds(opening)
    answers = bins_answers(ctx.instance, best.floor, best.span, stage, ctx.symmetry, ctx.plan.bins_growth, first)
    for asked, raw, seconds in answers:
        refuted = raw.status == Status.INFEASIBLE
        status = Status.FEASIBLE if raw.has_solution else raw.status  # a relaxed solution, not a schedule
        record = PhaseRecord(PhaseKind.BINS, status, bound=asked + 1 if refuted else None, seconds=seconds, asked=asked)
        yield Found(record, solver=raw.solver)


def probes(ctx: Context, best: Incumbent) -> Iterator[Found]:
    """Probes at the floor (:mod:`.probe`) while they refute it, within the plan's share of
    the time left: a proven no raises the floor by one, a yes is a schedule that meets it.
    An undecided probe ends the stage, and so does a probe that fails (logged). The plan's
    ``probe_reversal`` says which probes carry the time-reversal row: with "first", only the
    first, at the structural floor (docs/exactness.md, "Probes"); with "repeats", also a
    probe at the floor that asks again what an undecided step probe asked; its ``probe_pricing``
    which carry the pricing rows (by default all). When the best schedule
    ends one slot above the floor, the probe answers all that is left to ask, and may use
    the plan's ``last_probe_share`` of all the time left (if that is more). When it ends
    two or more above the floor L, the plan's ``step_probe_share`` asks first at L + 1:
    a yes makes the probe at L the last question, a no proves L + 2; when it ends exactly at
    L + 2 that no proves the best schedule optimal, and the step probe may use the plan's
    ``decisive_step_share`` of all the time left (if that is more). With the plan's
    ``probe_restart_seconds``, a probe at the floor still undecided after that many seconds
    is asked again with the next CP-SAT seed, within the time the first ask had. With its
    ``step_bins_share``, an undecided step probe is followed by the GPU bins at the floor
    (:func:`gpu_bins`' answers, within that share of the time left) before the probe at the
    floor; with its ``refuted_step_bins_share``, a step probe's no is followed by the bins at
    the new floor in the same way. With its ``probe_momentum``, a probe that follows a no may
    use that share of all the time left, past the end of the stage."""
    if ctx.plan.probe_share is None or ctx.budget.limit is None:
        return  # without a time limit there is no share to give: the full model proves alone
    opening = ctx.plan.opening_bins_seconds
    if opening is not None and ctx.plan.bins_share is not None and stop_requested() is None:
        yield from _bins(ctx, best, ctx.plan.bins_share, opening)  # the bins first, while they refute
    stage = ctx.budget.share(ctx.plan.probe_share)
    first, step, restart = True, ctx.plan.step_probe_share, ctx.budget.per_seconds(ctx.plan.probe_restart_seconds)
    again: tuple[int, float] | None = None  # a restarted question: (attempt, the time it may last until)
    unsettled: int | None = None  # the slot an undecided step probe asked about (without the reversal row)
    momentum, refuted = ctx.plan.probe_momentum, False  # refuted: the last probe said no
    while best.span is not None and best.floor is not None and best.floor < best.span:
        carried = momentum is not None and refuted  # a no just raised the floor (Plan.probe_momentum)
        if again is None and not carried and (stage.expired() or (stage.left() or 0.0) <= MIN_SOLVER_SECONDS):
            return
        asked, began = best.floor, ctx.budget.now()
        limit = stage.left() or 0.0
        stepping = step is not None and best.span >= asked + 2
        if stepping and step is not None:  # one step probe per stage, at L + 1 (Plan.step_probe_share)
            limit = min(limit, step * (ctx.budget.left() or 0.0))
            decisive = ctx.plan.decisive_step_share
            if decisive is not None and best.span == asked + 2:  # its no proves the best schedule optimal
                limit = max(limit, decisive * (ctx.budget.left() or 0.0))
            asked, step = asked + 1, None
        elif again is not None:  # the same question again, with the next seed, within its first time
            limit = again[1] - began
        elif ctx.plan.last_probe_share is not None and best.span == asked + 1:
            limit = max(limit, ctx.plan.last_probe_share * (ctx.budget.left() or 0.0))
        if carried and momentum is not None and not stepping and again is None:
            limit = max(limit, momentum * (ctx.budget.left() or 0.0))
        attempt, until = again if again is not None else (0, began + limit)
        if restart is not None and not stepping:
            limit = min(limit, restart)
        if limit <= MIN_SOLVER_SECONDS:
            return
        repeat = not stepping and asked == unsettled
        found = ask_probe(
            ctx, best, asked, limit, ctx.budget.seed + attempt, stepping=stepping, first=first, repeat=repeat
        )
        yield found
        status = found.record.status
        refuted = status == Status.INFEASIBLE
        if status == Status.ERROR:
            return
        if stepping:
            unsettled = asked if status == Status.NO_SOLUTION else None
            # undecided, or refuted: perhaps the bins refute the (new) floor quickly
            bins = {Status.NO_SOLUTION: ctx.plan.step_bins_share, Status.INFEASIBLE: ctx.plan.refuted_step_bins_share}
            share = bins.get(status)
            if share is not None and stop_requested() is None:
                yield from _bins(ctx, best, share)
            continue  # whatever it said, the probes go on at the floor
        again = None
        if status == Status.NO_SOLUTION and restart is not None and stop_requested() is None:
            again = (attempt + 1, until)  # undecided within its slice: ask again with the next seed
            continue
        if status not in (Status.INFEASIBLE, Status.FEASIBLE):
            return
        first = False


def ask_probe(
    ctx: Context,
    best: Incumbent,
    asked: int,
    limit: float,
    seed: int,
    *,
    stepping: bool,
    first: bool,
    repeat: bool = False,
    label: str | None = None,
) -> Found:
    """One probe at slot ``asked`` (:mod:`.probe`) within ``limit`` seconds with ``seed``,
    carrying the rows the plan gives it (:meth:`~.plan.Plan.probe_rows`: ``stepping`` for
    the step probe at L + 1, ``first`` for the first probe at the floor, ``repeat`` for a
    probe at the floor that asks again what an undecided step probe asked) and, with the
    plan's ``probe_hint``, the best schedule as a hint (not on the step probe): its record
    (``label`` as its ``search``), and its schedule where it found one. A probe that fails
    (a CP-SAT error, a schedule the checker refuses) is logged and recorded as an error."""
    began = time.perf_counter()
    gap = best.span - best.floor if best.span is not None and best.floor is not None else 0
    reversal, pricing = ctx.plan.probe_rows(stepping=stepping, first=first, repeat=repeat, gap=int(gap))
    try:
        answer = probe(
            ctx.instance,
            asked,
            time_limit=limit,
            seed=seed,
            threads=ctx.budget.threads,
            symmetry=ctx.symmetry,
            search=ctx.plan.probe_search,
            reversal=reversal,
            pricing=pricing,
            hint=best.schedule if ctx.plan.probe_hint and not stepping else None,
            meter=ctx.budget.meter,
        )
    except RuntimeError as exc:
        log.warning("the probe at %d failed (%s); the run goes on without it", asked, exc)
        return Found(PhaseRecord(PhaseKind.PROBE, Status.ERROR, seconds=time.perf_counter() - began, asked=asked))
    record = PhaseRecord(
        PhaseKind.PROBE,
        answer.status,
        objective=answer.schedule_makespan,
        bound=answer.lower_bound,
        seconds=time.perf_counter() - began,
        asked=asked,
        search=label,
    )
    return Found(record, answer.schedule, answer.schedule_makespan, solver=answer.record.solver, source="probe")
