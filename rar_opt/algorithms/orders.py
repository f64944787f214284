"""Job orders of the list-scheduling policies: one home for every order by name.

A list policy places the jobs one by one in an order; the orders here sort by the jobs'
GPUs, their estimated execution time rho_hat_j (:mod:`.estimators`) or their area
G_j rho_hat_j, ties kept in the input order (stable sorts), so an order is a function of
the instance alone. ``pack`` orders its starts by its own job lengths (each job's exact
time unsplit, or split where it must be), not by an estimate: those stay in
:mod:`.packing`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from rar_opt.algorithms.estimators import estimate
from rar_opt.instance import Instance


def fewest_gpus_first(instance: Instance, estimator: str = "best") -> np.ndarray:
    """Jobs by G_j, non-decreasing; ties keep the input order (SJF-BCO's Alg. 1 order)."""
    return np.argsort(instance.arrays.gpus, kind="stable")


def input_order(instance: Instance, estimator: str = "best") -> np.ndarray:
    """The jobs as the instance lists them."""
    return np.arange(instance.num_jobs)


def longest_first(instance: Instance, estimator: str = "best") -> np.ndarray:
    """Jobs by rho_hat_j, non-increasing; ties keep the input order."""
    rho_hat = estimate(instance, estimator).rho_hat
    return np.argsort(-rho_hat, kind="stable")


def largest_area_first(instance: Instance, estimator: str = "best") -> np.ndarray:
    """Jobs by G_j rho_hat_j, non-increasing; ties keep the input order."""
    area = instance.arrays.gpus * estimate(instance, estimator).rho_hat
    return np.argsort(-area, kind="stable")


ORDERS: dict[str, Callable[[Instance, str], np.ndarray]] = {
    "longest-first": longest_first,
    "largest-area-first": largest_area_first,
}
"""The classical list orders for the makespan by name (``improve`` starts from each)."""


def shortest_first(instance: Instance, estimator: str = "best") -> np.ndarray:
    """Jobs by rho_hat_j, non-decreasing; ties keep the input order (SPT: Smith's rule
    with unit weights, the classical order for the sum of completion times)."""
    return np.argsort(estimate(instance, estimator).rho_hat, kind="stable")


def smallest_area_first(instance: Instance, estimator: str = "best") -> np.ndarray:
    """Jobs by G_j rho_hat_j, non-decreasing; ties keep the input order."""
    area = instance.arrays.gpus * estimate(instance, estimator).rho_hat
    return np.argsort(area, kind="stable")


SUM_ORDERS: dict[str, Callable[[Instance, str], np.ndarray]] = {
    "shortest-first": shortest_first,
    "smallest-area-first": smallest_area_first,
    "fewest-gpus-first": fewest_gpus_first,
}
"""The classical list orders for the sum of completion times (``improve`` with
``objective="total"`` starts from each)."""


BASELINE_ORDERS: dict[str, Callable[[Instance, str], np.ndarray]] = {
    "smallest-first": fewest_gpus_first,
    "input": input_order,
}
"""The orders the paper's baselines (FF, LS, RAND, consolidate) take (their ``order``)."""
