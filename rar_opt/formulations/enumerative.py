"""The paper's enumeration ILP (10)-(13) and its load-feasibility ILP (14)-(16).

The paper (section 4) linearises RAR-DDLS by enumerating the set Y = {y^1, ..., y^|Y|}
of feasible whole schedules and choosing one with binaries x_j^k:

    (10) minimise max_j sum_k x_j^k (a_j(y^k) + rho_j(y^k))
    (11) sum_k x_j^k = 1 for every j
    (12) x_j^k = x_j'^k for all j, j', k      (written as x_j^k = x_0^k)
    (13) x binary

and, for the load view, (14)-(16): find x with (11)-(13) such that on every GPU g the
estimated execution times of the jobs using g under the chosen schedule sum to at most
theta. Here rho_hat_j(y^k) is the exact execution time under y^k (so l = u = 1): on any
GPU of a schedule the jobs run one after another, so its load is at most the makespan,
and the tightest integer theta is a lower bound on the optimal makespan
(:func:`rar_opt.bounds.load_bound` finds it by bisection).

Y is exponential: :func:`enumerate_schedules` lists every feasible schedule whose starts
are below a limit H (an upper bound on the optimum, such as a heuristic's makespan, keeps
every optimal schedule in Y) and stops with an error past ``limit`` schedules.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from dataclasses import dataclass

import numpy as np
import pyomo.environ as pyo

from rar_opt.check import check
from rar_opt.errors import InputError
from rar_opt.formulations.base import (
    OBJECTIVES,
    ModelData,
    check_choice,
    check_count,
    model_data,
    require_star,
    resolve_horizon,
)
from rar_opt.gpu_ids import assign_gpu_ids
from rar_opt.instance import Instance
from rar_opt.schedule import Schedule

DEFAULT_LIMIT = 100_000


@dataclass(frozen=True)
class Enumerated:
    """The feasible schedules y^k with what (10) and (14) need of each."""

    schedules: tuple[Schedule, ...]
    completion: np.ndarray  # (K, J): a_j(y^k) + rho_j(y^k) = C_j
    execution: np.ndarray  # (K, J): rho_j(y^k)


def count_placements(capacities: tuple[int, ...], need: int) -> int:
    """How many vectors y with 0 <= y_s <= O_s sum to ``need`` (a DP, without listing them)."""
    ways = [1] + [0] * need  # ways[g]: placements of g GPUs on the servers seen so far
    for cap in capacities:
        ways = [sum(ways[g - k] for k in range(min(cap, g) + 1)) for g in range(need + 1)]
    return ways[need]


def _placements(instance: Instance, j: int) -> list[tuple[int, ...]]:
    caps = instance.cluster.servers
    need = instance.jobs[j].gpus
    return [y for y in itertools.product(*(range(min(o, need) + 1) for o in caps)) if sum(y) == need]


def enumerate_schedules(
    instance: Instance, max_start: int, limit: int = DEFAULT_LIMIT, horizon: int | None = None
) -> Enumerated:
    """Every feasible schedule with all starts in 0..max_start - 1 that completes within
    ``horizon`` (default the instance's T), with GPU ids assigned.

    The number of start/placement combinations is counted first (without listing any), so
    an instance too large for enumeration is refused at once."""
    horizon = horizon or instance.horizon
    caps = instance.cluster.servers
    latest = [min(max_start, horizon - int(r) + 1) for r in instance.bounds.rho_min]
    counts = [count_placements(caps, job.gpus) for job in instance.jobs]
    size = math.prod(c * max(t, 0) for c, t in zip(counts, latest, strict=True))  # exact, no overflow
    if size > limit * 50:
        raise InputError(
            f"enumerating about 10^{math.log10(size):.1f} start/placement combinations is too much for the "
            f"enumerative ILP (limit {limit} schedules); use the compact formulation",
            where="instance",  # its size, not the formulation's options
        )
    options = [_placements(instance, j) for j in range(instance.num_jobs)]
    found: list[Schedule] = []
    completion, execution = [], []
    for starts in itertools.product(*(range(job.release, t) for job, t in zip(instance.jobs, latest, strict=True))):
        for ys in itertools.product(*options):
            sched = Schedule.from_arrays(instance.name, starts, ys)
            report = check(instance, sched)
            if not report.feasible or (report.result.makespan or 0) > horizon:
                continue
            found.append(assign_gpu_ids(instance, sched))
            completion.append(report.result.completion)
            execution.append(report.result.completion - np.asarray(starts))
            if len(found) > limit:
                raise InputError(
                    f"more than {limit} feasible schedules; use the compact formulation", where="formulation"
                )
    if not found:
        raise InputError(f"no feasible schedule starts before slot {max_start}", where="horizon")
    return Enumerated(tuple(found), np.array(completion), np.array(execution))


def _choice_model(name: str, n_jobs: int, n_sched: int) -> pyo.ConcreteModel:
    """Jobs, schedules, the binaries x and the rows (11)-(13) both ILPs share."""
    m = pyo.ConcreteModel(name=name)
    m.J = pyo.RangeSet(0, n_jobs - 1, doc="jobs j")
    m.K = pyo.RangeSet(0, n_sched - 1, doc="enumerated feasible schedules y^k")
    m.x = pyo.Var(m.J, m.K, domain=pyo.Binary, doc="(13)/(16) x[j,k] = 1: job j follows schedule k")

    @m.Constraint(m.J, doc="(11) each job follows exactly one schedule")
    def one_schedule(m, j):
        return sum(m.x[j, k] for k in m.K) == 1

    @m.Constraint(m.J, m.K, doc="(12) all jobs follow the same schedule: x[j,k] = x[0,k]")
    def same_schedule(m, j, k):
        return pyo.Constraint.Skip if j == 0 else m.x[j, k] == m.x[0, k]

    return m


@dataclass(frozen=True)
class Options:
    """Options of the enumerative ILP (10)-(13)."""

    objective: str = "makespan"  # "makespan", "total" (sum of completion times) or "flow" (sum of C_j - r_j)
    horizon: int | None = None  # list the schedules that complete within this (at most T); default T
    limit: int = DEFAULT_LIMIT  # refuse instances with more feasible schedules than this

    def __post_init__(self) -> None:
        check_choice(self.objective, "objective", OBJECTIVES)
        check_count(self.horizon, "horizon", optional=True)
        check_count(self.limit, "limit")


def build(instance: Instance, options: Options | None = None) -> pyo.ConcreteModel:
    """The ILP (10)-(13) over every feasible schedule that completes within the horizon.

    With the horizon set to an upper bound on the optimum (a heuristic's makespan), every
    optimal schedule is still listed, so the ILP stays exact."""
    require_star(instance, "the enumerative formulation")
    options = options or Options()
    horizon = resolve_horizon(options.horizon, instance)
    enumerated = enumerate_schedules(instance, max_start=horizon, limit=options.limit, horizon=horizon)
    return build_ilp(instance, enumerated, options.objective, ModelData("enumerative", instance.name, horizon, options))


def build_ilp(
    instance: Instance, enumerated: Enumerated, objective: str = "makespan", data: ModelData | None = None
) -> pyo.ConcreteModel:
    """The ILP (10)-(13) over the schedules ``enumerated``."""
    n_jobs, n_sched = instance.num_jobs, len(enumerated.schedules)
    comp = enumerated.completion
    m = _choice_model(f"enumerative[{instance.name}]", n_jobs, n_sched)
    m.makespan = pyo.Var(domain=pyo.NonNegativeReals, doc="epigraph of the max in (10)")

    @m.Constraint(m.J, doc="(10) makespan >= sum_k x[j,k] (a_j(y^k) + rho_j(y^k))")
    def makespan_def(m, j):
        return m.makespan >= sum(int(comp[k, j]) * m.x[j, k] for k in m.K)

    if objective == "makespan":
        m.obj = pyo.Objective(expr=m.makespan, doc="(10) minimise the makespan")
    else:
        m.obj = pyo.Objective(
            expr=sum(int(comp[k, j]) * m.x[j, k] for j in m.J for k in m.K)
            - (int(instance.releases.sum()) if objective == "flow" else 0),
            doc="sum of completion times, or of flow times (variants of (10))",
        )
    base = data or ModelData("enumerative", instance.name, instance.horizon, Options(objective=objective))
    m.rar = dataclasses.replace(base, extra={"enumerated": enumerated})
    return m


def build_load(instance: Instance, enumerated: Enumerated, theta: float) -> pyo.ConcreteModel:
    """The feasibility ILP (14)-(16) with load limit ``theta`` (objective 0)."""
    n_jobs, n_sched = instance.num_jobs, len(enumerated.schedules)
    m = _choice_model(f"load[{instance.name}, theta={theta}]", n_jobs, n_sched)
    gpus = sorted({g for sched in enumerated.schedules for ids in sched.gpu_ids or () for g in ids or ()})
    m.G = pyo.Set(initialize=gpus, dimen=2, doc="GPUs g = (server, local index)")

    users: dict[tuple[int, int], list[tuple[int, int]]] = {g: [] for g in gpus}
    for k, sched in enumerate(enumerated.schedules):
        for j, ids in enumerate(sched.gpu_ids or ()):
            for g in ids or ():
                users[g].append((j, k))

    @m.Constraint(m.G, doc="(14)-(15) load of GPU g: sum_{j,k uses g} x[j,k] rho_hat_j(y^k) / u <= theta")
    def gpu_load(m, s, i):
        return sum(int(enumerated.execution[k, j]) * m.x[j, k] for j, k in users[(s, i)]) <= theta

    m.obj = pyo.Objective(expr=0, doc="feasibility only")
    return m


def read_schedule(model: pyo.ConcreteModel, instance: Instance) -> Schedule:
    """The schedule y^k chosen by x[0, .]."""
    enumerated: Enumerated = model_data(model).extra["enumerated"]
    k = max(model.K, key=lambda k: model.x[0, k].value or 0)
    s = enumerated.schedules[k]
    return Schedule.from_arrays(instance.name, s.start_array, s.placement_array, meta={"method": "enumerative-ilp"})


def set_start(model: pyo.ConcreteModel, instance: Instance, schedule: Schedule) -> None:
    """Select ``schedule`` if it is among the enumerated ones (else leave the start empty)."""
    enumerated: Enumerated = model_data(model).extra["enumerated"]
    match = [
        k
        for k, s in enumerate(enumerated.schedules)
        if s.starts == schedule.starts and s.placements == schedule.placements
    ]
    for (_, k), var in model.x.items():
        var.set_value(int(bool(match) and k == match[0]))
    if match:
        model.makespan.set_value(int(enumerated.completion[match[0]].max()))
