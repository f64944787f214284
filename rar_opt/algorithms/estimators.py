"""Execution-time estimates rho_hat_j and their error bounds l, u (docs/algorithms.md section 6).

SJF-BCO charges a job's GPUs rho_hat_j / u before the job runs, so the estimate must be
available before its placement and its contention are known (resolution 4 of
docs/algorithms.md). Any true execution time of job j lies in [rho_min_j, rho_max_j]
(:class:`rar_opt.cluster.timemodel.JobBounds`); an estimator picks rho_hat_j in that range, and
then l = min_j rho_hat_j / rho_max_j <= rho_hat / rho <= max_j rho_hat_j / rho_min_j = u
hold for every schedule, which is what Theorem 5's bound n_g * varphi * u / l needs.

Estimators are replaceable: register a function ``(instance) -> rho_hat`` under a name.

The range comes from the time model (``TimeModel.job_bounds``), so on a cluster with a
network topology (docs/model.md section 3.8) the estimates take the links' bandwidths
into account: the best case is the fastest server uplink's share at one ring, the worst
the smallest share any link can give at its most rings.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from rar_opt.instance import Instance

Estimator = Callable[[Instance], np.ndarray]

ESTIMATORS: dict[str, Estimator] = {
    # the uncontended execution time on the fewest servers (the default): u = 1
    "best": lambda inst: inst.bounds.rho_min.astype(float),
    # the worst case (most servers, most contenders): l = 1
    "worst": lambda inst: inst.bounds.rho_max.astype(float),
    # the geometric middle: u and 1/l balanced
    "geometric": lambda inst: np.sqrt(inst.bounds.rho_min * inst.bounds.rho_max),
}


@dataclass(frozen=True)
class Estimate:
    """rho_hat per job with its error bounds: l * rho <= rho_hat <= u * rho."""

    name: str
    rho_hat: np.ndarray
    lower: float  # l
    upper: float  # u

    @property
    def weight(self) -> np.ndarray:
        """The load a job adds to each of its GPUs: rho_hat_j / u."""
        return self.rho_hat / self.upper


def estimate(instance: Instance, name: str = "best") -> Estimate:
    """The estimate called ``name`` with its error bounds l and u (ValueError if unknown or out of range)."""
    if name not in ESTIMATORS:
        raise ValueError(f"unknown estimator {name!r} (known: {', '.join(sorted(ESTIMATORS))})")
    rho_hat = np.asarray(ESTIMATORS[name](instance), dtype=float)
    b = instance.bounds
    if np.any(rho_hat < b.rho_min - 1e-9) or np.any(rho_hat > b.rho_max + 1e-9):
        raise ValueError(f"estimator {name!r} left the range [rho_min, rho_max]")
    lower = float(np.min(rho_hat / b.rho_max))
    upper = float(np.max(rho_hat / b.rho_min))
    return Estimate(name, rho_hat, min(lower, 1.0), max(upper, 1.0))
