"""The linearizations of the rate table phi[j, p, n] over contention levels (eq. (6)-(9)),
for the compact MILP (:mod:`.compact`; docs/variants.md).

Each adds its level variables and ``m.level[j,t]`` (the contention level p_j[t] of split
job j in slot t, read by the contention rows) to a model that already has the sets
``SPLIT_J``, ``T`` and ``LEVEL`` of the compact MILP, and returns the rate of a split job:
a function (model, j, n, t) -> the most iterations job j can make in slot t on n >= 2
servers. Both are exact at 0/1 points, which is all the exactness argument of
docs/exactness.md asks of them: the model then picks the lowest level at least the true
contention, where phi is largest.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyomo.environ as pyo

SplitRate = Callable[[pyo.ConcreteModel, int, int, int], pyo.Expression | None]
"""(model, j, n, t) -> the rate cap of split job j on n servers in slot t (None: the
model states it elsewhere, as the GDP model does in its disjuncts)."""


def _staircase(m: pyo.ConcreteModel, phi: np.ndarray, levels: int) -> SplitRate:
    """Threshold binaries g[j,t,k] = 1{p_j[t] >= k}, k = 2..P: the level is 1 + sum_k g and
    the rate phi[j,1,n] minus the steps phi[j,k-1,n] - phi[j,k,n] of the levels reached."""
    m.g = pyo.Var(m.LEVEL, domain=pyo.Binary, doc="g[j,t,k] = 1: contention p_j[t] >= k, eq. (6)")
    m.level = pyo.Expression(
        m.SPLIT_J, m.T, rule=lambda m, j, t: 1 + sum(m.g[j, t, k] for k in range(2, levels + 1)), doc="p_j[t]"
    )

    @m.Constraint(m.LEVEL, doc="levels are monotone: g[j,t,k] >= g[j,t,k+1]")
    def level_order(m, j, t, k):
        return pyo.Constraint.Skip if k == levels else m.g[j, t, k] >= m.g[j, t, k + 1]

    def rate(m: pyo.ConcreteModel, j: int, n: int, t: int) -> pyo.Expression:
        steps = sum(int(phi[j, k - 1, n] - phi[j, k, n]) * m.g[j, t, k] for k in range(2, levels + 1))
        return int(phi[j, 1, n]) - steps

    return rate


def _onehot(m: pyo.ConcreteModel, phi: np.ndarray, levels: int) -> SplitRate:
    """One binary e[j,t,k] per contention level k = 1..P, exactly one set: the level is
    sum_k k e and the rate sum_k phi[j,k,n] e (a unary expansion of the level)."""
    m.LEVEL1 = pyo.Set(
        initialize=[(j, t, k) for j in m.SPLIT_J for t in m.T for k in range(1, levels + 1)],
        doc="contention levels k = 1..P of split-capable jobs",
    )
    m.e = pyo.Var(m.LEVEL1, domain=pyo.Binary, doc="e[j,t,k] = 1: contention p_j[t] = k, eq. (6)")
    m.level = pyo.Expression(
        m.SPLIT_J, m.T, rule=lambda m, j, t: sum(k * m.e[j, t, k] for k in range(1, levels + 1)), doc="p_j[t]"
    )

    @m.Constraint(m.SPLIT_J, m.T, doc="exactly one contention level")
    def one_level(m, j, t):
        return sum(m.e[j, t, k] for k in range(1, levels + 1)) == 1

    def rate(m: pyo.ConcreteModel, j: int, n: int, t: int) -> pyo.Expression:
        return sum(int(phi[j, k, n]) * m.e[j, t, k] for k in range(1, levels + 1))

    return rate


LevelRows = Callable[[pyo.ConcreteModel, np.ndarray, int], SplitRate]
"""(model, phi, P) -> the split rate, after adding the level variables and ``m.level``."""

LEVEL_ROWS: dict[str, LevelRows] = {
    "staircase": _staircase,
    "onehot": _onehot,
}
"""Each linearization adds its level variables and ``m.level[j,t]`` and returns the split rate."""
