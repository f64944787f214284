"""Certified lower bounds on sum_j C_j and sum_j (C_j - r_j) from the flow LP.

The LP of :mod:`rar_opt.formulations.flowlp` is solved by column generation on HiGHS
(highspy directly, arrays in CSC form, one thread): the master holds the capacity rows of
every resource and slot and one row per job; its columns are (kind, start) pairs; pricing
is exact and cheap (each kind's cost at every start from prefix sums of the capacity
rows' prices). The master starts with an artificial column per job (cost ``BIG``, no
capacity) and the columns of a greedy list schedule of the relaxation.

What is reported is never the master's primal objective (an upper bound on the LP until
the pricing finds no column). It is the Lagrangian bound at the capacity prices
(docs/exactness.md, "The flow LP"): for any prices lambda >= 0 on the capacity rows,

    L(lambda) = sum_j min over the kinds k of j and starts t >= r_j of
                    (t + d_k + sum_q u[k, q] sum_{tau in [t, t + d_k)} lambda[q, tau])
                - sum_q capacity[q] sum_tau lambda[q, tau]

is at most the total completion time of every feasible schedule: a schedule gives each
job one kind and start (its mode and a_j) whose columns satisfy every capacity row, so
adding lambda times the (non-positive) slack of those rows to its sum of C_j >= a_j + d_k
only lowers it, and the result is at least L(lambda). The starts range over all t >= r_j
(past the rows, lambda is 0), so the bound does not rely on the horizon. At the LP's
optimal prices L equals the LP's optimum (the Lagrangian dual of the capacity rows is the
LP: each job's subproblem is a choice of one column). The prices are rounded down to
multiples of 2^-S and L is computed in integers, so the value is exact and the bound is
its integer ceiling (sum_j C_j is an integer). A time limit only stops the loop: the best
L found so far is still a bound.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import highspy
import numpy as np

from rar_opt.formulations import flowlp
from rar_opt.instance import Instance

log = logging.getLogger(__name__)

__all__ = ["FlowBound", "flow_lp_bound", "lagrangian_bound"]

SCALE_BITS = 24
"""Prices are rounded down to multiples of 2^-SCALE_BITS before L is evaluated in integers."""

REDUCED_COST_TOL = 1e-7
"""A column enters the master when its reduced cost is below minus this."""

MAX_COLUMNS = 1_000_000
"""Column generation adds no column beyond this many in the master (its memory); the bound
is then the best Lagrangian value met, as at a time limit (about 440 MB held 310,000
columns at 100 times the paper)."""

METHODS = ("colgen", "full")
FORMS = ("events", "dense")


@dataclass(frozen=True)
class FlowBound:
    """A certified lower bound on the total completion and the total flow time."""

    total: int  # sum_j C_j >= total for every feasible schedule
    flow: int  # sum_j (C_j - r_j) >= flow: total less sum_j r_j
    jobs: int
    seconds: float
    method: str  # how ``total`` was proven: "lp" (the LP's optimum), "lagrangian" (prices short of it), "floor"
    proven: bool  # True: ``total`` is the ceiling of the LP's optimum (solved to optimality)
    lp_value: float | None  # the LP's optimum when proven, else the best Lagrangian value (unrounded)
    classes: bool  # asked: the server classes and the split times
    time_limit: float | None  # asked
    seed: int  # asked
    solver: str  # asked: "colgen" or "full"
    iterations: int = 0  # master solves
    columns: int = 0  # columns in the last master (its load and artificial columns included)
    note: str = ""
    floor: int | None = None  # asked: a bound proven elsewhere, kept when larger
    resources: tuple[str, ...] = field(default=())
    mean_starts: tuple[float, ...] | None = None  # proven only: per job sum_t t x[j, t] in the LP's optimum

    @property
    def mean_completion(self) -> float:
        """On the average completion time (the simulator's average JCT)."""
        return self.total / self.jobs

    @property
    def mean_flow(self) -> float:
        """On the average flow time."""
        return self.flow / self.jobs


# -- the Lagrangian bound -----------------------------------------------------------------
def _kind_costs(lp: flowlp.FlowLp, k: int, prefix: np.ndarray, one: int | float) -> tuple[np.ndarray, np.ndarray]:
    """Kind k's cost at every start t in [r_k, slots]: (starts, (t + d) * one + u . W(t)).

    ``prefix`` is (Q, slots + 1): prefix[q, x] = sum of the prices of slots < x; a window
    that runs past the rows is cut there (its prices are 0). Integer or float, as ``prefix``."""
    d = int(lp.duration[k])
    t = np.arange(int(lp.release[k]), lp.slots + 1, dtype=np.int64)
    end = np.minimum(t + d, lp.slots)
    cost = (t + d) * one
    for q in np.flatnonzero(lp.usage[k]).tolist():
        cost = cost + int(lp.usage[k, q]) * (prefix[q, end] - prefix[q, t])
    return t, cost


def _scaled_prices(lp: flowlp.FlowLp, prices: np.ndarray) -> tuple[np.ndarray, int]:
    """Prices >= 0 rounded down to integers in units of 2^-bits, bits chosen so that every
    sum below fits in int64 with room to spare."""
    prices = np.nan_to_num(np.maximum(np.asarray(prices, dtype=float), 0.0), nan=0.0, posinf=0.0)
    top = float(prices.sum()) * float(lp.capacity.max()) + float(lp.slots + lp.duration.max())
    bits = SCALE_BITS
    while bits > 0 and top * lp.num_jobs * 2.0 ** (bits + 2) >= 2.0**62:
        bits -= 1
    if top * lp.num_jobs * 4.0 >= 2.0**62:  # absurd prices (a failed solve): zero prices are as valid
        return np.zeros(prices.shape, dtype=np.int64), bits
    return np.floor(prices * 2.0**bits).astype(np.int64), bits


def lagrangian_bound(lp: flowlp.FlowLp, prices: np.ndarray) -> tuple[int, float]:
    """The Lagrangian bound at capacity prices ``prices`` (Q x slots, negatives read as 0):
    (ceil of L, L as a float). Exact: L is computed in integers from the rounded-down prices."""
    scaled, bits = _scaled_prices(lp, np.asarray(prices).reshape(lp.num_resources, lp.slots))
    one = 1 << bits
    prefix = np.concatenate([np.zeros((lp.num_resources, 1), dtype=np.int64), np.cumsum(scaled, axis=1)], axis=1)
    best = np.full(lp.num_jobs, np.iinfo(np.int64).max, dtype=np.int64)
    for k in range(lp.num_kinds):
        _, cost = _kind_costs(lp, k, prefix, one)
        j = int(lp.job[k])
        best[j] = min(best[j], int(cost.min()))
    value = sum(int(v) for v in best) - sum(int(c) * int(p) for c, p in zip(lp.capacity, prefix[:, -1], strict=True))
    return -(-value // one), value / one


# -- column generation ---------------------------------------------------------------------
def _greedy(lp: flowlp.FlowLp) -> tuple[list[int], list[int]]:
    """A list schedule of the relaxation (shortest kind first, earliest fitting start), as columns."""
    load = np.zeros((lp.num_resources, lp.slots), dtype=np.int64)
    last = lp.last_start()
    kinds, starts = [], []
    order = np.lexsort((lp.duration, lp.release))
    done = np.zeros(lp.num_jobs, dtype=bool)
    for k in order.tolist():
        j = int(lp.job[k])
        if done[j] or last[k] < lp.release[k]:
            continue
        d = int(lp.duration[k])
        free = lp.capacity[:, None] - load >= lp.usage[k][:, None]  # (Q, slots)
        ok = free.all(axis=0).astype(np.int64)
        run = np.concatenate([[0], np.cumsum(ok)])
        t = np.arange(int(lp.release[k]), int(last[k]) + 1)
        fits = t[run[t + d] - run[t] == d]
        if len(fits):
            t0 = int(fits[0])
            load[:, t0 : t0 + d] += lp.usage[k][:, None]
            kinds.append(k)
            starts.append(t0)
            done[j] = True
    return kinds, starts


@contextlib.contextmanager
def _stdout_closed() -> Iterator[None]:
    """File descriptor 1 points to /dev/null within the block: HiGHS prints its banner there
    when the first instance of a process is made, before any option can silence it, and a
    command's standard output (``--json``) must hold its own output only."""
    sys.stdout.flush()
    saved = os.dup(1)
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(null)


def _highs(seed: int) -> highspy.Highs:
    with _stdout_closed():
        h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", 1)
    h.setOptionValue("random_seed", int(seed))
    h.setOptionValue("simplex_strategy", 4)  # primal: new columns keep the basis primal feasible
    return h


def _add_columns(h: highspy.Highs, lp: flowlp.FlowLp, form: str, kinds: np.ndarray, starts: np.ndarray) -> None:
    if len(kinds) == 0:
        return
    build = flowlp.event_columns if form == "events" else flowlp.dense_columns
    cost, col_starts, index, value = build(lp, kinds, starts)
    n = len(cost)
    h.addCols(n, cost, np.zeros(n), np.full(n, np.inf), len(index), col_starts, index.astype(np.int32), value)


def _master(lp: flowlp.FlowLp, form: str, seed: int) -> highspy.Highs:
    """The master with its rows, the load columns (event form) and an artificial column per
    job (cost ``big``, no capacity: it keeps the master feasible and is never a schedule)."""
    h = _highs(seed)
    lower, upper = flowlp.event_row_bounds(lp) if form == "events" else flowlp.dense_row_bounds(lp)
    h.addRows(len(lower), lower, upper, 0, np.zeros(len(lower), np.int64), np.zeros(0, np.int32), np.zeros(0))
    n_cap = lp.num_capacity_rows
    if form == "events":
        cost, lo, up, col_starts, index, value = flowlp.load_columns(lp)
        h.addCols(len(cost), cost, lo, up, len(index), col_starts, index.astype(np.int32), value)
    big = float(2 * (lp.slots + lp.duration.max()))
    h.addCols(
        lp.num_jobs,
        np.full(lp.num_jobs, big),
        np.zeros(lp.num_jobs),
        np.full(lp.num_jobs, np.inf),
        lp.num_jobs,
        np.arange(lp.num_jobs, dtype=np.int64),
        (n_cap + np.arange(lp.num_jobs)).astype(np.int32),
        np.ones(lp.num_jobs),
    )
    return h


def _run(h: highspy.Highs, deadline: float | None) -> str:
    if deadline is not None:  # HiGHS counts its time limit from its first run: add the time already used
        left = max(deadline - time.perf_counter(), 0.01)
        h.setOptionValue("time_limit", float(h.getRunTime() + left))
    h.run()
    return h.modelStatusToString(h.getModelStatus())


def _prices(h: highspy.Highs, lp: flowlp.FlowLp, form: str) -> tuple[np.ndarray, np.ndarray]:
    """(capacity prices >= 0 as Q x slots, job-row duals) of the master's last solve."""
    sol = h.getSolution()
    dual = np.asarray(sol.row_dual, dtype=float)
    n_cap = lp.num_capacity_rows
    # event form: minus the reduced cost of the load variable L[q, tau]; dense: minus the row dual
    price = -np.asarray(sol.col_dual, dtype=float)[:n_cap] if form == "events" else -dual[:n_cap]
    return np.maximum(price, 0.0).reshape(lp.num_resources, lp.slots), dual[n_cap:]


def _price_out(lp: flowlp.FlowLp, prices: np.ndarray, mu: np.ndarray, per_kind: int) -> tuple[np.ndarray, np.ndarray]:
    """Columns of negative reduced cost: up to ``per_kind`` best starts of each kind."""
    prefix = np.concatenate([np.zeros((lp.num_resources, 1)), np.cumsum(prices, axis=1)], axis=1)
    last = lp.last_start()
    kinds, starts = [], []
    for k in range(lp.num_kinds):
        if last[k] < lp.release[k]:
            continue
        t, cost = _kind_costs(lp, k, prefix, 1.0)
        inside = t <= last[k]
        t, reduced = t[inside], cost[inside] - mu[int(lp.job[k])]
        neg = np.flatnonzero(reduced < -REDUCED_COST_TOL)
        if len(neg) == 0:
            continue
        pick = neg[np.argsort(reduced[neg], kind="stable")[:per_kind]]
        kinds.extend([k] * len(pick))
        starts.extend(t[pick].tolist())
    return np.array(kinds, dtype=np.int64), np.array(starts, dtype=np.int64)


def flow_lp_bound(
    instance: Instance,
    *,
    time_limit: float | None = 60.0,
    seed: int = 0,
    classes: bool = True,
    solver: str = "colgen",
    form: str = "events",
    floor: int | None = None,
    per_kind: int = 3,
    max_iterations: int = 100_000,
) -> FlowBound:
    """A certified lower bound on sum_j C_j (and the flow time) from the flow LP
    (:mod:`rar_opt.formulations.flowlp`; ``classes``: with the server classes and split
    times), within ``time_limit`` seconds (None: no limit). ``solver``: "colgen" (column
    generation) or "full" (every column at once: small instances, tests). ``floor``: a
    bound on sum_j C_j proven elsewhere (e.g. ``completion_bounds(instance).total``),
    reported instead when it is larger. Never raises on a time limit: the value is the best
    Lagrangian bound met (module docstring), at least sum_j (r_j + rho_min_j)."""
    limit_ok = isinstance(time_limit, int | float) and math.isfinite(time_limit) and time_limit >= 0
    if time_limit is not None and not limit_ok:
        raise ValueError(f"time_limit must be None or a finite number of seconds >= 0, got {time_limit!r}")
    if not isinstance(per_kind, int) or per_kind < 1:
        raise ValueError(f"per_kind must be a positive integer, got {per_kind!r}")
    if form not in FORMS:
        raise ValueError(f"form must be one of {FORMS}, got {form!r}")
    if solver not in METHODS:
        raise ValueError(f"solver must be one of {METHODS}, got {solver!r}")
    began = time.perf_counter()
    deadline = None if time_limit is None else began + float(time_limit)
    lp = flowlp.build(instance, flowlp.Options(classes=classes))
    releases = int(instance.releases.sum())
    zero = np.zeros((lp.num_resources, lp.slots))
    best, best_value = lagrangian_bound(lp, zero)  # sum_j min_k (r_j + d_k)
    proven, lp_value, iterations, status, note = False, None, 0, "not run", ""
    h = _master(lp, form, seed)
    first = int(h.getNumCol())  # the (kind, start) columns follow the load and artificial ones
    if solver == "full":
        col_kinds, col_starts = flowlp.all_columns(lp)
    else:
        k0, t0 = _greedy(lp)
        col_kinds, col_starts = np.array(k0, dtype=np.int64), np.array(t0, dtype=np.int64)
    _add_columns(h, lp, form, col_kinds, col_starts)
    while iterations < max_iterations:
        if deadline is not None and time.perf_counter() >= deadline:
            note = "time limit"
            break
        status = _run(h, deadline)
        iterations += 1
        if status != "Optimal":
            note = f"master: {status}"
            if h.getSolution().dual_valid:
                prices, _ = _prices(h, lp, form)
                cand, value = lagrangian_bound(lp, prices)
                if value > best_value:
                    best, best_value = cand, value
            break
        prices, mu = _prices(h, lp, form)
        cand, value = lagrangian_bound(lp, prices)
        if value > best_value:
            best, best_value = cand, value
        master = float(h.getInfo().objective_function_value)
        kinds, starts = _price_out(lp, prices, mu, per_kind) if solver == "colgen" else (np.zeros(0), np.zeros(0))
        if len(kinds) == 0:  # the master's optimum is the LP's
            proven, lp_value = True, master
            break
        if best >= _ceil_tol(master):  # the LP's ceiling is reached: more columns cannot raise it
            proven, lp_value = True, master
            note = "stopped at the LP's integer ceiling"
            break
        if int(h.getNumCol()) + len(kinds) > MAX_COLUMNS:
            note = f"column cap ({MAX_COLUMNS:,} columns)"
            break
        _add_columns(h, lp, form, kinds, starts)
        col_kinds, col_starts = np.concatenate([col_kinds, kinds]), np.concatenate([col_starts, starts])
    columns = int(h.getNumCol())
    mean_starts = _mean_starts(h, lp, first, col_kinds, col_starts) if proven else None
    method = "lp" if proven else "lagrangian"
    total = best
    if floor is not None and floor > total:
        total, method = int(floor), "floor"
    log.debug("flow LP of %s: %s %s after %d solves", instance.name, total, method, iterations)
    return FlowBound(
        total=int(total),
        flow=int(total) - releases,
        jobs=instance.num_jobs,
        seconds=time.perf_counter() - began,
        method=method,
        proven=proven,
        lp_value=lp_value if proven else best_value,
        classes=classes,
        time_limit=time_limit,
        seed=seed,
        solver=solver,
        iterations=iterations,
        columns=columns,
        note=note,
        floor=floor,
        resources=lp.resource_names,
        mean_starts=mean_starts,
    )


def _mean_starts(
    h: highspy.Highs, lp: flowlp.FlowLp, first: int, kinds: np.ndarray, starts: np.ndarray
) -> tuple[float, ...] | None:
    """Each job's mean start sum_t t x[j, t] in the master's last solution (None when some
    job is still partly on its artificial column)."""
    x = np.asarray(h.getSolution().col_value, dtype=float)
    art = x[first - lp.num_jobs : first]
    if np.any(art > 1e-6):
        return None
    x = x[first : first + len(kinds)]
    jobs = lp.job[kinds.astype(np.int64)]
    weight = np.bincount(jobs, weights=x, minlength=lp.num_jobs)
    mean = np.bincount(jobs, weights=x * starts, minlength=lp.num_jobs) / np.maximum(weight, 1e-12)
    return tuple(float(v) for v in mean)


def _ceil_tol(x: float) -> int:
    """ceil(x) for a master objective, read generously (1e-6): only used to stop early."""
    return math.ceil(x - 1e-6)
