"""The iterated local search over priority orders that ``backfill`` runs (:mod:`.backfill`).

A state is a priority order, or under ``split="choose"`` a :class:`Choice` (the order and
the jobs held unsplit). :func:`walk_orders` moves from state to neighbour (:func:`move`,
:func:`choice_move`), keeps a neighbour that is no worse (plateaus are crossed) and
returns to the best after :data:`PATIENCE` moves without a strict gain. It knows nothing
of schedules: the caller values each state (the builder's plan, or a relaxation's in
``benchmarks/backfill_search.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

import numpy as np

from rar_opt.support.processes import stop_requested

FLIP_SHARE = 0.2
"""Under ``split="choose"``, the share of the search's moves that flip one job's leave to
split (a job that fits on one server and has more than one GPU) instead of moving the order."""

PATIENCE = 3000
"""Moves without a strict gain after which the search returns to its best order."""

SHIFT = 10
"""The farthest a shift move carries one job in the order."""


def move(
    rng: np.random.Generator, order: list[int], weights: np.ndarray | None = None, focus: float = 0.0
) -> list[int]:
    """A neighbour of ``order``: one job shifted by up to :data:`SHIFT` places (half of the
    moves), two neighbours swapped (three in ten), or two to five jobs taken out and put
    back at drawn places (one in five). In ``focus`` of the moves (with ``weights``, one
    non-negative weight per job) the jobs moved are drawn in proportion to their weights
    instead of by place; with ``focus`` 0 no random number is drawn for it."""
    if weights is not None and focus > 0.0 and rng.random() < focus:
        return _weighted_move(rng, order, weights)
    n, out = len(order), list(order)
    draw = rng.random()
    if draw < 0.5:
        _shift(rng, out, int(rng.integers(n)))
    elif draw < 0.8:
        i = int(rng.integers(n - 1))
        out[i], out[i + 1] = out[i + 1], out[i]
    else:
        _reinsert(rng, out, rng.choice(n, int(rng.integers(2, min(6, n + 1))), replace=False).tolist())
    return out


def _shift(rng: np.random.Generator, out: list[int], i: int) -> None:
    """Move the job at place ``i`` of ``out`` by up to :data:`SHIFT` places (drawn)."""
    out.insert(int(np.clip(i + rng.integers(-SHIFT, SHIFT + 1), 0, len(out) - 1)), out.pop(i))


def _reinsert(rng: np.random.Generator, out: list[int], places: list[int]) -> None:
    """Take the jobs at ``places`` out of ``out`` and put each back at a drawn place."""
    for job in [out.pop(i) for i in sorted(places, reverse=True)]:
        out.insert(int(rng.integers(len(out) + 1)), job)


def _weighted_move(rng: np.random.Generator, order: list[int], weights: np.ndarray) -> list[int]:
    """:func:`move`'s three kinds in the same shares, the jobs drawn by weight."""
    n, out = len(order), list(order)
    p = weights / weights.sum()
    place = {job: i for i, job in enumerate(out)}
    draw = rng.random()
    if draw < 0.5:
        _shift(rng, out, place[int(rng.choice(n, p=p))])
    elif draw < 0.8:
        i = place[int(rng.choice(n, p=p))]
        k = i + 1 if i + 1 < n and (i == 0 or rng.random() < 0.5) else i - 1
        out[i], out[k] = out[k], out[i]
    else:
        weighted = int(np.count_nonzero(p))
        if weighted < 2:  # nothing to take out two at a time
            return out
        jobs = rng.choice(n, int(rng.integers(2, min(6, weighted + 1))), replace=False, p=p)
        _reinsert(rng, out, [place[int(j)] for j in jobs])
    return out


def choice_move(
    rng: np.random.Generator,
    state: Choice,
    flippable: list[int],
    weights: np.ndarray | None = None,
    focus: float = 0.0,
) -> Choice:
    """A neighbour of ``state`` under ``split="choose"``: one flippable job's leave to split
    flipped (:data:`FLIP_SHARE` of the moves), else the order moved (:func:`move`, with
    ``weights`` and ``focus``)."""
    if flippable and rng.random() < FLIP_SHARE:
        j = flippable[int(rng.integers(len(flippable)))]
        return Choice(state.order, state.unsplit ^ {j})
    return Choice(move(rng, state.order, weights, focus), state.unsplit)


@dataclass(frozen=True)
class Choice:
    """A state of the search under ``split="choose"``: the order and the jobs that never
    split by choice."""

    order: list[int]
    unsplit: frozenset[int]


S = TypeVar("S")
V = TypeVar("V")


@dataclass
class Walk(Generic[S, V]):
    """Where :func:`walk_orders` ended: the best state (an order, or a :class:`Choice`) and
    its value, the moves made, how many of them improved on the best, and whether time or a
    stop request cut it short."""

    order: S
    value: V
    moves: int = 0
    improvements: int = 0
    capped: bool = False


def walk_orders(
    rng: np.random.Generator,
    order: S,
    value: V,
    evaluate: Callable[[S], V | None],
    key: Callable[[V], tuple[int, ...]],
    moves: int,
    neighbour: Callable[[np.random.Generator, S], S],
) -> Walk[S, V]:
    """An iterated local search from ``order`` (its value ``value``; a priority order with
    ``neighbour=move``): up to ``moves`` moves (``neighbour``) from the current state, each
    neighbour valued by ``evaluate`` (None: out of time, the walk stops) and compared by
    ``key``, smaller better. A neighbour no worse than the current state replaces it
    (plateaus are crossed); after :data:`PATIENCE` moves without a strict gain the walk
    returns to the best. The policy below walks the builder's schedules; the evidence code
    of issue 31 (``benchmarks/backfill_search.py``) walks a relaxation's."""
    best = Walk(order, value)
    current, current_value, since = best.order, value, 0
    for _ in range(moves):
        if stop_requested() is not None:
            best.capped = True
            break
        candidate = neighbour(rng, current)
        found = evaluate(candidate)
        if found is None:
            best.capped = True
            break
        best.moves += 1
        since += 1
        found_key = key(found)
        if found_key <= key(current_value):
            if found_key < key(current_value):
                since = 0
            current, current_value = candidate, found
            if found_key < key(best.value):
                best.order, best.value = candidate, found
                best.improvements += 1
        if since > PATIENCE:
            current, current_value, since = best.order, best.value, 0
    return best


__all__ = ["FLIP_SHARE", "PATIENCE", "SHIFT", "Choice", "Walk", "choice_move", "move", "walk_orders"]
