"""The list-scheduling engine every heuristic runs on (paper, Alg. 1-3; docs/algorithms.md section 1).

Jobs are taken in a given order and started, each as soon as its placement rule finds
GPUs for it, on a cluster that runs the true time model (:class:`rar_opt.simulate.Clock`).
When the rule finds no GPUs, the engine waits for the next completion and asks again; if
nothing is running, the trial fails. Jobs start in list order: a job never starts before
the job placed just before it (resolution 3 of docs/algorithms.md). Every trial starts from an
empty cluster with all loads U_g = 0 (resolution 1), and a trial in which some job cannot
be placed, or which ends after the horizon, is infeasible (resolution 2).

GPUs are numbered server by server: GPU g lives on ``server[g]`` with local index
``local[g]``. Each GPU carries U_g, the sum of the estimated loads ``weight[j]``
(= rho_hat_j / u) of the jobs placed on it; a GPU is *eligible* for job j when it is idle
and U_g + weight[j] <= theta.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..instance import Instance
from ..schedule import Schedule
from ..simulate import Clock
from ..timemodel import NEVER

LOAD_TOL = 1e-9


class ClusterState:
    """GPU identities, occupancy and loads during one trial (read by placement rules)."""

    def __init__(self, instance: Instance, theta: float, weight: np.ndarray) -> None:
        cap = instance.cluster.capacity
        self.instance = instance
        self.theta = float(theta)
        self.weight = weight
        self.capacity = cap
        self.server = np.repeat(np.arange(len(cap)), cap)
        self.local = np.concatenate([np.arange(o) for o in cap])
        self.load = np.zeros(len(self.server))
        self.owner = np.full(len(self.server), -1, dtype=np.int64)
        self.clock = Clock(instance, record=False)
        self.now = 0
        # the trial makes the same decisions for every theta' in [theta_low, theta_high):
        # the largest U_g + w_j it accepted and the smallest it refused (see ThetaCache)
        self.theta_low = 0.0
        self.theta_high = np.inf

    def eligible(self, job: int) -> np.ndarray:
        """Idle GPUs whose load stays within theta with job ``job`` added (bool mask)."""
        idle = self.owner < 0
        after = self.load + self.weight[job]
        fits = after <= self.theta + LOAD_TOL
        ok, refused = after[idle & fits], after[idle & ~fits]
        if len(ok):
            self.theta_low = max(self.theta_low, float(ok.max()))
        if len(refused):
            self.theta_high = min(self.theta_high, float(refused.min()))
        return idle & fits

    def server_in_use(self) -> np.ndarray:
        """Servers hosting at least one running job (bool per server)."""
        return np.bincount(self.server[self.owner >= 0], minlength=len(self.capacity)) > 0


PlacementRule = Callable[[ClusterState, int], "np.ndarray | None"]
"""Given the state and a job, the GPU indices to start it on now, or None to wait."""

GpuPicker = Callable[[ClusterState, int, np.ndarray], "np.ndarray | None"]
"""Given the state, a job and a mask of GPUs it may use, the G_j GPUs to take, or None.
Every picker below has this signature; :func:`eligible_rule` makes a rule of one."""


def eligible_rule(pick: GpuPicker) -> PlacementRule:
    """The placement rule that applies ``pick`` to the job's eligible GPUs."""

    def rule(state: ClusterState, job: int) -> np.ndarray | None:
        return pick(state, job, state.eligible(job))

    return rule


def sjf_order(instance: Instance) -> np.ndarray:
    """Jobs by G_j, non-decreasing; ties keep input order (Alg. 1's order)."""
    return np.argsort(instance.arrays.gpus, kind="stable")


def candidates(state: ClusterState, job: int, mask: np.ndarray) -> tuple[np.ndarray, int] | None:
    """The GPU indices of ``mask`` and G_j, or None when fewer than G_j are available:
    what every picker starts from."""
    idx = np.flatnonzero(mask)
    need = int(state.instance.arrays.gpus[job])
    return (idx, need) if len(idx) >= need else None


def least_loaded(state: ClusterState, job: int, mask: np.ndarray) -> np.ndarray | None:
    """The G_j GPUs of ``mask`` with the least load (ties: lower GPU index), or None."""
    if (found := candidates(state, job, mask)) is None:
        return None
    idx, need = found
    return idx[np.argsort(state.load[idx], kind="stable")[:need]]


def first_fit(state: ClusterState, job: int, mask: np.ndarray) -> np.ndarray | None:
    """The first G_j GPUs of ``mask`` in index order (server by server), or None."""
    if (found := candidates(state, job, mask)) is None:
        return None
    idx, need = found
    return idx[:need]


@dataclass(frozen=True)
class Trial:
    """One complete list schedule: starts, GPU ids (the placements follow from them),
    makespan, peak load. No dense J x S array is kept: bisection keeps many trials."""

    starts: np.ndarray
    gpu_ids: tuple[tuple[tuple[int, int], ...], ...]
    completion: np.ndarray
    makespan: int
    max_load: float
    valid_from: float = 0.0  # the same trial results for every theta in [valid_from, valid_below)
    valid_below: float = np.inf

    def placements(self, n_servers: int) -> np.ndarray:
        """y_js: GPUs of job j on server s, counted from the GPU ids."""
        jobs = np.repeat(np.arange(len(self.gpu_ids)), [len(ids) for ids in self.gpu_ids])
        servers = np.fromiter((s for ids in self.gpu_ids for s, _ in ids), dtype=np.int64, count=len(jobs))
        y = np.zeros((len(self.gpu_ids), n_servers), dtype=np.int64)
        np.add.at(y, (jobs, servers), 1)
        return y

    def to_schedule(self, instance: Instance, meta: dict) -> Schedule:
        """The trial as a schedule (with GPU ids) carrying ``meta``."""
        y = self.placements(instance.num_servers)
        return Schedule.from_arrays(instance.name, self.starts, y, gpu_ids=self.gpu_ids, meta=meta)


