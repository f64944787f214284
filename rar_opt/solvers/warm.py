"""A single model's warm start: the schedule a solve begins from, its value under the
model's objective, and the rule that the solver's answer never loses it.

A warm start is a schedule the checker accepts that is known before the solver runs: a
policy's (``warm_start``), the caller's (``start``), or the best of ``auto``'s heuristics
where ``auto`` hands a request to one model (:func:`best_start`). Whatever the solver
returns, the result is never worse than it: when the solver ends without a schedule, or
with a worse one, the start is the incumbent (:func:`keep_start`), ``feasible``, with the
solver's bound beside it. A start is never a proof, so it never makes a result ``optimal``.
"""

from __future__ import annotations

import dataclasses
import logging
import time
import warnings
from collections.abc import Sequence
from typing import Any

import pyomo.environ as pyo

from rar_opt.check import check
from rar_opt.formulations.base import lexicographic_multiplier, weight_coefficients
from rar_opt.instance import Instance
from rar_opt.schedule import Schedule
from rar_opt.solvers.backend import RawOutcome
from rar_opt.solvers.budget import Budget
from rar_opt.solvers.phases import HEURISTICS_GRACE
from rar_opt.solvers.record import PhaseKind, PhaseRecord, SolveRecord
from rar_opt.solvers.result import SolveResult, finish
from rar_opt.solvers.status import Status
from rar_opt.support.processes import stop_requested

log = logging.getLogger(__name__)

NOT_PROOFS = (Status.FEASIBLE, Status.NO_SOLUTION, Status.INTERRUPTED)
"""The solver's statuses that prove nothing: a start better than their schedule (or in
place of none) replaces it. An error stays an error, and an infeasible stays as it is."""


def policy_start(instance: Instance, policy: str | None) -> Schedule | None:
    """The schedule of ``policy`` as a start, unless it ends after the horizon (then none)."""
    if not policy:
        return None
    from rar_opt.algorithms import run_policy

    run = run_policy(instance, policy)
    if run.exceeds_horizon:  # its schedule ends after T: no start, no horizon from it
        log.warning("warm start from %s skipped: its schedule ends after the horizon", policy)
        return None
    return run.schedule


def objective_value(instance: Instance, completion: Sequence[int], objective: str, horizon: int) -> float | None:
    """The value under ``objective`` of a schedule with these completion times (the
    simulator's), in the model's own units: the weighted sum scaled by K and the
    lexicographic value with the multiplier of a model of ``horizon`` slots, as the compact
    MILP writes them (docs/variants.md), so that it compares with the solver's objective."""
    if objective == "makespan":
        return float(max(completion))
    total = int(sum(completion))
    if objective == "total":
        return float(total)
    if objective == "flow":
        return float(total - int(instance.releases.sum()))
    if objective == "weighted":
        with warnings.catch_warnings():  # a rounded weight was already reported by the build
            warnings.simplefilter("ignore")
            coefficients, _ = weight_coefficients([job.weight for job in instance.jobs])
        return float(sum(c * int(t) for c, t in zip(coefficients, completion, strict=True)))
    if objective == "lexicographic":
        return float(lexicographic_multiplier(instance.num_jobs, horizon) * max(completion) + total)
    return None


def start_value(instance: Instance, start: Schedule, objective: str, horizon: int) -> float | None:
    """``start``'s value under ``objective``, or None when it cannot stand as the model's
    incumbent: the checker rejects it, it never ends, or it ends after ``horizon`` (the
    slots the model was asked to use)."""
    report = check(instance, start)
    if not report.feasible or report.result.makespan is None or report.result.makespan > horizon:
        return None
    return objective_value(instance, [int(c) for c in report.result.completion], objective, horizon)


