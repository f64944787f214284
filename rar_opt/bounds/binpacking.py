"""Does a multiset of items fit into ``bins`` bins of one capacity? The Gilmore-Gomory test.

Used by the floor ``gpu_bins_lp`` (:mod:`rar_opt.bounds.structural`, docs/exactness.md section (d)):
the items are the jobs' GPU-lengths, the bins the cluster's GPUs, the capacity a candidate
makespan. This module knows nothing of jobs; it answers for plain arrays.

The test is the linear relaxation of the cutting-stock model (Gilmore and Gomory,
Operations Research 9(6), 1961): a *pattern* is a way to fill one bin (how many items of
each size, their sizes adding up to at most the capacity), and

    LP = min sum_p x_p   subject to   sum_p a_ip x_p >= d_i for every size i,  x >= 0.

Every packing into k bins is a solution with value k, so LP > bins refutes the packing.
LP is solved by column generation: a restricted master LP over the patterns found so far
(HiGHS through scipy), and a pricing problem, a bounded knapsack over the capacity solved
exactly by dynamic programming, that finds the pattern of largest dual value v*. Its
answer is certified by weak duality alone, so it does not depend on the master LP being
solved to optimality: for any duals pi >= 0, pi / v* is feasible for the dual LP, hence
LP >= (sum_i d_i pi_i) / v* (Farley's bound, Operations Research 38(5), 1990). A refusal
is only claimed when that number exceeds ``bins`` by a relative margin of 1e-6; a
packing is confirmed only when first fit decreasing finds one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

REL_MARGIN = 1e-6
"""A refusal needs the certified LP bound above ``bins`` by this share (floating point)."""

PER_ROUND = 8
"""Patterns added per master solve: the best one and those that fill the bin to the next
best levels. Fewer master solves: refuting C = 282 on paper-160x20-s6 took 3.8 s with one
pattern per round, starting from one-size columns, and 1.4 s with eight per round and
first fit decreasing's bins added to the start (loaded machine; we did not measure the
two apart)."""


@dataclass(frozen=True)
class Verdict:
    """``fits``: True when first fit decreasing packs the items (a packing exists); False when
    the LP refutes every packing (certified); None when neither (the LP allows it, or the
    rounds ran out)."""

    fits: bool | None
    lp_bound: float  # the best certified lower bound on LP found (0 when none was computed)
    columns: int  # patterns generated


def first_fit_decreasing(sizes: np.ndarray, demand: np.ndarray, capacity: int) -> list[np.ndarray]:
    """The bins of first fit decreasing, each as a pattern (copies of each size): a packing,
    so their number is an upper bound on the bins needed.

    The copies of one size go in bulk. One at a time, each copy goes into the first bin
    with room for it; a bin it fills too full for the next copy stays so, and the bins
    before it are unchanged. So the copies of a size fill the bins with room for one in bin
    order, ``room // size`` copies each, and the rest open new bins of ``capacity // size``
    copies: the same bins as one copy at a time, in O(sizes x bins) array operations
    instead of O(copies x bins) Python steps."""
    sizes = np.asarray(sizes)
    demand = np.asarray(demand, dtype=np.int64)
    room = np.zeros(int(np.maximum(demand, 0).sum()), dtype=np.int64)  # at most one bin per copy
    opened = 0
    columns: list[tuple[int, np.ndarray]] = []  # per size, the copies each bin took
    for i in np.argsort(-sizes, kind="stable").tolist():
        size, left = int(sizes[i]), int(demand[i])
        if left <= 0:
            continue
        fit = room[:opened] // size  # copies each open bin takes, in bin order
        take = np.clip(left - (np.cumsum(fit) - fit), 0, fit)
        left -= int(take.sum())
        per = capacity // size
        new = -(-left // per) if left > 0 else 0
        fresh = np.full(new, per, dtype=np.int64)
        if new:
            fresh[-1] = left - per * (new - 1)
        room[opened : opened + new] = capacity
        opened += new
        take = np.concatenate([take, fresh])
        room[:opened] -= take * size
        columns.append((i, take))
    counts = np.zeros((opened, len(sizes)), dtype=np.int64)
    for i, take in columns:
        counts[: len(take), i] = take
    return list(counts)


def _best_patterns(
    sizes: np.ndarray, bound: np.ndarray, value: np.ndarray, capacity: int, many: int
) -> list[tuple[float, np.ndarray]]:
    """The bounded knapsack max sum value_i a_i, sum sizes_i a_i <= capacity, 0 <= a_i <= bound_i,
    by dynamic programming over the capacity (each bound split into powers of two): the best
    pattern first, with its value, then up to ``many - 1`` more."""
    parts: list[tuple[int, int]] = []  # (item, copies)
    for i, b in enumerate(bound.tolist()):
        k = 1
        while b > 0:
            take = min(k, b)
            parts.append((i, take))
            b -= take
            k *= 2
    best = np.zeros(capacity + 1)
    took = np.zeros((len(parts), capacity + 1), dtype=bool)
    for p, (i, copies) in enumerate(parts):
        w, v = int(sizes[i]) * copies, float(value[i]) * copies
        if w > capacity or v <= 0:
            continue
        shifted = best[:-w] + v
        better = shifted > best[w:]
        took[p, w:] = better
        best[w:] = np.where(better, shifted, best[w:])
    # the best pattern, and the best ones that fill the bin to other levels (more columns per
    # master solve): backtracked from the ``many`` fullest levels of largest value
    ends = np.argsort(-best, kind="stable")[:many]
    patterns = []
    for end in ends.tolist():
        pattern = np.zeros(len(sizes), dtype=np.int64)
        c = end
        for p in range(len(parts) - 1, -1, -1):
            if took[p, c]:
                i, copies = parts[p]
                pattern[i] += copies
                c -= int(sizes[i]) * copies
        patterns.append((float(best[end]), pattern))
    return patterns


def fits(sizes: np.ndarray, demand: np.ndarray, capacity: int, bins: int, max_rounds: int = 1000) -> Verdict:
    """Whether ``demand[i]`` items of size ``sizes[i]`` may fit into ``bins`` bins of ``capacity``
    by the Gilmore-Gomory LP (module docstring), in at most ``max_rounds`` master solves."""
    sizes = np.asarray(sizes, dtype=np.int64)
    demand = np.asarray(demand, dtype=np.int64)
    keep = demand > 0
    sizes, demand = sizes[keep], demand[keep]
    if sizes.size == 0:
        return Verdict(True, 0.0, 0)
    if int(sizes.max()) > capacity:
        return Verdict(False, float("inf"), 0)
    packed = first_fit_decreasing(sizes, demand, capacity)
    if len(packed) <= bins:
        return Verdict(True, 0.0, 0)
    bound = np.minimum(demand, capacity // sizes)
    # the first columns: one size per bin, and the distinct bins of first fit decreasing
    single = [np.eye(len(sizes), dtype=np.int64)[i] * bound[i] for i in range(len(sizes))]
    known = {c.tobytes(): c for c in (*single, *packed)}  # every column once, by its counts
    from scipy.optimize import linprog  # only here: the import costs about half a second

    columns = list(known.values())
    certified = 0.0
    for _ in range(max_rounds):
        a = np.array(columns, dtype=float).T
        res = linprog(np.ones(a.shape[1]), A_ub=-a, b_ub=-demand.astype(float), bounds=(0, None), method="highs")
        if res.status != 0:  # numerical trouble: no claim
            return Verdict(None, certified, len(columns))
        if res.fun <= bins * (1 - REL_MARGIN):  # the master's value is an upper bound on LP
            return Verdict(None, certified, len(columns))
        duals = np.maximum(-res.ineqlin.marginals, 0.0)
        found = _best_patterns(sizes, bound, duals, capacity, PER_ROUND)
        top = found[0][0]  # the largest dual value of a pattern: v*
        if top > 0:
            certified = max(certified, float(demand @ duals) / top)
        if certified > bins * (1 + REL_MARGIN):
            return Verdict(False, certified, len(columns))
        new = {p.tobytes(): p for v, p in found if v > 1 + 1e-9 and p.tobytes() not in known}
        if not new:
            return Verdict(None, certified, len(columns))  # LP solved (or stalled) and not above the bins
        known.update(new)
        columns.extend(new.values())
    return Verdict(None, certified, len(columns))