def run_list(
    instance: Instance,
    order: Sequence[int] | np.ndarray,
    rule: PlacementRule,
    theta: float,
    weight: np.ndarray,
    within_horizon: bool = True,
) -> Trial | Failed:
    """Place the jobs of ``order`` one by one with ``rule``; :class:`Failed` if it fails.

    With ``within_horizon`` (the algorithms' trials) a trial that ends after T fails; without
    it the trial runs to its end (:func:`beyond_horizon`)."""
    state = ClusterState(instance, theta, weight)
    clock = state.clock
    n_jobs, n_servers = instance.num_jobs, instance.num_servers
    starts = np.zeros(n_jobs, dtype=np.int64)
    gpus_of: list[np.ndarray] = [np.zeros(0, dtype=np.int64)] * n_jobs
    last_slot = instance.horizon - 1 if within_horizon else NEVER
    for j in order:
        while (chosen := rule(state, j)) is None:
            wake = clock.next_completion()
            if wake >= NEVER or wake > last_slot:
                return Failed(state.theta_low, state.theta_high)  # nothing to wait for, or past T
            for done in clock.run_until(wake):
                state.owner[gpus_of[done]] = -1
            state.now = wake
        y = np.bincount(state.server[chosen], minlength=n_servers)
        clock.start(int(j), y, state.now)
        state.owner[chosen] = j
        state.load[chosen] += weight[j]
        starts[j] = state.now
        gpus_of[j] = np.sort(chosen)
    clock.run_until(NEVER)
    res = clock.result()
    if not res.all_complete or res.makespan is None or (within_horizon and res.makespan > instance.horizon):
        return Failed(state.theta_low, state.theta_high)
    ids = tuple(tuple((int(state.server[g]), int(state.local[g])) for g in gpus_of[j]) for j in range(n_jobs))
    return Trial(
        starts,
        ids,
        res.completion,
        res.makespan,
        float(state.load.max()),
        state.theta_low,
        state.theta_high,
    )


@dataclass(frozen=True)
class Failed:
    """A trial that could not place every job within the horizon, valid on the same range."""

    valid_from: float
    valid_below: float


def beyond_horizon(
    instance: Instance, order: Sequence[int] | np.ndarray, rules: Sequence[PlacementRule], weight: np.ndarray
) -> Trial:
    """The best trial of ``rules`` with no load limit and no horizon: the schedule a policy
    returns, marked as ending after T, when none of its trials fits in the horizon. It
    always exists on a valid instance (every job fits the cluster and never stalls)."""
    trials = [as_trial(run_list(instance, order, rule, np.inf, weight, within_horizon=False)) for rule in rules]
    done = [t for t in trials if t is not None]
    if not done:  # only an invalid instance gets here
        raise RuntimeError("a list schedule without horizon did not complete")
    return min(done, key=lambda t: t.makespan)


def as_trial(result: Trial | Failed) -> Trial | None:
    """The trial, or None if it failed."""
    return result if isinstance(result, Trial) else None


class ThetaCache:
    """Trials already run for one placement rule, by the theta range they are valid on.

    A trial depends on theta only through the comparisons U_g + w_j <= theta, so it is the
    same for every theta between the largest value it accepted and the smallest it refused
    (:class:`ClusterState` records both). Bisection revisits such ranges often; the cache
    returns the earlier trial instead of running it again. Exact: the same result as
    running the trial.
    """

    def __init__(self, run: Callable[[float], Trial | Failed], reuse: bool = True) -> None:
        self._run = run
        self._reuse = reuse
        self._seen: list[Trial | Failed] = []
        self.runs = 0

    def __call__(self, theta: float) -> Trial | None:
        for t in self._seen if self._reuse else ():
            if t.valid_from <= theta + LOAD_TOL and theta + LOAD_TOL < t.valid_below:
                return t if isinstance(t, Trial) else None
        self.runs += 1
        t = self._run(theta)
        self._seen.append(t)
        return t if isinstance(t, Trial) else None


def bisect_theta(
    horizon: int, attempt: Callable[[int], Trial | None], rule: str = "paper"
) -> tuple[Trial | None, int | None, int]:
    """Alg. 1's bisection over the integer load limit theta in [1, T].

    ``rule="paper"`` (default), as the paper analyses it: ``right`` moves down only when the
    trial at theta improves on the best makespan so far; otherwise ``left`` moves up; the
    result is the best-makespan trial. ``rule="tightest"``: ``right`` moves down whenever
    the trial is feasible, and the result is the trial at the smallest feasible theta
    found (the load-balancing reading that Lemma 2 needs). Returns (trial, its theta,
    number of theta values tried).
    """
    if rule not in ("paper", "tightest"):
        raise ValueError(f"bisection rule must be 'paper' or 'tightest', got {rule!r}")
    best: Trial | None = None
    best_theta: int | None = None
    left, right, tried = 1, horizon, 0
    while left <= right:
        theta = (left + right) // 2
        tried += 1
        trial = attempt(theta)
        if trial is not None and (rule == "tightest" or best is None or trial.makespan < best.makespan):
            best, best_theta = trial, theta
            right = theta - 1
        else:
            left = theta + 1
    return best, best_theta, tried
