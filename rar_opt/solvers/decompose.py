"""The contention-free decomposition and the ``auto`` method built on it.

Phases, each on CP-SAT, each recorded with its status, objective, bound and seconds:

0. (``auto`` only) Heuristics: the best schedule of a few list-scheduling policies that ends
   within the horizon is the first incumbent; its makespan caps every later horizon.
1. Relaxation (:mod:`rar_opt.formulations.cfree`, ``restrict=False``): every job at its
   uncontended rate. Its bound is a lower bound on OPT; if it is infeasible, so is the
   instance within its horizon.
2. Restriction (``restrict=True``): split jobs that share a server never overlap, so its
   makespan is its schedule's true makespan (re-simulated; a mismatch is an error). If the
   best schedule so far meets the relaxation's bound, it is optimal: proven.
3. (``auto`` only, and only with a time limit) Probes at the floor (:mod:`.probe`): a
   proven "no schedule ends by slot L" raises the floor L by one, a "yes" is a schedule
   ending by L, so optimal. They stop when undecided or after their share of the time.
4. Otherwise the full CP-SAT model runs over the best makespan so far as horizon, with the
   best schedule as its hint and (``auto``) the best bound as a floor on the makespan, for
   the time that is left; the largest bound found is the result's bound.

``decompose`` is phases 1, 2 and 4 as the decomposition was first stated (30% of the time
for the relaxation, 50% of the rest for the restriction); ``auto`` adds phases 0 and 3 and
the floor, gives the first two phases less time when they do not close at once, and runs
the full model with CP-SAT's ``no-lp`` search (no linear relaxation: propagation only),
which proved more within a minute in our measurements at 16 x 8 x 100 (``Plan.full_searches``,
:data:`rar_opt.solvers.cpsat.SEARCHES`; docs/exactness.md, "Searches").
"""

from __future__ import annotations

import dataclasses
import logging
import math
import time
from dataclasses import dataclass
from typing import Any

from ..check import check
from ..errors import InputError
from ..formulations import cfree, cpsat
from ..formulations import formulation as get_formulation
from ..instance import Instance
from ..schedule import Schedule
from .backend import RawOutcome, SolveOptions
from .cpsat import SEARCHES, Cpsat
from .probe import probe
from .result import SolveResult, finish
from .status import Status

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Plan:
    """How a decomposition run spends its time."""

    name: str
    relax_share: float  # share of the time left that the relaxation may use
    restrict_share: float  # share of the time left that the restriction may use
    heuristics: tuple[str, ...] = ()  # policies whose best schedule is the first incumbent
    floor: bool = False  # the full model gets makespan >= the best bound so far
    # the restriction's share when the relaxation did not close: its makespan is then at
    # least the relaxation's optimum, somewhere above the proven bound, so it rarely proves
    # anything and serves mostly as the full model's hint and horizon
    restrict_share_open: float | None = None
    # the full model's searches in turn (names of rar_opt.solvers.cpsat.SEARCHES), each
    # with its share of the time left; the last one should take all that is left (1.0)
    full_searches: tuple[tuple[str, float], ...] = (("default", 1.0),)
    # before the full model: probes at the floor (rar_opt.solvers.probe) while they refute
    # it, within this share of the time left in all; None: no probes
    probe_share: float | None = None

    def __post_init__(self) -> None:
        shares = {"relax_share": self.relax_share, "restrict_share": self.restrict_share}
        if self.restrict_share_open is not None:
            shares["restrict_share_open"] = self.restrict_share_open
        if self.probe_share is not None:
            shares["probe_share"] = self.probe_share
        shares.update({f"full_searches[{k}]": share for k, (_, share) in enumerate(self.full_searches)})
        for where, share in shares.items():
            if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 < share <= 1:
                raise InputError(f"a share of the time left must be in (0, 1], got {share!r}", where=where)
        if not self.full_searches:
            raise InputError("the full model needs at least one search", where="full_searches")
        for search, _ in self.full_searches:
            if search not in SEARCHES:
                raise InputError(f"{search!r} is not a CP-SAT search ({', '.join(SEARCHES)})", where="full_searches")


DECOMPOSE = Plan("decompose", 0.3, 0.5)
AUTO = Plan(
    "auto",
    0.1,
    0.2,
    heuristics=("sjf-bco", "ls", "ff"),
    floor=True,
    restrict_share_open=0.05,
    full_searches=(("no-lp", 1.0),),
    probe_share=0.1,
)
PLANS = {p.name: p for p in (DECOMPOSE, AUTO)}


