"""RAR-DDLS as the paper states it (section 3, (1)-(9)): a non-convex MINLP in Pyomo.

Nothing is linearised here: the indicators, the max of (6), the bandwidth division, the
floor of (9) and the first-passage completion are written as the products and integer
relations they are, with a division multiplied out where Pyomo (and MINLP solvers) would
otherwise divide by a variable. Use it to read the paper's model, to export it (LP is
impossible, NL works), to evaluate it at a schedule (:func:`fix_to`, then :func:`.values.violated`), and to solve tiny
instances with a MINLP solver (``solve(instance, formulation="nonconvex")``, SCIP from the optional
extra ``minlp``). For proofs of optimality use the compact MILP instead.

Per job j, server s, slot t (t = 0..T-1):
    Y[j,s] integer GPUs of j on s (fixed while j runs)     y_js[t] = Y[j,s] u[j,t]  (3)-(5)
    z[j,s] = 1{Y > 0}, split[j] = 1{sum_s z[j,s] >= 2}
    x[j,t] start, u[j,t] active, D[j,t] completed by the end of t       (first passage)
    c[s,t] = sum_i u[i,t] z[i,s] split[i]                                  (6)
    p[j,t] = max_{s: z[j,s]=1} c[s,t] if split[j] else 0                   (6)
    k[j,t] = max(1, xi1 p[j,t])                                            (7)
    B[j,t] f(k[j,t]) = b_inter if split, B[j,t] = b_intra otherwise
    (tau[j,t] - fixed_j - xi2 n_j) B[j,t] = 2 m_j (G_j - 1) / G_j           (8)
    phi[j,t] = floor(1 / tau[j,t]):  phi tau <= 1 + eps,  (phi + 1) tau >= 1 + eps  (9)
    Q[j,t] = sum_{t' <= t} phi[j,t'] u[j,t'];  D[j,t] = 1{Q[j,t] >= F_j}
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyomo.environ as pyo

from rar_opt.cluster.timemodel import FLOOR_RTOL, Contention
from rar_opt.formulations.base import ModelData, check_count, model_data, require_star, resolve_horizon
from rar_opt.formulations.values import slot_values
from rar_opt.instance import Instance
from rar_opt.schedule import Schedule


@dataclass(frozen=True)
class Options:
    """Options of RAR-DDLS as stated: only the slots modelled (its objective is the makespan)."""

    horizon: int | None = None  # slots to model (at most the instance's T); default T

    def __post_init__(self) -> None:
        check_count(self.horizon, "horizon", optional=True)


@dataclass(frozen=True)
class NonconvexData:
    """The constants the row families read, taken once from the instance and its time model."""

    horizon: int
    n_jobs: int
    n_servers: int
    gpus: list[int]
    cap: list[int]
    iters: list[int]
    ring: list[float]  # 2 m_j (G_j - 1) / G_j
    fixed: list[float]  # reduction + forward + backward time
    phi_top: list[int]  # iterations per slot at best
    xi1: float
    xi2: float
    alpha: float
    b_inter: float
    b_intra: float
    b_low: float  # the least bandwidth a split job can get (p = J)
    f: Contention

    @classmethod
    def of(cls, instance: Instance, horizon: int) -> NonconvexData:
        """The constants of ``instance`` over ``horizon`` slots."""
        c, arr, tm = instance.cluster, instance.arrays, instance.time_model
        return cls(
            horizon=horizon,
            n_jobs=instance.num_jobs,
            n_servers=instance.num_servers,
            gpus=[int(g) for g in arr.gpus],
            cap=[int(o) for o in c.servers],
            iters=[int(f) for f in arr.iterations],
            ring=[float(v) for v in tm.ring_volume],
            fixed=[float(v) for v in tm.fixed_time],
            phi_top=[int(v) for v in instance.bounds.phi_max],
            xi1=c.xi1,
            xi2=c.xi2,
            alpha=c.alpha,
            b_inter=tm.b_inter,  # the time model's: an explicit star may set it by its uplinks
            b_intra=c.b_intra,
            b_low=float(tm.bandwidth(np.array(instance.num_jobs), np.array(2))),
            f=c.contention,
        )


def build(instance: Instance, options: Options | None = None) -> pyo.ConcreteModel:
    """The MINLP of ``instance`` over ``options.horizon`` slots (default: the instance's T)."""
    require_star(instance, "the nonconvex formulation")
    options = options or Options()
    d = NonconvexData.of(instance, resolve_horizon(options.horizon, instance))
    m = pyo.ConcreteModel(name=f"rar-ddls[{instance.name}]")
    m.J = pyo.RangeSet(0, d.n_jobs - 1, doc="jobs j")
    m.S = pyo.RangeSet(0, d.n_servers - 1, doc="servers s")
    m.T = pyo.RangeSet(0, d.horizon - 1, doc="slots t")
    _variables(m, d)
    for j, r in enumerate(instance.releases.tolist()):  # no start before the release r_j (docs/arrivals.md)
        for t in range(min(r, d.horizon)):
            m.x[j, t].fix(0)
    _placement_rows(m, d)
    _activity_rows(m, d)
    _contention_rows(m, d)
    _rate_rows(m, d)

    @m.Constraint(m.J, doc="makespan >= C_j = (first slot with D = 1) + 1")
    def makespan_def(m, j):
        return m.makespan >= d.horizon + 1 - sum(m.D[j, t] for t in m.T)

    m.obj = pyo.Objective(expr=m.makespan, sense=pyo.minimize, doc="RAR-DDLS objective: max_j C_j")
    m.rar = ModelData("nonconvex", instance.name, d.horizon, options)
    return m


def _n_of(m: pyo.ConcreteModel, j: int) -> pyo.Expression:
    return sum(m.z[j, s] for s in m.S)


def _started(m: pyo.ConcreteModel, j: int, t: int) -> pyo.Expression:
    return sum(m.x[j, tt] for tt in range(t + 1))


def _done_iterations(m: pyo.ConcreteModel, j: int, t: int) -> pyo.Expression:
    return sum(m.phi[j, tt] * m.u[j, tt] for tt in range(t + 1))


def _variables(m: pyo.ConcreteModel, d: NonconvexData) -> None:
    gpus, cap, phi_top, n_jobs, horizon = d.gpus, d.cap, d.phi_top, d.n_jobs, d.horizon
    m.Y = pyo.Var(
        m.J,
        m.S,
        domain=pyo.NonNegativeIntegers,
        bounds=lambda _, j, s: (0, min(gpus[j], cap[s])),
        doc="(5) Y[j,s]: GPUs of job j on server s while it runs (non-negative integer)",
    )
    m.y = pyo.Var(
        m.J,
        m.S,
        m.T,
        domain=pyo.NonNegativeIntegers,
        bounds=lambda _, j, s, t: (0, min(gpus[j], cap[s])),
        doc="(5) y_js[t]: GPUs of job j on server s in slot t",
    )
    m.z = pyo.Var(m.J, m.S, domain=pyo.Binary, doc="z[j,s] = 1{Y[j,s] > 0}")
    m.split = pyo.Var(m.J, domain=pyo.Binary, doc="split[j] = 1{job j spans >= 2 servers}")
    m.x = pyo.Var(m.J, m.T, domain=pyo.Binary, doc="x[j,t] = 1: job j starts in slot t")
    m.u = pyo.Var(m.J, m.T, domain=pyo.Binary, doc="u[j,t] = 1: job j runs in slot t")
    m.D = pyo.Var(m.J, m.T, domain=pyo.Binary, doc="D[j,t] = 1: job j has completed by the end of slot t")
    m.c = pyo.Var(m.S, m.T, domain=pyo.NonNegativeReals, bounds=(0, n_jobs), doc="(6) c_s[t]: split jobs on s")
    m.sel = pyo.Var(m.J, m.S, m.T, domain=pyo.Binary, doc="(6) the server whose c_s[t] is the max for job j")
    m.p = pyo.Var(m.J, m.T, domain=pyo.NonNegativeReals, bounds=(0, n_jobs), doc="(6) p_j[t]")
    m.kmax = pyo.Var(m.J, m.T, domain=pyo.Binary, doc="(7) 1 when xi1 p_j[t] >= 1 (the max is xi1 p)")
    m.k = pyo.Var(m.J, m.T, bounds=(1.0, max(1.0, d.xi1 * n_jobs)), doc="(7) k_j[t] = max(1, xi1 p_j[t])")
    m.B = pyo.Var(
        m.J,
        m.T,
        bounds=(d.b_low, max(d.b_inter, d.b_intra)),  # p <= J
        doc="bottleneck bandwidth B_j[t]",
    )
    m.tau = pyo.Var(m.J, m.T, domain=pyo.NonNegativeReals, doc="(8) per-iteration time tau_j[t]")
    m.phi = pyo.Var(
        m.J,
        m.T,
        domain=pyo.NonNegativeIntegers,
        bounds=lambda _, j, t: (0, phi_top[j]),
        doc="(9) iterations per slot phi_j[t] = floor(1 / tau_j[t])",
    )
    m.makespan = pyo.Var(domain=pyo.NonNegativeReals, bounds=(0, horizon + 1), doc="max_j C_j")


def _placement_rows(m: pyo.ConcreteModel, d: NonconvexData) -> None:
    """(1), (2), (5), no migration, and the indicators z (server used) and split."""

    @m.Constraint(m.J, m.T, doc="(1) gang size: sum_s y_js[t] = G_j while j runs")
    def gang(m, j, t):
        return sum(m.y[j, s, t] for s in m.S) == d.gpus[j] * m.u[j, t]

    @m.Constraint(m.S, m.T, doc="(2) capacity: sum_j y_js[t] <= O_s")
    def capacity(m, s, t):
        return sum(m.y[j, s, t] for j in m.J) <= d.cap[s]

    @m.Constraint(m.J, m.S, m.T, doc="(3)-(4) no migration: y_js[t] = Y[j,s] u[j,t]")
    def no_migration(m, j, s, t):
        return m.y[j, s, t] == m.Y[j, s] * m.u[j, t]

    @m.Constraint(m.J, m.S, doc="indicator: Y[j,s] > 0 iff z[j,s] = 1")
    def z_upper(m, j, s):
        return m.Y[j, s] <= min(d.gpus[j], d.cap[s]) * m.z[j, s]

    @m.Constraint(m.J, m.S, doc="indicator: z[j,s] = 1 implies Y[j,s] >= 1")
    def z_lower(m, j, s):
        return m.Y[j, s] >= m.z[j, s]

    @m.Constraint(m.J, doc="indicator: split = 1{n_j >= 2}, upper side")
    def split_upper(m, j):
        return _n_of(m, j) - 1 <= (d.n_servers - 1) * m.split[j]

    @m.Constraint(m.J, doc="indicator: split = 1{n_j >= 2}, lower side")
    def split_lower(m, j):
        return _n_of(m, j) >= 1 + m.split[j]


def _activity_rows(m: pyo.ConcreteModel, d: NonconvexData) -> None:
    """(3), (4): one start, no preemption, first-passage completion."""

    @m.Constraint(m.J, doc="(3)-(4) one start, no preemption")
    def one_start(m, j):
        return sum(m.x[j, t] for t in m.T) == 1

    @m.Constraint(m.J, m.T, doc="first passage: active iff started and not completed before t")
    def running(m, j, t):
        return m.u[j, t] == _started(m, j, t) - (m.D[j, t - 1] if t > 0 else 0)

    @m.Constraint(m.J, m.T, doc="first passage: D[j,t] = 1 only if Q[j,t] >= F_j")
    def done_if_enough(m, j, t):
        return d.iters[j] * m.D[j, t] <= _done_iterations(m, j, t)

    @m.Constraint(m.J, m.T, doc="first passage: D[j,t] = 0 only if Q[j,t] <= F_j - 1")
    def not_done_if_short(m, j, t):
        return _done_iterations(m, j, t) <= d.iters[j] - 1 + (d.phi_top[j] * (t + 1)) * m.D[j, t]

    @m.Constraint(m.J, doc="every job completes within the horizon")
    def completes(m, j):
        return m.D[j, d.horizon - 1] == 1


def _contention_rows(m: pyo.ConcreteModel, d: NonconvexData) -> None:
    """(6): c_s[t] as a product of indicators, p_j[t] as the max over the job's servers."""

    @m.Constraint(m.S, m.T, doc="(6) c_s[t] = sum_i u[i,t] z[i,s] split[i]")
    def contention_count(m, s, t):
        return m.c[s, t] == sum(m.u[i, t] * m.z[i, s] * m.split[i] for i in m.J)

    @m.Constraint(m.J, m.S, m.T, doc="(6) p_j[t] >= c_s[t] on every server of split job j")
    def p_is_max(m, j, s, t):
        return m.p[j, t] >= m.z[j, s] * m.split[j] * m.c[s, t]

    @m.Constraint(m.J, m.T, doc="(6) p_j[t] is the c_s[t] of one selected server (0 if not split)")
    def p_attained(m, j, t):
        return m.p[j, t] == sum(m.sel[j, s, t] * m.c[s, t] for s in m.S)

    @m.Constraint(m.J, m.T, doc="(6) one server is selected iff j is split")
    def one_selected(m, j, t):
        return sum(m.sel[j, s, t] for s in m.S) == m.split[j]

    @m.Constraint(m.J, m.S, m.T, doc="(6) only a server of job j can be selected")
    def selected_is_used(m, j, s, t):
        return m.sel[j, s, t] <= m.z[j, s]


def _rate_rows(m: pyo.ConcreteModel, d: NonconvexData) -> None:
    """(7)-(9): effective contenders, bandwidth, per-iteration time, floor."""

    @m.Constraint(m.J, m.T, doc="(7) k = max(1, xi1 p): k = 1 when kmax = 0")
    def k_one(m, j, t):
        return m.k[j, t] == (1 - m.kmax[j, t]) * 1.0 + m.kmax[j, t] * d.xi1 * m.p[j, t]

    @m.Constraint(m.J, m.T, doc="(7) k = max(1, xi1 p): it is the larger of the two")
    def k_is_max(m, j, t):
        return m.k[j, t] >= d.xi1 * m.p[j, t]

    @m.Constraint(m.J, m.T, doc="bandwidth of a split job: B f(k) = b_inter")
    def bandwidth_split(m, j, t):
        return m.split[j] * (m.B[j, t] * d.f(m.k[j, t], d.alpha) - d.b_inter) == 0

    @m.Constraint(m.J, m.T, doc="bandwidth of a single-server job: B = b_intra")
    def bandwidth_local(m, j, t):
        return (1 - m.split[j]) * (m.B[j, t] - d.b_intra) == 0

    @m.Constraint(m.J, m.T, doc="(8) tau = 2m(G-1)/(G B) + m(G-1)/(G C) + xi2 n + dF M + dB, times B")
    def iteration_time(m, j, t):
        return (m.tau[j, t] - d.fixed[j] - d.xi2 * _n_of(m, j)) * m.B[j, t] == d.ring[j]

    @m.Constraint(m.J, m.T, doc="(9) floor, lower side: phi tau <= 1")
    def floor_low(m, j, t):
        return m.phi[j, t] * m.tau[j, t] <= 1 + FLOOR_RTOL

    @m.Constraint(m.J, m.T, doc="(9) floor, upper side: (phi + 1) tau > 1")
    def floor_high(m, j, t):
        return (m.phi[j, t] + 1) * m.tau[j, t] >= 1 + FLOOR_RTOL


def fix_to(model: pyo.ConcreteModel, instance: Instance, schedule: Schedule) -> None:
    """Set (and fix) every variable to the values ``schedule`` implies.

    The per-slot quantities come from the simulator; k, B, tau, phi are then evaluated
    with the model's own expressions, so a test can check every constraint and read the
    objective: it must equal the simulator's makespan.
    """
    c = instance.cluster
    tm = instance.time_model
    horizon = model_data(model).horizon
    sv = slot_values(instance, schedule, horizon)
    a, y = schedule.start_array, schedule.placement_array
    split = sv.spans >= 2
    for j in range(instance.num_jobs):
        for s in range(instance.num_servers):
            model.Y[j, s].fix(int(y[j, s]))
            model.z[j, s].fix(int(y[j, s] > 0))
        model.split[j].fix(int(split[j]))
    for t in range(horizon):
        for s in range(instance.num_servers):
            model.c[s, t].fix(int(sv.contention[t, s]))
        for j in range(instance.num_jobs):
            on = bool(sv.active[t, j])
            model.x[j, t].fix(int(a[j] == t))
            model.u[j, t].fix(int(on))
            model.D[j, t].fix(int(sv.done[t, j]))
            for s in range(instance.num_servers):
                model.y[j, s, t].fix(int(y[j, s]) if on else 0)
            p = int(sv.level[t, j])
            model.p[j, t].fix(p)
            servers = [s for s in range(instance.num_servers) if y[j, s] > 0]
            pick = max(servers, key=lambda s: sv.contention[t, s]) if split[j] else None
            for s in range(instance.num_servers):
                model.sel[j, s, t].fix(int(s == pick))
            pa, na, ja = np.array([p]), np.array([sv.spans[j]]), np.array([j])
            model.kmax[j, t].fix(int(c.xi1 * p >= 1.0))
            model.k[j, t].fix(float(tm.effective_contenders(pa)[0]))
            model.B[j, t].fix(float(tm.bandwidth(pa, na)[0]))
            model.tau[j, t].fix(float(tm.tau(pa, na, ja)[0]))
            model.phi[j, t].fix(int(tm.phi(pa, na, ja)[0]))
    model.makespan.fix(sv.makespan)


def read_schedule(model: pyo.ConcreteModel, instance: Instance) -> Schedule:
    """Starts and placements of a solved model."""
    horizon = model_data(model).horizon
    starts = [max(range(horizon), key=lambda t: model.x[j, t].value or 0) for j in range(instance.num_jobs)]
    y = [[round(model.Y[j, s].value or 0) for s in range(instance.num_servers)] for j in range(instance.num_jobs)]
    return Schedule.from_arrays(instance.name, starts, y, meta={"method": "nonconvex-minlp"})
