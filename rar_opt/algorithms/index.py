"""Index structures of the list-scheduling engine: what lets a decision touch only the
GPUs and servers it uses instead of scanning the whole cluster (docs/algorithms.md
section 1).

* :class:`SortedKeys`: a sorted list of keys kept in blocks (a search costs O(log n)
  comparisons, an insertion or removal O(log n + block)); the idle GPUs by (load, index)
  and the servers by (average load, index) live in one each.
* :class:`MinTree`: a minimum over fixed positions with point updates, and the positions
  whose value is at most a bound, in index order, visited without touching the others.
* :class:`CountTree`: a Fenwick tree of 0/1 flags: the k-th set position in O(log n).

They hold plain Python numbers: a decision handles a handful of GPUs, for which numpy's
per-call cost would dominate.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Callable, Iterator
from itertools import chain
from typing import Any

BLOCK = 256  # keys per block after a split (blocks hold up to 2 * BLOCK)


class SortedKeys:
    """Distinct comparable keys in increasing order, in blocks of at most ``2 * BLOCK``."""

    def __init__(self, keys: list[Any]) -> None:
        keys = sorted(keys)
        self._blocks = [keys[i : i + BLOCK] for i in range(0, len(keys), BLOCK)]
        self._maxes = [b[-1] for b in self._blocks]
        self._len = len(keys)

    def __len__(self) -> int:
        return self._len

    def copy(self) -> SortedKeys:
        """An independent copy (the keys themselves are shared: they are immutable)."""
        new = SortedKeys.__new__(SortedKeys)
        new._blocks, new._maxes, new._len = [b.copy() for b in self._blocks], self._maxes.copy(), self._len
        return new

    def __iter__(self) -> Iterator[Any]:
        return chain.from_iterable(self._blocks)

    def add(self, key: Any) -> None:
        """Insert ``key`` (not present)."""
        self._len += 1
        if not self._blocks:
            self._blocks.append([key])
            self._maxes.append(key)
            return
        i = bisect_left(self._maxes, key)
        if i == len(self._blocks):  # past every block's largest key: the last block takes it
            i -= 1
        block = self._blocks[i]
        insort(block, key)
        self._maxes[i] = block[-1]
        if len(block) > 2 * BLOCK:
            self._blocks[i : i + 1] = [block[:BLOCK], block[BLOCK:]]
            self._maxes[i : i + 1] = [block[BLOCK - 1], block[-1]]

    def remove(self, key: Any) -> None:
        """Remove ``key`` (present)."""
        i = bisect_left(self._maxes, key)
        block = self._blocks[i]
        del block[bisect_left(block, key)]
        self._len -= 1
        if block:
            self._maxes[i] = block[-1]
        else:
            del self._blocks[i]
            del self._maxes[i]

    def split(self, ok: Callable[[Any], bool]) -> tuple[Any, Any]:
        """For a predicate true on a prefix of the keys: (the last key where it holds, the
        first where it does not), either None when there is none; O(log n) calls of ``ok``."""
        maxes = self._maxes
        lo, hi = 0, len(maxes)  # the first block whose largest key fails
        while lo < hi:
            mid = (lo + hi) // 2
            if ok(maxes[mid]):
                lo = mid + 1
            else:
                hi = mid
        if lo == len(maxes):
            return (maxes[-1] if maxes else None), None
        block = self._blocks[lo]
        a, b = 0, len(block)
        while a < b:
            mid = (a + b) // 2
            if ok(block[mid]):
                a = mid + 1
            else:
                b = mid
        last = block[a - 1] if a else (maxes[lo - 1] if lo else None)
        return last, block[a]

    def first(self, n: int) -> list[Any]:
        """The ``n`` smallest keys (fewer if there are fewer)."""
        out: list[Any] = []
        for block in self._blocks:
            out.extend(block[: n - len(out)])
            if len(out) >= n:
                break
        return out


class MinTree:
    """Values at positions 0..n-1 (``inf`` for none), the minimum kept over every range."""

    def __init__(self, values: list[float]) -> None:
        size = 1
        while size < max(1, len(values)):
            size *= 2
        self._size = size
        tree = [float("inf")] * (2 * size)
        tree[size : size + len(values)] = values
        for node in range(size - 1, 0, -1):
            tree[node] = min(tree[2 * node], tree[2 * node + 1])
        self._tree = tree

    def copy(self) -> MinTree:
        """An independent copy."""
        new = MinTree.__new__(MinTree)
        new._size, new._tree = self._size, self._tree.copy()
        return new

    def set(self, pos: int, value: float) -> None:
        """Position ``pos`` takes ``value``."""
        tree = self._tree
        node = pos + self._size
        tree[node] = value
        node //= 2
        while node:
            best = min(tree[2 * node], tree[2 * node + 1])
            if tree[node] == best:
                break
            tree[node] = best
            node //= 2

    def at_most(self, bound: float) -> Iterator[int]:
        """The positions whose value is at most ``bound``, in increasing order, lazily:
        each costs O(log n) nodes, and positions above the bound are never visited."""
        tree, size = self._tree, self._size
        stack = [1]
        while stack:
            node = stack.pop()
            if tree[node] > bound:
                continue
            if node >= size:
                yield node - size
            else:
                stack.append(2 * node + 1)
                stack.append(2 * node)


class CountTree:
    """Flags 0/1 at positions 0..n-1 (a Fenwick tree): set, clear, find the k-th set one."""

    def __init__(self, flags: list[int]) -> None:
        n = len(flags)
        tree = [0] * (n + 1)
        for i, f in enumerate(flags, start=1):
            tree[i] += f
            j = i + (i & -i)
            if j <= n:
                tree[j] += tree[i]
        self._tree = tree
        self._top = 1 << max(0, n.bit_length() - 1) if n else 0

    def copy(self) -> CountTree:
        """An independent copy."""
        new = CountTree.__new__(CountTree)
        new._tree, new._top = self._tree.copy(), self._top
        return new

    def add(self, pos: int, delta: int) -> None:
        """Add ``delta`` (+1 or -1) at ``pos``."""
        tree, i = self._tree, pos + 1
        while i < len(tree):
            tree[i] += delta
            i += i & -i

    def kth(self, k: int) -> int:
        """The position of the k-th set flag (k from 0); the caller knows that it exists."""
        tree, pos, step = self._tree, 0, self._top
        while step:
            nxt = pos + step
            if nxt < len(tree) and tree[nxt] <= k:
                pos = nxt
                k -= tree[nxt]
            step //= 2
        return pos
