"""The list-scheduling engine every heuristic runs on (paper, Alg. 1-3; docs/algorithms.md section 1).

Jobs are taken in a given order and started, each as soon as its placement rule finds
GPUs for it, on a cluster that runs the true time model (:class:`rar_opt.simulate.Clock`).
When the rule finds no GPUs, the engine waits for the next completion and asks again; if
nothing is running, the trial fails. Jobs start in list order: a job never starts before
the job placed just before it (resolution 3 of docs/algorithms.md). Every trial starts from an
empty cluster with all loads U_g = 0 (resolution 1), and a trial in which some job cannot
be placed, or which ends after the horizon, is infeasible (resolution 2).

Releases (docs/arrivals.md): a job is not available before its release r_j. When some job
arrives after slot 0, the list is taken in order of release (stably: the given order among
jobs released together), and the engine waits until r_j before asking the rule for job j.
Without releases the list and every decision are unchanged.

GPUs are numbered server by server: GPU g lives on ``server[g]`` with local index
``local[g]``. Each GPU carries U_g, the sum of the estimated loads ``weight[j]``
(= rho_hat_j / u) of the jobs placed on it; a GPU is *eligible* for job j when it is idle
and U_g + weight[j] <= theta.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from rar_opt.algorithms.index import CountTree, MinTree, SortedKeys
from rar_opt.cluster.timemodel import NEVER
from rar_opt.instance import Instance
from rar_opt.schedule import Schedule
from rar_opt.simulate import Clock
from rar_opt.support.progress import TRIALS

LOAD_TOL = 1e-9
INF = float("inf")


class ClusterState:
    """GPU identities, occupancy and loads during one trial (read by placement rules).

    A :data:`GpuPicker` reads the numpy arrays ``server``, ``load`` and ``owner`` (the last
    two built on demand from the plain lists ``loads`` and ``owners``). The state keeps
    index structures (:mod:`.index`) so that the built-in rules
    (:func:`least_loaded_rule`, :func:`first_fit_rule` and the policies' own) cost
    O(log G) plus the GPUs and servers they touch per decision instead of a scan of every
    GPU; they take the same decisions as the scans, which the tests compare.
    """

    def __init__(self, instance: Instance, theta: float, weight: np.ndarray) -> None:
        cap = instance.cluster.capacity
        self.instance = instance
        self.theta = float(theta)
        self.weight = weight
        self.capacity = cap
        self.server = np.repeat(np.arange(len(cap)), cap)
        self.local = np.concatenate([np.arange(o) for o in cap])
        self.clock = Clock(instance, record=False)
        self.now = 0
        # the trial makes the same decisions for every theta' in [theta_low, theta_high):
        # the largest U_g + w_j it accepted and the smallest it refused (see ThetaCache)
        self.theta_low = 0.0
        self.theta_high = np.inf
        # plain-Python mirrors and the index structures (docs/algorithms.md section 1)
        n_gpus = len(self.server)
        self.gpus_needed: list[int] = instance.arrays.gpus.tolist()
        self.weights: list[float] = np.asarray(weight, dtype=float).tolist()
        self.caps: list[int] = cap.tolist()
        self.first_gpu: list[int] = (np.cumsum(cap) - cap).tolist()
        self.server_of: list[int] = self.server.tolist()
        self.loads: list[float] = [0.0] * n_gpus
        self.busy: list[bool] = [False] * n_gpus
        self.owners: list[int] = [-1] * n_gpus
        self.idle = SortedKeys([(0.0, g) for g in range(n_gpus)])  # idle GPUs by (load, index)
        self.idle_counts: list[int] = cap.tolist()  # idle GPUs per server
        self._threshold = self.theta + LOAD_TOL
        self._by_average: SortedKeys | None = None  # servers by (average load, index), on demand
        self._average: list[float] = []
        self._by_idle: list[SortedKeys] | None = None  # servers by idle count, on demand
        self._idle_flags: CountTree | None = None  # idle GPUs by index, on demand
        self._idle_min: MinTree | None = None  # per server, the least load of its idle GPUs, on demand

    def fork(self, theta: float) -> ClusterState:
        """An independent copy of the state (the clock's too) that continues with load limit
        ``theta``: what a trial at ``theta`` would have reached, when every comparison made so
        far gives the same answer at ``theta`` (``theta_low <= theta + tol < theta_high``;
        :class:`Checkpoints`). The lists hold immutable numbers, so shallow copies suffice."""
        new = copy.copy(self)
        new.theta, new._threshold = float(theta), float(theta) + LOAD_TOL
        for name in ("loads", "busy", "owners", "idle_counts", "_average"):
            setattr(new, name, getattr(self, name).copy())
        new.idle = self.idle.copy()
        new._by_average = None if self._by_average is None else self._by_average.copy()
        new._by_idle = None if self._by_idle is None else [k.copy() for k in self._by_idle]
        new._idle_flags = None if self._idle_flags is None else self._idle_flags.copy()
        new._idle_min = None if self._idle_min is None else self._idle_min.copy()
        clock = copy.copy(self.clock)  # its arrays and lists copied; the time model shared
        for name, value in vars(self.clock).items():
            if isinstance(value, (np.ndarray, list)):
                setattr(clock, name, value.copy())
        new.clock = clock
        return new

    @property
    def load(self) -> np.ndarray:
        """U_g of every GPU (a fresh array: the state keeps its loads as Python floats)."""
        return np.array(self.loads)

    @property
    def owner(self) -> np.ndarray:
        """The job running on every GPU, -1 when idle (a fresh array)."""
        return np.array(self.owners, dtype=np.int64)

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

    def eligible_cut(self, job: int) -> tuple[float | None, bool]:
        """What :meth:`eligible` finds, from the index: (the largest load of an eligible GPU,
        or None when none is, and whether every idle GPU is eligible). A GPU is eligible
        exactly when it is idle and its load is at most that cut (U + w is monotone in U,
        also in floating point), and theta_low / theta_high are recorded as by
        :meth:`eligible`. O(log G)."""
        w, limit = self.weights[job], self._threshold
        last, refused = self.idle.split(lambda key: key[0] + w <= limit)
        if last is not None:
            self.theta_low = max(self.theta_low, last[0] + w)
        if refused is not None:
            self.theta_high = min(self.theta_high, refused[0] + w)
        return (None if last is None else last[0]), refused is None

    def enough(self, job: int, cut: float | None) -> bool:
        """Whether at least G_j GPUs are eligible (``cut`` from :meth:`eligible_cut`)."""
        if cut is None:
            return False
        need = self.gpus_needed[job]
        first = self.idle.first(need)
        return len(first) == need and first[-1][0] <= cut

    def gpus_on(self, s: int, cut: float) -> list[int]:
        """The eligible GPUs of server ``s`` in index order (``cut`` from :meth:`eligible_cut`)."""
        loads, busy, a = self.loads, self.busy, self.first_gpu[s]
        return [g for g in range(a, a + self.caps[s]) if not busy[g] and loads[g] <= cut]

    def server_in_use(self) -> np.ndarray:
        """Servers hosting at least one running job (bool per server)."""
        return np.bincount(self.server[self.owner >= 0], minlength=len(self.capacity)) > 0

    # -- changes: a job placed, jobs done -------------------------------------------------
    def place(self, job: int, gpus: list[int]) -> None:
        """Job ``job`` starts on ``gpus`` (sorted): they become busy and carry its weight."""
        w, loads = self.weights[job], self.loads
        for g in gpus:
            self.idle.remove((loads[g], g))
            loads[g] += w
            self.busy[g] = True
            self.owners[g] = job
        self._touched(gpus, -1, loads_changed=True)

    def release(self, gpus: list[int]) -> None:
        """The job on ``gpus`` has completed: they become idle (their loads stay)."""
        for g in gpus:
            self.busy[g] = False
            self.owners[g] = -1
            self.idle.add((self.loads[g], g))
        self._touched(gpus, +1, loads_changed=False)

    def _touched(self, gpus: list[int], delta: int, loads_changed: bool) -> None:
        """Bring the per-server structures up to date after ``gpus`` (sorted) changed."""
        if self._idle_flags is not None:
            for g in gpus:
                self._idle_flags.add(g, delta)
        server_of = self.server_of
        i = 0
        while i < len(gpus):  # the GPUs of one server are consecutive in a sorted list
            s = server_of[gpus[i]]
            count = 1
            while i + count < len(gpus) and server_of[gpus[i + count]] == s:
                count += 1
            i += count
            before = self.idle_counts[s]
            self.idle_counts[s] = before + delta * count
            if self._idle_min is not None:
                self._idle_min.set(s, self._least_idle_load(s))
            if self._by_idle is not None:
                self._by_idle[before].remove(s)
                self._by_idle[before + delta * count].add(s)
            if loads_changed and self._by_average is not None:
                self._by_average.remove((self._average[s], s))
                self._average[s] = self._server_average(s)
                self._by_average.add((self._average[s], s))

    # -- structures some rules need, built on first use ---------------------------------------
    def _server_average(self, s: int) -> float:
        # summed GPU by GPU in index order from 0.0, as numpy's bincount does: the same float
        total, a = 0.0, self.first_gpu[s]
        for g in range(a, a + self.caps[s]):
            total += self.loads[g]
        return total / self.caps[s]

    def _least_idle_load(self, s: int) -> float:
        loads, busy, a = self.loads, self.busy, self.first_gpu[s]
        least = INF
        for g in range(a, a + self.caps[s]):
            if not busy[g] and loads[g] < least:
                least = loads[g]
        return least

    def idle_min(self) -> MinTree:
        """Per server, the least load of its idle GPUs (``inf`` when none is idle)."""
        if self._idle_min is None:
            self._idle_min = MinTree([self._least_idle_load(s) for s in range(len(self.caps))])
        return self._idle_min

    def by_average(self) -> SortedKeys:
        """Servers by (average GPU load sum_g U_g / O_s, index)."""
        if self._by_average is None:
            self._average = [self._server_average(s) for s in range(len(self.caps))]
            self._by_average = SortedKeys([(a, s) for s, a in enumerate(self._average)])
        return self._by_average

    def by_idle(self) -> list[SortedKeys]:
        """Per count c = 0..max O_s, the servers with exactly c idle GPUs (by index)."""
        if self._by_idle is None:
            groups: list[list[int]] = [[] for _ in range(max(self.caps) + 1)]
            for s, c in enumerate(self.idle_counts):
                groups[c].append(s)
            self._by_idle = [SortedKeys(g) for g in groups]
        return self._by_idle

    def idle_flags(self) -> CountTree:
        """The idle GPUs by index (the k-th idle GPU in O(log G))."""
        if self._idle_flags is None:
            self._idle_flags = CountTree([0 if b else 1 for b in self.busy])
        return self._idle_flags


PlacementRule = Callable[[ClusterState, int], "np.ndarray | list[int] | None"]
"""Given the state and a job, the GPU indices to start it on now, or None to wait."""

GpuPicker = Callable[[ClusterState, int, np.ndarray], "np.ndarray | None"]
"""Given the state, a job and a mask of GPUs it may use, the G_j GPUs to take, or None.
Every picker below has this signature; :func:`eligible_rule` makes a rule of one."""


def eligible_rule(pick: GpuPicker) -> PlacementRule:
    """The placement rule that applies ``pick`` to the job's eligible GPUs."""

    def rule(state: ClusterState, job: int) -> np.ndarray | None:
        return pick(state, job, state.eligible(job))

    return rule


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


def least_loaded_rule(state: ClusterState, job: int) -> list[int] | None:
    """``eligible_rule(least_loaded)`` from the index: the G_j eligible GPUs of least load
    (ties: lower index) are the G_j first idle GPUs by (load, index). O(log G + G_j)."""
    cut, _ = state.eligible_cut(job)
    if not state.enough(job, cut):
        return None
    return [g for _, g in state.idle.first(state.gpus_needed[job])]


def first_fit_rule(state: ClusterState, job: int) -> list[int] | None:
    """``eligible_rule(first_fit)`` from the index: servers in index order whose least idle
    load is within the cut, their eligible GPUs in index order. O((servers used) log S)."""
    cut, _ = state.eligible_cut(job)
    if cut is None or not state.enough(job, cut):
        return None
    need, out = state.gpus_needed[job], list[int]()
    for s in state.idle_min().at_most(cut):
        out.extend(state.gpus_on(s, cut)[: need - len(out)])
        if len(out) == need:
            break
    return out


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
        return Schedule._from_gpu_ids(instance.name, self.starts, self.gpu_ids, instance.num_servers, meta)


Progress = Callable[[int, int, int], None]
"""A progress report: ``report(trial, placed, jobs)``, the trial's number in this run
(from 1), the jobs it has placed so far and the jobs to place."""


class _Reporter:
    """The report of one policy run and the number of trials it has begun."""

    def __init__(self, report: Progress) -> None:
        self.report = report
        self.trials = 0


def reporting(report: Progress | None) -> contextlib.AbstractContextManager[None]:
    """Within the block, every list-scheduling trial reports its progress to ``report``
    (about every 1% of the jobs and at its end); ``None`` reports nothing (the default).
    The channel is :data:`rar_opt.support.progress.TRIALS`."""
    return TRIALS.listening(None if report is None else _Reporter(report))


def run_list(
    instance: Instance,
    order: Sequence[int] | np.ndarray,
    rule: PlacementRule,
    theta: float,
    weight: np.ndarray,
    within_horizon: bool = True,
    checkpoints: Checkpoints | None = None,
) -> Trial | Failed:
    """Place the jobs of ``order`` one by one with ``rule``; :class:`Failed` if it fails.

    With ``within_horizon`` (the algorithms' trials) a trial that ends after T fails; without
    it the trial runs to its end (:func:`beyond_horizon`). With ``checkpoints`` (kept by the
    caller for one ``order`` and ``rule``), the trial starts from the furthest saved state of
    an earlier trial that is valid at ``theta`` instead of from the empty cluster, and saves
    its own: the same result, without running the shared prefix again."""
    n_jobs, n_servers = instance.num_jobs, instance.num_servers
    saved = None if checkpoints is None else checkpoints.find(theta)
    if saved is None:
        state = ClusterState(instance, theta, weight)
        starts = np.zeros(n_jobs, dtype=np.int64)
        gpus_of: list[list[int]] = [[] for _ in range(n_jobs)]
        begin = 0
    else:
        state, starts, gpus_of, begin = saved.state.fork(theta), saved.starts.copy(), saved.gpus_of.copy(), saved.placed
    if checkpoints is not None:
        checkpoints.begin(saved)
    clock = state.clock
    server_of, local_of = state.server_of, state.local.tolist()
    last_slot = instance.horizon - 1 if within_horizon else NEVER
    reporter, step = TRIALS.listener(), max(1, n_jobs // 100)
    if reporter is not None:
        reporter.trials += 1
    releases = instance.releases
    jobs = np.asarray(order)
    if instance.has_releases:  # by release, the given order among equal releases
        jobs = jobs[np.argsort(releases[jobs], kind="stable")]
    for placed, j in enumerate(jobs[begin:].tolist(), start=begin):
        if checkpoints is not None and placed > begin and placed % checkpoints.every == 0:
            checkpoints.save(_Saved(placed, state.fork(state.theta), starts.copy(), gpus_of.copy()))
        if reporter is not None and placed % step == 0:
            reporter.report(reporter.trials, placed, n_jobs)
        if releases[j] > state.now:  # not available before its release: wait, freeing what completes
            for done in clock.run_until(int(releases[j])).tolist():
                state.release(gpus_of[done])
            state.now = int(releases[j])
        while (chosen := rule(state, j)) is None:
            wake = clock.next_completion()
            if wake >= NEVER or wake > last_slot:
                return Failed(state.theta_low, state.theta_high)  # nothing to wait for, or past T
            for done in clock.run_until(wake).tolist():
                state.release(gpus_of[done])
            state.now = wake
        gpus = sorted(chosen.tolist() if isinstance(chosen, np.ndarray) else chosen)
        y = np.zeros(n_servers, dtype=np.int64)
        for g in gpus:
            y[server_of[g]] += 1
        clock.start(j, y, state.now)
        state.place(j, gpus)
        starts[j] = state.now
        gpus_of[j] = gpus
    if reporter is not None:
        reporter.report(reporter.trials, n_jobs, n_jobs)
    clock.run_until(NEVER)
    res = clock.result()
    if not res.all_complete or res.makespan is None or (within_horizon and res.makespan > instance.horizon):
        return Failed(state.theta_low, state.theta_high)
    ids = tuple(tuple((server_of[g], local_of[g]) for g in gpus_of[j]) for j in range(n_jobs))
    return Trial(
        starts,
        ids,
        res.completion,
        res.makespan,
        max(state.loads),
        state.theta_low,
        state.theta_high,
    )


@dataclass(frozen=True)
class _Saved:
    """A trial's state before its ``placed``-th job (in list order), valid for every theta
    in [state.theta_low, state.theta_high) (up to the load tolerance)."""

    placed: int
    state: ClusterState
    starts: np.ndarray
    gpus_of: list[list[int]]

    def valid(self, theta: float) -> bool:
        return self.state.theta_low <= theta + LOAD_TOL < self.state.theta_high


class Checkpoints:
    """Saved states of the latest trial of one list and one placement rule, every ``every``
    jobs, for the next trial to start from (:func:`run_list`).

    A trial depends on theta only through the comparisons U_g + w_j <= theta, and the state
    before job k records the largest value accepted and the smallest refused so far
    (:class:`ClusterState`): a trial at any theta in that range makes the same decisions up
    to job k, so it may start from the saved state with its own theta. Exact, like
    :class:`ThetaCache`. The ranges only narrow along a trial, so the valid states are a
    prefix of the saved ones; a trial started from one keeps the states before it (they
    are its own) and adds its own after it. Memory: at most ``n_jobs / every`` states."""

    def __init__(self, n_jobs: int, every: int | None = None) -> None:
        self.every = every or max(64, -(-n_jobs // 16))
        self._saved: list[_Saved] = []

    def find(self, theta: float) -> _Saved | None:
        """The furthest saved state valid at ``theta``, or None."""
        found = None
        for saved in self._saved:
            if not saved.valid(theta):
                break
            found = saved
        return found

    def begin(self, saved: _Saved | None) -> None:
        """A trial starts from ``saved`` (None: from the empty cluster): keep the states before it."""
        self._saved = [] if saved is None else [s for s in self._saved if s.placed <= saved.placed]

    def save(self, saved: _Saved) -> None:
        self._saved.append(saved)


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
