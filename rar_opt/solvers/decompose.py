"""The contention-free decomposition and the ``auto`` method built on it.

Phases, each on CP-SAT, each recorded with its status, objective, bound and seconds:

0. (``auto`` only) Heuristics: the best schedule of a few list-scheduling policies that ends
   within the horizon is the first incumbent; its makespan caps every later horizon.
0'. (``auto`` only) Floor: the structural lower bounds of :mod:`rar_opt.bounds.structural` (no solver,
   milliseconds). A heuristic's schedule that meets them is optimal, proven before any model.
1. Relaxation (:mod:`rar_opt.formulations.cfree`, ``restrict=False``): every job at its
   uncontended rate. Its bound is a lower bound on OPT; if it is infeasible, so is the
   instance within its horizon.
2. Restriction (``restrict=True``): split jobs that share a server never overlap, so its
   makespan is its schedule's true makespan (re-simulated; a mismatch is an error). If the
   best schedule so far meets the relaxation's bound, it is optimal: proven.
3. (``auto`` only, and only with a time limit) Probes at the floor (:mod:`.probe`): a
   proven "no schedule ends by slot L" raises the floor L by one, a "yes" is a schedule
   ending by L, so optimal. They stop when undecided or after their share of the time.
3'. (``auto`` only, with a time limit) GPU bins at the floor
   (:mod:`rar_opt.formulations.gpubins`): a time-free relaxation; "the jobs do not fit on
   the GPUs in L slots" raises the floor L by one.
4. Otherwise the full CP-SAT model runs over the best makespan so far as horizon, with the
   best schedule as its hint and (``auto``) the best bound as a floor on the makespan, for
   the time that is left; the largest bound found is the result's bound.

Phases 3, 3' and 4 are the plan's ``stages``, in the order it gives; a plan may also run
the full model early, for a share of the time, before the other stages (``Plan.stages``,
``Plan.early_full_share``).

Each phase is a function in :mod:`.phases`, the plans are in :mod:`.plan`; this module
holds the loop that runs a plan's phases in order, applies what they find (the best
schedule, the best bound), stops as soon as the two meet, and assembles the result.

``decompose`` is phases 1, 2 and 4 as the decomposition was first stated (30% of the time
for the relaxation, 50% of the rest for the restriction); ``auto`` adds phases 0, 0', 3 and 3' and
the floor row, leaves out phases 1 and 2 (why: docs/exactness.md), and runs
the full model with CP-SAT's ``no-lp`` search (no linear relaxation: propagation only),
which proved more within a minute in our measurements at 16 x 8 x 100 (``Plan.full_searches``,
:data:`rar_opt.solvers.cpsat.SEARCHES`; docs/exactness.md, "Searches").
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import time
from dataclasses import dataclass
from typing import Any

from rar_opt.bounds.rounding import ceil_bound_or_none
from rar_opt.check import check
from rar_opt.errors import InputError
from rar_opt.formulations import cfree, cpsat, gpubins
from rar_opt.formulations import formulation as get_formulation
from rar_opt.formulations.sizes import NOT_BUILT
from rar_opt.instance import Instance
from rar_opt.schedule import Schedule
from rar_opt.solvers import floor_lns, race
from rar_opt.solvers.backend import RawOutcome, SolveOptions
from rar_opt.solvers.budget import Budget
from rar_opt.solvers.context import Context, Found, Incumbent, Phase
from rar_opt.solvers.cpsat import Cpsat
from rar_opt.solvers.floor_asks import bins_answers
from rar_opt.solvers.phases import PHASES, full_model, restricted, search
from rar_opt.solvers.plan import AUTO, DECOMPOSE, PLANS, Plan
from rar_opt.support.processes import stop_requested
from rar_opt.support.progress import report_search as report

__all__ = [
    "AUTO",
    "DECOMPOSE",
    "PLANS",
    "BinsBound",
    "Plan",
    "RelaxationBound",
    "decompose",
    "gpu_bins_bound",
    "relaxation_bound",
    "run_plan",
]
from rar_opt.solvers.record import PhaseKind, PhaseRecord, SolveRecord
from rar_opt.solvers.result import SolveResult, finish
from rar_opt.solvers.status import Status

log = logging.getLogger(__name__)

PRELUDE = (
    PhaseKind.HEURISTICS,
    PhaseKind.FLOOR,
    PhaseKind.IMPROVE,
    PhaseKind.RELAXATION,
    PhaseKind.RESTRICTION,
)
"""The phases every plan starts with, in order; a phase with nothing to do for a plan
yields nothing. The plan's :attr:`~.plan.Plan.stages` come after them."""

