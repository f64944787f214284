"""Where a job fits on ``pack``'s time profile, found without scanning the whole profile.

``pack`` (:mod:`.packing`) keeps the idle GPUs of every server s and slot t, free[s, t],
and which slots of a server a split job holds, held[s, t]. An unsplit job of g GPUs and d
slots goes to the earliest slot t >= lo at which some server has free >= g in all of
[t, t + d), and among the servers that fit there to the one left with the fewest idle GPUs
at t, then the smallest, then the lowest index. Reading every server over the whole window
costs servers x slots per job, which made ``pack`` grow with jobs x servers. This index
answers the same question from two tables per GPU count g that a job has asked for:

* ``end[s, t]``: the first slot u >= t with free[s, u] < g, or :data:`FAR` when the
  server keeps g idle GPUs to the end of the profile (the slots after it are idle). Server
  s fits (g, d) at t exactly when end[s, t] >= t + d. Along a row it never decreases.
* ``top[b, t]``: the largest end[s, t] over block b of :data:`BLOCK` consecutive servers.

The earliest fit is the first t >= lo at which a block's top reaches t + d, a read of
servers / BLOCK rows per slot; the servers that fit there are those of one column of
``end``, and the tie-break reads one column of the profile. So the decision is the scan's
decision (tests/algorithms/test_runs.py checks it against the scan).

A split job (on the star network) needs servers with at least one idle GPU and no other
split job over its whole run. The table ``open`` is ``end`` for that condition (free >= 1
and not held): a server whose open[s, t] < t + d offers the split job nothing at t, so the
split search reads the idle GPUs of the other servers only.

When a job takes y GPUs of server s over [t0, t1), only row s changes, only in the tables
whose condition some slot of the window stops meeting (for ``end`` of g: old free in
[g, g + y); for ``open``: free falls to 0, or a split job takes the slots), and only at the
slots whose run reached t0: from the first t with end[s, t] >= t0 (a bisection, the row
being sorted) to t1. Each of those updates is a few vector operations over that range and
over one block.
"""

from __future__ import annotations

import math

import numpy as np

from rar_opt.cluster.timemodel import NEVER

FAR = np.int32(2**30)
"""``end`` where a server keeps the GPUs to the end of the profile (beyond every t + d)."""

BLOCK = 32
"""Servers per block of ``top`` (the query reads servers / BLOCK rows per slot)."""

TABLE_CELLS = 120_000_000
"""The most servers x slots cells (4 bytes each) that the tables of one profile hold
together (:meth:`RunIndex.has_room`); past it a GPU count has no table and its fit is read
from the profile directly, which gives the same decision."""


def _ends(bad: np.ndarray, first: int = 0) -> np.ndarray:
    """For every row and column t of ``bad`` (slots from ``first``): the first bad slot >= t, or FAR."""
    col = np.arange(first, first + bad.shape[-1], dtype=np.int32)
    marks = np.where(bad, col, FAR)
    return np.ascontiguousarray(np.minimum.accumulate(marks[..., ::-1], axis=-1)[..., ::-1], dtype=np.int32)


OPEN = 0
"""The key of ``open`` among the tables (GPU counts are 1 and up)."""


