"""Placements stored by their nonzero entries (compressed rows), read as dense rows.

A schedule of 16,000 jobs on 2,000 servers has 32 million placement entries, of which
about 31,000 are nonzero. :class:`SparseRows` keeps only those (per job, the servers and
the GPU counts, ascending by server) and hands out a job's dense row, a tuple of one entry
per server, when it is asked for one: code that reads ``schedule.placements[j]`` works
unchanged, and code that can use the nonzero entries (the simulator, the checker, GPU-id
assignment, the realized shares, the JSON writer) never builds the dense J x S matrix.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np


class SparseRows(Sequence[tuple[int, ...]]):
    """Rows of ``width`` entries given by their nonzero entries in compressed-row form:
    row j has ``counts[offsets[j]:offsets[j + 1]]`` at the servers
    ``servers[offsets[j]:offsets[j + 1]]`` (ascending) and zero elsewhere."""

    __slots__ = ("counts", "offsets", "servers", "width")

    def __init__(self, width: int, offsets: np.ndarray, servers: np.ndarray, counts: np.ndarray) -> None:
        self.width = int(width)
        self.offsets = np.asarray(offsets, dtype=np.int64)
        self.servers = np.asarray(servers, dtype=np.int64)
        self.counts = np.asarray(counts, dtype=np.int64)
        for a in (self.offsets, self.servers, self.counts):
            a.setflags(write=False)

    @classmethod
    def from_dense(cls, dense: np.ndarray) -> SparseRows:
        """The nonzero entries of a (J, S) integer array."""
        jobs, servers = np.nonzero(dense)
        offsets = np.zeros(dense.shape[0] + 1, dtype=np.int64)
        np.cumsum(np.bincount(jobs, minlength=dense.shape[0]), out=offsets[1:])
        return cls(dense.shape[1], offsets, servers, dense[jobs, servers])

    def row_entries(self, j: int) -> tuple[np.ndarray, np.ndarray]:
        """Servers and counts of row ``j``'s nonzero entries."""
        lo, hi = self.offsets[j], self.offsets[j + 1]
        return self.servers[lo:hi], self.counts[lo:hi]

    def jobs(self) -> np.ndarray:
        """The row of every stored entry (aligned with ``servers`` and ``counts``)."""
        return np.repeat(np.arange(len(self), dtype=np.int64), np.diff(self.offsets))

    def dense(self) -> np.ndarray:
        """The (J, S) int64 array."""
        y = np.zeros((len(self), self.width), dtype=np.int64)
        y[self.jobs(), self.servers] = self.counts
        return y

    def _row(self, j: int) -> tuple[int, ...]:
        row = [0] * self.width
        servers, counts = self.row_entries(j)
        for s, c in zip(servers.tolist(), counts.tolist(), strict=True):
            row[s] = c
        return tuple(row)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return tuple(self._row(j) for j in range(len(self))[index])
        j = int(index)
        if j < 0:
            j += len(self)
        if not 0 <= j < len(self):
            raise IndexError("placement row out of range")
        return self._row(j)

    def __iter__(self) -> Iterator[tuple[int, ...]]:
        return (self._row(j) for j in range(len(self)))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SparseRows):
            return (
                self.width == other.width
                and np.array_equal(self.offsets, other.offsets)
                and np.array_equal(self.servers, other.servers)
                and np.array_equal(self.counts, other.counts)
            )
        if isinstance(other, tuple | list):
            return len(other) == len(self) and all(tuple(a) == b for a, b in zip(other, self, strict=True))
        return NotImplemented

    def __hash__(self) -> int:  # as the tuple of dense rows it equals
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"SparseRows({len(self)} rows x {self.width}, {len(self.servers)} nonzero)"


def compressed(rows: Sequence[Sequence[int]] | SparseRows, width: int) -> SparseRows:
    """``rows`` (dense rows of ``width`` entries, or already compressed) in compressed form."""
    if isinstance(rows, SparseRows):
        return rows
    if not len(rows):
        return SparseRows(width, np.zeros(1, dtype=np.int64), np.zeros(0), np.zeros(0))
    return SparseRows.from_dense(np.array(rows, dtype=np.int64).reshape(len(rows), width))
