"""Lower bounds on the optimal makespan, Theorem 5's bound, and checks of Lemmas 2-3.

Lower bounds (all valid for every feasible schedule):

* ``longest``: max_j rho_min_j, the longest job's best execution time;
* ``work``: ceil(sum_j G_j rho_min_j / N), best-case GPU-slots over the cluster's GPUs;
* ``load``: the tightest integer theta of the load ILP (14)-(16) over enumerated schedules
  (tiny instances only; :func:`load_bound`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .instance import Instance


@dataclass(frozen=True)
class LowerBounds:
    longest: int
    work: int
    load: int | None = None

    @property
    def best(self) -> int:
        return max(v for v in (self.longest, self.work, self.load) if v is not None)


def lower_bounds(instance: Instance, load: int | None = None) -> LowerBounds:
    b = instance.bounds
    work = float(np.sum(instance.arrays.gpus * b.rho_min)) / instance.cluster.num_gpus
    return LowerBounds(longest=int(b.rho_min.max()), work=math.ceil(work - 1e-9), load=load)


def load_bound(instance: Instance, max_start: int, time_limit: float | None = 60.0) -> int | None:
    """The tightest integer theta for which the load ILP (14)-(16) is feasible, by
    bisection over [1, max_start + max rho_max]; None when a solve is inconclusive."""
    from .formulations import enumerative
    from .solvers import Status, solve_model

    enumerated = enumerative.enumerate_schedules(instance, max_start=max_start)
    left, right = 1, int(enumerated.completion.max())  # the schedules' makespans are all feasible thetas
    best = right
    while left <= right:
        theta = (left + right) // 2
        status, _, _ = solve_model(enumerative.build_load(instance, enumerated, theta), time_limit=time_limit)
        if status in (Status.OPTIMAL, Status.FEASIBLE):
            best, right = theta, theta - 1
        elif status == Status.INFEASIBLE:
            left = theta + 1
        else:
            return None
    return best
