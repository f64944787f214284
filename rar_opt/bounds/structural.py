"""The cheap lower bounds on the optimal makespan: the basic pair and the structural floors.

Each function takes an instance and returns a makespan C such that no feasible schedule
ends before C. They need no solver (numpy, milliseconds to a few seconds at paper scale),
so ``auto`` computes them all before any model (its floor phase). Their names, one-line
summaries and docs sections are in :mod:`rar_opt.bounds.registry`; each argument is in
docs/exactness.md ("Structural floors"), and each is checked against every known optimum
and brute force in ``tests/bounds/``.

Facts every bound rests on (docs/model.md sections 2-3): job j holds its placement's
G_j GPUs in every slot from its start a_j to its completion slot e_j, and in each of those
d_j = e_j - a_j + 1 slots it does at most phi_max_j iterations, so d_j >= rho_min_j.
More precisely, on one server it does at most phi_j(0, 1) iterations per slot
(:attr:`Modes.single`), and split over n >= 2 servers at most phi_j(1, max(2, n_min_j))
(:attr:`Modes.split`): the per-iteration time grows with the span and the contention.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from rar_opt.bounds import binpacking
from rar_opt.bounds.rounding import ceil_bound
from rar_opt.cluster.modes import Modes
from rar_opt.cluster.timemodel import NEVER
from rar_opt.instance import Instance

_EPS = 1e-9


def longest_bound(instance: Instance) -> int:
    """max_j rho_min_j: no schedule ends before its longest job at its fastest."""
    return int(instance.modes.rho.max())


def work_bound(instance: Instance) -> int:
    """ceil(sum_j G_j rho_min_j / N): the best-case GPU-slots over the cluster's N GPUs."""
    m = instance.modes
    return ceil_bound(float(np.sum(m.gpus * m.rho)) / m.num_gpus)


def trivial_floor(instance: Instance) -> int:
    """The larger of :func:`longest_bound` and :func:`work_bound`, where the scans start."""
    return max(longest_bound(instance), work_bound(instance))


# -- (a) energetic reasoning on the cluster --------------------------------------------------
def energetic_bound(instance: Instance) -> int:
    """The smallest C >= the trivial floor that passes the energetic test on [0, C).

    For an interval of slots [t1, t2) inside [0, C), a job of length d >= p placed inside
    [0, C) overlaps it for at least max(0, min(t2 - t1, p - t1, p - (C - t2))) slots, so
    the GPU-slots of all jobs there are at least sum_j G_j of that, which must fit in
    N (t2 - t1). With m = max(t1, C - t2) and D = t2 - t1 the overlap is
    max(0, min(D, p - m)), and the sum over jobs is S(m + D) - S(m) where
    S(x) = sum_{k=1..x} W(k) and W(k) = sum of G_j over jobs with rho_min_j >= k. So the
    test is: for every m, D(u) <= D(m) for all u in [max(m + 1, C - m), C], with
    D(x) = S(x) - N x: one suffix maximum per C.
    """
    m = instance.modes
    n_gpus = m.num_gpus
    start = trivial_floor(instance)
    top = int(m.rho.max())
    # C <= serial sum of rho_min is enough: the test passes there (checked by the loop)
    cap = int(m.rho.sum()) + 1
    hist = np.bincount(m.rho, weights=m.gpus.astype(float), minlength=max(top, cap) + 2)
    weight = hist[::-1].cumsum()[::-1]  # weight[k] = sum of G_j with rho_min_j >= k
    prefix = np.concatenate([[0.0], np.cumsum(weight[1:])])  # prefix[x] = S(x)
    for c in range(start, cap + 1):
        d = prefix[: c + 1] - n_gpus * np.arange(c + 1)
        suffix = np.maximum.accumulate(d[::-1])[::-1]
        left = np.arange(c)
        lo = np.maximum(left + 1, c - left)
        if not np.any(suffix[lo] > d[left] + _EPS):
            return c
    return cap  # pragma: no cover - the test always passes at the serial length


