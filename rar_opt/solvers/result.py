"""The result of a solve, and the one "finish" every backend's outcome goes through.

A :class:`SolveResult` is the run (status, objective, bound, gap, times, what was used);
its ``schedule`` is the solution, read back from the model and judged by the checker and
the simulator, never by the solver: the makespan, average JCT and completion times in a
result are the simulator's. A schedule the checker rejects is never handed out.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import signal
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pyomo.environ as pyo

from rar_opt.check import check
from rar_opt.instance import Instance
from rar_opt.schedule import Schedule
from rar_opt.solvers.backend import RawOutcome
from rar_opt.solvers.record import SolveRecord
from rar_opt.solvers.status import Status
from rar_opt.support.processes import stop_requested
from rar_opt.support.provenance import versions

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SolveResult:
    """One solve: our status, the schedule read back (re-simulated), and the numbers."""

    status: Status
    schedule: Schedule | None
    objective: float | None  # the incumbent's value: the simulator's where the model's overstates it
    bound: float | None  # best proven bound
    gap: float | None  # (objective - bound) / |objective|
    makespan: int | None  # of the schedule, from the simulator
    avg_jct: float | None
    completion: list[int] | None
    build_s: float
    solver_s: float | None
    wall_s: float
    formulation: str
    solver: dict[str, Any]
    record: SolveRecord  # how it came about: options, settings, phases, proof (typed)
    model_size: dict[str, int] = field(default_factory=dict)
    handoff_s: float | None = None  # translating the model for the solver
    termination: str = ""  # the solver's raw termination
    message: str = ""

    @property
    def options(self) -> dict[str, Any]:
        """The record as JSON-ready values (the ``options`` of every result file)."""
        return self.record.to_dict()

    def to_dict(self) -> dict[str, Any]:
        """Every field but the schedule, as JSON-ready values (the one name every result type
        has; :meth:`summary` is the same)."""
        return self.summary()

    def summary(self) -> dict[str, Any]:
        """Every field but the schedule, as JSON-ready values."""
        return {
            "status": str(self.status),
            "objective": self.objective,
            "bound": self.bound,
            "gap": self.gap,
            "makespan": self.makespan,
            "avg_jct": self.avg_jct,
            "completion": self.completion,
            "runtime_s": self.wall_s,
            "build_s": self.build_s,
            "solver_s": self.solver_s,
            "handoff_s": self.handoff_s,
            "formulation": self.formulation,
            "solver": self.solver,
            "options": self.options,
            "model_size": self.model_size,
            "termination": self.termination,
            "message": self.message,
        }


def result_meta(method: str, status: Status, options: Mapping[str, Any], solver: Mapping[str, Any]) -> dict[str, Any]:
    """The ``meta`` of a schedule an exact method hands out, and so of the file ``solve -o``
    or ``probe -o`` writes: the method that found the schedule, the run's status, its options
    (what was asked, and how the run went), the solver, and the versions of the code."""
    return {
        "method": method,
        "status": str(status),
        "options": dict(options),
        "solver": dict(solver),
        "versions": versions(),
    }


def gap(objective: float | None, bound: float | None) -> float | None:
    """Relative gap |objective - bound| / |objective|; None without both (or an infinite bound)."""
    if objective is None or bound is None or not math.isfinite(bound):
        return None
    return abs(objective - bound) / max(abs(objective), 1e-9)


INTEGRAL_TOL = 1e-6
"""Relative distance within which a solver's objective or bound is read as the integer next
to it: every objective of our models is integral in the model's units (slots, sums of
slots, K sum_j w_j C_j, the lexicographic M max_j C_j + sum_j C_j), and a MILP solver's
905.9999 is 906 within its feasibility tolerances."""


def integral(value: float | None) -> float | None:
    """``value`` as the integer next to it when within :data:`INTEGRAL_TOL` (relative), else
    as it is (a fractional bound stays fractional)."""
    if value is None or not math.isfinite(value):
        return value
    near = round(value)
    return float(near) if abs(value - near) <= INTEGRAL_TOL * max(1.0, abs(value)) else value


def finish(
    instance: Instance,
    formulation: Any,
    model: pyo.ConcreteModel | None,
    raw: RawOutcome,
    *,
    record: SolveRecord,
    build_s: float,
    wall_s: float,
    incumbent: Schedule | None = None,
) -> SolveResult:
    """Turn a backend's outcome into a :class:`SolveResult`: read the schedule back (or take
    ``incumbent``, a schedule found outside the model, e.g. by a heuristic), check and
    re-simulate it, and record versions and the run's record. The same for every backend."""
    status, message = raw.status, raw.message
    signum = stop_requested()
    if signum is not None and status in (Status.FEASIBLE, Status.NO_SOLUTION, Status.INTERRUPTED):
        # a signal, not a limit, ended it before a proof: never reported as a time limit
        status = Status.INTERRUPTED
        record = dataclasses.replace(record, interrupted=signal.Signals(signum).name)
    schedule = None
    makespan = avg = completion = None
    if raw.has_solution and (model is not None or incumbent is not None):
        read = incumbent if incumbent is not None else formulation.read_schedule(model, instance)
        schedule = Schedule.from_arrays(
            instance.name,
            read.start_array,
            read.placement_array,
            meta=result_meta(
                (read.meta.get("method") if incumbent is not None else None)
                or f"{formulation.name}-{formulation.problem}",
                status,
                record.to_dict(),
                raw.solver,
            ),
        )
        report = check(instance, schedule)
        if report.feasible:
            makespan, avg = report.result.makespan, report.result.avg_jct
            completion = [int(c) for c in report.result.completion]
        else:  # never hand out a schedule the checker rejects
            log.error("solver schedule violates %s", sorted(report.names()))
            status, schedule = Status.ERROR, None
            message = "read-back schedule failed the checker: " + "; ".join(str(v) for v in report.violations[:3])
    objective, bound = integral(raw.objective), integral(raw.bound)
    if completion is not None and incumbent is None and objective is not None:
        judged = schedule_objective(model, instance, completion)
        if judged is not None and judged < objective:  # the model's value may overstate its schedule's
            objective = float(judged)
    return SolveResult(
        status=status,
        schedule=schedule,
        objective=objective,
        bound=bound,
        gap=gap(objective, bound),
        makespan=makespan,
        avg_jct=avg,
        completion=completion,
        build_s=build_s,
        solver_s=raw.solver_s,
        wall_s=wall_s,
        formulation=formulation.name,
        solver=raw.solver,
        record=record,
        model_size=raw.model_size,
        handoff_s=raw.handoff_s,
        termination=raw.termination,
        message=message,
    )


