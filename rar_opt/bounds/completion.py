"""Lower bounds on the total completion time sum_j C_j and the total flow time.

Number the jobs of any feasible schedule in the order they complete: the k-th completion
is at least the k-th smallest r_j + rho_min_j, and at least the k-th completion of the
"squashed" jobs on one machine of N GPU-slots per slot (docs/exactness.md, "Bounds on
the total completion time"). :func:`rank_bound` is the registry's entry.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np

from rar_opt.instance import Instance


@dataclass(frozen=True)
class CompletionBounds:
    """Lower bounds on sum_j C_j and sum_j (C_j - r_j), each valid for every feasible schedule."""

    total: int  # on the total completion time sum_j C_j
    flow: int  # on the total flow time: ``total`` less the constant sum_j r_j
    simple_total: int  # sum_j (r_j + rho_min_j), the per-job bound alone (``total`` is at least it)
    jobs: int

    @property
    def mean_completion(self) -> float:
        """On the average completion time (the simulator's average JCT, counted from slot 0)."""
        return self.total / self.jobs

    @property
    def mean_flow(self) -> float:
        """On the average flow time (completion less release)."""
        return self.flow / self.jobs


def squashed_completions(instance: Instance) -> np.ndarray:
    """The completion times, in slots and rounded up, of the shortest-remaining-work-first
    schedule of the "squashed" jobs: the cluster as one machine that does N GPU-slots per
    slot, job j as G_j rho_min_j GPU-slots released at r_j, preemption allowed. Sorted.

    Its k-th completion is a lower bound on the k-th completion of every feasible schedule:
    a schedule holds job j's G_j GPUs for at least rho_min_j slots inside [r_j, C_j) and at
    most N GPUs in a slot, so it is a fractional schedule of the squashed jobs on that
    machine finishing each job by C_j; earliest-deadline-first turns it into a preemptive
    one finishing each job no later (Horn's condition holds on every window), and shortest
    remaining work first completes at least as many jobs as any preemptive schedule by
    every time (Schrage 1968). Integer arithmetic: time is counted in 1/N slots."""
    n_gpus = instance.cluster.num_gpus
    work = [int(w) for w in instance.arrays.gpus * instance.bounds.rho_min]
    released = sorted((int(r) * n_gpus, j) for j, r in enumerate(instance.releases))
    waiting: list[tuple[int, int]] = []  # (remaining GPU-slots, job)
    t, i, done = 0, 0, []
    while i < len(released) or waiting:
        if not waiting:
            t = max(t, released[i][0])
        while i < len(released) and released[i][0] <= t:
            heapq.heappush(waiting, (work[released[i][1]], released[i][1]))
            i += 1
        left, j = heapq.heappop(waiting)
        following = released[i][0] if i < len(released) else None
        if following is None or t + left <= following:
            t += left
            done.append(t)
        else:  # preempted by the next release (it may be shorter)
            heapq.heappush(waiting, (left - (following - t), j))
            t = following
    return np.sort(-(-np.array(done, dtype=np.int64) // n_gpus))


def completion_bounds(instance: Instance) -> CompletionBounds:
    """Lower bounds on the total completion and the total flow time of ``instance``.

    Number the jobs of any feasible schedule in the order they complete. The k-th
    completion is at least the k-th smallest r_j + rho_min_j (every job j ends no earlier
    than r_j + rho_min_j) and at least the k-th completion of
    :func:`squashed_completions`; so sum_j C_j is at least the sum over k of the larger of
    the two, and the flow bound is that less sum_j r_j. Without releases this is the
    per-rank bound of docs/experiments.md ("Longest first"): the k-th smallest rho_min_j
    against the k smallest areas over N."""
    alone = np.sort(instance.releases + instance.bounds.rho_min.astype(np.int64))
    total = int(np.maximum(alone, squashed_completions(instance)).sum())
    return CompletionBounds(total, total - int(instance.releases.sum()), int(alone.sum()), instance.num_jobs)


def rank_bound(instance: Instance) -> int:
    """The per-rank bound on sum_j C_j (:func:`completion_bounds`)."""
    return completion_bounds(instance).total