@dataclass
class _Best:
    """The best schedule found so far and where it came from."""

    schedule: Schedule | None = None
    span: int | None = None
    source: str | None = None

    def offer(self, schedule: Schedule | None, span: int | None, source: str) -> None:
        if schedule is not None and span is not None and (self.span is None or span < self.span):
            self.schedule, self.span, self.source = schedule, span, source


def decompose(
    instance: Instance,
    *,
    time_limit: float | None = None,
    seed: int = 0,
    threads: int = 1,
    plan: Plan = DECOMPOSE,
    warm_start: str | None = None,
    horizon: int | None = None,
    start: Schedule | None = None,
    lower_bound: float | None = None,
    symmetry: bool = True,
) -> SolveResult:
    """Solve ``instance`` (makespan) by the phases of the module docstring, as ``plan`` says.

    ``start`` is a schedule to begin from (an incumbent if it ends within the horizon);
    ``lower_bound`` a proven lower bound on the makespan, joined to the relaxation's.
    ``warm_start`` adds a policy to the plan's heuristics; ``horizon`` (at most T) caps the
    slots every phase may use; ``symmetry`` keeps or leaves out every model's
    symmetry-breaking rows (docs/exactness.md)."""
    wall0 = time.perf_counter()
    engine = Cpsat()
    phases: list[dict[str, Any]] = []
    limit_horizon = instance.horizon if horizon is None else min(horizon, instance.horizon)
    record: dict[str, Any] = {
        "formulation": plan.name,
        "backend": engine.name,
        "time_limit": time_limit,
        "seed": seed,
        "threads": threads,
        "plan": dataclasses.asdict(plan),
        "warm_start": warm_start,
        "start": None if start is None else start.meta.get("method", "given"),
        "lower_bound": lower_bound,
        "phases": phases,
        "horizon": limit_horizon,
        "symmetry": symmetry,
    }

    def left() -> float | None:
        return None if time_limit is None else max(time_limit - (time.perf_counter() - wall0), 0.05)

    def time_up() -> bool:
        return time_limit is not None and time.perf_counter() - wall0 >= time_limit

    def note(name: str, began: float, **fields: Any) -> None:
        phases.append({"phase": name, **fields, "seconds": round(time.perf_counter() - began, 3)})

    def run(model: Any, name: str, share: float = 1.0, params: tuple[tuple[str, Any], ...] = ()) -> RawOutcome:
        limit = left()
        settings = SolveOptions(
            time_limit=None if limit is None else limit * share, threads=threads, seed=seed, params=params
        )
        began = time.perf_counter()
        raw = engine.solve(model, settings)
        note(name, began, status=str(raw.status), objective=raw.objective, bound=raw.bound)
        return raw

    def done(model: Any, outcome: RawOutcome, incumbent: Schedule | None = None) -> SolveResult:
        return finish(
            instance,
            get_formulation("cpsat"),
            model,
            outcome,
            options=record,
            build_s=0.0,
            wall_s=time.perf_counter() - wall0,
            incumbent=incumbent,
        )

    def proven(how: str, best: _Best, solver: dict[str, Any] | None, model: Any = None) -> SolveResult:
        record["proved_by"] = how
        outcome = RawOutcome(
            Status.OPTIMAL,
            has_solution=True,
            objective=float(best.span or 0),
            bound=float(best.span or 0),
            termination=f"the {best.source} schedule met the proven lower bound",
            solver=solver or {},
        )
        return done(model, outcome, incumbent=None if model is not None else best.schedule)

    max_cells = cpsat.Options().max_cells
    if time_limit is None and cpsat.count_cells(instance, limit_horizon) > max_cells:
        raise InputError(
            f"the full CP-SAT model would have {cpsat.count_cells(instance, limit_horizon):,} split-job x server x "
            f"slot cells (limit {max_cells:,}), too many to prove an optimum; give a time limit for the best "
            "bound and schedule found within it",
            where="instance",
        )
    best = _Best()
    policies = tuple(dict.fromkeys((*plan.heuristics, *((warm_start,) if warm_start else ()))))
    if policies:
        best = _heuristics(instance, policies, limit_horizon, note)
    if start is not None:
        span = check(instance, start).result.makespan
        if span is not None and span <= limit_horizon:
            best.offer(start.with_meta({**start.meta, "method": start.meta.get("method", "given")}), span, "given")

    # 1. the relaxation, over the best makespan so far (every optimal schedule fits in it)
    relaxation = cfree.build(
        instance, cfree.Options(restrict=False, horizon=best.span or limit_horizon, symmetry=symmetry)
    )
    # when the full model cannot be built even over the best makespan so far, the first two
    # phases get all the time: half for the bound, the rest for the restriction's schedule
    full_fits = cpsat.count_cells(instance, best.span or limit_horizon) <= max_cells
    relaxed = run(relaxation, "relaxation", plan.relax_share if full_fits else 0.5)
    bound = relaxed.objective if relaxed.status == Status.OPTIMAL else relaxed.bound
    if relaxed.status != Status.INFEASIBLE:  # no job finishes before its fastest execution time
        bound = max(bound or 0.0, float(instance.bounds.rho_min.max()), lower_bound or 0.0)
    floor = None if bound is None else math.ceil(bound - 1e-9)
    if relaxed.status == Status.INFEASIBLE:  # even without contention nothing fits
        if best.schedule is not None:  # a schedule within the horizon says otherwise: a bug
            raise RuntimeError(f"the relaxation is infeasible, yet the {best.source} schedule ends at {best.span}")
        record["proved_by"] = "relaxation"
        return done(None, relaxed)
    if floor is not None and best.span is not None and best.span <= floor:
        return proven("relaxation", best, relaxed.solver)

    if time_up():  # the limit is reached: the best schedule so far and the bound
        record["stopped"] = "after the relaxation"
        return _without_full_model(instance, best, None, bound, done, "time limit after the relaxation")

    # 2. the restriction: a schedule whose makespan is exact
    restriction = cfree.build(instance, cfree.Options(restrict=True, horizon=limit_horizon, symmetry=symmetry))
    share = plan.restrict_share
    if relaxed.status != Status.OPTIMAL and plan.restrict_share_open is not None:
        share = plan.restrict_share_open
    restricted = run(restriction, "restriction", share if full_fits else 1.0)
    schedule = cpsat.read_schedule(restriction, instance) if restricted.has_solution else None
    span = check(instance, schedule).result.makespan if schedule is not None else None
    if span is not None and restricted.objective is not None and span != round(restricted.objective):
        raise RuntimeError(f"the restriction's makespan {restricted.objective} is not its schedule's {span}")
    best.offer(schedule, span, "restriction")
    best_model = restriction if best.source == "restriction" else None
    if floor is not None and best.span is not None and best.span <= floor:
        how = "decomposition" if best.source == "restriction" else "relaxation"
        return proven(how, best, restricted.solver, best_model)

    # 3 and 4 need the full model (a probe builds it too)
    if cpsat.count_cells(instance, best.span or limit_horizon) > max_cells:
        record["full_model"] = "skipped: too large"
        return _without_full_model(instance, best, best_model, bound, done, "the full model is too large")
    if time_up():
        record["stopped"] = "after the restriction"
        return _without_full_model(instance, best, best_model, bound, done, "time limit after the restriction")
    # 3. probes need a share of a time limit: without one, the full model alone proves the optimum
    probing = plan.probe_share is not None and time_limit is not None
    if probing and floor is not None and best.span is not None and floor < best.span:
        seconds = (left() or 0.0) * plan.probe_share
        floor, solver = _probe_upward(instance, best, floor, seconds, seed, threads, symmetry, note)
        bound = max(bound or 0.0, float(floor))
        if best.span <= floor:
            return proven("probe", best, solver)
    # 4. the full model: each search rebuilds it over the best makespan so far, hinted with
    # the best schedule and floored by the best bound so far
    full: Any = None
    raw: RawOutcome | None = None
    for k, (search, share) in enumerate(plan.full_searches):
        if k and time_up():
            break
        full = cpsat.build(instance, cpsat.Options(horizon=best.span or limit_horizon, symmetry=symmetry))
        if best.schedule is not None:
            cpsat.set_start(full, instance, best.schedule)
        if plan.floor and floor is not None:
            full.model.add(full.makespan >= floor)
        name = "full cp-sat" if search == "default" else f"full cp-sat ({search})"
        raw = run(full, name, share, SEARCHES[search])
        record["horizon"] = best.span or limit_horizon
        if raw.status in (Status.OPTIMAL, Status.INFEASIBLE):  # CP-SAT's own proof
            if raw.status == Status.INFEASIBLE and best.schedule is not None:  # a bug, as for the relaxation
                raise RuntimeError(f"the full model is infeasible, yet the {best.source} schedule ends at {best.span}")
            record["proved_by"] = name
            return done(full, raw)
        if raw.status == Status.ERROR:
            return dataclasses.replace(done(full, raw), bound=bound)
        if raw.bound is not None:
            bound = raw.bound if bound is None else max(bound, raw.bound)
            floor = math.ceil(bound - 1e-9)
        if raw.has_solution:  # offered only when the checker accepts it (it then ends no later)
            schedule = cpsat.read_schedule(full, instance)
            report = check(instance, schedule)
            if report.feasible:
                best.offer(schedule, report.result.makespan, name)
            else:
                log.warning("the full model's schedule fails the checker; it is not used")
        if floor is not None and best.span is not None and best.span <= floor:  # the bound met the schedule
            return proven(name, best, raw.solver)
    assert raw is not None  # the first search always runs
    return _without_full_model(instance, best, None, bound, done, "time limit in the full model", raw)