def schedule_objective(model: Any, instance: Instance, completion: list[int]) -> int | None:
    """The value of a read-back schedule under ``model``'s objective, from the simulator's
    completion times: the makespan, the total or the flow time (None for the objectives
    whose value needs the model's scale, weighted and lexicographic, and for a model not
    built here). A model's value at its incumbent is an upper bound on it, not always the
    value itself: a split job's duration is free above what it needs (docs/exactness.md,
    direction 2), so the model may count it as ending later than it does. The schedule's own
    value is what the user gets, and what the objective and the gap report."""
    data = getattr(model, "rar", None)
    kind = getattr(getattr(data, "options", None), "objective", None) if data is not None else None
    if kind == "makespan":
        return max(completion)
    if kind == "total":
        return sum(completion)
    if kind == "flow":
        return sum(completion) - int(instance.releases.sum())
    return None


def read_back(instance: Instance, schedule: Schedule, method: str) -> tuple[Schedule, int] | None:
    """A schedule read back from a model, judged: stamped with ``method`` and with its
    makespan from the simulator, or None when the checker rejects it (or it never ends).
    The one place a model's schedule becomes a result's (phases, probes, :func:`finish`)."""
    report = check(instance, schedule)
    if not report.feasible or report.result.makespan is None:
        return None
    return schedule.with_meta({**schedule.meta, "method": method}), int(report.result.makespan)


def restamp(result: SolveResult, **changes: Any) -> SolveResult:
    """``result`` with ``changes`` (a new ``status``, ``record``, ``bound`` ...): the gap is
    recomputed and the schedule's meta follows the new status and record."""
    new = dataclasses.replace(result, **changes)
    new = dataclasses.replace(new, gap=gap(new.objective, new.bound))
    if new.schedule is not None:
        meta = {**new.schedule.meta, "status": str(new.status), "options": new.record.to_dict()}
        new = dataclasses.replace(new, schedule=new.schedule.with_meta(meta))
    return new