STAGE_KINDS = {
    "probe": PhaseKind.PROBE,
    "bins": PhaseKind.BINS,
    "search": PhaseKind.IMPROVE,
    "restrict": PhaseKind.RESTRICTION,
    "lns": PhaseKind.IMPROVE,
    "race": PhaseKind.PROBE,
    "full": PhaseKind.FULL,
}
"""The phase of each name in :data:`~.plan.STAGES`."""


def steps(plan: Plan) -> tuple[tuple[PhaseKind, Phase], ...]:
    """The phases of ``plan`` in order, each with the function that runs it: a full model
    before the last stage gets the plan's ``early_full_share`` of the time left; the stage
    ``"search"`` runs the plan's searchers (:func:`.phases.search`)."""
    prelude = [(kind, PHASES[kind]) for kind in PRELUDE]
    last = len(plan.stages) - 1
    stages: list[tuple[PhaseKind, Phase]] = []
    for k, stage in enumerate(plan.stages):
        kind = STAGE_KINDS[stage]
        if stage == "search":
            stages.append((kind, search))
        elif stage == "restrict":
            stages.append((kind, restricted))
        elif stage == "lns":
            stages.append((kind, floor_lns.stage))
        elif stage == "race":
            stages.append((kind, race.stage))
        elif kind == PhaseKind.FULL and k < last:
            stages.append((kind, functools.partial(full_model, share=plan.early_full_share)))
        else:
            stages.append((kind, PHASES[kind]))
    return (*prelude, *stages)


ALWAYS = (PhaseKind.HEURISTICS, PhaseKind.FLOOR, PhaseKind.IMPROVE, PhaseKind.RELAXATION)
"""Phases that run even when the time is up: without them the run has nothing to say."""

NEED_FULL_MODEL = (PhaseKind.PROBE, PhaseKind.FULL)
"""Phases that build the full CP-SAT model, so run only when it is small enough."""

CONTENTION_FREE = (PhaseKind.RELAXATION, PhaseKind.RESTRICTION)
"""Phases that an improvement phase replaces: where the full model cannot be built, the
improvement searches get the time (docs/exactness.md, "The auto method", item 1'')."""


def decompose(
    instance: Instance,
    *,
    time_limit: float | None = None,
    seed: int = 0,
    threads: int = 1,
    plan: Plan = DECOMPOSE,
    work_limit: float | None = None,
    **inputs: Any,
) -> SolveResult:
    """Solve ``instance`` (makespan) by the phases of the module docstring, as ``plan`` says,
    within ``time_limit`` seconds (or ``work_limit`` units of work, :mod:`.budget`) for the
    whole call: :func:`run_plan` with a new budget (``inputs``: its ``warm_start``,
    ``horizon``, ``start``, ``lower_bound``, ``symmetry``)."""
    return run_plan(instance, plan, Budget.start(time_limit, threads, seed, work_limit=work_limit), **inputs)