def keep_start(
    instance: Instance, form: Any, result: SolveResult, start: Schedule | None, objective: str, horizon: int
) -> SolveResult:
    """``result``, or ``start`` in its place where the solver returned nothing better.

    The start replaces a result without a schedule whose status proves nothing
    (:data:`NOT_PROOFS`), and a schedule of a higher value under ``objective`` (judged by
    the simulator on both sides, since a model's value may overstate its own schedule's).
    The replacement is ``feasible`` (``interrupted`` under a signal: :func:`.result.finish`)
    and keeps the solver's bound, its times and its termination."""
    if start is None or result.status not in (*NOT_PROOFS, Status.OPTIMAL):
        return result
    if result.status == Status.OPTIMAL and result.completion is None:
        return result  # a proof with no schedule to weigh the start against
    value = start_value(instance, start, objective, horizon)
    if value is None:
        return result
    found = None if result.completion is None else objective_value(instance, result.completion, objective, horizon)
    if found is not None and found <= value:
        return result  # the solver's schedule is at least as good
    note = f"the warm start ({start.meta.get('method', 'given')}, value {value:g}) is the incumbent"
    if found is not None:  # a model that proves a value the start beats proves nothing
        claim = "as optimal" if result.status == Status.OPTIMAL else "as its best"
        note = f"the solver returned a schedule of value {found:g} {claim}; {note}"
    # a bound above a value reached by a checked schedule proves nothing: left out
    bound = result.bound if result.bound is None or result.bound <= value else None
    raw = RawOutcome(
        Status.FEASIBLE,
        has_solution=True,
        objective=value,
        bound=bound,
        solver_s=result.solver_s,
        handoff_s=result.handoff_s,
        model_size=result.model_size,
        termination=result.termination,
        message="; ".join(m for m in (result.message, note) if m),
        solver=result.solver,
    )
    kept = finish(
        instance, form, None, raw, record=result.record, build_s=result.build_s, wall_s=result.wall_s, incumbent=start
    )
    log.info("%s", note)
    return kept


def start_only(model: pyo.ConcreteModel, use_start: bool, termination: str, message: str) -> RawOutcome:
    """The outcome of a solve that never ran: the warm start is the incumbent if the model
    holds it (its variables were set from it), else there is no schedule (and
    :func:`keep_start` may still hand out a start the model could not take)."""
    if not use_start:
        return RawOutcome(Status.NO_SOLUTION, termination=termination, message=message)
    objective = float(pyo.value(model.obj))
    return RawOutcome(Status.FEASIBLE, has_solution=True, objective=objective, termination=termination, message=message)


def stopped_in_build(
    instance: Instance,
    form: Any,
    backend: str,
    opts: Any,
    started: tuple[Schedule | None, str | None],
    horizon: int,
    budget: Budget,
    build_s: float,
) -> SolveResult:
    """The result when the time limit (or a signal) ends the model's build: the warm start,
    if there is one, is the incumbent (``feasible``); otherwise there is no schedule.
    ``started`` is the start and its name as the record gives it (a policy, or "given")."""
    start, named = started
    why = "a signal asked to stop" if stop_requested() is not None else "the time limit ran out"
    raw = RawOutcome(
        Status.NO_SOLUTION,
        termination=("a signal" if stop_requested() is not None else "time limit") + " during the build",
        message=f"{why} after {build_s:.2f} s of building the model; the solver never started",
    )
    options = {**dataclasses.asdict(opts), "warm_start": named}
    record = SolveRecord(form.name, backend, options, stopped="build")
    result = finish(instance, form, None, raw, record=record, build_s=build_s, wall_s=0.0)
    result = keep_start(instance, form, result, start, getattr(opts, "objective", "makespan"), horizon)
    return dataclasses.replace(result, wall_s=budget.elapsed())


def best_start(
    instance: Instance,
    policies: Sequence[str],
    objective: str,
    horizon: int,
    budget: Budget,
    given: Schedule | None = None,
) -> tuple[Schedule | None, PhaseRecord]:
    """The best schedule under ``objective`` among ``given`` (the caller's start, if any)
    and the constructions of ``policies`` (as ``auto``'s heuristics phase runs them), of
    those that end within ``horizon``; None when none does. With the phase's record: each
    policy's value (None where its schedule does not fit). Like that phase, it keeps
    running past a spent limit for :data:`~.phases.HEURISTICS_GRACE` seconds, so that a
    limit eaten by the start-up still leaves a start."""
    from rar_opt.algorithms import QUICK, run_policy

    began = time.perf_counter()
    best, best_value = None, None
    if given is not None and (value := start_value(instance, given, objective, horizon)) is not None:
        best, best_value = given, value
    tried: dict[str, int | None] = {}
    for name in policies:
        late = time.perf_counter() - began > HEURISTICS_GRACE
        if best is not None and (stop_requested() is not None or (budget.expired() and late)):
            break
        run = run_policy(instance, name, **QUICK.get(name, {}))
        schedule = run.schedule.with_meta({**run.schedule.meta, "method": name})
        value = start_value(instance, schedule, objective, horizon)
        tried[name] = None if value is None else round(value)
        if value is not None and (best_value is None or value < best_value):
            best, best_value = schedule, value
    status = Status.FEASIBLE if best is not None else Status.NO_SOLUTION
    record = PhaseRecord(
        PhaseKind.HEURISTICS, status, objective=best_value, seconds=time.perf_counter() - began, tried=tried
    )
    return best, record