def disjunctive_bound(instance: Instance) -> int:
    """Jobs that can never overlap: the sum of rho_min over jobs with G_j > N / 2 (they
    exclude each other pairwise), and the best pair with G_i + G_j > N.

    With the jobs sorted by G from the largest, the jobs that clash with job j and come
    before it are a prefix of the order (those with G_i > N - G_j), so the best partner of
    j is a prefix maximum of rho_min: O(J log J) for all pairs."""
    m = instance.modes
    n_gpus = m.num_gpus
    big = 2 * m.gpus > n_gpus
    best = int(m.rho[big].sum()) if big.any() else 0
    order = np.argsort(-m.gpus, kind="stable")
    g, r = m.gpus[order].astype(np.int64), m.rho[order].astype(np.int64)
    if len(g) < 2:
        return best
    clash = np.searchsorted(-g, -(n_gpus - g), side="left")  # jobs i with G_i > N - G_j
    before = np.minimum(clash, np.arange(len(g)))  # ... that come before j
    has = before > 0
    if has.any():
        longest = np.maximum.accumulate(r)
        best = max(best, int((r[has] + longest[before[has] - 1]).max()))
    return best


# -- (b) server classes ---------------------------------------------------------------------
def _min_extra(need: float, amount: np.ndarray, cost: np.ndarray) -> float:
    """Least total cost to remove at least ``need`` when item i removes up to ``amount[i]``
    at ``cost[i]`` for all of it, taken fractionally (a lower bound of the 0/1 choice);
    inf when all items together remove less than ``need``."""
    if need <= _EPS:
        return 0.0
    if amount.sum() < need - _EPS:
        return math.inf
    ratio = cost / np.maximum(amount, _EPS)
    order = np.argsort(ratio, kind="stable")
    got = np.cumsum(amount[order])
    k = int(np.searchsorted(got, need - _EPS))
    before = float(cost[order][:k].sum())
    rest = need - (float(got[k - 1]) if k else 0.0)
    return before + float(ratio[order][k]) * rest


def _scan(start: int, cap: int, passes: Callable[[int], bool]) -> int:
    for c in range(start, cap + 1):
        if passes(c):
            return c
    return cap


def _serial(m: Modes) -> int:
    """An upper bound on OPT: every job alone, one after the other, at its best mode."""
    return int(np.minimum(m.single, m.split).sum())


def _mode_costs(m: Modes, c: int, members: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, float] | None:
    """For the jobs in ``members`` and a makespan C: which stay unsplit at least cost (and
    may split), which must stay unsplit, their extra GPU-slots, and the forced extra.

    Returns (unsplit, movable, move_cost, forced_extra) or None when some job fits in
    neither mode within C. A job's extra is its GPU-slots above G_j rho_min_j.
    """
    single_ok = m.single[members] <= c
    split_ok = m.split[members] <= c
    if np.any(~single_ok & ~split_ok):
        return None
    g = m.gpus[members]
    s1, s2 = m.single[members], m.split[members]
    # unsplit by default when it is the cheaper mode, or the only one
    unsplit = single_ok & (~split_ok | (s1 <= s2))
    movable = unsplit & split_ok
    move_cost = np.where(movable, g * (s2 - s1), 0).astype(float)  # >= 0 by the default
    forced = unsplit & ~split_ok
    forced_extra = float(np.sum(g[forced] * (s1[forced] - m.rho[members][forced])))
    return unsplit, movable, move_cost, forced_extra


def classes_bound(instance: Instance) -> int:
    """Per server class A = {s: O_s >= k}: the jobs that fit unsplit on no server outside A
    put all their GPU-slots on A unless they split, which costs G_j (split - single) more
    GPU-slots on the cluster. C is refuted when no fractional choice of splits fits both
    A's N_A C and the cluster's N C."""
    m = instance.modes
    cap, n_gpus = m.capacity, m.num_gpus
    base = float(np.sum(m.gpus * m.rho))
    start, top = trivial_floor(instance), _serial(m)
    tests = []
    for k in np.unique(cap)[1:]:  # the smallest class is the whole cluster: the work bound
        outside = int(cap[cap < k].max())
        members = np.flatnonzero((m.gpus > outside) & (m.single < NEVER))
        if len(members):
            tests.append((int(cap[cap >= k].sum()), members))

    def passes(c: int) -> bool:
        for n_a, members in tests:
            found = _mode_costs(m, c, members)
            if found is None:
                return False
            unsplit, movable, move_cost, forced_extra = found
            energy = m.gpus[members] * m.single[members]
            need = float(energy[unsplit].sum()) - n_a * c
            extra = forced_extra + _min_extra(need, energy[movable].astype(float), move_cost[movable])
            if base + extra > n_gpus * c + _EPS:
                return False
        return True

    return _scan(start, top, passes) if tests else start