def run_plan(
    instance: Instance,
    plan: Plan,
    budget: Budget,
    warm_start: str | None = None,
    horizon: int | None = None,
    start: Schedule | None = None,
    lower_bound: float | None = None,
    symmetry: bool = True,
) -> SolveResult:
    """Run the phases of ``plan`` (of :meth:`~.plan.Plan.for_jobs` for the instance's size)
    in order within ``budget``, until the best schedule meets the best bound, a phase
    proves that nothing fits, or the time is up.

    ``start`` is a schedule to begin from (an incumbent if it ends within the horizon);
    ``lower_bound`` a proven lower bound on the makespan, joined to the phases' bounds.
    ``warm_start`` adds a policy to the plan's heuristics; ``horizon`` (at most T) caps the
    slots every phase may use; ``symmetry`` keeps or leaves out every model's
    symmetry-breaking rows (docs/exactness.md)."""
    limit_horizon = instance.horizon if horizon is None else min(horizon, instance.horizon)
    # the record keeps the method's name; its options["plan"] is the plan that ran
    method, plan = plan.name, plan.for_jobs(instance.num_jobs)
    policies = tuple(dict.fromkeys((*plan.heuristics, *((warm_start,) if warm_start else ()))))
    ctx = Context(instance, plan, budget, limit_horizon, symmetry, policies)
    record = SolveRecord(
        method,
        "cpsat",
        {
            "time_limit": None if budget.meter is not None else budget.limit,
            **({"work_limit": budget.limit} if budget.meter is not None else {}),
            "seed": budget.seed,
            "threads": budget.threads,
            "plan": dataclasses.asdict(plan),
            "warm_start": warm_start,
            "start": None if start is None else start.meta.get("method", "given"),
            "lower_bound": lower_bound,
            "horizon": limit_horizon,
            "symmetry": symmetry,
        },
    )
    # no job ends before its fastest execution time; a bound given by the caller is proven too
    best = Incumbent(bound=max(float(instance.bounds.rho_min.max()), lower_bound or 0.0))
    if start is not None:
        span = check(instance, start).result.makespan
        if span is not None and span <= limit_horizon:
            best.offer(start.with_meta({**start.meta, "method": start.meta.get("method", "given")}), span, "given")
    run = _Run(ctx, best, record)
    if budget.limit is None and not ctx.fits(limit_horizon):
        # no time limit asks for the optimum: the heuristics and the floors may prove it at
        # once (a heuristic's schedule meeting a floor, or a floor past the horizon); when
        # they do not, the search without the full model has no end, so the call is refused
        proven = run.cheap_proof()
        if proven is not None:
            return proven
        cells = cpsat.count_cells(instance, limit_horizon)
        raise InputError(
            f"the full CP-SAT model would have {cells:,} split-job x server x slot cells (limit "
            f"{ctx.max_cells:,}), too many to prove an optimum, and the heuristics and floors do not "
            f"meet (best {best.span}, bound {best.floor}); give a time limit for the best bound and "
            "schedule found within it",
            where="instance",
        )
    return run.go()


