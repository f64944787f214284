"""The trade-off the other way round: the best makespan with the average JCT capped.

``solve(instance, "auto", objective="makespan", jct_within=F)`` (F >= 1) answers with the
shortest schedule whose average JCT is within the factor F of the best one the heuristics
find. The cap is on the flow time sum_j (C_j - r_j), the average JCT times J (without
releases it is the total completion time): at most floor(F x S), S the smallest flow time
among the heuristics' schedules. Its phases, each recorded:

1. **Heuristics.** Every policy of :data:`~.sum_best.SUM_POLICIES` and
   :data:`~.sum_best.SPAN_POLICIES` (their construction only), judged by the simulator: S is
   the smallest flow time among them, and the shortest makespan among those within the
   cap the first incumbent (ties: the smaller flow time).
2. **Floor.** The cheap makespan bounds of the registry. A cap only removes schedules, so
   every lower bound on the makespan bounds the capped problem too.
3. **Without the cap.** The makespan's ``auto`` (:func:`.decompose.run_plan`, plan
   ``AUTO``) from the incumbent, on a share of the time: the problem without the cap
   relaxes the capped one, so its bound (its optimum when proven) is a lower bound here,
   and its schedule is offered, kept only if within the cap. It is recorded as a
   relaxation (``search``: ``auto without the cap``).
4. **Improve.** ``improve`` aimed at the makespan with ``total_cap`` (the cap on the total
   completion time that the flow cap is): schedules over the cap score by how much first.
5. **Full model.** Where the CP-SAT model fits: the makespan model over the best capped
   makespan as horizon (every better capped schedule fits in it), with the row
   sum_j e_j <= cap + sum_j r_j, the best bound as a floor and the incumbent as a hint.
   Its bound is on the capped problem itself.

Every schedule is re-simulated and offered only when its flow time is within the cap, so
the answer always meets it; the result is ``optimal`` when its makespan meets the best
bound. The record holds ``jct_within``, ``jct_cap`` and ``jct_reference`` (S).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

from rar_opt._version import __version__
from rar_opt.bounds import registry
from rar_opt.bounds.rounding import ceil_bound_or_none
from rar_opt.formulations import cpsat
from rar_opt.instance import Instance
from rar_opt.schedule import Schedule
from rar_opt.solvers.backend import RawOutcome
from rar_opt.solvers.budget import Budget
from rar_opt.solvers.context import MODEL_METHOD, build_seconds
from rar_opt.solvers.cpsat import SEARCHES, Cpsat
from rar_opt.solvers.decompose import AUTO, run_plan
from rar_opt.solvers.record import PhaseKind, PhaseRecord, SolveRecord
from rar_opt.solvers.result import SolveResult, finish, read_back
from rar_opt.solvers.status import Status
from rar_opt.solvers.sum_best import SPAN_POLICIES, SUM_POLICIES, sum_of
from rar_opt.solvers.sum_bounds import why_no_model
from rar_opt.solvers.sums import (
    ALONE_SHARE,
    DEFAULT_SECONDS,
    IMPROVE_ITERATIONS_PER_JOB,
    IMPROVE_SHARE,
    check_factor,
    factor_cap,
)
from rar_opt.support.processes import stop_requested

log = logging.getLogger(__name__)

UNCAPPED_SHARE = 0.3
"""The share of the time left that the makespan's ``auto`` without the cap gets."""

UNCAPPED = "auto without the cap"
"""The ``search`` of the phase that runs the makespan's ``auto`` without the cap."""

FULL_SEARCH = "no-lp"
"""The CP-SAT search of the capped full model (the makespan's ``auto`` uses it too)."""


@dataclass
class _Shortest:
    """The shortest schedule so far whose flow time is within ``cap``."""

    cap: int
    schedule: Schedule | None = None
    span: int | None = None
    flow: int | None = None
    source: str = ""

    def offer(self, schedule: Schedule | None, value: tuple[int, int] | None, source: str) -> bool:
        """Keep ``schedule`` ((flow time, makespan) ``value``) if within the cap and better."""
        if schedule is None or value is None or value[0] > self.cap:
            return False
        flow, span = value
        if self.span is None or self.flow is None or (span, flow) < (self.span, self.flow):
            self.schedule, self.span, self.flow, self.source = schedule, span, flow, source
            return True
        return False


@dataclass
class _Run:
    """One capped run: the incumbent, the best bound and the phases so far."""

    instance: Instance
    budget: Budget
    best: _Shortest
    factor: float
    bound: int = 0
    phases: list[PhaseRecord] = field(default_factory=list)

    def raise_bound(self, value: float | None) -> None:
        floor = ceil_bound_or_none(value)
        if floor is not None and floor > self.bound:
            self.bound = floor

    @property
    def closed(self) -> bool:
        return self.best.span is not None and self.best.span <= self.bound

    def go_on(self) -> bool:
        return not self.closed and not self.budget.expired() and stop_requested() is None


