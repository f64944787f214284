"""The compact exact MILP: a time-indexed linearisation of RAR-DDLS (docs/model.md section 6).

Builds a Pyomo ``ConcreteModel`` whose optimum equals the optimum of RAR-DDLS (paper,
section 3, (1)-(9)); it never solves (see :mod:`rar_opt.solvers`). Slots t = 0..T-1.

Variables (per job j, server s, slot t)
    x[j,t]   binary   job j starts in slot t
    y[j,s]   integer  GPUs of job j on server s                        (1), (5)
    z[j,s]   binary   y[j,s] > 0
    v[j,n]   binary   job j spans exactly n servers (one-hot)
    u[j,t]   [0,1]    job j holds its GPUs in slot t
    D[j,t]   binary   job j has completed by the end of slot t
    Q[j,t]   >= 0     iterations job j has done in slots 0..t
    g[j,t,k] binary   the contention level of split job j in slot t is >= k (k = 2..P)
    h[j,s,t] [0,1]    job j is active, split and on server s in slot t (counts in c_s)
    r[j,s,t] >= 0     GPUs job j holds on server s in slot t (McCormick of y * u)

Why it is exact (the argument the tests check against brute force):

1. Every feasible schedule maps to a feasible point with the same objective: set u, D, Q
   from the simulator, g to the true contention level, h and r to their products. Each
   linearisation below is exact at 0/1 points: the span one-hot and the indicator links
   z <-> y are exact because y is integer and bounded; the staircase on g reproduces the
   table phi[j, p, n] of (6)-(9) for every p; h is the AND of three 0/1 values; r = y u.
2. Every feasible point maps to a schedule (its starts and placements) whose true
   completion times are no later than the point's, by induction over slots: if through
   slot t-1 no job has done more iterations in the model than in truth, then every job the
   simulator keeps active in slot t is unfinished in the model too, so u >= started - done
   keeps it active in the model; the model's contention counts (h, then g) are therefore
   at least the true ones; phi is non-increasing in the contention count, so the model's
   iterations in slot t are at most the true ones. The true active set being a subset of
   the model's, capacity holds in truth too, and each job completes in truth no later
   than the model declares (D needs Q >= F). So the true makespan is at most the model's.
3. Hence min over the model = min over schedules. Overstating contention (g or h above
   the truth) or keeping a job active after it completed (u above started - done) is
   allowed, but can only lower the model's iterations and tighten capacity, never help.

The model is assembled from row families, one function each (placement, activity,
rates, capacity, cuts, symmetry, objective), over a typed :class:`CompactData` of the
constants they need; ``model.rar`` records how it was built.

Releases (docs/arrivals.md): x[j,t] exists only for t >= r_j, and D[j,t] is fixed to 0
before r_j + rho_min_j - 1; nothing else changes, so the exactness argument is the same
over the schedules that respect releases.

Options: objective ``makespan``, ``total`` (sum of completion times), ``flow`` (sum of
C_j - r_j, the total less a constant), ``weighted``
(sum_j w_j C_j with the jobs' weights, as integer coefficients: see
:func:`~rar_opt.formulations.base.weight_coefficients`) or ``lexicographic`` (makespan
first, then the sum of completion times, as the single objective M * makespan + sum_j C_j
with M = J T + 1 > any sum of completion times, so no makespan is traded for a shorter
sum); ``linearization`` of the rate staircase (``staircase``: the threshold binaries g
below; ``onehot``: one binary e[j,t,k] per contention level k = 1..P, exactly one set,
the level sum_k k e and the rate sum_k phi[j,k,n] e: both exact by the same argument, as
each is exact at 0/1 points); ``relaxation`` (docs/variants.md): ``lp`` relaxes every
integer variable, ``preemptive`` drops the no-preemption rows ``active_until_done`` so
that jobs may pause while keeping their placement (every schedule is still a point of the
model, so its optimum is a lower bound), ``contention-free`` is the CP-SAT model of
:mod:`.cfree` (built by :mod:`.relax`); :func:`build` refuses relaxations, whose solves
give a bound and never a schedule (:func:`assemble` builds them); ``started``
(``sum``: "job j has started by slot t" is the sum of its start binaries up to t, as in
the paper's statement; ``cumulative``: a variable S[j,t] = S[j,t-1] + x[j,t], so that rows
grow linearly in T rather than quadratically; both exact); ``symmetry``
(identical jobs start in index order; identical servers are ordered by a column key,
both valid because permuting identical jobs or servers maps schedules to schedules with
equal objective); ``horizon`` to use fewer slots than the instance's T (for example a
heuristic's makespan, which every optimal schedule meets); ``cuts`` for valid
inequalities from the jobs' best execution times (off by default: measured slower, see
docs/exactness.md); ``max_cells`` to refuse models too large to build quickly.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyomo.environ as pyo

from rar_opt.errors import InputError
from rar_opt.formulations import symmetry
from rar_opt.formulations.base import (
    RELAXATIONS,
    RICH_OBJECTIVES,
    ModelData,
    check_choice,
    check_count,
    check_flag,
    lexicographic_multiplier,
    resolve_horizon,
    weight_coefficients,
)
from rar_opt.formulations.data import CompactData
from rar_opt.formulations.levels import LEVEL_ROWS, LevelRows
from rar_opt.formulations.links import link_rows
from rar_opt.instance import Instance
from rar_opt.schedule import Schedule

STARTED = ("sum", "cumulative")
LINEARIZATIONS = tuple(LEVEL_ROWS)
"""How the rate table phi[j, p, n] over contention levels becomes linear rows (:mod:`.levels`)."""


@dataclass(frozen=True)
class Options:
    """Options of the compact MILP (each reachable from a model spec and from ``solve``)."""

    objective: str = "makespan"  # makespan, total, weighted or lexicographic (see the docstring)
    symmetry: bool = True  # symmetry-breaking rows for identical jobs and servers
    cuts: bool = False  # valid inequalities from best execution times: measured slower, so off
    horizon: int | None = None  # slots to model (at most the instance's T); default T
    max_cells: int = 200_000  # refuse jobs x servers x slots beyond this (about 5 rows per cell)
    started: str = "sum"  # "sum" of start binaries, or a "cumulative" variable (see the docstring)
    linearization: str = "staircase"  # of the rate table: "staircase" or "onehot"
    relaxation: str = "none"  # "lp", "preemptive" or "contention-free": a bound only (docs/variants.md)

    def __post_init__(self) -> None:
        check_choice(self.objective, "objective", RICH_OBJECTIVES)
        check_choice(self.linearization, "linearization", LINEARIZATIONS)
        check_choice(self.relaxation, "relaxation", RELAXATIONS)
        if self.relaxation == "contention-free" and self.objective != "makespan":
            raise InputError(
                f"the contention-free relaxation bounds the makespan only, not the {self.objective} objective",
                where="options.relaxation",
            )
        check_flag(self.symmetry, "symmetry")
        check_flag(self.cuts, "cuts")
        check_count(self.horizon, "horizon", optional=True)
        check_count(self.max_cells, "max_cells")
        check_choice(self.started, "started", STARTED)


def build(instance: Instance, options: Options | None = None) -> pyo.ConcreteModel:
    """The compact MILP of ``instance`` (see the module docstring); a relaxation is refused:
    solving it gives a bound, not a schedule (:mod:`rar_opt.studies.variants` solves it as one)."""
    options = options or Options()
    if options.relaxation != "none":
        raise InputError(
            f"= {options.relaxation!r}: a relaxation gives a bound, never a schedule, and solve reports "
            "schedules; use `rar-opt variants` (or rar_opt.studies.variants.measure) for its bound",
            where="options.relaxation",
        )
    return assemble(instance, options)


def assemble(
    instance: Instance,
    options: Options,
    *,
    level_rows: LevelRows | None = None,
    indicators: bool = True,
    name: str = "compact",
) -> pyo.ConcreteModel:
    """The compact model with ``options`` (the ``preemptive`` relaxation included; ``lp`` is
    applied by :mod:`.relax`). ``level_rows`` replaces the linearization of the rate of
    split jobs (:mod:`.levels`), and ``indicators=False`` leaves out the z <-> y rows, for a formulation (GDP)
    that states them its own way."""
    horizon = resolve_horizon(options.horizon, instance)
    d = CompactData.of(instance, horizon)
    cells = instance.num_jobs * instance.num_servers * horizon
    if cells > options.max_cells:
        raise InputError(
            f"the compact MILP would have {cells:,} job-server-slot cells (limit {options.max_cells:,}): "
            "it is meant for small instances; a shorter horizon (the option horizon, or solve --warm-start) "
            "or a larger max_cells option (memory permitting) lets it through, or use a heuristic",
            where="instance",
        )
    m = pyo.ConcreteModel(name=f"{name}[{instance.name}]")
    _sets(m, instance, d)
    _variables(m, d, options)
    _placement_rows(m, d, indicators)
    _activity_rows(m, d, preemptive=options.relaxation == "preemptive")
    _rate_rows(m, d, (level_rows or LEVEL_ROWS[options.linearization])(m, d.phi, d.levels))
    _capacity_rows(m, d)
    if options.cuts:
        _cut_rows(m, d)
    if options.symmetry:
        _symmetry_rows(m, instance, d)
    extra = _objective(m, instance, d, options.objective)
    m.rar = ModelData(name, instance.name, horizon, options, {"levels": d.levels, **extra})
    return m


# -- the parts of the model, in build order -------------------------------------------------
def _sets(m: pyo.ConcreteModel, instance: Instance, d: CompactData) -> None:
    n_jobs, n_servers, horizon = instance.num_jobs, instance.num_servers, d.horizon
    m.J = pyo.RangeSet(0, n_jobs - 1, doc="jobs j")
    m.S = pyo.RangeSet(0, n_servers - 1, doc="servers s")
    m.T = pyo.RangeSet(0, horizon - 1, doc="slots t")
    m.JT = pyo.Set(initialize=[(j, t) for j in range(n_jobs) for t in range(horizon)], doc="job-slot pairs")
    m.START = pyo.Set(
        within=m.JT,
        initialize=[(j, t) for j in range(n_jobs) for t in range(d.release[j], horizon - d.rho_min[j] + 1)],
        doc="slots where job j may start: from its release r_j, and still complete by T",
    )
    m.SPAN = pyo.Set(
        initialize=[(j, n) for j in range(n_jobs) for n in range(d.n_lo[j], d.n_hi[j] + 1)], doc="(job, span)"
    )
    m.SPLIT_J = pyo.Set(initialize=[j for j in range(n_jobs) if d.splittable[j]], doc="jobs that can span >= 2 servers")
    m.LEVEL = pyo.Set(
        initialize=[(j, t, k) for j in m.SPLIT_J for t in range(horizon) for k in range(2, d.levels + 1)],
        doc="contention levels k = 2..P of split-capable jobs",
    )
    m.SPLIT_JST = pyo.Set(
        initialize=[(j, s, t) for j in m.SPLIT_J for s in range(n_servers) for t in range(horizon)],
        doc="split-capable job, server, slot",
    )
    m.JST = pyo.Set(
        initialize=[(j, s, t) for j in range(n_jobs) for s in range(n_servers) for t in range(horizon)],
        doc="job, server, slot",
    )


def _variables(m: pyo.ConcreteModel, d: CompactData, options: Options) -> None:
    gpus, cap, horizon = d.gpus, d.cap, d.horizon
    m.x = pyo.Var(m.START, domain=pyo.Binary, doc="x[j,t] = 1: job j starts in slot t (a_j = t)")
    m.y = pyo.Var(
        m.J,
        m.S,
        domain=pyo.NonNegativeIntegers,
        bounds=lambda _, j, s: (0, min(gpus[j], cap[s])),
        doc="y[j,s]: GPUs of job j on server s, eq. (1), (5)",
    )
    m.z = pyo.Var(m.J, m.S, domain=pyo.Binary, doc="z[j,s] = 1{y[j,s] > 0}")
    m.v = pyo.Var(m.SPAN, domain=pyo.Binary, doc="v[j,n] = 1: job j spans n servers")
    m.u = pyo.Var(m.JT, bounds=(0, 1), doc="u[j,t]: job j holds its GPUs in slot t")
    m.D = pyo.Var(m.JT, domain=pyo.Binary, doc="D[j,t] = 1: job j has completed by the end of slot t")
    m.Q = pyo.Var(
        m.JT, bounds=lambda _, j, t: (0, d.phi_max[j] * (t + 1)), doc="Q[j,t]: iterations of job j in slots 0..t"
    )
    m.h = pyo.Var(m.SPLIT_JST, bounds=(0, 1), doc="h[j,s,t]: job j counts in c_s[t] (active, split, on s)")
    m.r = pyo.Var(m.JST, domain=pyo.NonNegativeReals, doc="r[j,s,t] = y[j,s] u[j,t]: GPUs held, for (2)")
    earliest = [r + rho for r, rho in zip(d.release, d.rho_min, strict=True)]
    m.makespan = pyo.Var(domain=pyo.NonNegativeReals, bounds=(max(earliest), horizon), doc="max_j C_j")
    for j in m.J:  # nobody completes before its release plus its fastest execution time
        for t in range(min(earliest[j] - 1, horizon)):
            m.D[j, t].fix(0)

    if options.started == "cumulative":
        m.started = pyo.Var(m.JT, bounds=(0, 1), doc="started[j,t] = sum of x[j,t'] for t' <= t")

        @m.Constraint(m.JT, doc="started[j,t] = started[j,t-1] + x[j,t]")
        def started_def(m, j, t):
            prev = m.started[j, t - 1] if t > 0 else 0
            return m.started[j, t] == prev + (m.x[j, t] if (j, t) in m.START else 0)

        m.has_started = pyo.Expression(m.JT, rule=lambda m, j, t: m.started[j, t], doc="job j started by slot t")
    else:
        m.has_started = pyo.Expression(
            m.JT,
            rule=lambda m, j, t: sum(m.x[j, tt] for tt in range(t + 1) if (j, tt) in m.START),
            doc="job j started by slot t: the sum of its start binaries",
        )
    m.completion = pyo.Expression(
        m.J,
        rule=lambda _, j: horizon + 1 - sum(m.D[j, t] for t in range(horizon)),
        doc="C_j = first slot with D = 1, plus 1",
    )


def _started(m: pyo.ConcreteModel, j: int, t: int) -> pyo.Expression:
    return m.has_started[j, t] if t >= 0 else 0


def _split(m: pyo.ConcreteModel, d: CompactData, j: int) -> pyo.Expression:
    return sum(m.v[j, n] for n in range(max(2, d.n_lo[j]), d.n_hi[j] + 1))


def _gained(m: pyo.ConcreteModel, j: int, t: int) -> pyo.Expression:
    return m.Q[j, t] - (m.Q[j, t - 1] if t > 0 else 0)


def _placement_rows(m: pyo.ConcreteModel, d: CompactData, indicators: bool = True) -> None:
    """(1), (5) and the indicators z (server used; unless ``indicators`` is False) and v (span)."""
    gpus, cap, n_lo, n_hi = d.gpus, d.cap, d.n_lo, d.n_hi

    @m.Constraint(m.J, doc="(1) gang size: sum_s y[j,s] = G_j")
    def gang(m, j):
        return sum(m.y[j, s] for s in m.S) == gpus[j]

    if indicators:

        @m.Constraint(m.J, m.S, doc="y[j,s] > 0 implies z[j,s] = 1")
        def z_upper(m, j, s):
            return m.y[j, s] <= min(gpus[j], cap[s]) * m.z[j, s]

        @m.Constraint(m.J, m.S, doc="z[j,s] = 1 implies y[j,s] >= 1")
        def z_lower(m, j, s):
            return m.y[j, s] >= m.z[j, s]

    @m.Constraint(m.J, doc="exactly one span n_j")
    def one_span(m, j):
        return sum(m.v[j, n] for n in range(n_lo[j], n_hi[j] + 1)) == 1

    @m.Constraint(m.J, doc="n_j = number of servers with y > 0")
    def span_count(m, j):
        return sum(m.z[j, s] for s in m.S) == sum(n * m.v[j, n] for n in range(n_lo[j], n_hi[j] + 1))


def _activity_rows(m: pyo.ConcreteModel, d: CompactData, preemptive: bool = False) -> None:
    """(3), (4): one start, no preemption (left out by the ``preemptive`` relaxation), and
    first-passage completion."""
    horizon, iters = d.horizon, d.iters

    @m.Constraint(m.J, doc="(3)-(4) one start per job, no preemption")
    def one_start(m, j):
        return sum(m.x[j, t] for t in range(horizon) if (j, t) in m.START) == 1

    @m.Constraint(m.JT, doc="not active before the start")
    def active_after_start(m, j, t):
        return m.u[j, t] <= _started(m, j, t)

    if not preemptive:

        @m.Constraint(m.JT, doc="(4) no preemption: active from the start until completed (first passage)")
        def active_until_done(m, j, t):
            return m.u[j, t] >= _started(m, j, t) - (m.D[j, t - 1] if t > 0 else 0)

    @m.Constraint(m.JT, doc="completion is final: D[j,t] <= D[j,t+1]")
    def done_stays_done(m, j, t):
        return pyo.Constraint.Skip if t == horizon - 1 else m.D[j, t] <= m.D[j, t + 1]

    @m.Constraint(m.J, doc="every job completes by the horizon")
    def done_by_horizon(m, j):
        return m.D[j, horizon - 1] == 1

    @m.Constraint(m.JT, doc="completed only when F_j iterations are done")
    def done_needs_iterations(m, j, t):
        return iters[j] * m.D[j, t] <= m.Q[j, t]


def _rate_rows(m: pyo.ConcreteModel, d: CompactData, split_rate: Callable[..., pyo.Expression | None]) -> None:
    """(6)-(9): iterations per slot as the table phi[j, p, n]; the rate of split jobs comes
    from the linearization (``split_rate``), the contention level is ``m.level``."""
    phi, phi_max, levels = d.phi, d.phi_max, d.levels

    @m.Constraint(m.JT, doc="(9) no iterations while inactive, at most phi_max")
    def rate_active(m, j, t):
        return _gained(m, j, t) <= phi_max[j] * m.u[j, t]

    @m.Constraint(m.JT, doc="Q is cumulative: no negative progress")
    def rate_nonnegative(m, j, t):
        return _gained(m, j, t) >= 0

    @m.Constraint(m.SPAN, m.T, doc="(8)-(9) single server: phi[j,0,1]; split: the linearized table")
    def rate_table(m, j, n, t):
        relax = phi_max[j] * (1 - m.v[j, n])
        if n == 1:
            return _gained(m, j, t) <= int(phi[j, 0, 1]) + relax
        cap = split_rate(m, j, n, t)
        return pyo.Constraint.Skip if cap is None else _gained(m, j, t) <= cap + relax

    if d.link_level is not None and d.link_side is not None:  # a topology (docs/model.md section 3.8)
        link_rows(m, d.link_side, d.link_level, lambda m, j: _split(m, d, j))
    else:

        @m.Constraint(m.SPLIT_JST, doc="(6) p_j[t] >= c_s[t] on every server s of split job j")
        def contention(m, j, s, t):
            level = m.level[j, t]
            c_st = sum(m.h[i, s, t] for i in m.SPLIT_J)
            return level >= c_st - levels * (1 - m.z[j, s]) - levels * (1 - _split(m, d, j))

    @m.Constraint(m.SPLIT_JST, doc="(6) h = u AND z AND split: job j counts in c_s[t]")
    def counts_in_contention(m, j, s, t):
        return m.h[j, s, t] >= m.u[j, t] + m.z[j, s] + _split(m, d, j) - 2


def _capacity_rows(m: pyo.ConcreteModel, d: CompactData) -> None:
    """(2): GPUs held on a server never exceed its capacity."""
    gpus, cap = d.gpus, d.cap

    @m.Constraint(m.JST, doc="r >= y u (McCormick; r is pushed down by the capacity rows)")
    def held(m, j, s, t):
        return m.r[j, s, t] >= m.y[j, s] - min(gpus[j], cap[s]) * (1 - m.u[j, t])

    @m.Constraint(m.S, m.T, doc="(2) capacity: GPUs held on server s in slot t <= O_s")
    def capacity(m, s, t):
        return sum(m.r[j, s, t] for j in m.J) <= cap[s]


def _cut_rows(m: pyo.ConcreteModel, d: CompactData) -> None:
    """Valid inequalities every real schedule satisfies. They only remove model points, so
    direction 2 of docs/exactness.md still holds."""
    rho_min, gpus, horizon = d.rho_min, d.gpus, d.horizon
    n_gpus = sum(d.cap)

    @m.Constraint(m.JT, doc="cut: done by slot t only if started by t - rho_min_j + 1")
    def earliest_done(m, j, t):
        return m.D[j, t] <= _started(m, j, t - rho_min[j] + 1) if t - rho_min[j] + 1 >= 0 else m.D[j, t] == 0

    @m.Constraint(m.J, doc="cut: C_j >= a_j + rho_min_j")
    def completion_after_start(m, j):
        return m.completion[j] >= sum((t + rho_min[j]) * m.x[j, t] for t in range(horizon) if (j, t) in m.START)

    @m.Constraint(m.J, doc="cut: a job holds its GPUs for at least rho_min_j slots")
    def busy_at_least(m, j):
        return sum(m.u[j, t] for t in m.T) >= rho_min[j]

    @m.Constraint(doc="cut: GPU-slots in use <= N x makespan")
    def gpu_slots(m):
        return sum(gpus[j] * m.u[j, t] for j in m.J for t in m.T) <= n_gpus * m.makespan


def _symmetry_rows(m: pyo.ConcreteModel, instance: Instance, d: CompactData) -> None:
    """Identical jobs start in index order; identical servers are ordered by a column key.
    Valid: permuting identical jobs or servers maps schedules to schedules of equal objective."""
    n_jobs, n_servers, horizon, cap = instance.num_jobs, instance.num_servers, d.horizon, d.cap
    same_jobs = [(j, j + 1) for j in range(n_jobs - 1) if same_job(instance, j, j + 1)]
    m.same_jobs = pyo.Set(initialize=same_jobs, dimen=2, doc="consecutive identical jobs")

    @m.Constraint(m.same_jobs, doc="identical jobs start in index order")
    def identical_jobs(m, j, k):
        return sum(t * m.x[j, t] for t in range(horizon) if (j, t) in m.START) <= sum(
            t * m.x[k, t] for t in range(horizon) if (k, t) in m.START
        )

    links = instance.time_model.links

    def twins(s: int) -> bool:  # on a topology twins also share their uplink's bandwidth and their switch
        if cap[s] != cap[s + 1] or links is None:
            return cap[s] == cap[s + 1]
        same_side = np.array_equal(links.inner_side[:, s], links.inner_side[:, s + 1])
        return bool(links.server_bw[s] == links.server_bw[s + 1] and same_side)

    same_servers = [(s, s + 1) for s in range(n_servers - 1) if twins(s)]
    m.same_servers = pyo.Set(initialize=same_servers, dimen=2, doc="consecutive identical servers")

    @m.Constraint(m.same_servers, doc="identical servers ordered by the key sum_j (j+1) y[j,s]")
    def identical_servers(m, s, s2):
        return sum((j + 1) * m.y[j, s] for j in m.J) >= sum((j + 1) * m.y[j, s2] for j in m.J)


def _objective(m: pyo.ConcreteModel, instance: Instance, d: CompactData, objective: str) -> dict[str, int]:
    """The objective; returns what reading its value needs (the weights' scale K, the
    lexicographic multiplier M), recorded in ``model.rar.extra``."""

    @m.Constraint(m.J, doc="makespan >= C_j")
    def makespan_def(m, j):
        return m.makespan >= m.completion[j]

    total = sum(m.completion[j] for j in m.J)
    if objective == "makespan":
        m.obj = pyo.Objective(expr=m.makespan, sense=pyo.minimize, doc="RAR-DDLS objective: max_j C_j")
        return {}
    if objective == "total":
        m.obj = pyo.Objective(expr=total, sense=pyo.minimize, doc="sum_j C_j")
        return {}
    if objective == "flow":  # the total less a constant: the value read is the flow time itself
        released = sum(d.release)
        m.obj = pyo.Objective(expr=total - released, sense=pyo.minimize, doc="sum_j (C_j - r_j)")
        return {"flow_offset": released}
    if objective == "weighted":
        coefficients, scale = weight_coefficients([job.weight for job in instance.jobs])
        expr = sum(coefficients[j] * m.completion[j] for j in m.J)
        m.obj = pyo.Objective(expr=expr, sense=pyo.minimize, doc=f"K sum_j w_j C_j with K = {scale}")
        return {"objective_scale": scale}
    multiplier = lexicographic_multiplier(instance.num_jobs, d.horizon)
    doc = f"lexicographic: {multiplier} max_j C_j + sum_j C_j"
    m.obj = pyo.Objective(expr=multiplier * m.makespan + total, sense=pyo.minimize, doc=doc)
    return {"lexicographic_multiplier": multiplier}


def read_schedule(model: pyo.ConcreteModel, instance: Instance) -> Schedule:
    """The starts and placements of a solved (or warm-started) model."""
    n_jobs, n_servers = instance.num_jobs, instance.num_servers
    starts = np.zeros(n_jobs, dtype=np.int64)
    best = np.full(n_jobs, -1.0)
    for (j, t), var in model.x.items():
        if var.value is not None and var.value > best[j]:
            best[j], starts[j] = var.value, t
    y = np.array([[round(model.y[j, s].value or 0) for s in range(n_servers)] for j in range(n_jobs)])
    return Schedule.from_arrays(instance.name, starts, y, meta={"method": "compact-milp"})


def same_job(instance: Instance, j: int, k: int) -> bool:
    """Whether jobs j and k have the same data (all but the name)."""
    return symmetry.job_key(instance.jobs[j]) == symmetry.job_key(instance.jobs[k])
