"""``auto`` for the total completion time and the flow time, at every size.

The objectives are sum_j C_j (``total``) and sum_j (C_j - r_j) (``flow``; the two differ by
the constant sum_j r_j, so one bound serves both). The method runs in phases, each
recorded as for the makespan (:class:`~rar_opt.solvers.record.PhaseRecord`, with the sum
in place of the makespan):

1. **Heuristics.** Every policy of :data:`SUM_POLICIES` (list schedules built for short
   completion times: shortest first and its relatives), each judged by the simulator.
2. **Floor.** The cheap bounds on the total completion time of the bounds registry.
3. **Relaxation.** Each solver bound on the total completion time of the registry (the
   time-indexed LP on the GPU pool when registered), on a share of the time.
4. **Improve.** ``improve`` aimed at the sum (its ``objective="total"``): an iterated-greedy
   search over the engine's job orders from shortest-first starts and the relaxation's
   order, judged by the simulator, on :data:`IMPROVE_PROBE_SHARE` of its share of the
   time (a probe; the rest is left to the phases after it).
5. **Backfill.** ``backfill``: an iterated local search over priority orders for the
   backfilling builder (:mod:`rar_opt.algorithms.backfill`: jobs start out of list order
   when they fit, splits never share a server), from the same starts, on a share of what
   is left: a race of short runs, :data:`BACKFILL_RESTARTS` under each server rule of
   :data:`BACKFILL_FITS` and start kind of :data:`BACKFILL_START_SPLITS`, with the split
   rule :data:`BACKFILL_SPLIT` and :data:`BACKFILL_FOCUS` of its moves drawn by
   GPU-slots. Then the search that leads goes on from its best state for the rest of the
   phase: the race's best run, or ``improve`` where its probe is better (recorded as a
   phase ``improve (resumed)``). Every best schedule is re-simulated like every other.
6. **Neighbourhoods.** Where the full model does not fit: first the server-orders search
   (:mod:`rar_opt.solvers.server_orders`: each server's unsplit jobs re-listed and moved
   between servers, judged server by server) for a few seconds, then exact neighbourhoods
   (:mod:`rar_opt.solvers.neighbourhoods`: CP-SAT re-places the unsplit jobs of a few
   servers at a time) from the best schedule, on what is left.
7. **Full model.** Where the CP-SAT model fits (its cell guard) and time is left, the model
   with the best schedule as its start; its bound joins the others.

The best schedule is re-simulated; the result's objective is its sum, its bound the best
of the proven bounds, and it is ``optimal`` when the two meet (sums are integers).
"""

from __future__ import annotations

import contextlib
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from rar_opt._version import __version__
from rar_opt.bounds.rounding import ceil_bound_or_none
from rar_opt.errors import InputError, ParameterError
from rar_opt.instance import Instance
from rar_opt.schedule import Schedule
from rar_opt.solvers import sum_best, sum_bounds
from rar_opt.solvers.backend import RawOutcome
from rar_opt.solvers.budget import Budget, run_seed
from rar_opt.solvers.record import PhaseKind, PhaseRecord, ProvedBy, SolveRecord
from rar_opt.solvers.result import SolveResult, finish
from rar_opt.solvers.status import Status
from rar_opt.solvers.sum_best import SPAN_POLICIES, SUM_POLICIES, Best, sum_of
from rar_opt.support.checks import is_real
from rar_opt.support.processes import stop_requested

if TYPE_CHECKING:
    from rar_opt.algorithms.search import ImproveState

log = logging.getLogger(__name__)

SUM_OBJECTIVES = ("total", "flow")
"""The objectives this method answers."""

IMPROVE_SHARE = 0.4
"""The share of the time limit the improvement search gets (after the heuristics)."""

ALONE_SHARE = 0.9
"""The share of the time left that the last search gets when the full model does not fit
(nothing runs after it): the neighbourhood phase here, ``improve`` under a cap in
:mod:`rar_opt.solvers.tradeoff`."""

BOUND_SHARE = 0.5
"""The share of what is left that the solver bounds get, before the full model."""

