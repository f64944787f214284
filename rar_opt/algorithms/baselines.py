"""The paper's baselines (section 6) and two from the systems literature, on the same engine.

All use the SJF order of SJF-BCO (G_j non-decreasing) unless said otherwise, the same
time model and the same waiting rule.

* ``ff``: First-Fit. The first G_j eligible GPUs in index order (server by server), within
  its own load limit theta^FF found by the same bisection as SJF-BCO.
* ``ls``: List-Scheduling. The G_j eligible GPUs of least load, within theta^LS (bisection).
* ``rand``: G_j idle GPUs drawn at random (seeded), theta = T.
* ``consolidate``: fewest servers first, in the spirit of Tiresias' consolidated
  placement: the server with the fewest idle GPUs that still holds the whole job (best
  fit), else servers by idle GPUs, most first, until the job fits. theta = T.
* ``sjf-oblivious``: shortest estimated job first (F_j tau_min_j, ties by index), first
  fit, theta = T: a contention-oblivious SJF.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..errors import NoScheduleError
from ..instance import Instance
from ..schedule import Schedule
from .engine import (
    ClusterState,
    PlacementRule,
    ThetaCache,
    Trial,
    as_trial,
    bisect_theta,
    first_fit,
    least_loaded,
    run_list,
)
from .estimators import estimate
from .sjf_bco import sjf_order


@dataclass(frozen=True)
class BaselineParams:
    seed: int = 0
    estimator: str = "best"

    def __post_init__(self) -> None:
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {self.seed!r}")


def _ff(state: ClusterState, job: int) -> np.ndarray | None:
    return first_fit(state, job, state.eligible(job))


def _ls(state: ClusterState, job: int) -> np.ndarray | None:
    return least_loaded(state, job, state.eligible(job))


def _consolidate(state: ClusterState, job: int) -> np.ndarray | None:
    need = int(state.instance.arrays.gpus[job])
    mask = state.eligible(job)
    free = np.bincount(state.server[mask], minlength=len(state.capacity))
    if free.sum() < need:
        return None
    fits = np.flatnonzero(free >= need)
    # best fit on one server if any can hold the job, else the servers with most room first
    servers = [int(fits[np.argmin(free[fits])])] if len(fits) else list(np.argsort(-free, kind="stable"))
    out: list[int] = []
    for s in servers:
        idx = np.flatnonzero(mask & (state.server == s))
        out.extend(idx[: need - len(out)])
        if len(out) == need:
            break
    return np.array(out, dtype=np.int64)


def _rand(seed: int) -> PlacementRule:
    rng = np.random.default_rng(seed)

    def rule(state: ClusterState, job: int) -> np.ndarray | None:
        idx = np.flatnonzero(state.eligible(job))
        need = int(state.instance.arrays.gpus[job])
        return None if len(idx) < need else rng.choice(idx, size=need, replace=False)

    return rule


def _finish(instance: Instance, trial: Trial | None, name: str, meta: dict) -> Schedule:
    if trial is None:
        raise NoScheduleError(f"{name} found no schedule that completes within T = {instance.horizon}", where="horizon")
    return trial.to_schedule(instance, {"method": name, **meta, "max_load": trial.max_load})


def _bisected(name: str, rule: PlacementRule) -> Callable[[Instance, BaselineParams | None], Schedule]:
    def policy(instance: Instance, params: BaselineParams | None = None) -> Schedule:
        params = params or BaselineParams()
        weight = estimate(instance, params.estimator).weight
        order = sjf_order(instance)
        cache = ThetaCache(lambda th: run_list(instance, order, rule, th, weight))
        best, theta, tried = bisect_theta(instance.horizon, cache)
        meta = {"theta": theta, "trials": cache.runs, "thetas_tried": tried, "params": {"estimator": params.estimator}}
        return _finish(instance, best, name, meta)

    policy.__doc__ = f"{name}: see the module docstring."
    return policy


first_fit_policy = _bisected("ff", _ff)
list_scheduling_policy = _bisected("ls", _ls)


def random_policy(instance: Instance, params: BaselineParams | None = None) -> Schedule:
    params = params or BaselineParams()
    weight = estimate(instance, params.estimator).weight
    trial = as_trial(run_list(instance, sjf_order(instance), _rand(params.seed), instance.horizon, weight))
    return _finish(
        instance, trial, "rand", {"theta": instance.horizon, "seed": params.seed, "params": {"seed": params.seed}}
    )


def consolidate_policy(instance: Instance, params: BaselineParams | None = None) -> Schedule:
    params = params or BaselineParams()
    weight = estimate(instance, params.estimator).weight
    trial = as_trial(run_list(instance, sjf_order(instance), _consolidate, instance.horizon, weight))
    return _finish(instance, trial, "consolidate", {"theta": instance.horizon, "params": {}})


def oblivious_sjf_policy(instance: Instance, params: BaselineParams | None = None) -> Schedule:
    params = params or BaselineParams()
    weight = estimate(instance, params.estimator).weight
    duration = instance.arrays.iterations * instance.bounds.tau_min
    order = np.argsort(duration, kind="stable")
    trial = as_trial(run_list(instance, order, _ff, instance.horizon, weight))
    return _finish(instance, trial, "sjf-oblivious", {"theta": instance.horizon, "params": {}})
