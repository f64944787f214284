"""SJF-BCO: Smallest Job First with Balanced Contention and Overhead (paper, Alg. 1-3).

* Alg. 1: jobs sorted by G_j (non-decreasing; ties keep input order); bisection over the
  integer load limit theta in [1, T] (:func:`~.engine.bisect_theta`); for each theta, one
  trial per kappa, keeping the trial with the smallest makespan (ties: smaller kappa).
* Alg. 2 FA-FFP for small jobs (G_j <= kappa): the G_j eligible GPUs of least load (the
  printed rule, default) or, with ``small_rule="packing"``, eligible GPUs on servers that
  already run a job first, then first fit by server index (the paper's prose).
* Alg. 3 LBSGF for large jobs (G_j > kappa): servers by average load sum_g U_g / O_s
  (ties: lower index), the fewest leading ones whose capacity reaches lambda_j G_j, then
  the G_j eligible GPUs of least load on them.

kappa: trials for two kappas between the same consecutive distinct job sizes are
identical (every job takes the same branch), so by default kappa runs over 1 and the
distinct sizes only (resolution 6 of docs/algorithms.md; kappa = 1 covers "every job is large" when no job has
one GPU, a class the distinct sizes alone would miss: a test found it); ``kappas="all"``
runs 1..n_g as printed. The result is the same, which a test checks.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from rar_opt.algorithms.engine import (
    Checkpoints,
    ClusterState,
    Failed,
    Incumbent,
    PlacementRule,
    Relay,
    ThetaCache,
    Trial,
    beyond_horizon,
    bisect_theta,
    least_loaded,
    least_loaded_rule,
    run_list,
)
from rar_opt.algorithms.estimators import ESTIMATORS, estimate
from rar_opt.algorithms.orders import fewest_gpus_first
from rar_opt.algorithms.result import PolicyResult, policy_result
from rar_opt.errors import ParameterError
from rar_opt.instance import Instance
from rar_opt.support.checks import is_int, is_real


@dataclass(frozen=True)
class SjfBcoParams:
    """Knobs of SJF-BCO, validated on construction."""

    kappas: str = "distinct"  # "distinct" (job sizes) or "all" (1..n_g)
    kappa: int | None = None  # a fixed kappa instead of the loop (for the kappa sweep)
    lam: float = 1.0  # lambda_j for every job (>= 1)
    small_rule: str = "printed"  # FA-FFP variant: "printed" or "packing"
    estimator: str = "best"
    reuse_trials: bool = True  # reuse a trial for every theta it provably equals (exact)
    bisection: str = "paper"  # "paper" (move right only on improvement) or "tightest"

    def __post_init__(self) -> None:
        if self.kappas not in ("distinct", "all"):
            raise ParameterError(f"must be 'distinct' or 'all', got {self.kappas!r}", where="kappas")
        if self.kappa is not None and (not is_int(self.kappa) or self.kappa < 1):
            raise ParameterError(f"must be an integer >= 1, got {self.kappa!r}", where="kappa")
        if not is_real(self.lam) or not 1.0 <= self.lam < math.inf:
            raise ParameterError(f"must be a finite number >= 1 (lambda_j), got {self.lam!r}", where="lam")
        if self.small_rule not in ("printed", "packing"):
            raise ParameterError(f"must be 'printed' or 'packing', got {self.small_rule!r}", where="small_rule")
        if self.bisection not in ("paper", "tightest"):
            raise ParameterError(f"must be 'paper' or 'tightest', got {self.bisection!r}", where="bisection")
        if self.estimator not in ESTIMATORS:
            raise ValueError(f"unknown estimator {self.estimator!r}")


def fa_ffp(packing: bool) -> PlacementRule:
    """Alg. 2 (FA-FFP): the printed rule from the engine's index (:func:`least_loaded_rule`),
    the packing variant by a scan of the GPUs (:func:`fa_ffp_scan`)."""
    return fa_ffp_scan(True) if packing else least_loaded_rule


def fa_ffp_scan(packing: bool) -> PlacementRule:
    """Alg. 2 (FA-FFP) by a scan of every GPU per decision (the reference of :func:`fa_ffp`)."""

    def rule(state: ClusterState, job: int) -> np.ndarray | None:
        mask = state.eligible(job)
        if not packing:
            return least_loaded(state, job, mask)
        idx = np.flatnonzero(mask)
        need = int(state.instance.arrays.gpus[job])
        if len(idx) < need:
            return None
        fresh = ~state.server_in_use()[state.server[idx]]  # servers not yet in use go last
        return idx[np.lexsort((idx, fresh))][:need]

    return rule


def lbsgf(lam: float) -> PlacementRule:
    """Alg. 3 (LBSGF) from the engine's index: servers by (average load, index) until their
    capacity reaches lambda_j G_j, then the least loaded eligible GPUs on them. Costs
    O(log G) plus the GPUs of the servers it takes; the same choice as :func:`lbsgf_scan`."""

    def rule(state: ClusterState, job: int) -> list[int] | None:
        cut, _ = state.eligible_cut(job)
        target = lam * state.gpus_needed[job] - 1e-9
        servers, reach = [], 0
        for _, s in state.by_average():  # the fewest leading servers whose capacity reaches lambda G_j
            servers.append(s)
            reach += state.caps[s]
            if reach >= target:
                break
        if cut is None:
            return None
        found = sorted((state.loads[g], g) for s in servers for g in state.gpus_on(s, cut))
        need = state.gpus_needed[job]
        return [g for _, g in found[:need]] if len(found) >= need else None

    return rule


def lbsgf_scan(lam: float) -> PlacementRule:
    """Alg. 3 (LBSGF) by a scan of every server and GPU per decision (the reference of :func:`lbsgf`)."""

    def rule(state: ClusterState, job: int) -> np.ndarray | None:
        avg = np.bincount(state.server, weights=state.load, minlength=len(state.capacity)) / state.capacity
        order = np.argsort(avg, kind="stable")
        reach = np.cumsum(state.capacity[order])
        want = lam * state.instance.arrays.gpus[job]
        count = min(int(np.searchsorted(reach, want - 1e-9, side="left")) + 1, len(order))
        chosen = np.zeros(len(state.capacity), dtype=bool)
        chosen[order[:count]] = True
        return least_loaded(state, job, state.eligible(job) & chosen[state.server])

    return rule


def kappa_values(instance: Instance, params: SjfBcoParams) -> list[int]:
    """The kappas Alg. 1 tries: the fixed one, 1..n_g ("all"), or 1 and the distinct sizes."""
    if params.kappa is not None:
        return [params.kappa]
    n_g = int(instance.arrays.gpus.max())
    if params.kappas == "all":
        return list(range(1, n_g + 1))
    # kappa = 1 stands for every kappa below the smallest size (all jobs take LBSGF);
    # each size s_i for kappa in [s_i, s_(i+1) - 1]; the lowest of each class comes first,
    # as in the full loop, so ties between trials resolve the same way
    return sorted({1} | {int(g) for g in instance.arrays.gpus})


def parting_positions(instance: Instance, order: np.ndarray, kappas: list[int]) -> list[int]:
    """For consecutive kappas k < k' (ascending), the list position of the first job the two
    trials treat differently (G_j in (k, k']: small for k', large for k), or the number of
    jobs when there is none. Before it the two trials at one theta decide alike (the same
    rule per job, the same state), which :func:`sjf_bco` uses to share their work."""
    jobs = np.asarray(order)
    if instance.has_releases:  # the engine takes the list by release (engine.run_list)
        jobs = jobs[np.argsort(instance.releases[jobs], kind="stable")]
    sizes = instance.arrays.gpus[jobs]
    out = []
    for k, k_next in itertools.pairwise(kappas):
        differ = np.flatnonzero((sizes > k) & (sizes <= k_next))
        out.append(int(differ[0]) if len(differ) else len(jobs))
    return out


def decided(earlier: Trial | Failed, parting: int, n_jobs: int) -> bool:
    """Whether a trial at the same theta that decides like ``earlier`` before list position
    ``parting`` ends as ``earlier`` did: it failed before that job, or no job differs."""
    return parting >= n_jobs or (isinstance(earlier, Failed) and earlier.at < parting)


def sjf_bco(instance: Instance, params: SjfBcoParams | None = None) -> PolicyResult:
    """Run SJF-BCO; the result (and the schedule's meta) records theta, kappa, trials and loads.

    If no (theta, kappa) trial ends within the horizon, the best kappa's schedule without
    load limit or horizon is returned, marked ``exceeds_horizon``.
    """
    params = params or SjfBcoParams()
    est = estimate(instance, params.estimator)
    weight = est.weight
    order = fewest_gpus_first(instance)
    kappas = kappa_values(instance, params)
    small, large = fa_ffp(params.small_rule == "packing"), lbsgf(params.lam)
    sizes = instance.arrays.gpus
    chosen_kappa: dict[int, int] = {}

    def rule_for(kappa: int) -> PlacementRule:
        def rule(state: ClusterState, job: int) -> np.ndarray | list[int] | None:
            return small(state, job) if sizes[job] <= kappa else large(state, job)

        return rule

    # one cache per kappa: a trial is reused for every theta it is provably the same for,
    # and a new one starts from the latest trial's state as far as that is the same for it
    # the paper's bisection only asks whether a theta's best trial beats the best so far:
    # a trial that cannot (makespan >= the incumbent, >= a smaller kappa's trial at the
    # same theta, or > a larger kappa's: the smaller wins ties) is stopped early; with
    # reuse_trials=False every trial runs to its end, as printed
    incumbent = Incumbent() if params.reuse_trials and params.bisection == "paper" else None

    def runner(kappa: int) -> Callable[..., Trial | Failed]:
        rule = rule_for(kappa)
        saved = Checkpoints(instance.num_jobs) if params.reuse_trials else None

        def run(theta: float, relay: Relay | None = None, cutoff: Incumbent | None = None) -> Trial | Failed:
            return run_list(
                instance, order, rule, theta, weight, checkpoints=saved, eligible_only=True, relay=relay, cutoff=cutoff
            )

        return run

    caches = {k: ThetaCache(runner(k), reuse=params.reuse_trials) for k in kappas}
    n_jobs, reuse = instance.num_jobs, params.reuse_trials
    top, rest = kappas[-1], kappas[:-1]
    part = parting_positions(instance, order, kappas)  # kappa rest[i] parts from rest[i + 1] there
    apart = [min(part[i:]) for i in range(len(rest))]  # ... and from the largest kappa there

    def bar(kappa: int, results: dict[int, Trial | Failed]) -> float:
        """The makespan kappa's trial must stay below to matter at this theta: below the
        incumbent, a smaller kappa's trial, and at most a larger kappa's (smaller wins ties)."""
        if incumbent is None:
            return -np.inf  # no cutoff: nothing is pruned
        c = incumbent.makespan
        for k, r in results.items():
            if isinstance(r, Trial):
                c = min(c, r.makespan if k < kappa else r.makespan + 1)
        return c

    def attempt(theta: int) -> Trial | None:
        # the largest kappa runs first: every other kappa decides like it up to where they
        # part, so it hands each its state there, and its makespan caps theirs (section 2.3);
        # then the others ascending, each also from the state of the one before it
        results: dict[int, Trial | Failed] = {}
        handed = Relay(frozenset(p for p in apart if p < n_jobs) if reuse else frozenset())
        results[top] = _ask(caches[top], theta, handed, bar(top, results))
        chain: Relay | None = None
        for i, kappa in enumerate(rest):
            cutoff = bar(kappa, results)
            result = caches[kappa].lookup(theta, cutoff)
            if result is None and reuse:  # decided alike with the largest or the previous kappa
                same = [(results[top], apart[i])] + ([(results[rest[i - 1]], part[i - 1])] if i else [])
                result = next((r for r, at in same if decided(r, at, n_jobs)), None)
                if result is not None:
                    caches[kappa].put(result)
            if result is None:
                offers = [handed.taken.get(apart[i])] + ([chain.taken.get(part[i - 1])] if chain else [])
                known = [o for o in offers if o is not None]
                offer = max(known, key=lambda o: o.placed) if known else None
                take = frozenset([part[i]]) if reuse and i + 1 < len(rest) and part[i] < n_jobs else frozenset()
                chain = Relay(take, offer)
                result = _ask(caches[kappa], theta, chain, cutoff)
            else:
                chain = None
            results[kappa] = result
        found = [(r.makespan, k, r) for k, r in results.items() if isinstance(r, Trial)]
        if not found:
            return None
        _, kappa, best = min(found, key=lambda f: (f[0], f[1]))
        chosen_kappa[theta] = kappa
        return best

    def _ask(cache: ThetaCache, theta: int, relay: Relay, cutoff: float) -> Trial | Failed:
        # one lookup, with the cutoff: a result pruned against a lower one is run again
        cut = None if incumbent is None else Incumbent(cutoff)
        return cache.result(theta, bar=cutoff, relay=relay if reuse else None, cutoff=cut)

    best, theta, tried = bisect_theta(instance.horizon, attempt, params.bisection, incumbent)
    if best is None or theta is None:  # nothing fits in T: the best kappa without limits, marked
        rules = [rule_for(k) for k in kappas]
        trials = [beyond_horizon(instance, order, [r], weight) for r in rules]
        i = min(range(len(kappas)), key=lambda i: trials[i].makespan)
        return policy_result(
            instance,
            "sjf-bco",
            trials[i],
            params,
            est,
            theta=None,
            kappa=kappas[i],
            trials=sum(c.runs for c in caches.values()) + len(kappas),
            trials_requested=tried * len(kappas),
            thetas_tried=tried,
            exceeds_horizon=trials[i].makespan > instance.horizon,
        )
    return policy_result(
        instance,
        "sjf-bco",
        best,
        params,
        est,
        theta=theta,
        kappa=chosen_kappa[theta],
        trials=sum(c.runs for c in caches.values()),  # trials actually run
        trials_requested=tried * len(kappas),  # (theta, kappa) pairs the bisection asked for
        thetas_tried=tried,
    )