IMPROVE_PROBE_SHARE = 0.2
"""The share of its time that ``improve`` runs before the backfill race; the time it does
not use goes to the phases after it, and after the race the search that leads (``improve``
or the race's best run) goes on from its best state for the rest of the backfill phase.
``improve`` wins where its list schedules are good (the paper's literal preset) and loses
by 2-10% where jobs must avoid contention (docs/exactness.md, "`improve` probes, and the
search that leads goes on"). 1.0: ``improve`` runs all its time, and the race's best run
always goes on."""

IMPROVE_ITERATIONS_PER_JOB = 50
"""The improvement search's iterations per job (it stops earlier on its time share)."""

IMPROVE_SHARE_BEFORE_BACKFILL = 0.3
"""``improve``'s share of the time left when the backfill and neighbourhood phases run
after it (the full model does not fit)."""

BACKFILL_SHARE_BEFORE_NEIGHBOURHOODS = 0.5
"""The backfill phase's share of the time left when the neighbourhood phase follows it;
the neighbourhoods then get :data:`ALONE_SHARE` of the rest."""

SEARCH_PLATEAU_SECONDS = 30.0
"""Where the full model does not fit, ``improve`` and the backfill search each stop after
this many seconds, and the neighbourhood phase gets the time beyond: both searches gain
little after about 25 s at 160 jobs, while the neighbourhoods keep descending
(docs/exactness.md, "Exact neighbourhoods"). Within a 60 s limit the caps do not bind."""

BACKFILL_SHARE = 0.4
"""The backfill phase's share of the time left when the full model runs after it."""

BACKFILL_ITERATIONS_PER_JOB = 100
"""The backfill search's moves per job (it stops earlier on its time share)."""

BACKFILL_FITS: tuple[str, ...] = ("best", "large")
"""The backfill builder's server rules in this phase (``BuildRules.fit``), each raced
(:data:`BACKFILL_RESTARTS`), every best schedule offered (measured: docs/exactness.md,
"The backfill's server rule")."""

BACKFILL_SPLIT = "choose"
"""The backfill builder's split rule in this phase (``BuildRules.split``): the search decides
per job whether it may split by choice (measured: docs/exactness.md, "Which jobs split")."""

BACKFILL_FOCUS = 0.5
"""The share of the backfill search's order moves whose jobs are drawn in proportion to
their GPU-slots instead of uniformly (``BackfillParams.focus``; docs/exactness.md, "Moves
drawn by GPU-slots")."""

BACKFILL_RESTARTS = 2
"""The backfill search's runs per server rule in its race, each with its own seed
(:func:`~.budget.run_seed`), all on equal parts of :data:`BACKFILL_RACE_SHARE` of the
phase's time, every best schedule offered. A run settles within a few seconds in a basin
that its seed decides, and the early sums rank the basins (docs/exactness.md, "Racing the
backfill search")."""

BACKFILL_RACE_SHARE = 0.5
"""The share of the backfill phase's time that the race takes; the run with the best
schedule then goes on from its best state (:func:`rar_opt.algorithms.backfill.backfill_search`,
``resume``) with a fresh seed for the rest. 1.0: no continuation, the race is the phase."""

BACKFILL_START_SPLITS: tuple[str, ...] = ("none",)
"""How the backfill race's runs start (``BackfillParams.start_splits``), each kind raced
under every rule: ``"none"`` starts with no job split by choice, and the walk's flips add
the splits that pay (measured: docs/exactness.md, "Racing the backfill search")."""

BACKFILL_MIN_SECONDS = 0.2
"""Less time than this left, the backfill phase is not run."""

DEFAULT_SECONDS = 30.0
"""The improvement and bound phases' time when the caller gives no limit."""

SERVER_ORDERS_SHARE = 0.15
"""The share of the time left that the server-orders search (:mod:`rar_opt.solvers.server_orders`)
gets before the neighbourhood phase, at most :data:`SERVER_ORDERS_SECONDS`; 0 leaves it out
(measured: docs/exactness.md, "Server orders")."""

