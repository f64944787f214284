"""Buddy lanes: schedules where every job runs unsplit inside a binary tree of GPU blocks.

``pack`` places jobs on a time profile one by one; at paper scale its schedules leave
the jobs' ends ragged (docs/bounds-table.md). This module searches a smaller class of
schedules where the fit of many jobs at once is a matter of sums, not of a profile.

**The class.** Each server's GPUs are cut into blocks whose sizes are powers of two: a
server of O GPUs into one block per bit of O (32 -> one 32-block; 12 -> an 8- and a
4-block), and a block of w GPUs into two halves of w/2, down to single GPUs. That is a
forest of binary trees; its leaves are the GPUs. A job of G_j GPUs goes to one node of
width w_j, the smallest power of two >= G_j, and runs there unsplit (G_j of the w_j GPUs;
the rest of the block is idle while it runs). On one node the jobs run back to back;
below a node, its two halves start once the node's own jobs are done. So a job on node v
starts at (the load of v's ancestors) + (the jobs before it on v), where the load of a
node is the sum of its jobs' lengths, and the schedule ends within C exactly when on
every root-to-leaf path the loads sum to at most C. The tree never puts two jobs on one
GPU at the same time, so every such schedule is feasible. (The name is from the buddy
memory allocator, whose blocks halve the same way; Knowlton, CACM 8(10), 1965.)

Unsplit jobs see no contention (docs/model.md section 3: only split jobs count in c_s),
so each takes exactly rho_j(1) slots wherever it runs: the class's makespans are exact,
and the simulator confirms them when ``pack`` returns the schedule.

**The search** for the least C has two stages.

1. *Greedy tries.* A try places the jobs in a list order, each on the node of its width
   where the fullest root-to-leaf path below the node, plus the job, leaves the least room
   under C (best fit), or on a random node that fits with probability ``EPS``; it fails
   when a job fits nowhere. The orders are by decreasing key, the key one of :data:`KEYS`
   (width first, then length; length x GPUs; length x GPUs^1.5; length x GPUs^0.5) times
   a random factor in [1, 1 + noise), the noise one of :data:`NOISES`; keys and noises
   are taken in turn. The stage starts at a floor (the longest job, or the GPU-slots over
   all GPUs), raises C until a try without noise succeeds, then asks every try for one
   slot less than the best so far, until ``patience`` (at most ``GREEDY_PATIENCE``)
   tries in a row fail.
2. *Large neighbourhoods* (destroy and recreate; Shaw 1998, Ropke and Pisinger 2006).
   With the best schedule at C, a server whose fullest path is at C is taken with
   ``NEIGHBOURS - 1`` servers drawn among those below C; their jobs are taken off and
   placed again on those servers alone by up to ``RECREATE`` greedy tries within C - 1.
   A success replaces those servers' part of the schedule, so the servers at C become
   fewer; when none is left, C falls by one. When there is no room under C, up to
   ``SIDEWAYS`` tries look for a new arrangement within C that has no more root-to-leaf
   paths at C than before, and keep it (a move along the plateau, counted a failure
   unless it has fewer such paths). The stage ends after ``patience``
   neighbourhoods in a row without success. It is left out on clusters of at most
   ``NEIGHBOURS`` servers, where a neighbourhood would be the whole cluster, and when the
   first stage ended more than ``REACH`` above a makespan the caller already has (the
   class is then a poor fit: on small servers, jobs that gain by splitting).

Both stages stop at the time limit, after a given number of tries (a count of work,
optional), on a stop request (Ctrl-C), or when C meets the floor (no schedule ends
sooner). Random numbers come only from the seed; the time limit can cut the search
short, so with a binding limit the result depends on the machine, where a count of tries
that ends it first does not.

The class needs every job to fit a block of some server (w_j <= the largest block) and
no release times (a release would break the sums); otherwise :func:`search` returns None.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from rar_opt.support.processes import stop_requested

log = logging.getLogger(__name__)

KEYS = ("width", "area", "area-1.5", "area-0.5")
"""The list orders of the tries, used in turn (module docstring)."""

NOISES = (0.15, 0.3, 0.6)
"""A try's key is multiplied by a factor drawn in [1, 1 + noise), the noises in turn."""

