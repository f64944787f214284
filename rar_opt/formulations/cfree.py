"""Contention-free models for CP-SAT: a relaxation and a restriction of RAR-DDLS.

Without contention a job's speed depends only on its span n: on one server it runs at
phi_j(0, 1), split over n servers at phi_j(1, n) (it counts itself in c_s, so p >= 1).
Its execution time is then rho_j(n) = ceil(F_j / phi_j(., n)) and the problem is interval
scheduling with a placement choice: no time index at all.

* **Relaxation** (``restrict=False``): every job runs at its uncontended rate. Rates never
  rise with contention (phi is non-increasing in p), so every true schedule takes at least
  as long per job; the relaxed optimum (and CP-SAT's bound on it) is a lower bound on OPT.
* **Restriction** (``restrict=True``): the same, plus "split jobs that share a server never
  overlap in time" (a cumulative of capacity 1 per server over the split jobs). Then every
  server carries at most one active split job, every split job sees p = 1, and its true
  execution time is exactly rho_j(n): the model's makespan is the schedule's true makespan
  (checked by the simulator), an upper bound on OPT.

If the two meet, the optimum is proven (:mod:`rar_opt.solvers.decompose`).

* **Priced relaxation** (``priced=True``, a relaxation too): the relaxation, where a
  split job's interval may be longer than rho_j(n), and contention is paid for. Two split
  jobs i and j that use a common server s are both counted in c_s in every slot where
  both are active, so each sees p >= 2 there and gets at most phi(2, n) iterations in
  those slots. Job j then has O_j >= (the slots its interval shares with i's) contended
  slots, for every such i, and needs phi(1, n) (d_j - O_j) + phi(2, n) O_j >= F_j over its
  d_j = C_j - a_j slots. A true schedule satisfies every row with its own starts,
  completions, placements and O_j the largest such overlap (at most its contended
  slots), so no schedule is lost and the model's optimum is a lower bound on OPT that can
  exceed the relaxation's (docs/exactness.md, "Pricing contention on intervals").

Both arguments hold job by job (the relaxation never completes a job later than a true
schedule with the same starts and placements; the restriction's completions are the true
ones), so they hold for every objective of :mod:`.cpsat` (``objective``: the makespan,
the total completion time or the total flow time).

Size: every job has a GPU count and a used flag per server, so the model holds jobs x
servers of each (:func:`count_cells`): about 40 microseconds and 1.5 KB per cell to build
(96,000 cells: 3.8 s, 142 MB), and CP-SAT's copy of it in the solve more than doubles the
memory (a 1,600 x 200 paper instance, 320,000 cells: 1.2 GB for the command). Beyond
``Options.max_cells`` (:data:`MAX_CELLS`) it is refused; :func:`too_large` says so before
anything is built, and a build given a ``deadline`` stops when it passes it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from ortools.sat.python import cp_model

from rar_opt.errors import InputError
from rar_opt.formulations import symmetry
from rar_opt.formulations.base import (
    OBJECTIVES,
    ModelData,
    check_choice,
    check_count,
    check_flag,
    require_star,
    resolve_horizon,
)
from rar_opt.formulations.cpsat import CpsatModel, execution_times, read_schedule, set_objective
from rar_opt.formulations.pricing import add_pricing
from rar_opt.formulations.sizes import CFREE_MAX_CELLS as MAX_CELLS
from rar_opt.formulations.sizes import cfree_cells as count_cells
from rar_opt.formulations.sizes import cfree_too_large as too_large
from rar_opt.instance import Instance

__all__ = [
    "MAX_CELLS",
    "BuildStopped",
    "Options",
    "build",
    "count_cells",
    "execution_times",
    "read_schedule",
    "too_large",
]


class BuildStopped(TimeoutError):
    """A build given a deadline passed it (nothing is returned: the model is incomplete)."""


@dataclass(frozen=True)
class Options:
    """Options of the contention-free models."""

    restrict: bool = False  # False: the relaxation (a bound); True: the restriction (a schedule)
    horizon: int | None = None  # slots available (at most T); default T
    symmetry: bool = True  # the symmetry-breaking rows of formulations/symmetry.py
    objective: str = "makespan"  # makespan, total or flow, as the cpsat model's
    max_cells: int = MAX_CELLS  # refuse more jobs x servers cells
    # the relaxation with contention paid for: split jobs that share a server and overlap
    # in time lose iterations in the common slots (module docstring); not with restrict
    priced: bool = False

    def __post_init__(self) -> None:
        check_choice(self.objective, "objective", OBJECTIVES)
        check_flag(self.restrict, "restrict")
        check_flag(self.priced, "priced")
        if self.priced and self.restrict:
            raise InputError("the priced relaxation is a relaxation: not with restrict", where="priced")
        check_flag(self.symmetry, "symmetry")
        check_count(self.horizon, "horizon", optional=True)
        check_count(self.max_cells, "max_cells")


def build(instance: Instance, options: Options | None = None, deadline: float | None = None) -> CpsatModel:
    """The relaxation or the restriction (see the module docstring) as a CP-SAT model.
    A model over ``options.max_cells`` is refused (InputError); with ``deadline`` (a
    ``time.perf_counter()`` value) the build raises :class:`BuildStopped` once past it."""
    require_star(instance, "the cfree formulation")
    options = options or Options()
    why = too_large(instance, options.max_cells)
    if why is not None:
        raise InputError(f"the contention-free model would have {why}")
    horizon = resolve_horizon(options.horizon, instance)
    rho = execution_times(instance)
    b = instance.bounds
    n_jobs, n_servers = instance.num_jobs, instance.num_servers
    cap = [int(o) for o in instance.cluster.servers]
    gpus = [int(g) for g in instance.arrays.gpus]
    m = cp_model.CpModel()
    start, end, y, intervals, split = [], [], [], [], []
    used_all: list[list[Any]] = []
    durations: list[Any] = []
    span_vars: list[dict[int, Any]] = []
    split_flags: list[Any] = []
    for j in range(n_jobs):
        if deadline is not None and time.perf_counter() > deadline:
            raise BuildStopped(f"the contention-free model was built for {j} of {n_jobs} jobs by its deadline")
        spans = {n: m.new_bool_var(f"v{j}_{n}") for n in range(int(b.n_min[j]), int(b.n_max[j]) + 1)}
        m.add_exactly_one(spans.values())
        shortest = min(rho[j, n] for n in spans)
        release = instance.jobs[j].release  # a_j >= r_j (docs/arrivals.md)
        a = m.new_int_var(release, max(horizon - shortest, release), f"a{j}")
        e = m.new_int_var(release + shortest, max(horizon, release + shortest), f"e{j}")
        if options.priced:  # a split job may take longer than rho_j(n): contention (the pricing rows)
            d = m.new_int_var(shortest, max(horizon - release, shortest), f"d{j}")
            for n, v in spans.items():
                m.add(d >= rho[j, n]).only_enforce_if(v)
        else:
            d = m.new_int_var(shortest, max(rho[j, n] for n in spans), f"d{j}")
            m.add(d == sum(rho[j, n] * v for n, v in spans.items()))
        durations.append(d)
        span_vars.append(spans)
        intervals.append(m.new_interval_var(a, d, e, f"job{j}"))
        row = [m.new_int_var(0, min(gpus[j], cap[s]), f"y{j}_{s}") for s in range(n_servers)]
        used = [m.new_bool_var(f"z{j}_{s}") for s in range(n_servers)]
        used_all.append(used)
        m.add(sum(row) == gpus[j])
        for s in range(n_servers):
            m.add(row[s] >= 1).only_enforce_if(used[s])
            m.add(row[s] == 0).only_enforce_if(~used[s])
        m.add(sum(used) == sum(n * v for n, v in spans.items()))
        is_split = m.new_bool_var(f"split{j}")
        m.add(is_split == sum(v for n, v in spans.items() if n >= 2))
        split_flags.append(is_split)
        if options.restrict:  # "split job j is on server s": the occupancy of the restriction
            on = []
            for s in range(n_servers):
                flag = m.new_bool_var(f"w{j}_{s}")
                m.add_bool_and([used[s], is_split]).only_enforce_if(flag)
                m.add_bool_or([~used[s], ~is_split, flag])
                on.append(flag)
            split.append(on)
        start.append(a)
        end.append(e)
        y.append(row)
    for s in range(n_servers):
        if deadline is not None and time.perf_counter() > deadline:
            raise BuildStopped(f"the contention-free model was built for {s} of {n_servers} servers by its deadline")
        m.add_cumulative(intervals, [y[j][s] for j in range(n_jobs)], cap[s])  # (2) capacity
        if options.restrict:  # at most one split job on s at any time: contention is always 1
            m.add_cumulative(intervals, [split[j][s] for j in range(n_jobs)], 1)
    # redundant, for the search: the cluster as one pool of GPUs
    m.add_cumulative(intervals, gpus, sum(cap))
    if options.priced:
        capable = [j for j in range(n_jobs) if max(span_vars[j]) >= 2]
        add_pricing(
            m,
            instance,
            horizon,
            start,
            end,
            durations,
            {j: span_vars[j] for j in capable},
            used_all,
            {j: split_flags[j] for j in capable},
        )
    if options.symmetry:  # equal servers, equal jobs: one schedule per orbit
        symmetry.add_rows(m, instance, start, used_all)
    makespan = m.new_int_var(0, horizon, "makespan")
    m.add_max_equality(makespan, end)
    extra = set_objective(m, options.objective, makespan, end, [job.release for job in instance.jobs])
    name = "cfree-restriction" if options.restrict else "cfree-priced" if options.priced else "cfree-relaxation"
    return CpsatModel(m, start, end, y, makespan, ModelData(name, instance.name, horizon, options, extra))