def halves_bound(instance: Instance) -> int:
    """Jobs with 2 G_j > O_max fill more than half of every server that hosts them
    unsplit, so two of them never share a server at once. Taking those with G_j >= g
    (hosts: the m_g servers with O_s >= g): unsplit, they need sum of single times
    <= m_g C, and at most m_g of them can be longer than C / 2. Splitting a job lifts it
    out at an extra G_j (split - single) GPU-slots; C is refuted when the cheapest way to
    meet either condition does not fit the cluster's N C."""
    m = instance.modes
    cap, n_gpus = m.capacity, m.num_gpus
    o_max = int(cap.max())
    base = float(np.sum(m.gpus * m.rho))
    big = (2 * m.gpus > o_max) & (m.single < NEVER)
    if not big.any():
        return trivial_floor(instance)
    tests = []
    for g in np.unique(m.gpus[big]):
        members = np.flatnonzero(big & (m.gpus >= g))
        tests.append((int(np.sum(cap >= g)), members))

    def passes(c: int) -> bool:
        for hosts, members in tests:
            found = _mode_costs(m, c, members)
            if found is None:
                return False
            unsplit, movable, move_cost, forced_extra = found
            s1 = m.single[members].astype(float)
            # (i) total unsplit time on the hosts
            by_time = _min_extra(float(s1[unsplit].sum()) - hosts * c, s1[movable], move_cost[movable])
            # (ii) more than C/2 long: at most one per host
            long_ = unsplit & (2 * m.single[members] > c)
            surplus = int(long_.sum()) - hosts
            by_count = 0.0
            if surplus > 0:
                costs = np.sort(move_cost[long_ & movable])
                by_count = math.inf if len(costs) < surplus else float(costs[:surplus].sum())
            if base + forced_extra + max(by_time, by_count) > n_gpus * c + _EPS:
                return False
        return True

    return _scan(trivial_floor(instance), _serial(m), passes)


