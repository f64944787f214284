"""An exact constraint-programming model of RAR-DDLS for OR-Tools CP-SAT (experimental).

The same exactness argument as the compact MILP (docs/exactness.md) with two changes that
suit a CP solver:

* every job is an interval [a_j, e_j) (e_j = C_j, its completion); server capacity (2)
  is one cumulative per server whose demands are the integer GPU counts y_js;
* a job that can only ever run on one server (n_max = 1: one GPU, or one server) has a
  fixed duration, ceil(F_j / phi_j(0, 1)), and no per-slot variables at all; only jobs
  that can split get per-slot activity u, iterations g and contention levels L, with the
  phi table of the time model and the staircase over contention levels of the MILP.

Direction 1 (every schedule is a point with the same completion times) and direction 2
(every point's schedule completes no later in truth) carry over: a split-capable job's
model iterations per slot never exceed its true ones while the contention rows make the
levels at least the true contention, and it needs F_j iterations inside its interval.
The model never solves itself: :class:`CpsatModel` holds the CP-SAT model and its
variables; :mod:`rar_opt.solvers.cpsat` solves it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from ortools.sat.python import cp_model

from ..errors import InputError
from ..instance import Instance
from ..schedule import Schedule
from ..simulate import simulate
from . import symmetry
from .base import ModelData, check_count, check_flag, model_data, require_star, resolve_horizon


@dataclass(frozen=True)
class Options:
    """Options of the CP-SAT model (its objective is the makespan)."""

    horizon: int | None = None  # slots to model (at most the instance's T); default T
    max_cells: int = 400_000  # refuse more split-capable-job x server x slot cells
    symmetry: bool = True  # the symmetry-breaking rows of formulations/symmetry.py

    def __post_init__(self) -> None:
        check_count(self.horizon, "horizon", optional=True)
        check_count(self.max_cells, "max_cells")
        check_flag(self.symmetry, "symmetry")


@dataclass
class CpsatModel:
    """A built CP-SAT model with its variables; ``values`` holds a solution once solved."""

    model: cp_model.CpModel
    start: list[Any]
    end: list[Any]
    y: list[list[Any]]
    makespan: Any
    rar: ModelData
    values: dict[str, Any] = field(default_factory=dict)


def execution_times(instance: Instance) -> dict[tuple[int, int], int]:
    """rho_j(n), the uncontended execution time of job j on n servers, for every feasible n:
    ceil(F_j / phi_j(0, 1)) on one server, ceil(F_j / phi_j(1, n)) split (a split job counts
    itself in c_s, so p >= 1). No schedule runs job j on n servers in fewer slots."""
    phi, b = instance.time_model.phi_table(1), instance.bounds
    out = {}
    for j in range(instance.num_jobs):
        for n in range(int(b.n_min[j]), int(b.n_max[j]) + 1):
            out[j, n] = -(-int(instance.jobs[j].iterations) // int(phi[j, 0 if n == 1 else 1, n]))
    return out


def count_cells(instance: Instance, horizon: int) -> int:
    """The model's size measure: split-capable jobs x servers x slots."""
    return int((instance.bounds.n_max >= 2).sum()) * instance.num_servers * horizon