def solve_span_within(
    instance: Instance, budget: Budget, jct_within: float, start: Schedule | None = None
) -> SolveResult:
    """The shortest schedule whose average JCT is within ``jct_within`` (F >= 1) of the best
    the heuristics find, and a proven lower bound on its makespan, within ``budget``
    (module docstring; docs/exactness.md, "The trade-off")."""
    check_factor(jct_within, "jct_within")
    if jct_within is None:
        raise ValueError("jct_within is the factor of the cap; None asks for no cap")
    began = time.perf_counter()
    run, reference = _heuristics(instance, budget, jct_within, start)
    _floor(run)
    full: RawOutcome | None = None
    if run.go_on():
        _uncapped(run)
    if run.go_on():
        _improve(run)
    why_not = why_no_model(instance)
    if run.go_on() and why_not is None:
        full, why_not = _full_model(run)
    return _result(run, reference, full, why_not, time.perf_counter() - began)


def _heuristics(instance: Instance, budget: Budget, factor: float, start: Schedule | None) -> tuple[_Run, int]:
    """Phase 1: the reference flow time, the cap, and the first incumbent."""
    from rar_opt.algorithms import QUICK, run_policy

    began = time.perf_counter()
    found: dict[str, tuple[Schedule, tuple[int, int] | None]] = {}
    if start is not None:
        found["start"] = (start, sum_of(instance, start, "flow"))
    for name in SUM_POLICIES + SPAN_POLICIES:
        if found and stop_requested() is not None:
            break
        schedule = run_policy(instance, name, **QUICK.get(name, {})).schedule
        found[name] = (schedule, sum_of(instance, schedule, "flow"))
    flows = [value[0] for _, value in found.values() if value is not None]
    if not flows:
        raise RuntimeError(f"no heuristic schedule completes within the horizon on {instance.name}")
    reference = min(flows)
    most = int((instance.horizon - instance.releases).sum())  # the flow time of every schedule within T
    best = _Shortest(cap=factor_cap(factor, reference, most))
    for name, (schedule, value) in found.items():
        best.offer(schedule, value, name)
    tried = {name: None if value is None else value[1] for name, (_, value) in found.items()}
    record = PhaseRecord(
        PhaseKind.HEURISTICS, Status.FEASIBLE, best.span, None, time.perf_counter() - began, tried=tried
    )
    return _Run(instance, budget, best, factor, phases=[record]), reference


def _floor(run: _Run) -> None:
    """Phase 2: the cheap makespan bounds (valid under any cap)."""
    began = time.perf_counter()
    values = {b.name: b.value for b in registry.cheap(run.instance) if b.value is not None}
    run.raise_bound(max(values.values(), default=0))
    run.phases.append(
        PhaseRecord(PhaseKind.FLOOR, Status.BOUND, None, float(run.bound), time.perf_counter() - began, floors=values)
    )


def _uncapped(run: _Run) -> None:
    """Phase 3: the makespan's ``auto`` without the cap, a relaxation of the capped problem."""
    began = time.perf_counter()
    if run.budget.limit is not None:
        budget = run.budget.share(UNCAPPED_SHARE)
    elif why_no_model(run.instance) is None:
        budget = Budget.start(None, run.budget.threads, run.budget.seed)
    else:  # too large to prove without a limit: the default seconds
        budget = Budget.start(DEFAULT_SECONDS, run.budget.threads, run.budget.seed)
    res = run_plan(run.instance, AUTO, budget, start=run.best.schedule)
    if res.status == Status.ERROR:
        log.warning("the makespan's auto without the cap failed (%s); its bound is not used", res.message)
        bound = None
    else:
        bound = res.objective if res.status == Status.OPTIMAL else res.bound
        run.raise_bound(bound)
    if res.schedule is not None:
        run.best.offer(res.schedule, sum_of(run.instance, res.schedule, "flow"), UNCAPPED)
    status: Status = res.status if res.status in (Status.OPTIMAL, Status.ERROR) else Status.FEASIBLE
    if status == Status.FEASIBLE and res.schedule is None:
        status = Status.NO_SOLUTION
    run.phases.append(
        PhaseRecord(PhaseKind.RELAXATION, status, res.objective, bound, time.perf_counter() - began, search=UNCAPPED)
    )