class RunIndex:
    """``end`` and ``top`` (module docstring) of one profile for each GPU count asked, and
    for ``open`` (key :data:`OPEN`) once asked."""

    def __init__(self, free: np.ndarray, capacity: np.ndarray, held: np.ndarray | None = None) -> None:
        self.free, self.held = free, held  # the profile's arrays (replaced when it grows: see grow)
        self.capacity = capacity.astype(np.int64)
        n_servers = len(capacity)
        self.block = min(BLOCK, max(1, math.isqrt(n_servers)))
        self.heads = np.arange(0, n_servers, self.block)
        self.end: dict[int, np.ndarray] = {}
        self.top: dict[int, np.ndarray] = {}

    def _bad(self, g: int, rows: slice | int, a: int, b: int) -> np.ndarray:
        """Where the condition of table g fails in slots [a, b) of ``rows``: fewer than g
        idle GPUs, or for ``open`` no idle GPU or a split job holding the server."""
        bad = self.free[rows, a:b] < max(g, 1)
        return bad | self.held[rows, a:b] if g == OPEN and self.held is not None else bad

    def table(self, g: int) -> tuple[np.ndarray, np.ndarray]:
        """``end`` and ``top`` of g (:data:`OPEN`: of ``open``), built on first use."""
        if g not in self.end:
            self.end[g] = _ends(self._bad(g, slice(None), 0, self.free.shape[1]))
            self.top[g] = np.maximum.reduceat(self.end[g], self.heads, axis=0)
        return self.end[g], self.top[g]

    def has_room(self, g: int) -> bool:
        """Whether g has its table or one more fits in :data:`TABLE_CELLS`."""
        return g in self.end or (len(self.end) + 1) * self.free.size <= TABLE_CELLS

    def rows(self, blocks: np.ndarray) -> np.ndarray:
        """The servers of ``blocks`` (ascending block numbers), ascending."""
        first = blocks * self.block
        size = np.minimum(first + self.block, len(self.capacity)) - first
        return np.repeat(first - np.cumsum(size) + size, size) + np.arange(int(size.sum()))

    def grow(self, free: np.ndarray, held: np.ndarray | None = None) -> None:
        """The profile got longer (its new arrays; the new slots are idle and not held)."""
        old, self.free, self.held = self.free.shape[1], free, held
        if len(self.end) * free.size > TABLE_CELLS:  # too long for them all: from here on, no tables
            self.end.clear()
            self.top.clear()
        col = np.arange(old, free.shape[1], dtype=np.int32)
        for g in list(self.end):
            extra = np.where((self.capacity >= max(g, 1))[:, None], FAR, col[None, :]).astype(np.int32)
            self.end[g] = np.ascontiguousarray(np.hstack([self.end[g], extra]))
            self.top[g] = np.hstack([self.top[g], np.maximum.reduceat(extra, self.heads, axis=0)])

    def earliest(self, g: int, d: int, lo: int, hi: int) -> tuple[int, int]:
        """The earliest slot t in [lo, hi] where a server holds g GPUs for d slots, and the
        server chosen there (fewest idle GPUs at t, then smallest, then lowest index). Some
        server must fit at ``hi`` (the caller's slot from which every server is idle)."""
        end, top = self.table(g)
        need = np.arange(lo + d, hi + d + 1, dtype=np.int64)
        ok = (top[:, lo : hi + 1] >= need).any(axis=0)
        t = lo + int(ok.argmax())
        rows = self.rows(np.flatnonzero(top[:, t] >= t + d))  # the blocks that fit there
        fits = rows[end[rows, t] >= t + d]
        s = int(fits[np.lexsort((self.capacity[fits], self.free[fits, t]))[0]])
        return t, s

    def update(self, s: int, t0: int, t1: int, taken: int, before: np.ndarray, held: bool = False) -> None:
        """Server s lost ``taken`` GPUs over [t0, t1) (``held``: to a split job, which now
        holds those slots); ``before`` is its idle GPUs there before. The profile already
        holds the new values."""
        if t1 <= t0:
            return
        low, high = int(before.min()), int(before.max())
        for g, end in self.end.items():
            if g == OPEN and held:
                pass  # every slot of the window is now held
            elif taken <= 0 or high < max(g, 1) or low >= max(g, 1) + taken:
                continue  # no slot of the window falls below g
            elif low != high and not np.any((before >= max(g, 1)) & (before < max(g, 1) + taken)):
                continue  # (with one value throughout, the test above is exact)
            a = self._redo(end, s, t0, t1, g)
            first = s - s % self.block
            self.top[g][s // self.block, a:t1] = end[first : first + self.block, a:t1].max(axis=0)

    def _redo(self, table: np.ndarray, s: int, t0: int, t1: int, g: int) -> int:
        """Row s of ``table`` (``end`` of g) again over the slots whose run reached t0, up to
        t1 (beyond t1 nothing changed); returns the first slot redone."""
        row = table[s]
        a = int(np.searchsorted(row, t0, side="left"))  # the first t whose run reached t0
        after = row[t1] if t1 < len(row) else FAR
        col = np.arange(a, t1, dtype=np.int32)
        row[a:t1] = np.minimum.accumulate(np.where(self._bad(g, s, a, t1), col, after)[::-1])[::-1]
        return a


# the scans that pack uses where no table is kept (small clusters, GPU counts past the
# tables' cap), and the windowed reads of its split search


def scan_earliest(free: np.ndarray, capacity: np.ndarray, g: int, d: int, lo: int, latest: int) -> tuple[int, int]:
    """The earliest slot t in [lo, latest] where a server holds g GPUs for d slots, and the
    server chosen there, read from every host over the whole window (the rule of
    :meth:`RunIndex.earliest`, for small clusters and GPU counts without a table)."""
    rows = np.flatnonzero(capacity >= g)
    ok = free[rows, lo : latest + d] >= g
    count = np.zeros((len(rows), ok.shape[1] + 1), dtype=np.int32)
    np.cumsum(ok, axis=1, out=count[:, 1:])
    fits = (count[:, d:] - count[:, :-d]) == d  # the d slots from here are all roomy
    first = np.where(fits.any(axis=1), fits.argmax(axis=1), NEVER)
    t = int(first.min())
    tied = rows[first == t]
    t += lo
    return t, int(tied[np.lexsort((capacity[tied], free[tied, t]))[0]])


def window(values: np.ndarray, at: np.ndarray, d: int, op: np.ufunc) -> np.ndarray:
    """``op`` (minimum or maximum) of ``values[:, t : t + d]`` for every t of ``at`` (every
    window inside the columns), by doubling: after k rounds column x holds [x, x + 2^k)."""
    width, m = 1, values
    while 2 * width <= d:
        m = op(m[:, :-width], m[:, width:])
        width *= 2
    return op(m[:, at], m[:, at + d - width])


def ranked(idle: np.ndarray, most: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``most`` largest of each column of ``idle``, from the largest, and their running sums."""
    if most < len(idle):
        idle = -np.partition(-idle, most - 1, axis=0)[:most]
    top = -np.sort(-idle, axis=0)
    return top, np.cumsum(top, axis=0)
