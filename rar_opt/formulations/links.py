"""The contention rows of the compact MILP on a network topology (docs/model.md section 3.8).

Links l = 0..S-1 are the server uplinks, l = S..S+E-1 the switch-to-switch links e. A
split job's ring uses the uplink of each of its servers and every switch link with some
of its servers on each side; its contention level (``m.level``, from :mod:`.levels`) must
be at least lev[l, c] on every link l it uses that carries c split rings or more, where
lev is the time model's level table (``TimeModel.level_of``): with one bandwidth on every
link it is the count c, as in the paper's (6).

Exactness follows the argument of docs/exactness.md: every indicator here is only bounded
from below (w, hl, a), so at a true schedule they can take their true 0/1 values and the
rows hold, and any point may only overstate a link's count or a job's level, which can
only lower its iterations per slot.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyomo.environ as pyo


def link_rows(
    m: pyo.ConcreteModel,
    side: np.ndarray,
    lev: np.ndarray,
    split: Callable[[pyo.ConcreteModel, int], pyo.Expression],
) -> None:
    """Add the rows to the compact model ``m`` (which has z, u, h, level, the sets J, S, T,
    SPLIT_J). ``side[e, s]``: server s is on one side of switch link e; ``lev[l, c]``: the
    level of link l carrying c rings; ``split(m, j)``: 1 when job j spans two servers or more.

    a[l,t,c] = 1 when link l carries >= c rings in slot t (forced by the count, 1 too often
    only overstates); w[j,e] = 1 when job j has servers on both sides of e; hl[j,e,t] = 1
    when job j counts on e in slot t.
    """
    n_s, n_split = len(m.S), len(m.SPLIT_J)
    m.E = pyo.Set(initialize=range(len(side)), doc="switch-to-switch links e")
    m.w = pyo.Var(m.SPLIT_J, m.E, bounds=(0, 1), doc="w[j,e] = 1: job j's ring crosses link e")
    m.hl = pyo.Var(m.SPLIT_J, m.E, m.T, bounds=(0, 1), doc="hl[j,e,t]: job j counts on link e in slot t")
    cross = [(j, e, s, q) for j in m.SPLIT_J for e in m.E for s in m.S for q in m.S if side[e, s] and not side[e, q]]
    m.CROSS = pyo.Set(initialize=cross, dimen=4, doc="job, link e, a server on each side of e")
    m.crosses = pyo.Constraint(
        m.CROSS, rule=lambda m, j, e, s, q: m.w[j, e] >= m.z[j, s] + m.z[j, q] - 1, doc="w = 1 if j crosses e"
    )
    m.counts_on_link = pyo.Constraint(
        m.SPLIT_J, m.E, m.T, rule=lambda m, j, e, t: m.hl[j, e, t] >= m.u[j, t] + m.w[j, e] - 1, doc="hl = u AND w"
    )

    def count(link: int, t: int) -> pyo.Expression:
        if link < n_s:
            return sum(m.h[i, link, t] for i in m.SPLIT_J)
        return sum(m.hl[i, link - n_s, t] for i in m.SPLIT_J)

    def uses(j: int, link: int) -> pyo.Expression:
        return m.z[j, link] + split(m, j) - 1 if link < n_s else m.w[j, link - n_s]

    steps = [(link, c) for link in range(len(lev)) for c in range(1, lev.shape[1]) if lev[link, c] > 1]
    m.A = pyo.Set(initialize=[(link, t, c) for link, c in steps if c >= 2 for t in m.T], dimen=3)
    m.a = pyo.Var(m.A, domain=pyo.Binary, doc="a[l,t,c] = 1: link l carries >= c split rings in slot t")
    m.link_count = pyo.Constraint(
        m.A,
        rule=lambda m, link, t, c: (n_split - c + 1) * m.a[link, t, c] >= count(link, t) - c + 1,
        doc="a[l,t,c] = 1 when the count reaches c",
    )

    def link_contention(m: pyo.ConcreteModel, j: int, link: int, c: int, t: int) -> pyo.Expression:
        reached = 1 if c == 1 else m.a[link, t, c]  # a job using l is one of its rings
        return m.level[j, t] >= int(lev[link, c]) * (reached - 1 + uses(j, link))

    rows = [(j, link, c, t) for j in m.SPLIT_J for link, c in steps for t in m.T]
    m.LINK_LEVEL = pyo.Set(initialize=rows, dimen=4, doc="split job, link, count, slot")
    m.link_contention = pyo.Constraint(m.LINK_LEVEL, rule=link_contention, doc="(6) p_j[t] >= lev[l, c]")


def set_link_start(m: pyo.ConcreteModel, side: np.ndarray, lev: np.ndarray, y: np.ndarray, active: np.ndarray) -> None:
    """Set w, hl, a and the level variables (g or e) of ``m`` to a schedule's values:
    placements ``y`` (J, S) and activity ``active`` (T, J) from the simulator."""
    on = y > 0
    split = on.sum(axis=1) >= 2
    crosses = (on.astype(np.int64) @ side.T.astype(np.int64) > 0) & ((on & ~side[:, None, :]).any(axis=2).T)
    uses = np.concatenate([on & split[:, None], crosses & split[:, None]], axis=1)  # (J, S + E)
    count = (active[:, :, None] & uses[None]).sum(axis=1)  # (T, S + E)
    reach = np.where(
        uses[None], lev[np.arange(lev.shape[0])[None, :], np.clip(count, 1, lev.shape[1] - 1)][:, None, :], 0
    )
    level = reach.max(axis=2)  # (T, J)
    for (j, e), var in m.w.items():
        var.set_value(int(crosses[j, e]))
    for (j, e, t), var in m.hl.items():
        var.set_value(int(crosses[j, e] and active[t, j]))
    for (link, t, c), var in m.a.items():
        var.set_value(int(count[t, link] >= c))
    for (j, t, k), var in getattr(m, "g", {}).items():
        var.set_value(int(level[t, j] >= k))
    for (j, t, k), var in getattr(m, "e", {}).items():
        var.set_value(int(max(level[t, j], 1) == k))