def build(instance: Instance, options: Options | None = None) -> CpsatModel:
    """The CP-SAT model of ``instance`` (see the module docstring)."""
    require_star(instance, "the cpsat formulation")
    options = options or Options()
    horizon = resolve_horizon(options.horizon, instance)
    b, tm = instance.bounds, instance.time_model
    n_jobs, n_servers = instance.num_jobs, instance.num_servers
    cap = [int(o) for o in instance.cluster.servers]
    gpus = [int(g) for g in instance.arrays.gpus]
    iters = [int(f) for f in instance.arrays.iterations]
    rho_min, n_lo, n_hi = [int(r) for r in b.rho_min], [int(n) for n in b.n_min], [int(n) for n in b.n_max]
    splittable = [n_hi[j] >= 2 for j in range(n_jobs)]
    levels = max(1, min(sum(splittable), max(cap)))
    phi = tm.phi_table(levels)
    phi_max = [int(p) for p in b.phi_max]
    if any(horizon < r for r in rho_min):
        raise InputError(f"= {horizon} is shorter than a job's fastest completion {max(rho_min)}", where="horizon")
    cells = count_cells(instance, horizon)
    if cells > options.max_cells:
        raise InputError(
            f"the CP-SAT model would have {cells:,} split-job x server x slot cells (limit {options.max_cells:,})",
            where="instance",
        )
    m = cp_model.CpModel()
    start = [m.new_int_var(0, horizon - rho_min[j], f"a{j}") for j in range(n_jobs)]
    end = [m.new_int_var(rho_min[j], horizon, f"e{j}") for j in range(n_jobs)]
    y = [[m.new_int_var(0, min(gpus[j], cap[s]), f"y{j}_{s}") for s in range(n_servers)] for j in range(n_jobs)]
    z = [[m.new_bool_var(f"z{j}_{s}") for s in range(n_servers)] for j in range(n_jobs)]
    intervals: list[Any] = []
    durations: list[Any] = []
    for j in range(n_jobs):
        m.add(sum(y[j]) == gpus[j])  # (1) gang size
        for s in range(n_servers):
            m.add(y[j][s] >= 1).only_enforce_if(z[j][s])
            m.add(y[j][s] == 0).only_enforce_if(~z[j][s])
        duration: Any = m.new_int_var(rho_min[j], horizon, f"d{j}")
        if not splittable[j]:  # always on one server: a fixed duration at phi(0, 1)
            duration = int(-(-iters[j] // int(phi[j, 0, 1])))
        durations.append(duration)
        intervals.append(m.new_interval_var(start[j], duration, end[j], f"job{j}"))
    for s in range(n_servers):  # (2) capacity, per server
        m.add_cumulative(intervals, [y[j][s] for j in range(n_jobs)], cap[s])
    # redundant, for the search: the cluster as one pool of GPUs (implied by the rows above)
    m.add_cumulative(intervals, [int(g) for g in gpus], int(sum(cap)))
    symmetry_rows = symmetry.add_rows(m, instance, start, z) if options.symmetry else 0  # one schedule per orbit

    split_jobs = [j for j in range(n_jobs) if splittable[j]]
    rho = execution_times(instance)
    split: dict[int, Any] = {}
    span: dict[int, dict[int, Any]] = {}
    for j in split_jobs:
        span[j] = {n: m.new_bool_var(f"v{j}_{n}") for n in range(n_lo[j], n_hi[j] + 1)}
        m.add_exactly_one(span[j].values())
        m.add(sum(z[j]) == sum(n * v for n, v in span[j].items()))
        split[j] = m.new_bool_var(f"split{j}")
        m.add(split[j] == sum(v for n, v in span[j].items() if n >= 2))
        for n, v in span[j].items():  # redundant: no contention makes a job faster than rho_j(n)
            m.add(durations[j] >= rho[j, n]).only_enforce_if(v)
    active: dict[tuple[int, int], Any] = {}
    level: dict[tuple[int, int, int], Any] = {}
    for j in split_jobs:
        gained = []
        for t in range(horizon):
            begun, over = m.new_bool_var(f"s{j}_{t}"), m.new_bool_var(f"f{j}_{t}")
            m.add(start[j] <= t).only_enforce_if(begun)
            m.add(start[j] >= t + 1).only_enforce_if(~begun)
            m.add(end[j] <= t).only_enforce_if(over)
            m.add(end[j] >= t + 1).only_enforce_if(~over)
            u = m.new_bool_var(f"u{j}_{t}")
            m.add_bool_and([begun, ~over]).only_enforce_if(u)
            m.add_bool_or([~begun, over, u])
            active[j, t] = u
            g = m.new_int_var(0, phi_max[j], f"g{j}_{t}")
            m.add(g == 0).only_enforce_if(~u)  # (9) no iterations while inactive
            for k in range(2, levels + 1):
                level[j, t, k] = m.new_bool_var(f"L{j}_{t}_{k}")
                if k > 2:
                    m.add_implication(level[j, t, k], level[j, t, k - 1])
            for n, v in span[j].items():  # (8)-(9) the rate table over (p, n), a staircase in p
                if n == 1:
                    m.add(g <= int(phi[j, 0, 1])).only_enforce_if(v)
                else:
                    steps = sum(int(phi[j, k - 1, n] - phi[j, k, n]) * level[j, t, k] for k in range(2, levels + 1))
                    m.add(g <= int(phi[j, 1, n]) - steps).only_enforce_if(v)
            gained.append(g)
        m.add(sum(gained) >= iters[j])  # F_j iterations inside the job's interval
    for t in range(horizon):  # (6) contention: a split job's level >= c_s on each of its servers
        for s in range(n_servers):
            counted = []
            for i in split_jobs:
                h = m.new_bool_var(f"h{i}_{s}_{t}")
                m.add_bool_or([~active[i, t], ~z[i][s], ~split[i], h])
                counted.append(h)
            for j in split_jobs:
                lvl = 1 + sum(level[j, t, k] for k in range(2, levels + 1))
                m.add(lvl >= sum(counted)).only_enforce_if([active[j, t], z[j][s], split[j]])
    makespan = m.new_int_var(max(rho_min), horizon, "makespan")
    m.add_max_equality(makespan, end)
    m.minimize(makespan)
    data = ModelData("cpsat", instance.name, horizon, options, {"levels": levels, "symmetry_rows": symmetry_rows})
    return CpsatModel(m, start, end, y, makespan, data)


def read_schedule(model: CpsatModel, instance: Instance) -> Schedule:
    """The starts and placements of a solved model."""
    values = model.values
    starts = np.array([values[f"a{j}"] for j in range(instance.num_jobs)], dtype=np.int64)
    y = np.array(
        [[values[f"y{j}_{s}"] for s in range(instance.num_servers)] for j in range(instance.num_jobs)], dtype=np.int64
    )
    return Schedule.from_arrays(instance.name, starts, y, meta={"method": "cpsat"})


def set_start(model: CpsatModel, instance: Instance, schedule: Schedule) -> None:
    """Hint CP-SAT with ``schedule``'s starts, placements and completions (from the
    simulator); CP-SAT completes the rest. The schedule must end within the horizon."""
    horizon = model_data(model).horizon
    if getattr(model_data(model).options, "symmetry", True):
        schedule = symmetry.canonical(instance, schedule)  # the orbit's member the rows keep
    completion = simulate(instance, schedule).completion
    if completion.max() > horizon:
        raise ValueError("the schedule does not complete within the modelled horizon")
    for j, a in enumerate(schedule.starts):
        model.model.add_hint(model.start[j], int(a))
        model.model.add_hint(model.end[j], int(completion[j]))
        for s, count in enumerate(schedule.placements[j]):
            model.model.add_hint(model.y[j][s], int(count))
    model.model.add_hint(model.makespan, int(completion.max()))