def _improve(run: _Run) -> None:
    """Phase 4: the improvement search aimed at the makespan, the total completion capped."""
    from rar_opt.algorithms import run_policy

    began = time.perf_counter()
    instance, left = run.instance, run.budget.left()
    share = IMPROVE_SHARE if why_no_model(instance) is None else ALONE_SHARE
    seconds = DEFAULT_SECONDS if left is None else max(0.5, share * left)
    searched = run_policy(
        instance,
        "improve",
        objective="makespan",
        total_cap=run.best.cap + int(instance.releases.sum()),
        iterations=IMPROVE_ITERATIONS_PER_JOB * instance.num_jobs,
        time_limit=seconds,
        seed=run.budget.seed,
    )
    value = sum_of(instance, searched.schedule, "flow")
    within = value is not None and value[0] <= run.best.cap
    run.best.offer(searched.schedule, value, "improve")
    run.phases.append(
        PhaseRecord(
            PhaseKind.IMPROVE,
            Status.FEASIBLE if within else Status.NO_SOLUTION,
            value[1] if within and value is not None else None,
            None,
            time.perf_counter() - began,
            search="improve",
        )
    )


def _full_model(run: _Run) -> tuple[RawOutcome | None, str | None]:
    """Phase 5: the CP-SAT makespan model with the flow cap as a row, over the best capped
    makespan; its outcome (None when not built) and why it was not built."""
    instance, best = run.instance, run.best
    assert best.schedule is not None and best.span is not None
    left = run.budget.left()
    if left is not None and build_seconds(instance, best.span) > 0.5 * left:
        return None, "skipped: too large for the time left"
    began = time.perf_counter()
    model = cpsat.build(instance, cpsat.Options(horizon=best.span))
    cpsat.set_start(model, instance, best.schedule)
    model.model.add(sum(model.end) <= best.cap + int(instance.releases.sum()))
    model.model.add(model.makespan >= run.bound)
    raw = Cpsat().solve(model, run.budget.reserving().settings(params=SEARCHES[FULL_SEARCH]))
    status = raw.status
    if raw.has_solution:
        judged = read_back(instance, cpsat.read_schedule(model, instance), MODEL_METHOD)
        if judged is None:
            log.warning("the capped full model's schedule fails the checker; it is not used")
            status = Status.ERROR
        else:
            best.offer(judged[0], sum_of(instance, judged[0], "flow"), "cpsat")
    if raw.status == Status.INFEASIBLE:  # the incumbent is a point of this model: a bug
        raise RuntimeError("the capped full model is infeasible, yet the incumbent meets the cap within its horizon")
    bound = None if status == Status.ERROR else (raw.objective if raw.status == Status.OPTIMAL else raw.bound)
    run.raise_bound(bound)
    record = PhaseRecord(PhaseKind.FULL, status, raw.objective, bound, time.perf_counter() - began, search=FULL_SEARCH)
    run.phases.append(record)
    return raw, None


class _Method:
    """Stands for the formulation in :func:`finish` (no model is read back)."""

    name = "auto"
    problem = "makespan"


_PROOF_ORDER = (PhaseKind.FLOOR, PhaseKind.RELAXATION, PhaseKind.FULL)
"""Which phase is credited with a proof when several bounds meet the best makespan: the cheapest."""


def _result(run: _Run, reference: int, full: RawOutcome | None, why_not: str | None, seconds: float) -> SolveResult:
    """The capped run as a :class:`SolveResult`: the best capped schedule, the best bound."""
    instance, best, budget = run.instance, run.best, run.budget
    assert best.schedule is not None and best.span is not None
    check = sum_of(instance, best.schedule, "flow")
    if check is None or check[0] > best.cap:  # offer() keeps only schedules within the cap
        raise RuntimeError("the capped answer does not meet its flow cap")
    status = Status.OPTIMAL if run.closed else Status.FEASIBLE
    record = SolveRecord(
        "auto",
        "cpsat" if full is not None else "rar-opt",
        {
            "objective": "makespan",
            "horizon": instance.horizon,  # the slots every schedule must end by
            "jct_within": run.factor,
            "jct_cap": best.cap,
            "jct_reference": reference,
            "time_limit": budget.limit,
            "seed": budget.seed,
            "threads": budget.threads,
        },
        tuple(run.phases),
        stopped=None if status == Status.OPTIMAL or not budget.expired() else "time limit",
        full_model=why_not,
    )
    if status == Status.OPTIMAL:
        proofs = [p for p in run.phases if p.kind in _PROOF_ORDER and (ceil_bound_or_none(p.bound) or 0) >= best.span]
        if proofs:
            record = record.proved(min(proofs, key=lambda p: _PROOF_ORDER.index(p.kind)))
    solver = {"name": "rar-opt", "interface": "rar_opt.solvers.tradeoff", "version": __version__}
    raw = RawOutcome(
        status,
        has_solution=True,
        objective=float(best.span),
        bound=float(run.bound),
        solver_s=None if full is None else full.solver_s,
        termination=f"the best schedule within the JCT cap ({best.source}) against the best bound",
        solver=solver if full is None else full.solver,
    )
    schedule = best.schedule.with_meta({**best.schedule.meta, "method": best.source})
    return finish(instance, _Method, None, raw, record=record, build_s=0.0, wall_s=seconds, incumbent=schedule)