@dataclass
class _Run:
    """One run of a plan: the loop over its phases and the result it ends with."""

    ctx: Context
    best: Incumbent
    record: SolveRecord
    last_full: Found | None = None  # the full model's last answer (its solver and seconds)

    def go(self) -> SolveResult:
        """The loop: each phase in turn, each of its answers applied, until one ends the run."""
        for kind, phase in steps(self.ctx.plan):
            stop = self._stop_before(kind)
            if stop is not None:
                return self._unproven(stop)
            for found in phase(self.ctx, self.best):
                ended = self._apply(kind, found)
                if ended is not None:
                    return ended
        limit = "work limit" if self.ctx.budget.meter is not None else "time limit"
        why = "interrupted in the full model" if stop_requested() is not None else f"{limit} in the full model"
        return self._unproven(why)

    def cheap_proof(self) -> SolveResult | None:
        """The heuristics and the floors alone: the result when they end the run (the best
        schedule meets a floor, or a floor proves that nothing fits), else None."""
        for kind, phase in steps(self.ctx.plan):
            if kind not in (PhaseKind.HEURISTICS, PhaseKind.FLOOR):
                continue
            for found in phase(self.ctx, self.best):
                ended = self._apply(kind, found)
                if ended is not None:
                    return ended
        return None

    def _stop_before(self, kind: PhaseKind) -> str | None:
        """Why the run cannot go on to a phase of ``kind``, or None when it can."""
        # the improvement phase ran because the full model does not fit: nothing follows
        improved = self.best.last(PhaseKind.IMPROVE) is not None and not self.ctx.fits(
            self.best.within(self.ctx.horizon)
        )
        if kind in CONTENTION_FREE and improved and stop_requested() is None:
            return self._skip_full(self.ctx.too_large(self.best.within(self.ctx.horizon)) or "too large")
        if kind in ALWAYS:
            return None
        why = self.ctx.too_large(self.best.within(self.ctx.horizon))
        if kind in NEED_FULL_MODEL and why == "too large":
            return self._skip_full(why)
        if self.ctx.budget.expired():
            last = self.best.phases[-1].name
            self.record = dataclasses.replace(self.record, stopped=f"after the {last}")
            if why == "too large":  # it would not have run anyway
                self.record = dataclasses.replace(self.record, full_model=f"skipped: {why}")
            if stop_requested() is not None:
                return f"interrupted (signal {stop_requested()}) after the {last}"
            return f"{'work' if self.ctx.budget.meter is not None else 'time'} limit after the {last}"
        if kind in NEED_FULL_MODEL and why is not None:  # its build would not end in time
            return self._skip_full(why)
        return None

    def _skip_full(self, why: str) -> str:
        self.record = dataclasses.replace(self.record, full_model=f"skipped: {why}")
        return f"the full model is {why}"

    def _apply(self, kind: PhaseKind, found: Found) -> SolveResult | None:
        """Record ``found``, keep its schedule and bound; the result if it ends the run."""
        best = self.best
        best.phases.append(found.record)
        if kind == PhaseKind.FULL:
            self.last_full = found
            self.record = dataclasses.replace(self.record, options={**self.record.options, "horizon": found.horizon})
        if found.nothing_fits:
            if best.schedule is not None:  # a schedule within the horizon says otherwise: a bug
                raise RuntimeError(f"the {found.record.name} is infeasible, yet the {best.source} schedule fits")
            self.record = self.record.proved(found.record)
            assert found.raw is not None
            return self._finish(found.raw)
        if kind == PhaseKind.FULL and found.record.status == Status.ERROR:
            assert found.raw is not None
            message = found.raw.message or "the full model's answer failed the checker"
            failed = dataclasses.replace(
                found.raw, status=Status.ERROR, has_solution=False, bound=best.bound, message=message
            )
            return self._finish(failed)
        if kind == PhaseKind.IMPROVE:
            best.offer_searched(found.schedule, found.span)
        best.offer(found.schedule, found.span, found.source or found.record.name)
        best.raise_bound(found.record.lower_bound())
        log.info("%s: %s; best %s, bound %s", found.record.name, found.record.status, best.span, best.floor)
        report(best.span, best.floor, found.record.name)
        if kind != PhaseKind.HEURISTICS and best.closed:
            self.record = self.record.proved(self._prover(found.record))
            return self._proven(found)
        return None

    def _prover(self, phase: PhaseRecord) -> PhaseRecord:
        """The phase credited with the proof when ``phase`` closes the gap: ``phase`` itself,
        but for an improvement search (which proves nothing) the last phase whose bound its
        schedule meets (the floors, the GPU bins, a probe)."""
        if phase.kind != PhaseKind.IMPROVE or self.best.span is None:
            return phase
        for earlier in reversed(self.best.phases):
            bound = earlier.lower_bound()
            if bound is not None and ceil_bound_or_none(bound) == self.best.span:
                return earlier
        return phase

    def _proven(self, found: Found) -> SolveResult:
        """The result when the best schedule meets the best bound: optimal. A solver that
        proved it itself (CP-SAT's "optimal") keeps its own termination and seconds."""
        span = float(self.best.span or 0)
        raw = found.raw
        if raw is not None and raw.status == Status.OPTIMAL:
            outcome = dataclasses.replace(raw, has_solution=True, objective=span, bound=span)
        else:
            outcome = RawOutcome(
                Status.OPTIMAL,
                has_solution=True,
                objective=span,
                bound=span,
                termination=f"the {self.best.source} schedule met the proven lower bound",
                solver=found.solver or (raw.solver if raw is not None else {}),
            )
        return self._finish(outcome)

    def _unproven(self, why: str) -> SolveResult:
        """The result when the run ends without a proof (``why``): the best schedule so far
        and the best bound, or no schedule at all."""
        raw = None if self.last_full is None else self.last_full.raw
        solver_s = None if raw is None else raw.solver_s
        solver = {} if raw is None else raw.solver
        if self.best.schedule is None:
            outcome = RawOutcome(
                Status.NO_SOLUTION, bound=self.best.bound, solver_s=solver_s, termination=why, solver=solver
            )
        else:
            outcome = RawOutcome(
                Status.FEASIBLE,
                has_solution=True,
                objective=float(self.best.span or 0),
                bound=self.best.bound,
                solver_s=solver_s,
                termination=f"{why}; the {self.best.source} schedule is kept",
                solver=solver,
            )
        return self._finish(outcome)

    def _finish(self, outcome: RawOutcome) -> SolveResult:
        """The outcome through the shared finish (check, re-simulate, record)."""
        record = dataclasses.replace(self.record, phases=tuple(self.best.phases))
        meter = self.ctx.budget.meter
        if meter is not None:  # what the run spent of its budget of work (docs/exactness.md, "Budgets of work")
            record = dataclasses.replace(record, options={**record.options, "work_spent": round(meter.spent, 3)})
        incumbent = self.best.schedule if outcome.has_solution else None
        return finish(
            self.ctx.instance,
            get_formulation("cpsat"),
            None,
            outcome,
            record=record,
            build_s=0.0,
            wall_s=self.ctx.budget.wall_elapsed(),
            incumbent=incumbent,
        )