SERVER_ORDERS_SECONDS = 5.0
"""The most seconds the server-orders search gets: it stops improving after a few seconds
at 160 jobs."""


FullModel = Callable[[Instance, str, Schedule | None, Budget, dict[str, Any]], SolveResult]
"""Solves the full model for ``objective`` from a start schedule within a budget (the
dispatcher passes the CP-SAT model's solve: this module sits below it)."""


def solve_sum(
    instance: Instance,
    objective: str,
    budget: Budget,
    start: Schedule | None = None,
    full_model: FullModel | None = None,
    makespan_within: float | None = None,
) -> SolveResult:
    """The best schedule and the best proven bound on ``objective`` within ``budget``; with
    ``makespan_within`` (a factor F >= 1), among the schedules whose makespan is at most
    floor(F x the shortest makespan the heuristics find), the cap recorded as
    ``makespan_cap`` (docs/exactness.md, "The trade-off")."""
    if objective not in SUM_OBJECTIVES:
        raise InputError(f"must be one of {', '.join(SUM_OBJECTIVES)}, got {objective!r}", where="objective")
    check_factor(makespan_within, "makespan_within")
    began = time.perf_counter()
    shift = int(instance.releases.sum()) if objective == "flow" else 0
    best, phases = Best(), []
    if start is not None:
        best.offer(start, sum_of(instance, start, objective), "start")
    policies = SUM_POLICIES + (SPAN_POLICIES if makespan_within is not None else ())
    phases.append(sum_best.heuristics(instance, objective, best, policies))
    if makespan_within is not None and best.shortest is not None:
        cap = factor_cap(makespan_within, best.shortest, instance.horizon)
        best = sum_best.capped(instance, objective, best, phases[-1], cap)
        phases[-1] = replace(phases[-1], objective=best.value)  # the best within the cap
    options: dict[str, Any] = {} if best.cap is None else {"horizon": best.cap}
    bound = sum_bounds.floor(instance, phases, shift)
    nothing = None if best.value is not None else sum_bounds.nothing_fits(instance, phases)  # why no schedule can fit
    order: tuple[int, ...] | None = None

    def more(stoppable: bool = True) -> bool:
        """Whether a further phase may run: something may still fit, the best schedule is not
        proven, time is left and (for a ``stoppable`` phase) no stop was asked for."""
        return nothing is None and best.value != bound and not budget.expired() and not (stoppable and stop_requested())

    if more():
        left = budget.left()
        seconds = DEFAULT_SECONDS if left is None else BOUND_SHARE * left
        relaxed, order = sum_bounds.relaxations(instance, phases, seconds, budget, options, shift)
        bound = max(bound, relaxed)
    improved: _Improved | None = None
    if more(stoppable=False):
        improved = _improve(instance, objective, best, budget, order)
        phases.append(improved.record)
    if more():
        phases.extend(_backfill(instance, objective, best, budget, order, improved))
    for search in ("server-orders", "neighbourhoods"):  # on the schedule itself, where the full model does not fit
        if more() and sum_bounds.why_no_model(instance):
            found = _on_schedule(instance, objective, best, budget, search)
            if found is not None:
                phases.append(found)
    solver: dict[str, Any] = {"name": "rar-opt", "interface": "rar_opt.solvers.sums", "version": __version__}
    full = None
    if more():
        full = None if full_model is None else _full_model(instance, objective, best, budget, full_model, options)
        if full is not None:
            phases.append(full[0])
            if full[1] is not None:
                bound = max(bound, full[1])
            solver = full[2] or solver
            if full[0].status == Status.INFEASIBLE and best.value is None:
                nothing = "the CP-SAT model proves that no schedule ends within the horizon"
    proof: PhaseRecord | None = None
    if best.value is not None and best.value <= bound:
        status = Status.OPTIMAL
        proof = max((p for p in phases if p.bound is not None and p.bound >= best.value), key=_rank, default=None)
    elif nothing is not None:
        status = Status.INFEASIBLE
    else:
        status = Status.FEASIBLE if best.value is not None else Status.NO_SOLUTION
    record = SolveRecord(
        "auto",
        "cpsat" if full is not None else "rar-opt",
        {
            "objective": objective,
            "horizon": instance.horizon if best.cap is None else best.cap,  # the slots every schedule must end by
            **({} if makespan_within is None else {"makespan_within": makespan_within, "makespan_cap": best.cap}),
            "time_limit": budget.limit,
            "seed": budget.seed,
            "threads": budget.threads,
        },
        tuple(phases),
        stopped=None if status == Status.OPTIMAL or not budget.expired() else "time limit",
        full_model=None if full is not None else sum_bounds.why_no_model(instance),
    )
    if proof is not None:
        record = replace(record, proved_by=_proof(proof), proof_phase=proof.name)
    raw = RawOutcome(
        status,
        has_solution=best.schedule is not None,
        objective=None if best.value is None else float(best.value),
        bound=float(bound),
        termination=nothing or _ended(best.source),
        solver=solver,
    )
    schedule = None if best.schedule is None else best.schedule.with_meta({**best.schedule.meta, "method": best.source})
    return finish(
        instance,
        _Method,
        None,
        raw,
        record=record,
        build_s=0.0,
        wall_s=time.perf_counter() - began,
        incumbent=schedule,
    )