# -- (c) contention between jobs that must split ----------------------------------------
def split_pairs_bound(instance: Instance) -> int:
    """Two jobs that fit on no server and cannot use disjoint servers (n_min_i + n_min_j > S)
    share a server whenever they run at once, so both see p >= 2 then. With o slots of
    overlap, job i needs d_i(o) = o + ceil((F_i - o a_i) / b_i) slots (a_i: its rate at
    p = 2, b_i: alone), and the pair spans d_i + d_j - o slots; the bound is the least of
    max(d_i, d_j, d_i + d_j - o) over o. Star network only (0 otherwise)."""
    tm = instance.time_model
    if tm.links is not None:
        return 0
    m = instance.modes
    forced = np.flatnonzero(m.n_min >= 2)
    if len(forced) < 2:
        return 0
    n_servers = len(m.capacity)
    # in order of n_min, the partners of a job that it must share a server with are a suffix
    forced = forced[np.argsort(m.n_min[forced], kind="stable")]
    n_min = m.n_min[forced].astype(np.int64)
    first = np.maximum(np.searchsorted(n_min, n_servers - n_min, side="right"), np.arange(1, len(forced) + 1))
    paired = np.flatnonzero(first < len(forced))
    if not len(paired):
        return 0  # O(J log J) when no two jobs must share (the common case)
    span = np.maximum(n_min, 2)
    alone = tm.phi(np.ones(len(forced)), span, forced)
    shared = tm.phi(np.full(len(forced), 2), span, forced)
    iters = instance.arrays.iterations[forced]
    # a pair never needs more than its two jobs one after the other (no overlap, o = 0):
    # pairs that cannot beat the best so far are not evaluated (the value is the same)
    apart = -(-iters // np.maximum(alone, 1))
    tail = np.maximum.accumulate(apart[::-1])[::-1]  # the longest from each position on
    best = 0
    for x in paired.tolist():
        if apart[x] + tail[first[x]] <= best:
            continue
        rest = first[x] + np.argsort(-apart[first[x] :], kind="stable")
        for y in rest.tolist():
            if apart[x] + apart[y] <= best:
                break
            best = max(best, _pair_floor(iters[[x, y]], shared[[x, y]], alone[[x, y]]))
    return best


def _pair_floor(iters: np.ndarray, shared: np.ndarray, alone: np.ndarray) -> int:
    """min over overlaps o of max(d_0, d_1, d_0 + d_1 - o) (see :func:`split_pairs_bound`)."""
    top = int(np.min(-(-iters // np.maximum(shared, 1))))  # overlap ends when one job is done
    o = np.arange(top + 1)[:, None]
    left = np.maximum(iters[None, :] - o * shared[None, :], 0)
    d = o + (-(-left // alone[None, :]))
    span = np.maximum(d.max(axis=1), d.sum(axis=1) - o[:, 0])
    return int(span.min())


# -- (f) release times (docs/arrivals.md) ------------------------------------------------------
def release_bound(instance: Instance) -> int:
    """max_j (r_j + rho_min_j): job j starts at r_j or later and runs at least rho_min_j slots."""
    return int((instance.releases + instance.bounds.rho_min).max())


def release_energy_bound(instance: Instance) -> int:
    """max over release slots r of r + ceil(W(r) / N), W(r) = sum of G_j rho_min_j over the
    jobs with r_j >= r: they hold their GPUs only inside [r, C), which has N (C - r) GPU-slots."""
    m = instance.modes
    order = np.argsort(instance.releases, kind="stable")
    releases = instance.releases[order].astype(np.int64)
    energy = (m.gpus * m.rho).astype(np.int64)[order]
    after = np.concatenate([np.cumsum(energy[::-1])[::-1], [0]])  # after[i]: the energy from i on
    at = np.unique(releases)  # one suffix sum per release: O(J log J)
    work = after[np.searchsorted(releases, at, side="left")].astype(float) / m.num_gpus
    return int(np.max(at + np.ceil(work - _EPS).astype(np.int64), initial=0))


# -- (g) the GPUs as bins -------------------------------------------------------------------
def gpu_bins_bound(instance: Instance) -> int:
    """The smallest C >= the trivial floor at which the jobs' GPU-lengths may fit N bins of size C.

    In a schedule every job holds G_j GPUs from its start to its completion, d_j >= rho_min_j
    slots, and GPU ids can always be given so that a job keeps its GPUs throughout (one
    server at a time, in order of start: at most O_s GPUs are held at once). So each GPU
    carries jobs one after the other, and the lengths on it sum to at most the makespan C.
    Hence the multiset holding G_j copies of rho_min_j for every job must fit into N bins of
    capacity C: a bin-packing instance, and C is refuted when the Martello-Toth bound L2
    (Martello and Toth, Discrete Appl. Math. 28(1), 1990) asks for more than N bins. For a
    threshold k <= C / 2, the items longer than C - k each fill a bin alone; the items in
    (C / 2, C - k] each need a bin of their own too; the items in [k, C / 2] fit only into
    what those leave free or into new bins:
    L(k) = |J1| + |J2| + max(0, ceil((sum J3 - (|J2| C - sum J2)) / C)), and L2 = max_k L(k).
    It sees what the work bound cannot: long jobs whose lengths do not add up to C leave
    their GPUs' rest idle."""
    m = instance.modes
    n_gpus = m.num_gpus
    items = np.repeat(m.rho, m.gpus)
    top = int(items.max(initial=0))
    count = np.bincount(items, minlength=top + 1).astype(np.int64)
    total = np.bincount(items, weights=items.astype(float), minlength=top + 1)
    # at_most[x]: items of length <= x, and their sum (x = -1 .. top)
    n_le = np.concatenate([[0], np.cumsum(count)])
    s_le = np.concatenate([[0.0], np.cumsum(total)])

    def le(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        x = np.clip(x, -1, top) + 1
        return n_le[x], s_le[x]

    def passes(c: int) -> bool:
        k = np.arange(0, c // 2 + 1)
        n_all = n_le[-1]
        n_mid, s_mid = le(np.full(1, c // 2))  # items <= C / 2
        n_top, s_top = le(c - k)  # items <= C - k
        _, s_low = le(k - 1)  # items < k
        j1 = n_all - n_top
        j2, s2 = n_top - n_mid, s_top - s_mid
        s3 = s_mid - s_low
        rest = np.ceil((s3 - (j2 * c - s2)) / c - _EPS)
        bins = j1 + j2 + np.maximum(0, rest)
        return bool(bins.max() <= n_gpus)

    start = trivial_floor(instance)
    return _scan(start, max(_serial(m), start), passes)


def gpu_bins_lp_bound(instance: Instance) -> int:
    """The smallest C >= ``gpu_bins`` at which the Gilmore-Gomory LP of the same bin packing
    (the jobs' GPU-lengths into N bins of size C) does not prove that more than N bins are
    needed (:mod:`rar_opt.bounds.binpacking`). The LP is at least L2 and usually within one bin of
    the integer optimum; its refusals are certified by weak duality (Farley's bound)."""
    m = instance.modes
    lengths, which = np.unique(m.rho, return_inverse=True)
    copies = np.bincount(which, weights=m.gpus).astype(np.int64)  # GPUs of the jobs of each length
    c, cap = gpu_bins_bound(instance), _serial(m)
    while c < cap and binpacking.fits(lengths, copies, c, m.num_gpus).fits is False:
        c += 1
    return c