MIN_SOLVE_SECONDS = 0.05
"""What the relaxation's solve must have left after its build to be started."""


@dataclass(frozen=True)
class RelaxationBound:
    """The contention-free relaxation's lower bound on the makespan, as far as it was solved."""

    bound: int | None  # a proven lower bound on OPT (rounded up), or None if none was found
    proven: bool  # True: the relaxation was solved to optimality (the bound is its optimum)
    status: str
    seconds: float


def relaxation_bound(
    instance: Instance, *, time_limit: float | None = 10.0, seed: int = 0, threads: int = 1
) -> RelaxationBound:
    """Phase 1 alone: the contention-free relaxation's optimum, or CP-SAT's bound on it when
    the time runs out (still a lower bound on OPT: docs/exactness.md). ``time_limit``
    covers the model's build: CP-SAT gets what the build left, and a build that does not
    end in time is stopped (no bound; ``status`` says so). A model over the formulation's
    size guard is refused (:func:`rar_opt.formulations.cfree.too_large`)."""
    began = time.perf_counter()
    deadline = None if time_limit is None else began + time_limit
    try:
        model = cfree.build(instance, cfree.Options(restrict=False), deadline=deadline)
    except cfree.BuildStopped:
        return RelaxationBound(None, False, "model not built within the time limit", time.perf_counter() - began)
    left = None if deadline is None else deadline - time.perf_counter()
    if left is not None and left < MIN_SOLVE_SECONDS:
        return RelaxationBound(None, False, "no time left after the build", time.perf_counter() - began)
    relaxed = Cpsat().solve(model, SolveOptions(time_limit=left, threads=threads, seed=seed))
    bound = ceil_bound_or_none(relaxed.objective if relaxed.status == Status.OPTIMAL else relaxed.bound)
    return RelaxationBound(bound, relaxed.status == Status.OPTIMAL, str(relaxed.status), time.perf_counter() - began)


@dataclass(frozen=True)
class BinsBound:
    """What the GPU-bins relaxation proved, asked upward from a floor."""

    bound: int | None  # OPT >= bound (the last slot refuted, plus one); None: nothing refuted
    asked: tuple[tuple[int, str], ...]  # each slot asked, with our status of the answer
    seconds: float
    note: str = ""


def gpu_bins_bound(
    instance: Instance, floor: int, *, time_limit: float = 10.0, seed: int = 0, threads: int = 1
) -> BinsBound:
    """The GPU-bins phase alone (docs/exactness.md, "GPU bins with servers"): the relaxation
    asked at ``floor``, then one slot higher while it refutes (:func:`.floor_asks.bins_answers`,
    up to the horizon), within ``time_limit`` seconds in all. A model over its size guard is
    not built (``note`` says so)."""
    budget = Budget.start(time_limit, threads, seed)
    why = gpubins.too_large(instance)
    if why is not None:
        return BinsBound(None, (), budget.elapsed(), f"{NOT_BUILT}{why}")
    asked, bound = [], None
    for slot, raw, _ in bins_answers(instance, max(int(floor), 1), instance.horizon + 1, budget):
        asked.append((slot, str(Status.FEASIBLE if raw.has_solution else raw.status)))
        if raw.status == Status.INFEASIBLE:
            bound = slot + 1
    return BinsBound(bound, tuple(asked), budget.elapsed())