def _ended(source: str) -> str:
    """Why a run without a proof ended, for its record: a signal, or its phases were done."""
    signum = stop_requested()
    kept = f"the best schedule ({source}) against the best bound"
    return kept if signum is None else f"interrupted (signal {signum}): {kept}"


class _Method:
    """Stands for the formulation in :func:`finish` (no model is read back)."""

    name = "auto"
    problem = "sum"


def _rank(phase: PhaseRecord) -> int:
    order = (PhaseKind.FLOOR, PhaseKind.RELAXATION, PhaseKind.FULL)
    return -order.index(phase.kind) if phase.kind in order else -len(order)


def _proof(phase: PhaseRecord) -> ProvedBy:
    return ProvedBy.FLOOR if phase.kind in (PhaseKind.HEURISTICS, PhaseKind.IMPROVE) else phase.proves


def check_factor(value: float | None, where: str) -> None:
    """A trade-off factor is a finite number >= 1 (or None: no cap)."""
    if value is None:
        return
    if not is_real(value) or not math.isfinite(value) or value < 1:
        raise ParameterError(f"must be a finite factor >= 1, got {value!r}", where=where)


def factor_cap(factor: float, value: int, most: int) -> int:
    """floor(``factor`` x ``value``), the cap of a trade-off, at most ``most`` (what every
    schedule within the horizon meets anyway: the horizon for the makespan, sum_j (T - r_j)
    for the flow time), so that a huge factor neither overflows nor records a cap past it."""
    product = factor * value + 1e-9
    return most if not math.isfinite(product) or product >= most else int(product)


@dataclass(frozen=True)
class _Improved:
    """The improve phase's record, and the state and value its run ended with."""

    record: PhaseRecord
    state: ImproveState
    value: tuple[int, int] | None


def _improve_run(
    instance: Instance,
    objective: str,
    best: Best,
    order: tuple[int, ...] | None,
    seconds: float,
    seed: int,
    resume: ImproveState | None = None,
) -> tuple[PhaseRecord, ImproveState, tuple[int, int] | None]:
    """One run of ``improve`` aimed at the sum (from ``resume`` if given), its schedule
    offered to ``best``."""
    from rar_opt.algorithms.search import SearchParams, improve_search

    began = time.perf_counter()
    params = SearchParams(
        objective="total",
        makespan_cap=best.cap,
        start_order=order,
        iterations=IMPROVE_ITERATIONS_PER_JOB * instance.num_jobs,
        time_limit=seconds,
        seed=seed,
    )
    run, state = improve_search(instance, params, resume)
    value = sum_of(instance, run.schedule, objective)
    best.offer(run.schedule, value, "improve")
    status, total = best.recorded(value)
    search = "improve" if resume is None else "resumed"  # recorded as "improve", "improve (resumed)"
    record = PhaseRecord(PhaseKind.IMPROVE, status, total, None, time.perf_counter() - began, search=search)
    return record, state, value


