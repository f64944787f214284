"""The bound side of ``auto`` for the sums (:mod:`rar_opt.solvers.sums`): its floor, its
relaxations, and why the full model is left out.

Every bound comes from the bounds registry (:mod:`rar_opt.bounds.registry`), asked on the
total completion time's scale; the flow time is the total less the constant sum_j r_j
(``shift``), so each value is recorded and returned less ``shift`` (docs/exactness.md,
"`auto` for the total completion and flow time").
"""

from __future__ import annotations

import time
from typing import Any

from rar_opt.bounds import registry
from rar_opt.formulations import cpsat
from rar_opt.instance import Instance
from rar_opt.solvers.budget import Budget
from rar_opt.solvers.record import PhaseKind, PhaseRecord
from rar_opt.solvers.status import Status


def why_no_model(instance: Instance) -> str | None:
    """Why the full CP-SAT model is left out for ``instance`` (a topology, or more cells
    than its guard over the horizon), or None when it fits."""
    if instance.time_model.links is not None:
        return "skipped: the CP-SAT model counts contention per server (the cluster has a topology)"
    cells = cpsat.count_cells(instance, instance.horizon)
    limit = cpsat.Options().max_cells
    if cells > limit:
        return f"skipped: the CP-SAT model would have {cells:,} split-job x server x slot cells (limit {limit:,})"
    return None


def floor(instance: Instance, phases: list[PhaseRecord], shift: int) -> int:
    """The cheap bounds on the total completion time, recorded (a floor phase appended to
    ``phases``) and returned on the objective's scale: less ``shift``."""
    began = time.perf_counter()
    values = {b.name: b.value - shift for b in registry.cheap(instance, "total") if b.value is not None}
    best = max(values.values(), default=-shift)
    phases.append(
        PhaseRecord(PhaseKind.FLOOR, Status.BOUND, None, float(best), time.perf_counter() - began, floors=values)
    )
    return best


def nothing_fits(instance: Instance, phases: list[PhaseRecord]) -> str | None:
    """Where no heuristic's schedule ends within the horizon: why none can (the cheap
    makespan floor past the horizon, recorded as a floor phase), or None."""
    began = time.perf_counter()
    values = {b.name: b.value for b in registry.cheap(instance) if b.value is not None}
    span = max(values.values(), default=0)
    if span <= instance.horizon:
        return None
    phases.append(
        PhaseRecord(PhaseKind.FLOOR, Status.INFEASIBLE, None, float(span), time.perf_counter() - began, floors=values)
    )
    return f"the makespan floor {span:g} is past the horizon of {instance.horizon} slots: nothing fits"


def relaxations(
    instance: Instance,
    phases: list[PhaseRecord],
    seconds: float,
    budget: Budget,
    options: dict[str, Any],
    shift: int,
) -> tuple[int, tuple[int, ...] | None]:
    """Every solver bound on the total completion time of the registry, within ``seconds``
    in all (shared equally, at least half a second each): the best value, and the list
    order the best of them suggests (if any). Each is a relaxation phase appended to
    ``phases``; values are on the objective's scale (less ``shift``), the bounds
    themselves are asked on the total's."""
    solvers = [b for b in registry.entries("total", families=("solver",)) if b.applies is None or b.applies(instance)]
    if not solvers:
        return -shift, None
    each = seconds / len(solvers)
    best, order = -shift, None
    for bound in solvers:
        known = (p.bound for p in phases if p.kind in (PhaseKind.FLOOR, PhaseKind.RELAXATION))
        lowest = max((int(b) + shift for b in known if b is not None), default=0)  # on the total's scale
        found = bound.compute(instance, registry.Ask(max(each, 0.5), budget.seed, lowest, options))
        status = Status.BOUND if found.value is not None else Status.NO_SOLUTION
        value = None if found.value is None else float(found.value - shift)
        phases.append(PhaseRecord(PhaseKind.RELAXATION, status, value, value, found.seconds, search=bound.name))
        if found.value is not None and found.value - shift >= best:
            best, order = found.value - shift, found.order or order
    return best, order
