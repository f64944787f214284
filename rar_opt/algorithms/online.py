"""Online policies: decisions at each arrival or completion, with no knowledge of later jobs.

The offline policies (:mod:`.sjf_bco`, :mod:`.baselines`) see every job from the start and
may try many list schedules (bisection over theta, several kappas). An online policy
(docs/arrivals.md) runs once, forward in time, and at each decision slot t (slot 0, each
arrival r_j, each slot after a completion) knows only

* the cluster, which GPUs are busy and the loads U_g of the jobs placed so far;
* the jobs released by t (r_j <= t) that have not started: their own data only.

At such a slot the waiting jobs are taken in the policy's priority order, and each is
started now if its placement rule finds GPUs for it; with ``backfill`` (the default) a job
that does not fit is skipped and later ones may still start, without it the first job
that does not fit blocks the rest until the next event. The priority of a job is a
function of its own data, so it is known when the job arrives; the GPU loads carry the
estimate rho_min_j of each placed job (the "best" estimator, which reads only job j), and
there is no load limit (theta is infinite: a limit needs the whole list to bisect on).

Policies (in :data:`rar_opt.algorithms.POLICIES`):

* ``online-sjf-bco``: SJF-BCO's online reading: waiting jobs by G_j (smallest first, then
  by release and index); a job with G_j <= kappa takes the G_j idle GPUs of least load
  (FA-FFP as printed), a larger one LBSGF's balanced choice of servers (Alg. 3, lambda).
  Without the bisection over theta and the loop over kappa, which both replay the whole
  job list, kappa and lambda are parameters.
* ``online-ff``: first come, first served (by release, then index); first fit.
* ``online-ll``: first come, first served; the G_j idle GPUs of least load.
* ``online-consolidate``: first come, first served; fewest servers (best fit).
* ``online-lf`` / ``online-sf``: longest / shortest estimated job first (F_j tau_min_j,
  ties by release and index); first fit.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from rar_opt.algorithms.baselines import consolidate_rule
from rar_opt.algorithms.engine import ClusterState, PlacementRule, Trial, first_fit_rule, least_loaded_rule
from rar_opt.algorithms.estimators import ESTIMATORS, estimate
from rar_opt.algorithms.result import PolicyResult, policy_result
from rar_opt.algorithms.sjf_bco import fa_ffp, lbsgf
from rar_opt.cluster.timemodel import NEVER
from rar_opt.errors import ParameterError
from rar_opt.instance import Instance
from rar_opt.support.checks import is_int, is_real
from rar_opt.support.progress import TRIALS


@dataclass(frozen=True)
class OnlineParams:
    """Knobs of the online policies, validated on construction."""

    backfill: bool = True  # a waiting job that does not fit lets later ones start
    estimator: str = "best"  # the only one that reads job j alone (the others see the number of jobs)

    def __post_init__(self) -> None:
        if not isinstance(self.backfill, bool):
            raise ParameterError(f"must be true or false, got {self.backfill!r}", where="backfill")
        if self.estimator not in ESTIMATORS:
            raise ValueError(f"unknown estimator {self.estimator!r}")
        if self.estimator != "best":
            raise ValueError(
                f"estimator {self.estimator!r}: online policies take 'best' only "
                "(the others depend on how many jobs there are, which an online policy does not know)"
            )


@dataclass(frozen=True)
class OnlineSjfBcoParams(OnlineParams):
    """SJF-BCO's online reading: the split between FA-FFP and LBSGF, and LBSGF's lambda."""

    kappa: int = 1  # jobs with G_j <= kappa take FA-FFP, larger ones LBSGF
    lam: float = 1.0  # lambda_j of LBSGF (>= 1)

    def __post_init__(self) -> None:
        super().__post_init__()
        if not is_int(self.kappa) or self.kappa < 1:
            raise ParameterError(f"must be an integer >= 1, got {self.kappa!r}", where="kappa")
        if not is_real(self.lam) or not 1.0 <= self.lam < math.inf:
            raise ParameterError(f"must be a finite number >= 1 (lambda_j), got {self.lam!r}", where="lam")


def run_online(instance: Instance, priority: np.ndarray, rule: PlacementRule, backfill: bool = True) -> Trial:
    """Run the event loop of the module docstring: waiting jobs by ``priority`` (smaller
    first, ties by release then index), each placed by ``rule``. Returns the whole run as a
    :class:`~.engine.Trial` (it may end after the horizon: nothing here looks at T)."""
    n_jobs = instance.num_jobs
    releases = instance.releases.tolist()
    weight = estimate(instance, "best").weight
    state = ClusterState(instance, np.inf, weight)
    clock = state.clock
    arrivals = sorted(range(n_jobs), key=lambda j: (releases[j], j))
    rank = {j: (float(priority[j]), releases[j], j) for j in range(n_jobs)}
    starts = np.zeros(n_jobs, dtype=np.int64)
    gpus_of: list[list[int]] = [[] for _ in range(n_jobs)]
    waiting: list[int] = []
    admitted = started = 0
    now = 0
    reporter, step = TRIALS.listener(), max(1, n_jobs // 100)  # progress as the engine's trials report it
    if reporter is not None:
        reporter.trials += 1
    while started < n_jobs:
        while admitted < n_jobs and releases[arrivals[admitted]] <= now:  # the jobs that have arrived
            waiting.append(arrivals[admitted])
            admitted += 1
        waiting.sort(key=rank.__getitem__)
        still: list[int] = []
        for i, j in enumerate(waiting):
            chosen = rule(state, j)
            if chosen is None:
                still.append(j)
                if not backfill:
                    still.extend(waiting[i + 1 :])
                    break
                continue
            gpus = sorted(chosen.tolist() if isinstance(chosen, np.ndarray) else chosen)
            y = np.zeros(instance.num_servers, dtype=np.int64)
            for g in gpus:
                y[state.server_of[g]] += 1
            clock.start(j, y, now)
            state.place(j, gpus)
            starts[j], gpus_of[j] = now, gpus
            if reporter is not None and started % step == 0:
                reporter.report(reporter.trials, started, n_jobs)
            started += 1
        waiting = still
        if started == n_jobs:
            break
        upcoming = releases[arrivals[admitted]] if admitted < n_jobs else NEVER
        wake = min(clock.next_completion(), upcoming)
        if wake >= NEVER:  # only a job that fits no empty cluster gets here; instances refuse those
            raise RuntimeError("an online policy found nothing to wait for")
        for done in clock.run_until(wake).tolist():
            state.release(gpus_of[done])
        now = state.now = wake
    if reporter is not None:
        reporter.report(reporter.trials, n_jobs, n_jobs)
    clock.run_until(NEVER)
    res = clock.result()
    if not res.all_complete or res.makespan is None:
        raise RuntimeError("a job stalled in an online run")
    ids = tuple(tuple((state.server_of[g], int(state.local[g])) for g in gpus_of[j]) for j in range(n_jobs))
    return Trial(starts, ids, res.completion, res.makespan, max(state.loads))


def _result(instance: Instance, name: str, trial: Trial, params: OnlineParams) -> PolicyResult:
    est = estimate(instance, "best")
    exceeds = trial.makespan > instance.horizon
    return policy_result(
        instance, name, trial, params, est, theta=None, trials=1, trials_requested=1, thetas_tried=1,
        exceeds_horizon=exceeds,
    )  # fmt: skip


def _fcfs(instance: Instance) -> np.ndarray:
    return instance.releases.astype(float)


def _duration(instance: Instance) -> np.ndarray:
    return (instance.arrays.iterations * instance.bounds.tau_min).astype(float)


def _policy(name: str, key: Callable[[Instance], np.ndarray], rule: PlacementRule):
    def run(instance: Instance, params: OnlineParams | None = None) -> PolicyResult:
        params = params or OnlineParams()
        return _result(instance, name, run_online(instance, key(instance), rule, params.backfill), params)

    run.__name__ = name.replace("-", "_")
    run.__doc__ = f"{name}: see the module docstring of rar_opt.algorithms.online."
    return run


online_first_fit = _policy("online-ff", _fcfs, first_fit_rule)
online_least_loaded = _policy("online-ll", _fcfs, least_loaded_rule)
online_consolidate = _policy("online-consolidate", _fcfs, consolidate_rule)
online_longest_first = _policy("online-lf", lambda inst: -_duration(inst), first_fit_rule)
online_shortest_first = _policy("online-sf", _duration, first_fit_rule)


def online_sjf_bco(instance: Instance, params: OnlineSjfBcoParams | None = None) -> PolicyResult:
    """online-sjf-bco: smallest G_j first; FA-FFP up to kappa GPUs, LBSGF above (no theta)."""
    params = params or OnlineSjfBcoParams()
    small, large = fa_ffp(False), lbsgf(params.lam)
    sizes = instance.arrays.gpus

    def rule(state: ClusterState, job: int) -> np.ndarray | list[int] | None:
        return small(state, job) if sizes[job] <= params.kappa else large(state, job)

    trial = run_online(instance, sizes.astype(float), rule, params.backfill)
    return _result(instance, "online-sjf-bco", trial, params)
