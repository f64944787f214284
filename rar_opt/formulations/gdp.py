"""The compact model stated disjunctively with Pyomo.GDP, and its MILPs (docs/variants.md).

One disjunctive model, several MILPs: the rows that the compact MILP writes with big-M
terms by hand are stated here as disjunctions, and a Pyomo GDP transformation turns them
into linear rows:

* **server used** (the indicators z of eq. (5)): for every job j and server s, either
  [y[j,s] >= 1] or [y[j,s] = 0]; z[j,s] is the first disjunct's indicator;
* **contention level** (eq. (6)-(9)): for every split-capable job j and slot t, exactly one
  of [level k] for k = 1..P, where [level k] says "on n >= 2 servers, job j makes at most
  phi[j,k,n] iterations in slot t"; the level p_j[t] = sum_k k [level k] enters the
  compact MILP's contention rows unchanged.

Everything else (placement, activity, capacity, symmetry, objective) is the compact
model's (:func:`.compact.assemble`). The disjunctions are exact statements of the same
table and indicators, so the exactness argument of docs/exactness.md carries over.

``transformation``: ``bigm`` (Pyomo computes each M from the variables' bounds), ``hull``
(the convex hull of each disjunction, with disaggregated copies of its variables: larger,
and the tightest per disjunction), or ``mbigm`` (a separate M per pair of disjuncts,
computed by solving small LPs with HiGHS at build time: the only transformation that
solves anything while building).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyomo.environ as pyo
from pyomo.gdp import Disjunct, Disjunction

from rar_opt.formulations import compact
from rar_opt.formulations.base import RICH_OBJECTIVES, ModelData, check_choice, check_count, check_flag
from rar_opt.formulations.levels import SplitRate
from rar_opt.instance import Instance

TRANSFORMATIONS = ("bigm", "hull", "mbigm")


@dataclass(frozen=True)
class Options:
    """Options of the disjunctive model (each reachable from a model spec and from ``solve``)."""

    transformation: str = "bigm"  # the GDP transformation: bigm, hull or mbigm
    objective: str = "makespan"  # as the compact MILP's
    symmetry: bool = True  # the compact MILP's symmetry rows
    horizon: int | None = None  # slots to model (at most T); default T
    max_cells: int = 20_000  # refuse jobs x servers x slots beyond this (hull multiplies the variables)

    def __post_init__(self) -> None:
        check_choice(self.transformation, "transformation", TRANSFORMATIONS)
        check_choice(self.objective, "objective", RICH_OBJECTIVES)
        check_flag(self.symmetry, "symmetry")
        check_count(self.horizon, "horizon", optional=True)
        check_count(self.max_cells, "max_cells")


def build_disjunctive(instance: Instance, options: Options | None = None) -> pyo.ConcreteModel:
    """The disjunctive model, before any transformation (for inspection and export)."""
    options = options or Options()
    base = compact.Options(
        objective=options.objective, symmetry=options.symmetry, horizon=options.horizon, max_cells=options.max_cells
    )
    m = compact.assemble(instance, base, level_rows=_level_disjunctions, indicators=False, name="gdp")
    _used_disjunctions(m)
    extra = dict(m.rar.extra)
    m.rar = ModelData("gdp", instance.name, m.rar.horizon, options, {**extra, "transformation": None})
    return m


def build(instance: Instance, options: Options | None = None) -> pyo.ConcreteModel:
    """The disjunctive model transformed into a MILP by ``options.transformation``."""
    options = options or Options()
    m = build_disjunctive(instance, options)
    if options.transformation == "mbigm":
        solver = pyo.SolverFactory("appsi_highs")  # computes the Ms: small LPs, at build time
        # one thread, as our backend: HiGHS keeps one thread scheduler per process, and a
        # solve asking for another thread count afterwards fails ("Not Set")
        solver.options["threads"] = 1
        pyo.TransformationFactory("gdp.mbigm").apply_to(m, solver=solver, threads=1)
    else:
        pyo.TransformationFactory(f"gdp.{options.transformation}").apply_to(m)
    extra = {**m.rar.extra, "transformation": options.transformation}
    m.rar = ModelData("gdp", instance.name, m.rar.horizon, options, extra)
    return m


def _used_disjunctions(m: pyo.ConcreteModel) -> None:
    """z[j,s] = 1 exactly when job j has GPUs on server s: [y >= 1] or [y = 0]."""
    m.on = Disjunct(m.J, m.S, doc="job j has GPUs on server s: y[j,s] >= 1")
    m.off = Disjunct(m.J, m.S, doc="job j has no GPU on server s: y[j,s] = 0")
    for j in m.J:
        for s in m.S:
            m.on[j, s].used = pyo.Constraint(expr=m.y[j, s] >= 1)
            m.off[j, s].unused = pyo.Constraint(expr=m.y[j, s] <= 0)
    m.used = Disjunction(m.J, m.S, rule=lambda m, j, s: [m.on[j, s], m.off[j, s]], doc="server used or not")

    @m.Constraint(m.J, m.S, doc="z[j,s] is the indicator of [y[j,s] >= 1]")
    def z_is_used(m, j, s):
        return m.z[j, s] == m.on[j, s].binary_indicator_var


def _level_disjunctions(m: pyo.ConcreteModel, phi: np.ndarray, levels: int) -> SplitRate:
    """[level k] for k = 1..P per split-capable job and slot (the module docstring); the
    split rate lives in the disjuncts, so the rate rows get none (None)."""
    m.LEVEL1 = pyo.Set(
        initialize=[(j, t, k) for j in m.SPLIT_J for t in m.T for k in range(1, levels + 1)],
        doc="contention levels k = 1..P of split-capable jobs",
    )
    m.at_level = Disjunct(m.LEVEL1, doc="[level k]: split job j runs at the table's rate for k contenders")
    for j, t, k in m.LEVEL1:
        spans = [n for (jj, n) in m.SPAN if jj == j and n >= 2]
        big = int(phi[j].max())
        block = m.at_level[j, t, k]
        gained = m.Q[j, t] - (m.Q[j, t - 1] if t > 0 else 0)
        block.rate = pyo.Constraint(
            spans,
            rule=lambda _, n, j=j, k=k, gained=gained, big=big: gained <= int(phi[j, k, n]) + big * (1 - m.v[j, n]),
            doc="(8)-(9) at level k on n servers",
        )
    m.one_level = Disjunction(
        m.SPLIT_J, m.T, rule=lambda m, j, t: [m.at_level[j, t, k] for k in range(1, levels + 1)], doc="one level"
    )
    m.level = pyo.Expression(
        m.SPLIT_J,
        m.T,
        rule=lambda m, j, t: sum(k * m.at_level[j, t, k].binary_indicator_var for k in range(1, levels + 1)),
        doc="p_j[t]",
    )
    return lambda *_: None


read_schedule = compact.read_schedule
