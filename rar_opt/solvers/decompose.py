"""The contention-free decomposition: a relaxation for the bound, a restriction for the
schedule, and the full CP-SAT model only when the two do not meet.

1. Relaxation (:mod:`rar_opt.formulations.cfree`, ``restrict=False``) on CP-SAT: its bound
   is a lower bound on OPT; if it is infeasible, so is the instance within its horizon.
2. Restriction (``restrict=True``): a schedule whose true makespan (re-simulated) equals
   the model's. If it meets the relaxation's bound, it is optimal: proven.
3. Otherwise the full CP-SAT model runs over the restriction's makespan as horizon, with
   its schedule as the start, for the time that is left; its bound and the relaxation's
   are combined (the larger is proven).

Every phase's status, bound and seconds are recorded in the result's options.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Any

from ..check import check
from ..formulations import cfree, cpsat
from ..formulations import formulation as get_formulation
from ..instance import Instance
from .backend import RawOutcome, SolveOptions
from .cpsat import Cpsat
from .result import SolveResult, finish, gap
from .status import Status


def decompose(instance: Instance, *, time_limit: float | None = None, seed: int = 0, threads: int = 1) -> SolveResult:
    """Solve ``instance`` by the decomposition (see the module docstring)."""
    wall0 = time.perf_counter()
    engine = Cpsat()
    phases: list[dict[str, Any]] = []

    def left() -> float | None:
        return None if time_limit is None else max(time_limit - (time.perf_counter() - wall0), 0.05)

    def run(model: Any, name: str, share: float = 1.0) -> Any:
        limit = left()
        settings = SolveOptions(time_limit=None if limit is None else limit * share, threads=threads, seed=seed)
        began = time.perf_counter()
        raw = engine.solve(model, settings)
        phases.append(
            {
                "phase": name,
                "status": str(raw.status),
                "objective": raw.objective,
                "bound": raw.bound,
                "seconds": round(time.perf_counter() - began, 3),
            }
        )
        return raw

    relaxation = cfree.build(instance, cfree.Options(restrict=False))
    relaxed = run(relaxation, "relaxation", 0.3)
    bound = relaxed.objective if relaxed.status == Status.OPTIMAL else relaxed.bound
    record: dict[str, Any] = {
        "formulation": "decompose",
        "backend": engine.name,
        "time_limit": time_limit,
        "seed": seed,
        "threads": threads,
        "phases": phases,
        "horizon": instance.horizon,
    }

    def done(model: Any, outcome: RawOutcome) -> SolveResult:
        """The shared finish: the schedule read back, checked and re-simulated, with the phases."""
        return finish(
            instance,
            get_formulation("cpsat"),
            model,
            outcome,
            options=record,
            build_s=0.0,
            wall_s=time.perf_counter() - wall0,
        )

    if relaxed.status == Status.INFEASIBLE:  # even without contention nothing fits in T
        record["proved_by"] = "relaxation"
        return done(None, relaxed)
    restriction = cfree.build(instance, cfree.Options(restrict=True))
    restricted = run(restriction, "restriction", 0.5)
    schedule = cpsat.read_schedule(restriction, instance) if restricted.has_solution else None
    span = check(instance, schedule).result.makespan if schedule is not None else None
    if span is not None and restricted.objective is not None and span != round(restricted.objective):
        raise RuntimeError(f"the restriction's makespan {restricted.objective} is not its schedule's {span}")
    if span is not None and bound is not None and span <= math.ceil(bound - 1e-9):
        record["proved_by"] = "decomposition"
        outcome = RawOutcome(
            Status.OPTIMAL,
            has_solution=True,
            objective=float(span),
            bound=float(span),
            solver_s=restricted.solver_s,
            model_size=restricted.model_size,
            termination="the restriction met the relaxation's bound",
            solver=restricted.solver,
        )
        return done(restriction, outcome)
    horizon = span if span is not None else instance.horizon
    full = cpsat.build(instance, cpsat.Options(horizon=horizon))
    if schedule is not None:
        cpsat.set_start(full, instance, schedule)
    raw = run(full, "full cp-sat")
    if not raw.has_solution and schedule is not None:  # no time left to improve: keep the restriction's
        model, raw = (
            restriction,
            RawOutcome(
                Status.FEASIBLE,
                has_solution=True,
                objective=float(span or 0),
                solver_s=restricted.solver_s,
                termination="the full model found nothing better in time",
                solver=restricted.solver,
            ),
        )
    else:
        model = full
    best_bound = (
        max(b for b in (bound, raw.bound) if b is not None) if (bound is not None or raw.bound is not None) else None
    )
    if raw.status == Status.OPTIMAL:
        record["proved_by"] = "full cp-sat"
    record["horizon"] = horizon
    result = done(model, raw)
    return dataclasses.replace(result, bound=best_bound, gap=gap(result.objective, best_bound))