def _improve(
    instance: Instance, objective: str, best: Best, budget: Budget, order: tuple[int, ...] | None
) -> _Improved:
    """``improve`` on :data:`IMPROVE_PROBE_SHARE` of its share of the time left (its starts
    are always built: at 320 jobs and more they take longer than the probe)."""
    left = budget.left()
    # most of the time when the full model will not use the rest (the bounds ran
    # before), shared with the backfill phase after it
    share = IMPROVE_SHARE if sum_bounds.why_no_model(instance) is None else IMPROVE_SHARE_BEFORE_BACKFILL
    seconds = DEFAULT_SECONDS if left is None else max(0.5, share * left)
    if sum_bounds.why_no_model(instance) is not None:
        seconds = min(seconds, SEARCH_PLATEAU_SECONDS)
    return _Improved(*_improve_run(instance, objective, best, order, seconds * IMPROVE_PROBE_SHARE, budget.seed))


def _backfill(
    instance: Instance,
    objective: str,
    best: Best,
    budget: Budget,
    order: tuple[int, ...] | None,
    improved: _Improved | None = None,
) -> list[PhaseRecord]:
    """The backfill search (``backfill`` with ``start_order``, the relaxation's order) on
    its share of the time left: a race of :data:`BACKFILL_RESTARTS` runs per server rule on
    :data:`BACKFILL_RACE_SHARE` of it, then the search that leads goes on from its best state
    on the rest: the race's best run, or ``improved``'s run where it is better and only
    probed (:data:`IMPROVE_PROBE_SHARE` < 1). The phases run: none when too little is
    left, the backfill phase, and ``improve`` going on if it did."""
    from rar_opt.algorithms.backfill import BackfillParams, NoTimeToBuild, backfill_search
    from rar_opt.algorithms.order_search import Choice

    began = time.perf_counter()
    left = budget.left()
    share = BACKFILL_SHARE if sum_bounds.why_no_model(instance) is None else BACKFILL_SHARE_BEFORE_NEIGHBOURHOODS
    seconds = DEFAULT_SECONDS if left is None else share * left
    if sum_bounds.why_no_model(instance) is not None:
        seconds = min(seconds, SEARCH_PLATEAU_SECONDS)
    if seconds < BACKFILL_MIN_SECONDS:
        return []

    def run(
        fit: str, kind: str, seed: int, part: float, resume: Choice | None = None
    ) -> tuple[tuple[int, int] | None, Choice]:
        params = BackfillParams(
            makespan_cap=best.cap,
            start_order=order,
            fit=fit,
            split=BACKFILL_SPLIT,
            focus=BACKFILL_FOCUS,
            start_splits=kind,
            iterations=BACKFILL_ITERATIONS_PER_JOB * instance.num_jobs,
            time_limit=max(part, BACKFILL_MIN_SECONDS),
            seed=seed,
        )
        result, state = backfill_search(instance, params, resume)
        value = sum_of(instance, result.schedule, objective)
        best.offer(result.schedule, value, "backfill")
        return value, state

    def rank(value: tuple[int, int]) -> tuple[int, int]:  # slots past the cap first, as the search scores
        return (0 if best.cap is None else max(value[1] - best.cap, 0), value[0])

    values: list[tuple[int, int] | None] = []
    leader: tuple[tuple[int, int], tuple[str, str], Choice] | None = None
    runs = [(fit, kind, r) for fit in BACKFILL_FITS for kind in BACKFILL_START_SPLITS for r in range(BACKFILL_RESTARTS)]
    race = seconds * BACKFILL_RACE_SHARE
    for k, (fit, kind, r) in enumerate(runs):
        if values and stop_requested() is not None:  # a signal: keep what the race found
            break
        part = (race - (time.perf_counter() - began)) / (len(runs) - k)
        try:
            value, state = run(fit, kind, run_seed(budget.seed, r), part)
        except NoTimeToBuild:  # not one schedule built in its time (an instance far larger than the paper's)
            continue
        values.append(value)
        if value is not None and (leader is None or rank(value) < rank(leader[0])):
            leader = (value, (fit, kind), state)
    rest = seconds - (time.perf_counter() - began)
    going_on = BACKFILL_RACE_SHARE < 1.0 and rest >= BACKFILL_MIN_SECONDS and not budget.expired()
    going_on = going_on and stop_requested() is None
    probe = improved.value if improved is not None and IMPROVE_PROBE_SHARE < 1.0 else None
    improve_leads = probe is not None and (leader is None or rank(probe) < rank(leader[0]))
    if leader is not None and going_on and not improve_leads:
        fit, kind = leader[1]
        # the leader's state not rebuilt in what was left: the race's best stands
        with contextlib.suppress(NoTimeToBuild):
            values.append(run(fit, kind, run_seed(budget.seed, BACKFILL_RESTARTS), rest, leader[2])[0])
    answers = [v for v in values if v is not None and best.recorded(v)[1] is not None]  # checked, within the cap
    status, total = best.recorded(min(answers) if answers else None)
    records = [PhaseRecord(PhaseKind.IMPROVE, status, total, None, time.perf_counter() - began, search="backfill")]
    if improve_leads and going_on and improved is not None:  # improve goes on from its probe's best
        rest = seconds - (time.perf_counter() - began)
        resumed = _improve_run(instance, objective, best, order, rest, run_seed(budget.seed, 1), improved.state)
        records.append(resumed[0])
    return records


