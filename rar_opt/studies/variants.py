"""The variants table: every model spec on every instance, side by side (docs/variants.md).

For each (instance, spec) one :class:`VariantRow`: the model's size (variables by type,
rows, nonzeros), its build time, its LP bound (the model with every integer variable
relaxed), its root bound (HiGHS stopped after the root node: presolve, cuts and root
heuristics included), its final bound, the objective of its schedule, the status and the
solve time. Exact variants go through :func:`rar_opt.solvers.solve` (schedule read back,
checked, re-simulated); relaxations are solved as models and report a bound only, with
the status ``bound`` (solved: the value is a proven lower bound) or ``bound-limit`` (a
limit stopped it: the value is still a lower bound, a weaker one). A relaxation never
yields a schedule and never the status ``optimal``. A signal (Ctrl-C, SIGTERM:
:func:`rar_opt.support.processes.stop_requested`) stops each solve here at its next safe
point, the root bound's included, and a row it stopped is ``interrupted``, never a limit's
status; no solve starts after it.

Two checks a reader should not have to do by eye (:func:`disagreements`): exact variants
of the same objective that prove different optima, and a relaxation whose bound exceeds
a proven optimum of the makespan. Either is a bug somewhere, and is flagged loudly.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import signal
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pyomo.environ as pyo
from pyomo.util.vars_from_expressions import get_vars_from_components

from rar_opt.errors import InputError
from rar_opt.formulations import formulation
from rar_opt.formulations.relax import lp_relaxation
from rar_opt.formulations.specs import ModelSpec, build_model
from rar_opt.instance import Instance
from rar_opt.solvers import Status, solve, solve_model
from rar_opt.solvers.solve import missing_backend
from rar_opt.support.processes import stop_requested
from rar_opt.support.provenance import provenance, versions

log = logging.getLogger(__name__)

EXACT, RELAXATION = "exact", "relaxation"
BOUND, BOUND_LIMIT, REFUSED = "bound", "bound-limit", "refused"


@dataclass(frozen=True)
class VariantRow:
    """One spec on one instance (see the module docstring); None where a value does not apply."""

    instance: str
    spec: str
    formulation: str
    kind: str  # exact or relaxation
    objective_kind: str  # the objective the values are in (makespan, total, weighted, lexicographic)
    variables: dict[str, int] = field(default_factory=dict)  # binary, integer, continuous
    rows: int | None = None
    nonzeros: int | None = None
    build_s: float | None = None
    lp_bound: float | None = None
    root_bound: float | None = None
    bound: float | None = None  # the final bound
    objective: float | None = None  # of the schedule found (exact variants only)
    makespan: int | None = None  # of that schedule, by the simulator
    status: str = ""
    solve_s: float | None = None
    message: str = ""
    flag: str = ""  # set by :func:`disagreements`

    def to_dict(self) -> dict[str, Any]:
        """The row as JSON-ready values."""
        return dataclasses.asdict(self)


def measure(spec: ModelSpec, instance: Instance, *, time_limit: float | None = None, seed: int = 0) -> VariantRow:
    """The row of ``spec`` on ``instance``; a model too large or not applicable is a row with
    the status ``refused`` and the reason, not an error.

    ``time_limit`` is per step, not for the call: the build is not timed, and the LP
    relaxation, the root node and the solve each get up to ``time_limit`` seconds, so a row
    may take several times it (the enumerative model's build alone can take a minute on a
    4-job instance). ``solve(..., time_limit=...)`` is the call that keeps to its limit."""
    options = spec.make_options()
    kind = RELAXATION if spec.relaxation != "none" else EXACT
    objective = getattr(options, "objective", "makespan")
    if getattr(options, "horizon", None) is not None:  # a shorter horizon may change the optimum of a sum
        objective += f" (horizon {options.horizon})"
    row = VariantRow(instance.name, spec.name, spec.formulation, kind, objective)
    if kind == EXACT and (missing := missing_backend(spec.formulation)) is not None:  # e.g. SCIP not installed
        return dataclasses.replace(row, status=REFUSED, message=missing)
    began = time.perf_counter()
    try:
        model = build_model(spec, instance)
    except InputError as exc:
        return dataclasses.replace(row, status=REFUSED, message=exc.message)
    row = dataclasses.replace(row, build_s=time.perf_counter() - began)
    if isinstance(model, pyo.Block):
        row = _pyomo_measures(row, model, time_limit, seed)
    else:  # a CP-SAT model: its size from the proto; no LP or root bound
        proto = model.model.proto
        row = dataclasses.replace(row, variables={"integer": len(proto.variables)}, rows=len(proto.constraints))
    if (signum := stop_requested()) is not None:  # a signal during the measures: no solve is started after it
        message = f"the solve was not started: {signal.Signals(signum).name} asked to stop"
        return dataclasses.replace(row, status=str(Status.INTERRUPTED), message=message)
    if kind == RELAXATION:
        return _relaxed(row, model, spec, time_limit, seed)
    res = solve(instance, spec.formulation, time_limit=time_limit, seed=seed, **spec.options)
    return dataclasses.replace(
        row,
        bound=res.bound,
        objective=res.objective,
        makespan=res.makespan,
        status=str(res.status),
        solve_s=res.solver_s if res.solver_s is not None else res.wall_s,
        message=res.message,
    )


def _pyomo_measures(row: VariantRow, model: pyo.Block, time_limit: float | None, seed: int) -> VariantRow:
    """Size by variable type, rows and nonzeros (HiGHS' count), the LP bound and the root bound."""
    counts = {"binary": 0, "integer": 0, "continuous": 0}
    for var in get_vars_from_components(model, (pyo.Constraint, pyo.Objective), active=True, include_fixed=False):
        counts["binary" if var.is_binary() else "integer" if var.is_integer() else "continuous"] += 1
    integral = counts["binary"] + counts["integer"] > 0
    if not _linear(model):  # products of variables: no LP to speak of, and HiGHS cannot take it
        return dataclasses.replace(row, variables=counts)
    lp = solve_model(lp_relaxation(model) if integral else model.clone(), time_limit=time_limit, seed=seed)
    row = dataclasses.replace(
        row,
        variables=counts,
        rows=lp.model_size.get("rows"),
        nonzeros=lp.model_size.get("nonzeros"),
        lp_bound=_bound_of(lp),
    )
    if integral:
        row = dataclasses.replace(row, root_bound=root_bound(model, time_limit=time_limit, seed=seed))
    else:  # an LP: its root is its optimum
        row = dataclasses.replace(row, root_bound=row.lp_bound)
    return row


def _linear(model: pyo.Block) -> bool:
    """Whether every active row and the objective are linear (polynomial degree at most 1)."""
    parts = model.component_data_objects((pyo.Constraint, pyo.Objective), active=True, descend_into=True)
    return all((part.body if hasattr(part, "body") else part.expr).polynomial_degree() in (0, 1) for part in parts)


def _relaxed(row: VariantRow, model: Any, spec: ModelSpec, time_limit: float | None, seed: int) -> VariantRow:
    """Solve a relaxation as a model: a bound, never a schedule."""
    backend = "cpsat" if formulation(spec.formulation).problem == "cp" or not isinstance(model, pyo.Block) else "highs"
    raw = solve_model(model, backend, time_limit=time_limit, seed=seed)
    bound = _bound_of(raw)
    if raw.status == Status.INFEASIBLE:
        status = str(Status.INFEASIBLE)  # even the relaxation has no point: the horizon is too short
    elif raw.status == Status.INTERRUPTED or stop_requested() is not None:  # a signal, not a limit
        status = str(Status.INTERRUPTED)
    elif bound is None:
        status = str(Status.NO_SOLUTION) if raw.status != Status.ERROR else str(Status.ERROR)
    else:
        status = BOUND if raw.status == Status.OPTIMAL else BOUND_LIMIT
    return dataclasses.replace(row, bound=bound, status=status, solve_s=raw.solver_s, message=raw.message)


def _bound_of(raw: Any) -> float | None:
    """The proven lower bound of a solve: its bound, or its objective when solved to optimality."""
    if raw.status == Status.OPTIMAL:
        return max(v for v in (raw.objective, raw.bound) if v is not None)
    return raw.bound


def root_bound(model: pyo.Block, *, time_limit: float | None = None, seed: int = 0) -> float | None:
    """HiGHS' dual bound after the root node of ``model`` (mip_max_nodes = 1).

    Our solver layer's options have no node limit, so the model is handed to HiGHS here,
    with the backend's thread count (1) and seed; the run itself is the backend's
    (:class:`rar_opt.solvers.appsi_highs.HighsRun`), so that a stop request (Ctrl-C, SIGTERM)
    interrupts it at HiGHS' next callback, as it does any other HiGHS solve, and does not
    wait for the root node or ``time_limit`` to end. A stopped run gives the bound it had
    reached (None before any); the caller labels the row ``interrupted``."""
    from pyomo.contrib.appsi.solvers import Highs

    from rar_opt.solvers.appsi_highs import HighsRun, settle_abandoned

    if stop_requested() is not None:  # a signal came before: no solve is started after it
        return None
    opt = Highs()
    opt.config.load_solution = False
    try:
        opt.set_instance(model)
        deadline = None if time_limit is None else time.perf_counter() + float(time_limit)
        if not settle_abandoned(deadline):  # an earlier HiGHS, asked to stop, still running
            return None
        highs: Any = opt._solver_model
        options: dict[str, Any] = {"output_flag": True, "log_to_console": False}  # the log goes to HighsRun's logger
        options.update(mip_max_nodes=1, threads=1, random_seed=int(seed))
        if time_limit is not None:
            options["time_limit"] = float(time_limit)
        for key, value in options.items():
            highs.setOptionValue(key, value)
        run = HighsRun(highs, deadline)
        if not run.finished():  # left to end in its thread: the bound it last announced
            bound = run.bound
        elif run.error is not None:
            raise run.error
        else:
            bound = float(highs.getInfo().mip_dual_bound)
    except Exception as exc:  # a failure here costs the column, not the table
        log.warning("root bound not measured: %s: %s", type(exc).__name__, exc)
        return None
    return bound if bound is not None and math.isfinite(bound) else None


def disagreements(rows: Sequence[VariantRow]) -> tuple[list[VariantRow], list[str]]:
    """The rows with their flags set, and one loud message per problem: exact variants of
    one objective on one instance proving different optima, or a relaxation's bound above
    a proven optimal makespan."""
    optima: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
    for r in rows:
        if r.kind == EXACT and r.status == str(Status.OPTIMAL) and r.objective is not None:
            optima[r.instance, r.objective_kind][r.spec] = r.objective
    messages, flagged = [], []
    for r in rows:
        flag = ""
        found = optima.get((r.instance, r.objective_kind), {})
        if r.kind == EXACT and r.spec in found and len({round(v, 6) for v in found.values()}) > 1:
            flag = "DISAGREE"
            messages.append(f"{r.instance}: exact variants disagree on the {r.objective_kind} optimum: {found}")
        if r.kind == RELAXATION and r.bound is not None and found:
            best = min(found.values())
            if r.bound > best + 1e-6:
                flag = "BOUND ABOVE OPTIMUM"
                messages.append(f"{r.instance}: {r.spec}'s bound {r.bound} exceeds the proven optimum {best}")
        flagged.append(dataclasses.replace(r, flag=flag))
    return flagged, sorted(set(messages))


def summary(
    rows: Sequence[VariantRow],
    messages: Sequence[str],
    specs: Sequence[ModelSpec],
    *,
    time_limit: float | None,
    seed: int,
) -> dict[str, Any]:
    """The table as a JSON-ready result: rows, flags, specs, limit, seed, solver options, versions."""
    return {
        "rows": [r.to_dict() for r in rows],
        "disagreements": list(messages),
        "specs": {s.name: {"formulation": s.formulation, "options": s.options} for s in specs},
        "time_limit": time_limit,
        "seed": seed,
        "solver_options": {"threads": 1, "seed": seed, "root_bound": {"mip_max_nodes": 1}},
        "versions": versions(),
        "provenance": provenance(),
    }