def _without_full_model(
    instance: Instance,
    best: _Best,
    model: Any,
    bound: float | None,
    done: Any,
    why: str,
    solved: RawOutcome | None = None,
) -> SolveResult:
    """The result when the full model does not run or does not finish (``why``): the best
    schedule so far and the best bound (or no schedule at all); ``solved`` is the last full
    model's outcome, for its solver and seconds."""
    solver_s = None if solved is None else solved.solver_s
    solver = {} if solved is None else solved.solver
    if best.schedule is None:
        outcome = RawOutcome(Status.NO_SOLUTION, bound=bound, solver_s=solver_s, termination=why, solver=solver)
        return dataclasses.replace(done(None, outcome), bound=bound)
    kept = RawOutcome(
        Status.FEASIBLE,
        has_solution=True,
        objective=float(best.span or 0),
        bound=bound,
        solver_s=solver_s,
        termination=f"{why}; the {best.source} schedule is kept",
        solver=solver,
    )
    return done(model, kept, incumbent=None if model is not None else best.schedule)


def _probe_upward(
    instance: Instance,
    best: _Best,
    floor: int,
    seconds: float,
    seed: int,
    threads: int,
    symmetry: bool,
    note: Any,
) -> tuple[int, dict[str, Any]]:
    """Probes at the floor while they refute it, within ``seconds`` in all: each proven no
    raises the floor by one, a yes is a schedule that meets the floor (then optimal).
    Returns the floor and the last probe's solver record; ``best`` takes any schedule found.
    An undecided probe ends the stage, and so does a probe that fails (logged): the full
    model comes next either way."""
    stop = time.perf_counter() + seconds
    solver: dict[str, Any] = {}
    while best.span is not None and floor < best.span:
        left = stop - time.perf_counter()
        if left < 0.05:
            break
        began = time.perf_counter()
        try:
            answer = probe(instance, floor, time_limit=left, seed=seed, threads=threads, symmetry=symmetry)
        except RuntimeError as exc:  # a CP-SAT error, or a schedule the checker refuses
            log.warning("the probe at %d failed (%s); the full model goes on without it", floor, exc)
            note(f"probe {floor}", began, status=str(Status.ERROR), objective=None, bound=None)
            break
        solver = answer.record.get("solver", solver)
        note(
            f"probe {floor}",
            began,
            status=str(answer.status),
            objective=answer.schedule_makespan,
            bound=answer.lower_bound,
        )
        if answer.status == Status.INFEASIBLE:
            floor = int(answer.lower_bound or floor + 1)
        elif answer.status == Status.FEASIBLE:
            best.offer(answer.schedule, answer.schedule_makespan, "probe")
        else:
            break
    return floor, solver


def _heuristics(instance: Instance, policies: tuple[str, ...], horizon: int, note: Any) -> _Best:
    """Phase 0: the best schedule of ``policies`` that ends within ``horizon``."""
    from ..algorithms import run_policy

    best = _Best()
    began = time.perf_counter()
    tried = {}
    for name in policies:
        run = run_policy(instance, name)
        span = check(instance, run.schedule).result.makespan
        tried[name] = span
        if span is not None and span <= horizon:
            best.offer(run.schedule.with_meta({**run.schedule.meta, "method": name}), span, name)
    note("heuristics", began, status="feasible" if best.span else "no_solution", objective=best.span, tried=tried)
    return best


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
    the time runs out (still a lower bound on OPT: docs/exactness.md)."""
    began = time.perf_counter()
    relaxed = Cpsat().solve(
        cfree.build(instance, cfree.Options(restrict=False)),
        SolveOptions(time_limit=time_limit, threads=threads, seed=seed),
    )
    value = relaxed.objective if relaxed.status == Status.OPTIMAL else relaxed.bound
    bound = None if value is None or not math.isfinite(value) else math.ceil(value - 1e-9)
    return RelaxationBound(bound, relaxed.status == Status.OPTIMAL, str(relaxed.status), time.perf_counter() - began)
