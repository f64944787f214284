"""An exact constraint-programming model of RAR-DDLS for OR-Tools CP-SAT: the full model of
the default ``auto`` method, and of its probes (tests/formulations/test_cpsat.py checks its
optima against brute force).

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

Objectives (``objective``, as the compact MILP's): ``makespan`` (max_j e_j), ``total``
(sum_j e_j) or ``flow`` (sum_j (e_j - r_j), the total less the constant sum_j r_j, stated
with that constant so that the value CP-SAT reports is the flow time itself). Both
directions above keep every job's completion, not only the latest one, so the model is
exact for all three; the symmetry rows are too (two equal jobs have equal releases, and a
relabelling keeps the multiset of completion times).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from ortools.sat.python import cp_model

from rar_opt.errors import InputError
from rar_opt.formulations import symmetry
from rar_opt.formulations.base import (
    OBJECTIVES,
    ModelData,
    check_choice,
    check_count,
    check_flag,
    model_data,
    require_star,
    resolve_horizon,
)
from rar_opt.formulations.capacity import add_server_cumulatives
from rar_opt.formulations.data import CompactData
from rar_opt.formulations.pricing import add_pricing
from rar_opt.instance import Instance
from rar_opt.schedule import Schedule
from rar_opt.simulate import simulate


@dataclass(frozen=True)
class Options:
    """Options of the CP-SAT model."""

    horizon: int | None = None  # slots to model (at most the instance's T); default T
    max_cells: int = 400_000  # refuse more split-capable-job x server x slot cells
    symmetry: bool = True  # the symmetry-breaking rows of formulations/symmetry.py
    objective: str = "makespan"  # makespan, total (sum_j C_j) or flow (sum_j C_j - r_j)
    pricing: bool = False  # the redundant pricing rows of formulations/pricing.py
    # True: (2) over optional intervals, whole jobs with the fixed demand G_j
    # (formulations/capacity.py; measured, not the default: docs/exactness-log.md)
    server_intervals: bool = False

    def __post_init__(self) -> None:
        check_choice(self.objective, "objective", OBJECTIVES)
        check_count(self.horizon, "horizon", optional=True)
        check_count(self.max_cells, "max_cells")
        check_flag(self.symmetry, "symmetry")
        check_flag(self.pricing, "pricing")
        check_flag(self.server_intervals, "server_intervals")


@dataclass(frozen=True)
class Values:
    """A solution of a :class:`CpsatModel`, read through its variable handles."""

    start: tuple[int, ...]  # a_j
    end: tuple[int, ...]  # e_j = C_j
    y: tuple[tuple[int, ...], ...]  # y[j][s]: GPUs of job j on server s
    makespan: int


@dataclass
class CpsatModel:
    """A built CP-SAT model with its variables; ``values`` holds a solution once solved."""

    model: cp_model.CpModel
    start: list[Any]
    end: list[Any]
    y: list[list[Any]]
    makespan: Any
    rar: ModelData
    values: Values | None = None

    def load(self, value: Callable[[Any], int]) -> None:
        """Keep the solution that ``value`` (the solver's ``value`` of a variable) gives."""
        self.values = Values(
            tuple(int(value(v)) for v in self.start),
            tuple(int(value(v)) for v in self.end),
            tuple(tuple(int(value(v)) for v in row) for row in self.y),
            int(value(self.makespan)),
        )


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


@dataclass
class _Vars:
    """The model's variables as the row families add them."""

    start: list[Any]  # a_j
    end: list[Any]  # e_j
    y: list[list[Any]]  # y[j][s]: GPUs of job j on server s
    z: list[list[Any]]  # z[j][s]: job j uses server s
    duration: list[Any]  # e_j - a_j (a constant for a job that never splits)
    interval: list[Any]  # [a_j, e_j)
    span: dict[int, dict[int, Any]] = field(default_factory=dict)  # v[j][n]: split job j spans n servers
    split: dict[int, Any] = field(default_factory=dict)  # job j spans two servers or more
    active: dict[tuple[int, int], Any] = field(default_factory=dict)  # u[j, t]: split job j runs in slot t
    level: dict[tuple[int, int, int], Any] = field(default_factory=dict)  # L[j, t, k]: j sees >= k contenders


def build(instance: Instance, options: Options | None = None) -> CpsatModel:
    """The CP-SAT model of ``instance`` (see the module docstring), row family by row family."""
    require_star(instance, "the cpsat formulation")
    options = options or Options()
    d = CompactData.of(instance, resolve_horizon(options.horizon, instance))
    cells = count_cells(instance, d.horizon)
    if cells > options.max_cells:
        raise InputError(
            f"the CP-SAT model would have {cells:,} split-job x server x slot cells (limit {options.max_cells:,}; "
            "a larger max_cells option raises it, memory permitting, or solve's default auto searches without "
            "the model)",
            where="instance",
        )
    m = cp_model.CpModel()
    v = _jobs(m, d)
    if not options.server_intervals:
        _capacity(m, d, v, optional=False)  # where it was before: the same model, row for row
    symmetry_rows = symmetry.add_rows(m, instance, v.start, v.z) if options.symmetry else 0  # one schedule per orbit
    split_jobs = [j for j in range(len(d.gpus)) if d.splittable[j]]
    _spans(m, d, v, split_jobs, execution_times(instance))
    if options.server_intervals:
        _capacity(m, d, v, optional=True)  # after the spans: it needs the jobs' split literals
    for j in split_jobs:
        _rates(m, d, v, j)
    _contention(m, d, v, split_jobs, instance.num_servers)
    priced = 0  # redundant rows: every schedule satisfies them (formulations/pricing.py)
    if options.pricing:
        priced = add_pricing(m, instance, d.horizon, v.start, v.end, v.duration, v.span, v.z, v.split)
    makespan = m.new_int_var(max(r + rho for r, rho in zip(d.release, d.rho_min, strict=True)), d.horizon, "makespan")
    m.add_max_equality(makespan, v.end)
    extra = set_objective(m, options.objective, makespan, v.end, d.release)
    extra |= {"levels": d.levels, "symmetry_rows": symmetry_rows, "pricing_pairs": priced}
    data = ModelData("cpsat", instance.name, d.horizon, options, extra)
    return CpsatModel(m, v.start, v.end, v.y, makespan, data)


def set_objective(m: cp_model.CpModel, objective: str, makespan: Any, end: list[Any], release: Any) -> dict[str, int]:
    """Minimise ``objective`` (:data:`~.base.OBJECTIVES`) over the completions ``end``; for
    flow, the total less the constant sum_j r_j (returned as ``flow_offset``, as the
    compact MILP records it), so the reported value is the flow time."""
    if objective == "makespan":
        m.minimize(makespan)
        return {}
    if objective == "total":
        m.minimize(sum(end))
        return {}
    released = int(sum(int(r) for r in release))
    m.minimize(sum(end) - released)
    return {"flow_offset": released}


def _jobs(m: cp_model.CpModel, d: CompactData) -> _Vars:
    """Each job's interval, its GPUs per server and (1) its gang size; a job that can only
    run on one server has the fixed duration ceil(F_j / phi_j(0, 1))."""
    horizon, n_servers = d.horizon, len(d.cap)
    v = _Vars([], [], [], [], [], [])
    for j, gpus in enumerate(d.gpus):
        v.start.append(m.new_int_var(d.release[j], horizon - d.rho_min[j], f"a{j}"))  # a_j >= r_j
        v.end.append(m.new_int_var(d.release[j] + d.rho_min[j], horizon, f"e{j}"))
        v.y.append([m.new_int_var(0, min(gpus, d.cap[s]), f"y{j}_{s}") for s in range(n_servers)])
        v.z.append([m.new_bool_var(f"z{j}_{s}") for s in range(n_servers)])
        m.add(sum(v.y[j]) == gpus)  # (1) gang size
        for s in range(n_servers):
            m.add(v.y[j][s] >= 1).only_enforce_if(v.z[j][s])
            m.add(v.y[j][s] == 0).only_enforce_if(~v.z[j][s])
        duration: Any = m.new_int_var(d.rho_min[j], horizon, f"d{j}")
        if not d.splittable[j]:  # always on one server: a fixed duration at phi(0, 1)
            duration = -(-d.iters[j] // int(d.phi[j, 0, 1]))
        v.duration.append(duration)
        v.interval.append(m.new_interval_var(v.start[j], duration, v.end[j], f"job{j}"))
    return v


def _capacity(m: cp_model.CpModel, d: CompactData, v: _Vars, optional: bool) -> None:
    """(2) server capacity: per server, a cumulative over optional intervals (whole jobs with
    the demand G_j, split jobs' parts with y_js: formulations/capacity.py), or (``optional``
    False) over every job's interval with the demand y_js."""
    if optional:
        add_server_cumulatives(m, d.gpus, d.cap, v.start, v.duration, v.end, v.y, v.z, v.split)
    else:
        for s, cap in enumerate(d.cap):
            m.add_cumulative(v.interval, [row[s] for row in v.y], cap)
    # redundant, for the search: the cluster as one pool of GPUs (implied by the rows above)
    m.add_cumulative(v.interval, list(d.gpus), sum(d.cap))


def _spans(
    m: cp_model.CpModel, d: CompactData, v: _Vars, split_jobs: list[int], rho: dict[tuple[int, int], int]
) -> None:
    """Each split-capable job's span n (servers used) and whether it splits; redundant for
    the search: no contention makes a job faster than rho_j(n)."""
    for j in split_jobs:
        v.span[j] = {n: m.new_bool_var(f"v{j}_{n}") for n in range(d.n_lo[j], d.n_hi[j] + 1)}
        m.add_exactly_one(v.span[j].values())
        m.add(sum(v.z[j]) == sum(n * b for n, b in v.span[j].items()))
        v.split[j] = m.new_bool_var(f"split{j}")
        m.add(v.split[j] == sum(b for n, b in v.span[j].items() if n >= 2))
        for n, b in v.span[j].items():
            m.add(v.duration[j] >= rho[j, n]).only_enforce_if(b)


def _rates(m: cp_model.CpModel, d: CompactData, v: _Vars, j: int) -> None:
    """Split-capable job ``j``, slot by slot: active while started and not over, (8)-(9) at
    most phi_j(p, n) iterations at its contention level p (a staircase over the levels),
    none while inactive, and F_j iterations inside its interval."""
    gained = []
    for t in range(d.horizon):
        begun, over = m.new_bool_var(f"s{j}_{t}"), m.new_bool_var(f"f{j}_{t}")
        m.add(v.start[j] <= t).only_enforce_if(begun)
        m.add(v.start[j] >= t + 1).only_enforce_if(~begun)
        m.add(v.end[j] <= t).only_enforce_if(over)
        m.add(v.end[j] >= t + 1).only_enforce_if(~over)
        u = m.new_bool_var(f"u{j}_{t}")
        m.add_bool_and([begun, ~over]).only_enforce_if(u)
        m.add_bool_or([~begun, over, u])
        v.active[j, t] = u
        g = m.new_int_var(0, d.phi_max[j], f"g{j}_{t}")
        m.add(g == 0).only_enforce_if(~u)  # (9) no iterations while inactive
        for k in range(2, d.levels + 1):
            v.level[j, t, k] = m.new_bool_var(f"L{j}_{t}_{k}")
            if k > 2:
                m.add_implication(v.level[j, t, k], v.level[j, t, k - 1])
        for n, b in v.span[j].items():  # (8)-(9) the rate table over (p, n), a staircase in p
            if n == 1:
                m.add(g <= int(d.phi[j, 0, 1])).only_enforce_if(b)
            else:
                steps = sum(int(d.phi[j, k - 1, n] - d.phi[j, k, n]) * v.level[j, t, k] for k in range(2, d.levels + 1))
                m.add(g <= int(d.phi[j, 1, n]) - steps).only_enforce_if(b)
        gained.append(g)
    m.add(sum(gained) >= d.iters[j])  # F_j iterations inside the job's interval


def _contention(m: cp_model.CpModel, d: CompactData, v: _Vars, split_jobs: list[int], n_servers: int) -> None:
    """(6) contention: a split job's level is at least c_s, the active split jobs on each
    of its servers."""
    for t in range(d.horizon):
        for s in range(n_servers):
            counted = []
            for i in split_jobs:
                h = m.new_bool_var(f"h{i}_{s}_{t}")
                m.add_bool_or([~v.active[i, t], ~v.z[i][s], ~v.split[i], h])
                counted.append(h)
            for j in split_jobs:
                lvl = 1 + sum(v.level[j, t, k] for k in range(2, d.levels + 1))
                m.add(lvl >= sum(counted)).only_enforce_if([v.active[j, t], v.z[j][s], v.split[j]])


def read_schedule(model: CpsatModel, instance: Instance) -> Schedule:
    """The starts and placements of a solved model."""
    if model.values is None:
        raise ValueError("the model holds no solution")
    starts = np.array(model.values.start, dtype=np.int64)
    y = np.array(model.values.y, dtype=np.int64).reshape(instance.num_jobs, instance.num_servers)
    return Schedule.from_arrays(instance.name, starts, y, meta={"method": "cpsat"})


def set_start(model: CpsatModel, instance: Instance, schedule: Schedule) -> None:
    """Hint CP-SAT with ``schedule``'s starts, placements and completions (from the
    simulator); CP-SAT completes the rest. The schedule must end within the horizon."""
    _hint(model, instance, schedule, within=True)


def hint_towards(model: CpsatModel, instance: Instance, schedule: Schedule) -> None:
    """Hint CP-SAT with ``schedule`` although it may end after the modelled horizon (a probe
    below the best makespan so far): every job's start and placement, and the completions
    that fall within the horizon. A hint is only where the search looks first, never a
    row, so an infeasible one removes no answer (docs/exactness.md, "Pack's search first, from 24
    jobs on")."""
    _hint(model, instance, schedule, within=False)


def _hint(model: CpsatModel, instance: Instance, schedule: Schedule, within: bool) -> None:
    """The hints of :func:`set_start` (``within``: the schedule must end within the horizon)
    and of :func:`hint_towards`."""
    horizon = model_data(model).horizon
    if getattr(model_data(model).options, "symmetry", True):
        schedule = symmetry.canonical(instance, schedule)  # the orbit's member the rows keep
    completion = simulate(instance, schedule).completion
    if within and completion.max() > horizon:
        raise ValueError("the schedule does not complete within the modelled horizon")
    for j, a in enumerate(schedule.starts):
        model.model.add_hint(model.start[j], int(a))
        if completion[j] <= horizon:
            model.model.add_hint(model.end[j], int(completion[j]))
        for s, count in enumerate(schedule.placements[j]):
            model.model.add_hint(model.y[j][s], int(count))
    if completion.max() <= horizon:
        model.model.add_hint(model.makespan, int(completion.max()))