def _on_schedule(instance: Instance, objective: str, best: Best, budget: Budget, search: str) -> PhaseRecord | None:
    """A search on the best schedule itself, ``search`` being ``"server-orders"``
    (:mod:`rar_opt.solvers.server_orders`, on :data:`SERVER_ORDERS_SHARE` of the time left,
    at most :data:`SERVER_ORDERS_SECONDS`) or ``"neighbourhoods"`` (exact neighbourhoods,
    :mod:`rar_opt.solvers.neighbourhoods`, on :data:`ALONE_SHARE` of the time left); None
    when there is no schedule to start from or too little time. Neither lengthens the
    makespan, so a cap stays kept."""
    from rar_opt.solvers import neighbourhoods, server_orders

    left = budget.left()
    run: Callable[..., Any]
    if search == "server-orders":
        run = server_orders.search
        seconds = SERVER_ORDERS_SECONDS if left is None else min(SERVER_ORDERS_SECONDS, SERVER_ORDERS_SHARE * left)
    else:
        run = neighbourhoods.search
        seconds = DEFAULT_SECONDS if left is None else ALONE_SHARE * left
    if best.schedule is None or seconds < BACKFILL_MIN_SECONDS:
        return None
    began = time.perf_counter()
    found = run(instance, best.schedule, time_limit=seconds, seed=budget.seed)
    value = sum_of(instance, found.schedule, objective)
    best.offer(found.schedule, value, search)
    status, total = best.recorded(value)
    return PhaseRecord(PhaseKind.IMPROVE, status, total, None, time.perf_counter() - began, search=search)


def _full_model(
    instance: Instance, objective: str, best: Best, budget: Budget, solve: FullModel, options: dict[str, Any]
) -> tuple[PhaseRecord, int | None, dict[str, Any] | None] | None:
    """The CP-SAT model with the best schedule as its start, when it fits (``options``:
    the makespan cap as the model's horizon)."""
    if sum_bounds.why_no_model(instance) is not None:
        return None
    began = time.perf_counter()
    res = solve(instance, objective, best.schedule, budget, options)
    bound = ceil_bound_or_none(res.bound) if res.status != Status.ERROR else None
    if res.schedule is not None:
        value = sum_of(instance, res.schedule, objective)
        if value is not None:
            best.offer(res.schedule, value, "cpsat")
    status = res.status if res.status in (Status.OPTIMAL, Status.FEASIBLE, Status.INFEASIBLE) else Status.NO_SOLUTION
    record = PhaseRecord(
        PhaseKind.FULL, status, res.objective, None if bound is None else float(bound), time.perf_counter() - began
    )
    return record, bound, res.solver