NEIGHBOURS = 4
"""Servers in a neighbourhood of the second stage: one at the makespan, the rest below it."""

RECREATE = 100
"""Greedy tries that place a neighbourhood's jobs again before it counts as a failure."""

GREEDY_PATIENCE = 500
"""The first stage ends after at most this many failed tries in a row, whatever the patience."""

REACH = 0.1
"""With a makespan to beat, the second stage runs only when the first ends within this share above it."""

SIDEWAYS = 20
"""When a neighbourhood finds no room under the makespan: greedy tries for a new
arrangement at the makespan, kept if no more root-to-leaf paths reach the makespan."""

EPS = 0.05
"""The share of placements made on a random node that fits, instead of the best fit."""


@dataclass(frozen=True)
class Forest:
    """The blocks of a cluster. Nodes are numbered in preorder, server by server, so the
    leaves (GPUs) under a node are consecutive: node v of width w covers the leaves
    ``first[v] .. first[v] + w - 1``."""

    width: np.ndarray  # per node
    parent: np.ndarray  # per node, -1 at a root
    server: np.ndarray  # per node
    first: np.ndarray  # per node: its first leaf
    leaves: int

    @classmethod
    def of(cls, capacity: np.ndarray) -> Forest:
        width: list[int] = []
        parent: list[int] = []
        server: list[int] = []
        first: list[int] = []
        leaf = 0

        def add(w: int, up: int, s: int) -> None:
            nonlocal leaf
            v = len(width)
            width.append(w)
            parent.append(up)
            server.append(s)
            first.append(leaf)
            if w == 1:
                leaf += 1
                return
            add(w // 2, v, s)
            add(w // 2, v, s)

        for s, cap in enumerate(capacity.tolist()):
            for bit in reversed(range(int(cap).bit_length())):
                if cap >> bit & 1:
                    add(1 << bit, -1, s)
        w_, p_, s_, f_ = (np.array(x, dtype=np.int64) for x in (width, parent, server, first))
        return cls(w_, p_, s_, f_, leaf)


@dataclass(frozen=True)
class Lanes:
    """The best schedule of the class found: start and node of every job, its makespan,
    and how the search went (tries, the makespan after each improvement)."""

    starts: np.ndarray
    server: np.ndarray
    makespan: int
    tries: int
    history: tuple[tuple[int, int], ...]  # (makespan, tries so far) at each improvement
    neighbourhoods: int = 0  # neighbourhoods of the second stage tried


def widths(gpus: np.ndarray) -> np.ndarray:
    """w_j: the smallest power of two >= G_j."""
    return np.left_shift(1, np.ceil(np.log2(np.maximum(gpus, 1))).astype(np.int64))


class _Tries:
    """One instance's forest and jobs; :meth:`run` is one try."""

    def __init__(self, forest: Forest, gpus: np.ndarray, length: np.ndarray) -> None:
        self.forest, self.length = forest, length.astype(np.int64)
        self.gpus = gpus.astype(np.int64)
        self.width = widths(self.gpus)
        self.nodes = {int(w): np.flatnonzero(forest.width == w) for w in np.unique(self.width)}
        # the leaves under each node of width w, one row per node
        self.under = {w: forest.first[v][:, None] + np.arange(w)[None, :] for w, v in self.nodes.items()}
        keyed = self.length.astype(float)
        self.keys = {
            "width": self.width * float(self.length.max() + 1) + keyed,
            "area": keyed * self.gpus,
            "area-1.5": keyed * self.gpus**1.5,
            "area-0.5": keyed * self.gpus**0.5,
        }

    def run(self, span: int, order: np.ndarray, rng: np.random.Generator | None) -> np.ndarray | None:
        """The node of every job, placed in ``order`` within ``span``; None if one fits nowhere."""
        path = np.zeros(self.forest.leaves, dtype=np.int64)
        node = np.empty(len(order), dtype=np.int64)
        for j in order.tolist():
            w, p = int(self.width[j]), int(self.length[j])
            under = self.under[w]
            room = span - p - path[under].max(axis=1)
            ok = np.flatnonzero(room >= 0)
            if not len(ok):
                return None
            k = int(ok[rng.integers(len(ok))]) if rng is not None and rng.random() < EPS else int(ok[room[ok].argmin()])
            path[under[k]] += p
            node[j] = self.nodes[w][k]
        return node

    def order(self, turn: int, rng: np.random.Generator | None) -> np.ndarray:
        """The list order of try number ``turn``: its key, noised unless ``rng`` is None."""
        base = self.keys[KEYS[turn % len(KEYS)]]
        if rng is not None:
            base = base * (1.0 + NOISES[turn % len(NOISES)] * rng.random(len(base)))
        return np.argsort(-base, kind="stable")

    def fits(self, span: int, rng: np.random.Generator, turns: int) -> tuple[np.ndarray | None, int]:
        """The first of ``turns`` noised tries that places every job within ``span`` (None
        if none does), and how many tries it took."""
        for turn in range(turns):
            found = self.run(span, self.order(turn, rng), rng)
            if found is not None:
                return found, turn + 1
        return None, turns

    def paths(self, node: np.ndarray) -> np.ndarray:
        """The load of every root-to-leaf path, leaf by leaf."""
        forest = self.forest
        step = np.zeros(forest.leaves + 1, dtype=np.int64)
        np.add.at(step, forest.first[node], self.length)  # a difference array over the leaves
        np.add.at(step, forest.first[node] + forest.width[node], -self.length)
        return np.cumsum(step)[: forest.leaves]

    def tops(self, node: np.ndarray) -> np.ndarray:
        """Per server, the load of its fullest root-to-leaf path."""
        forest = self.forest
        leaf = forest.width == 1
        top = np.zeros(int(forest.server.max()) + 1, dtype=np.int64)
        np.maximum.at(top, forest.server[leaf], self.paths(node)[forest.first[leaf]])
        return top

    def tight(self, node: np.ndarray, span: int) -> int:
        """How many root-to-leaf paths sum to ``span`` or more."""
        return int((self.paths(node) >= span).sum())

    def starts(self, node: np.ndarray) -> np.ndarray:
        """Start slots: each node's jobs back to back (longest first) after its ancestors' loads."""
        forest = self.forest
        load = np.bincount(node, weights=self.length, minlength=len(forest.width)).astype(np.int64)
        above = np.zeros(len(forest.width), dtype=np.int64)
        for v in range(len(forest.width)):  # preorder: a parent comes before its children
            up = int(forest.parent[v])
            if up >= 0:
                above[v] = above[up] + load[up]
        starts = np.empty(len(node), dtype=np.int64)
        at = above.copy()
        for j in np.lexsort((np.arange(len(node)), -self.length)).tolist():
            starts[j] = at[node[j]]
            at[node[j]] += self.length[j]
        return starts


def applies(capacity: np.ndarray, gpus: np.ndarray, has_releases: bool) -> bool:
    """Whether the class holds every job: no releases, every w_j at most the largest block."""
    largest = 1 << (int(capacity.max()).bit_length() - 1)
    return not has_releases and bool((widths(gpus) <= largest).all())


def search(
    capacity: np.ndarray,
    gpus: np.ndarray,
    length: np.ndarray,
    *,
    seed: int,
    patience: int,
    time_limit: float,
    has_releases: bool = False,
    beat: int | None = None,
    max_tries: int | None = None,
) -> Lanes | None:
    """The least makespan of the class the search finds (module docstring), or None when
    the class does not hold the instance. ``length`` is each job's unsplit time rho_j(1).
    With ``beat`` (a makespan known from elsewhere), the second stage runs only when the
    first ends within ``REACH`` of it. With ``max_tries``, the search also stops once it has
    made that many tries (checked after the first span that fits is found, then between
    tries and between neighbourhoods, so a neighbourhood may finish past it): a count of
    work, which gives the same schedule on any machine where the time limit does not bind."""
    if not applies(capacity, gpus, has_releases) or not len(gpus):
        return None
    began = time.perf_counter()
    tries = _Tries(Forest.of(capacity), gpus, length)
    # no schedule ends before the longest job or before the GPU-slots spread over every GPU
    floor = max(int(length.max()), -(-int((gpus * length).sum()) // int(capacity.sum())))
    span, done, best = floor, 0, None
    while best is None:  # the first span where some key's order, without noise, fits
        for turn in range(len(KEYS)):
            done += 1
            best = tries.run(span, tries.order(turn, None), None)
            if best is not None:
                break
        else:
            span += 1
    history = [(span, done)]
    rng = np.random.default_rng(seed)

    def going(failed: int, span: int, done: int) -> bool:
        over = time.perf_counter() - began > time_limit or stop_requested() is not None
        spent = max_tries is not None and done >= max_tries
        return failed < patience and span > floor and not over and not spent

    failed, first_stage = 0, min(patience, GREEDY_PATIENCE)
    while going(failed, span, done) and failed < first_stage:  # stage 1: greedy tries
        done += 1
        found = tries.run(span - 1, tries.order(done, rng), rng)
        if found is None:
            failed += 1
            continue
        best, span, failed = found, span - 1, 0
        history.append((span, done))
    hoods = 0
    hopeless = beat is not None and span > beat * (1.0 + REACH)
    if int(capacity.size) > NEIGHBOURS and not hopeless:  # else a neighbourhood is the whole cluster: stage 1 again
        best, span, done, hoods = _neighbourhoods(tries, best, span, rng, going, history, done)
    starts = tries.starts(best)
    makespan = int((starts + tries.length).max())
    assert makespan <= span, "a node's jobs ran past the span they were placed within"
    log.debug("lanes: makespan %d after %d tries (%s)", makespan, done, history)
    return Lanes(starts, tries.forest.server[best], makespan, done, tuple(history), hoods)


def _neighbourhoods(
    tries: _Tries,
    best: np.ndarray,
    span: int,
    rng: np.random.Generator,
    going: Callable[[int, int, int], bool],
    history: list[tuple[int, int]],
    done: int,
) -> tuple[np.ndarray, int, int, int]:
    """Stage 2 of the search (module docstring): (nodes, span, tries so far, neighbourhoods)."""
    forest = tries.forest
    servers = int(forest.server.max()) + 1
    nodes_of = [np.flatnonzero(forest.server == s) for s in range(servers)]  # consecutive (preorder)
    capacity = np.bincount(forest.server[forest.width == 1], minlength=servers)
    top, failed, hoods = tries.tops(best), 0, 0
    while going(failed, span, done):
        if not (top >= span).any():
            span -= 1  # every server ends before the span: one slot gained
            history.append((span, done))
            failed = 0
            continue
        below = np.flatnonzero(top < span)
        pick = [int(rng.choice(np.flatnonzero(top >= span)))]
        pick += rng.permutation(below)[: NEIGHBOURS - 1].tolist()
        jobs = np.flatnonzero(np.isin(forest.server[best], pick))
        where = np.concatenate([nodes_of[s] for s in pick])  # sub-forest node -> node
        hoods += 1
        sub = _Tries(Forest.of(capacity[pick]), tries.gpus[jobs], tries.length[jobs])
        found, used = sub.fits(span - 1, rng, RECREATE)
        done += used
        failed = 0 if found is not None else failed + 1
        if found is None and SIDEWAYS:
            # no room under the span: a new arrangement at the span with no more paths at it
            before = sub.tight(_in_sub(best[jobs], where), span)
            found, used = sub.fits(span, rng, SIDEWAYS)
            done += used
            if found is not None:
                after = sub.tight(found, span)
                if after > before:
                    found = None
                elif after < before:
                    failed = 0
        if found is None:
            continue
        best = best.copy()
        best[jobs] = where[found]
        top[pick] = sub.tops(found)[: len(pick)]
    return best, span, done, hoods


def _in_sub(nodes: np.ndarray, where: np.ndarray) -> np.ndarray:
    """``nodes`` (of the whole forest) numbered in the sub-forest whose nodes are ``where``."""
    local = np.full(int(where.max()) + 1, -1, dtype=np.int64)
    local[where] = np.arange(len(where))
    return local[nodes]
