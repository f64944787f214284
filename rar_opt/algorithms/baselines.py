"""The paper's baselines (section 6) and two from the systems literature, on the same engine.

All use the SJF order of SJF-BCO (G_j non-decreasing) unless said otherwise, the same
time model and the same waiting rule (docs/algorithms.md section 5).

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
from typing import Any

import numpy as np

from rar_opt.algorithms.engine import (
    ClusterState,
    GpuPicker,
    Incumbent,
    PlacementRule,
    ThetaCache,
    Trial,
    as_trial,
    beyond_horizon,
    bisect_theta,
    candidates,
    eligible_rule,
    first_fit_rule,
    least_loaded_rule,
    run_list,
)
from rar_opt.algorithms.estimators import ESTIMATORS, estimate
from rar_opt.algorithms.orders import BASELINE_ORDERS
from rar_opt.algorithms.result import PolicyResult, policy_result
from rar_opt.errors import ParameterError
from rar_opt.instance import Instance
from rar_opt.support.checks import GENERATOR_MAX_SEED, seed_problem


@dataclass(frozen=True)
class BaselineParams:
    """Knobs of the deterministic baselines, validated on construction."""

    estimator: str = "best"  # rho_hat (docs/algorithms.md section 6)

    def __post_init__(self) -> None:
        if self.estimator not in ESTIMATORS:
            raise ValueError(f"unknown estimator {self.estimator!r} (known: {', '.join(ESTIMATORS)})")


@dataclass(frozen=True)
class OrderedParams(BaselineParams):
    """Baselines that take the jobs in a list order: ``smallest-first`` (SJF-BCO's order,
    G_j non-decreasing, the default) or ``input`` (the instance's order)."""

    order: str = "smallest-first"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.order not in JOB_ORDERS:
            raise ParameterError(f"must be one of {', '.join(JOB_ORDERS)}, got {self.order!r}", where="order")


@dataclass(frozen=True)
class BisectedParams(OrderedParams):
    """FF: its own bisected load limit, by the paper's rule (default) or the tightest."""

    bisection: str = "paper"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.bisection not in ("paper", "tightest"):
            raise ParameterError(f"must be 'paper' or 'tightest', got {self.bisection!r}", where="bisection")


def _check_seed(seed: object) -> None:
    if problem := seed_problem(seed, GENERATOR_MAX_SEED):
        raise ParameterError(problem, where="seed")


@dataclass(frozen=True)
class LsParams(BisectedParams):
    """LS: ties between equally loaded GPUs go to the lower ``index`` (default) or are
    broken at ``random`` (seeded): on an empty cluster the first makes LS first fit, the
    second spreads jobs over servers as the paper describes LS doing."""

    tie_break: str = "index"
    seed: int = 0

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.tie_break not in ("index", "random"):
            raise ParameterError(f"must be 'index' or 'random', got {self.tie_break!r}", where="tie_break")
        _check_seed(self.seed)


@dataclass(frozen=True)
class RandParams(OrderedParams):
    """rand: G_j idle GPUs drawn cluster-wide (``gpus``, default) or random servers first,
    then their idle GPUs (``servers``); seeded."""

    seed: int = 0
    mode: str = "gpus"

    def __post_init__(self) -> None:
        super().__post_init__()
        _check_seed(self.seed)
        if self.mode not in ("gpus", "servers"):
            raise ParameterError(f"must be 'gpus' or 'servers', got {self.mode!r}", where="mode")


JOB_ORDERS = tuple(BASELINE_ORDERS)


def job_order(instance: Instance, order: str) -> np.ndarray:
    """The list order of the jobs: G_j non-decreasing (ties by index) or the input order."""
    return BASELINE_ORDERS[order](instance, "best")


def consolidate(state: ClusterState, job: int, mask: np.ndarray) -> np.ndarray | None:
    """Best fit on one server if any can hold the job, else the servers with most room first."""
    need = int(state.instance.arrays.gpus[job])
    free = np.bincount(state.server[mask], minlength=len(state.capacity))
    if free.sum() < need:
        return None
    fits = np.flatnonzero(free >= need)
    servers = [int(fits[np.argmin(free[fits])])] if len(fits) else list(np.argsort(-free, kind="stable"))
    out: list[int] = []
    for s in servers:
        idx = np.flatnonzero(mask & (state.server == s))
        out.extend(idx[: need - len(out)])
        if len(out) == need:
            break
    return np.array(out, dtype=np.int64)


def consolidate_rule(state: ClusterState, job: int) -> np.ndarray | list[int] | None:
    """``eligible_rule(consolidate)`` from the engine's index when every idle GPU is
    eligible (theta = T refuses none in practice): servers grouped by idle count, so a
    decision looks at the counts and the servers it takes, not at every GPU."""
    cut, every = state.eligible_cut(job)
    if not every:  # the load limit refuses some idle GPU: the scan decides
        return consolidate(state, job, state.eligible(job))
    need = state.gpus_needed[job]
    if cut is None or len(state.idle) < need:
        return None
    groups = state.by_idle()
    for count in range(need, len(groups)):  # best fit: fewest idle GPUs that hold the job, lowest index
        if len(groups[count]):
            return state.gpus_on(groups[count].first(1)[0], cut)[:need]
    out: list[int] = []
    for count in range(len(groups) - 1, 0, -1):  # no server holds it: most idle GPUs first
        for s in groups[count]:
            out.extend(state.gpus_on(s, cut)[: need - len(out)])
            if len(out) == need:
                return out
    return out  # not reached: the idle GPUs are at least G_j


def _random_scan(
    rng: np.random.Generator, mode: str, state: ClusterState, job: int, mask: np.ndarray
) -> np.ndarray | None:
    """The draw of :func:`random_picker` on an eligibility mask, with generator ``rng``."""
    if (found := candidates(state, job, mask)) is None:
        return None
    idx, need = found
    if mode == "gpus":
        return rng.choice(idx, size=need, replace=False)
    servers = rng.permutation(np.unique(state.server[idx]))
    rank = np.empty(len(state.capacity), dtype=np.int64)
    rank[servers] = np.arange(len(servers))
    return idx[np.lexsort((idx, rank[state.server[idx]]))][:need]


def random_picker(seed: int, mode: str = "gpus") -> GpuPicker:
    """G_j GPUs of the mask drawn uniformly at random (``gpus``), or random servers first and
    their GPUs in index order (``servers``); one generator per run."""
    rng = np.random.default_rng(seed)

    def pick(state: ClusterState, job: int, mask: np.ndarray) -> np.ndarray | None:
        return _random_scan(rng, mode, state, job, mask)

    return pick


def random_rule(seed: int, mode: str = "gpus") -> PlacementRule:
    """``eligible_rule(random_picker(seed, mode))`` from the engine's index: the same draws
    from the same generator (a draw of G_j positions among the n eligible GPUs, or a
    permutation of the servers with one), mapped to GPUs without a scan when every idle
    GPU is eligible."""
    rng = np.random.default_rng(seed)

    def rule(state: ClusterState, job: int) -> np.ndarray | list[int] | None:
        cut, every = state.eligible_cut(job)
        if not every:
            return _random_scan(rng, mode, state, job, state.eligible(job))
        need = state.gpus_needed[job]
        if cut is None or len(state.idle) < need:
            return None
        if mode == "gpus":
            flags = state.idle_flags()
            return [flags.kth(int(k)) for k in rng.choice(len(state.idle), size=need, replace=False)]
        out: list[int] = []
        for s in rng.permutation(np.flatnonzero(np.array(state.idle_counts) > 0)).tolist():
            out.extend(state.gpus_on(s, cut)[: need - len(out)])
            if len(out) == need:
                break
        return out

    return rule


def least_loaded_random(seed: int) -> GpuPicker:
    """The G_j GPUs of least load, ties broken at random (one generator per run). It draws
    one number per eligible GPU, so it scans them: the draws are part of the result."""
    rng = np.random.default_rng(seed)

    def pick(state: ClusterState, job: int, mask: np.ndarray) -> np.ndarray | None:
        if (found := candidates(state, job, mask)) is None:
            return None
        idx, need = found
        return idx[np.lexsort((rng.random(len(idx)), state.load[idx]))][:need]

    return pick


def _finish(
    instance: Instance,
    trial: Trial | None,
    name: str,
    params: BaselineParams,
    fallback: tuple[np.ndarray, Callable[[], PlacementRule]],
    **run: Any,
) -> PolicyResult:
    est = estimate(instance, params.estimator)
    if trial is None:  # no trial fits in T: the same rule (fresh) without load limit or horizon
        order, make_rule = fallback
        unlimited = beyond_horizon(instance, order, [make_rule()], est.weight)
        run = {**run, "theta": None, "exceeds_horizon": unlimited.makespan > instance.horizon}
        return policy_result(instance, name, unlimited, params, est, **run)
    return policy_result(instance, name, trial, params, est, **run)


def _bisected(
    instance: Instance,
    name: str,
    params: BisectedParams,
    make_rule: Callable[[], PlacementRule],
    seed: int | None = None,
) -> PolicyResult:
    """Bisect a load limit for the rule ``make_rule`` gives (a fresh rule per trial, so a
    seeded rule draws the same numbers in every trial); ``seed``: the seed such a rule
    draws with, recorded in the schedule (None for a rule that draws nothing)."""
    weight = estimate(instance, params.estimator).weight
    order = job_order(instance, params.order)
    # under the paper's rule a trial that cannot beat the best so far is stopped early
    incumbent = Incumbent() if params.bisection == "paper" else None
    cache = ThetaCache(lambda th: run_list(instance, order, make_rule(), th, weight, cutoff=incumbent))
    best, theta, tried = bisect_theta(instance.horizon, cache, params.bisection, incumbent)
    run = {"theta": theta, "trials": cache.runs, "trials_requested": tried, "thetas_tried": tried}
    return _finish(instance, best, name, params, (order, make_rule), **run, seed=seed)


def first_fit_policy(instance: Instance, params: BisectedParams | None = None) -> PolicyResult:
    """ff: the first eligible GPUs in index order, its own bisected load limit."""
    return _bisected(instance, "ff", params or BisectedParams(), lambda: first_fit_rule)


def list_scheduling_policy(instance: Instance, params: LsParams | None = None) -> PolicyResult:
    """ls: the least loaded eligible GPUs (ties by index or at random), its own bisected limit."""
    p = params or LsParams()
    if p.tie_break == "random":
        return _bisected(instance, "ls", p, lambda: eligible_rule(least_loaded_random(p.seed)), seed=p.seed)
    return _bisected(instance, "ls", p, lambda: least_loaded_rule)


def _unlimited(
    instance: Instance,
    name: str,
    params: BaselineParams,
    order: np.ndarray,
    make_rule: Callable[[], PlacementRule],
    seed: int | None = None,
) -> PolicyResult:
    """One trial at theta = T (the load limit never refuses a GPU). ``make_rule`` gives a
    fresh rule, so that a seeded rule draws the same numbers in the fallback."""
    weight = estimate(instance, params.estimator).weight
    trial = as_trial(run_list(instance, order, make_rule(), instance.horizon, weight))
    run = {"theta": instance.horizon, "trials": 1, "trials_requested": 1, "thetas_tried": 1}
    return _finish(instance, trial, name, params, (order, make_rule), **run, seed=seed)


def random_policy(instance: Instance, params: RandParams | None = None) -> PolicyResult:
    """rand: random idle GPUs, seeded, theta = T."""
    params = params or RandParams()

    def make_rule() -> PlacementRule:
        return random_rule(params.seed, params.mode)

    return _unlimited(instance, "rand", params, job_order(instance, params.order), make_rule, seed=params.seed)


def consolidate_policy(instance: Instance, params: OrderedParams | None = None) -> PolicyResult:
    """consolidate: fewest servers (best fit), theta = T."""
    params = params or OrderedParams()
    order = job_order(instance, params.order)
    return _unlimited(instance, "consolidate", params, order, lambda: consolidate_rule)


def oblivious_sjf_policy(instance: Instance, params: BaselineParams | None = None) -> PolicyResult:
    """sjf-oblivious: shortest estimated job first (F_j tau_min_j), first fit, theta = T."""
    params = params or BaselineParams()
    duration = instance.arrays.iterations * instance.bounds.tau_min
    order = np.argsort(duration, kind="stable")
    return _unlimited(instance, "sjf-oblivious", params, order, lambda: first_fit_rule)
