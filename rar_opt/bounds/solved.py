"""The lower bounds that solve a relaxation: each takes ``(instance, Ask)`` and returns an
:class:`~rar_opt.bounds.registry.Answer`. The registry (:mod:`rar_opt.bounds.registry`)
names them and loads this module only when one is asked for, since it imports the solver
layer. Each relaxation and why it bounds the optimum is argued in docs/exactness.md. The
solvers are called through their modules, at call time.
"""

from __future__ import annotations

import numpy as np

from rar_opt import solvers
from rar_opt.bounds.registry import Answer, Ask
from rar_opt.formulations import enumerative
from rar_opt.instance import Instance
from rar_opt.solvers import Status, solve_model
from rar_opt.solvers import flowlp as lp


def relaxation(instance: Instance, ask: Ask) -> Answer:
    """The contention-free relaxation's optimum, or CP-SAT's bound on it at the time limit."""
    found = solvers.relaxation_bound(instance, time_limit=ask.time_limit, seed=ask.seed)
    if found.status == Status.INFEASIBLE:  # not even without contention does anything end by T
        why = f"the relaxation has no schedule within the horizon T = {instance.horizon}: nothing fits"
        return Answer(instance.horizon + 1, True, why)
    if found.bound is None:
        return Answer(None, None, f"nothing proven in {ask.time_limit:g} s ({found.status})")
    stopped = "stopped by a signal" if found.status == Status.INTERRUPTED else "time limit"
    note = "the relaxation's optimum" if found.proven else f"CP-SAT's bound on the relaxation ({stopped})"
    return Answer(found.bound, found.proven, note)


def server_bins(instance: Instance, ask: Ask) -> Answer:
    """The GPU-bins relaxation with servers, asked upward from the best cheap bound."""
    binned = solvers.gpu_bins_bound(instance, ask.floor, time_limit=ask.time_limit, seed=ask.seed)
    asked = ", ".join(f"{slot}: {answer}" for slot, answer in binned.asked)
    if not asked:  # the floor it starts from is already past the horizon
        asked = f"nothing: the floor {ask.floor} is past the horizon T = {instance.horizon}"
    note = binned.note or f"GPU bins that know their servers, splits priced (CP-SAT; asked {asked})"
    return Answer(binned.bound, None, note)


def flow_lp(instance: Instance, ask: Ask) -> Answer:
    """The time-indexed LP on the total completion time (docs/exactness.md, "The flow LP"):
    the ceiling of its optimum, or of the best Lagrangian value met by the time limit, and
    never below the best bound before it (``ask.floor``). The order it suggests lists the
    jobs by their mean start in the LP's optimum (when it was solved)."""
    found = lp.flow_lp_bound(instance, time_limit=ask.time_limit, seed=ask.seed, floor=ask.floor or None)
    order = None
    if found.mean_starts is not None:
        order = tuple(int(j) for j in np.argsort(np.array(found.mean_starts), kind="stable"))
    stopped = f" ({found.note})" if found.note else ""
    how = {"lp": "the LP's optimum", "lagrangian": f"a Lagrangian value{stopped}", "floor": "the floor was larger"}
    note = f"time-indexed LP on the GPU pool with server classes: {how.get(found.method, found.method)}"
    return Answer(found.total, found.proven, note, order)


def load(instance: Instance, ask: Ask) -> Answer:
    """The load ILP (14)-(16) by bisection; it enumerates every schedule with starts up to
    ``ask.options["max_start"]`` (required), so it is for tiny instances only."""
    max_start = ask.options.get("max_start")
    if not isinstance(max_start, int):
        return Answer(None, None, "not computed: the load ILP needs options {'max_start': int}")
    theta = load_bound(instance, max_start, time_limit=ask.time_limit)
    return Answer(theta, None, f"tightest theta of the load ILP (starts <= {max_start})")


def load_bound(instance: Instance, max_start: int, time_limit: float | None = 60.0) -> int | None:
    """The tightest integer theta for which the load ILP (14)-(16) is feasible, by
    bisection over [1, max_start + max rho_max]; None when a solve is inconclusive."""
    enumerated = enumerative.enumerate_schedules(instance, max_start=max_start)
    left, right = 1, int(enumerated.completion.max())  # the schedules' makespans are all feasible thetas
    best = right
    while left <= right:
        theta = (left + right) // 2
        status = solve_model(enumerative.build_load(instance, enumerated, theta), time_limit=time_limit).status
        if status in (Status.OPTIMAL, Status.FEASIBLE):
            best, right = theta, theta - 1
        elif status == Status.INFEASIBLE:
            left = theta + 1
        else:
            return None
    return best
