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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rar_opt.algorithms.state import LOAD_TOL, ClusterState
from rar_opt.cluster.timemodel import NEVER
from rar_opt.gpu_ids import lowest_free_ids
from rar_opt.instance import Instance
from rar_opt.schedule import Schedule
from rar_opt.support.progress import TRIALS

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


def planned_trial(
    capacity: np.ndarray,
    weight: np.ndarray,
    starts: np.ndarray,
    completion: np.ndarray,
    job: np.ndarray,
    server: np.ndarray,
    count: np.ndarray,
) -> Trial:
    """The trial of a schedule planned outside the engine (``pack``, ``backfill``), whose
    completions are known: job ``job[k]`` has ``count[k]`` GPUs on ``server[k]``. Its GPU
    ids come from :func:`rar_opt.gpu_ids.lowest_free_ids` (GPUs come free at completion),
    and its largest load sums ``weight`` over each GPU's jobs in job order."""
    ids = lowest_free_ids(capacity, starts, completion, job, server, count)
    load: dict[tuple[int, int], float] = {}
    for j, held in enumerate(ids):
        for gpu in held:
            load[gpu] = load.get(gpu, 0.0) + float(weight[j])
    return Trial(starts, ids, completion, int(completion.max()), max(load.values(), default=0.0))


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
    eligible_only: bool = False,
    relay: Relay | None = None,
    cutoff: Incumbent | None = None,
) -> Trial | Failed:
    """Place the jobs of ``order`` one by one with ``rule``; :class:`Failed` if it fails.

    With ``within_horizon`` (the algorithms' trials) a trial that ends after T fails; without
    it the trial runs to its end (:func:`beyond_horizon`). With ``checkpoints`` (kept by the
    caller for one ``order`` and ``rule``), the trial starts from the furthest saved state of
    an earlier trial that is valid at ``theta`` instead of from the empty cluster, and saves
    its own: the same result, without running the shared prefix again. With
    ``eligible_only`` (the rule only ever takes eligible GPUs, U_g + w_j <= theta, as
    SJF-BCO's do), a job that waits is first tested for a dead end
    (:meth:`ClusterState.dead_end`): the trial fails at once instead of waiting through
    every completion to the same end. With ``relay``, the trial may start from the state
    another rule's trial reached at the same theta (``relay.offer``) when that is further
    than its own checkpoints, and hands on its own state before each list position of
    ``relay.take_at`` (``relay.taken``): for other rules' trials, which decide alike up to
    there. With
    ``cutoff``, the trial stops as :class:`Failed` (``pruned``) once its makespan provably
    reaches ``cutoff.makespan`` (read when the trial starts): a job placed at slot s ends
    no earlier than s + rho_min_j, and every job still in the list starts no earlier than
    the current slot (docs/algorithms.md section 2.3). The same floor past the horizon
    fails a trial ``within_horizon`` early, cutoff or not."""
    n_jobs = instance.num_jobs
    found = None if checkpoints is None else checkpoints.find(theta)
    saved = found
    if relay is not None and relay.offer is not None and (saved is None or relay.offer.placed > saved.placed):
        saved = relay.offer
    if saved is None:
        state = ClusterState(instance, theta, weight)
        starts = np.zeros(n_jobs, dtype=np.int64)
        gpus_of: list[list[int]] = [[] for _ in range(n_jobs)]
        begin = 0
    else:
        state, starts, gpus_of, begin = saved.state.fork(theta), saved.starts.copy(), saved.gpus_of.copy(), saved.placed
    if checkpoints is not None:
        checkpoints.begin(found, saved)
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
    # floors of the makespan: ``ended`` for the jobs placed (s + rho_min_j), ``tail`` for
    # those left (the current slot + their longest rho_min); at ``bar`` the trial cannot
    # matter: it ends after T (fails) or cannot beat the cutoff (pruned)
    horizon_bar = instance.horizon + 1 if within_horizon else np.inf
    bar = min(horizon_bar, np.inf if cutoff is None else cutoff.makespan)
    rho_min = instance.bounds.rho_min
    tail = np.maximum.accumulate(rho_min[jobs][::-1])[::-1].tolist()  # longest rho_min from here on
    ended = int(np.max(starts[jobs[:begin]] + rho_min[jobs[:begin]], initial=0))
    for placed, j in enumerate(jobs[begin:].tolist(), start=begin):
        if checkpoints is not None and placed == checkpoints.next_at:
            checkpoints.save(_Saved(placed, state.fork(state.theta), starts.copy(), gpus_of.copy()))
        if relay is not None and placed in relay.take_at and placed > begin:
            relay.taken[placed] = _Saved(placed, state.fork(state.theta), starts.copy(), gpus_of.copy())
        if reporter is not None and (placed % step == 0 or placed == begin):
            reporter.report(reporter.trials, placed, n_jobs)
        if releases[j] > state.now:  # not available before its release: wait, freeing what completes
            _free(state, gpus_of, clock.run_until(int(releases[j])))
            state.now = int(releases[j])
        if max(ended, state.now + tail[placed]) >= bar:
            return _stopped(state, placed, bar, horizon_bar)
        tested = not eligible_only
        while (chosen := rule(state, j)) is None:
            if not tested:  # no load changes while job j waits: one test suffices
                tested = True
                if state.dead_end(j):
                    return Failed(state.theta_low, state.theta_high, placed)
            wake = clock.next_completion()
            if wake >= NEVER or wake > last_slot:
                return Failed(state.theta_low, state.theta_high, placed)  # nothing to wait for, or past T
            _free(state, gpus_of, clock.run_until(wake))
            state.now = wake
            if state.now + tail[placed] >= bar:
                return _stopped(state, placed, bar, horizon_bar)
        gpus = sorted(chosen.tolist() if isinstance(chosen, np.ndarray) else chosen)
        # the servers it uses, ascending (GPUs are numbered server by server)
        clock.start_on(j, np.fromiter(dict.fromkeys(server_of[g] for g in gpus), dtype=np.int64), state.now)
        state.place(j, gpus)
        starts[j] = state.now
        gpus_of[j] = gpus
        ended = max(ended, state.now + int(rho_min[j]))
    if reporter is not None:
        reporter.report(reporter.trials, n_jobs, n_jobs)
    clock.run_until(NEVER)
    res = clock.result()
    if not res.all_complete or res.makespan is None or (within_horizon and res.makespan > instance.horizon):
        return Failed(state.theta_low, state.theta_high, n_jobs)
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


def _stopped(state: ClusterState, placed: int, bar: float, horizon_bar: float) -> Failed:
    """The trial stopped before its ``placed``-th job because its makespan floor reached
    ``bar``: past the horizon (failed) or at the cutoff (pruned, against ``bar``)."""
    if bar < horizon_bar:
        return Failed(state.theta_low, state.theta_high, placed, pruned=True, bar=bar)
    return Failed(state.theta_low, state.theta_high, placed)


def _free(state: ClusterState, gpus_of: list[list[int]], done: np.ndarray) -> None:
    """The jobs ``done`` have completed: their GPUs become idle together (one update per
    server touched, the same state as releasing them job by job)."""
    if len(done) == 1:
        state.release(gpus_of[int(done[0])])
    elif len(done):
        state.release(sorted(g for j in done.tolist() for g in gpus_of[j]))


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
    """Saved states of the latest trials of one list and one placement rule, for the next
    trial to start from (:func:`run_list`).

    A trial depends on theta only through the comparisons U_g + w_j <= theta, and the state
    before job k records the largest value accepted and the smallest refused so far
    (:class:`ClusterState`): a trial at any theta in that range makes the same decisions up
    to job k, so it may start from the saved state with its own theta. Exact, like
    :class:`ThetaCache`. The ranges only narrow along a trial, so the valid states are a
    prefix of the saved ones; a trial started from one keeps the states before it (they
    are its own) and adds its own after it.

    Spacing: with ``every`` fixed, a state every ``every`` jobs. By default each trial
    saves ``per_trial`` states spread over the jobs it has left to place: a bisection's
    later trials agree with the earlier ones on ever longer prefixes, so they begin late
    and save densely where the next trial is likely to part from them. Memory: at most
    ``keep`` states (the latest ones before a trial's start are kept; older ones go)."""

    def __init__(self, n_jobs: int, every: int | None = None, per_trial: int = 16, keep: int = 24) -> None:
        if keep <= per_trial:
            raise ValueError(f"keep must exceed per_trial, got keep={keep}, per_trial={per_trial}")
        self.n_jobs = n_jobs
        self.every = every
        self.per_trial = per_trial
        self.keep = keep
        self._step = every or 1
        self.next_at = self._step
        self._saved: list[_Saved] = []

    def find(self, theta: float) -> _Saved | None:
        """The furthest saved state valid at ``theta``, or None."""
        found = None
        for saved in self._saved:
            if not saved.valid(theta):
                break
            found = saved
        return found

    def begin(self, found: _Saved | None, start: _Saved | None = None) -> None:
        """A trial starts from ``start`` (None: from the empty cluster); ``found`` is the
        furthest own state valid for it (:meth:`find`), ``start`` itself or, when a relay
        offered a further one, an earlier one. Keep the states up to ``found`` (they are
        the trial's own; at most ``keep - per_trial``, the latest) and ``start``, and plan
        the trial's own states after it."""
        kept = [] if found is None else [s for s in self._saved if s.placed <= found.placed]
        if start is not None and start is not found:
            kept.append(start)
        self._saved = kept[max(0, len(kept) - (self.keep - self.per_trial)) :]
        begin = 0 if start is None else start.placed
        self._step = self.every or max(16, -(-(self.n_jobs - begin) // self.per_trial))
        self.next_at = begin + self._step

    def save(self, saved: _Saved) -> None:
        self._saved.append(saved)
        self.next_at = saved.placed + self._step


@dataclass
class Relay:
    """What one rule's trial hands to another's at the same theta when the two rules decide
    alike for the jobs before a list position of ``take_at`` (:func:`run_list`): the state
    before that job (``taken``, by position, filled by the trial when it gets there from an
    earlier start), which the other trial may start from (``offer``). One trial may hand
    states to several others, one position each."""

    take_at: frozenset[int] = frozenset()
    offer: _Saved | None = None
    taken: dict[int, _Saved] = field(default_factory=dict)


@dataclass(frozen=True)
class Failed:
    """A trial that could not place every job within the horizon, valid on the same range;
    ``at``: the list position of the job it failed on (the number of jobs when every job
    started and the last ended after the horizon). ``pruned``: it was stopped before job
    ``at`` because its makespan could no longer beat the incumbent (:class:`Incumbent`);
    it may have been feasible, but it cannot be the answer. ``bar``: the cutoff it was
    stopped against (its makespan, had it run on, is at least that); ``inf`` when not
    pruned. Another question answered by the same trial may reuse the result only with a
    cutoff of at most ``bar`` (:meth:`ThetaCache.lookup`)."""

    valid_from: float
    valid_below: float
    at: int = -1
    pruned: bool = False
    bar: float = float("inf")


@dataclass
class Incumbent:
    """The makespan a trial must beat to matter (``inf`` until a trial is accepted).
    :func:`bisect_theta` lowers it as it accepts trials; a caller may lower it further
    for the trials of one theta. It only ever falls, so a trial stopped against it
    (``Failed.pruned``) stays irrelevant for every later theta its range covers; one
    stopped against a value lowered for one theta is reused only where the cutoff is no
    higher (``Failed.bar``, :meth:`ThetaCache.lookup`)."""

    makespan: float = float("inf")


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

    def __init__(self, run: Callable[..., Trial | Failed], reuse: bool = True) -> None:
        self._run = run
        self._reuse = reuse
        self._seen: list[Trial | Failed] = []
        self.runs = 0

    def __call__(self, theta: float) -> Trial | None:
        return as_trial(self.result(theta))

    def lookup(self, theta: float, bar: float = -np.inf) -> Trial | Failed | None:
        """The result already known for ``theta``, or None. ``bar``: the cutoff the caller
        would run the trial with now; a pruned result stopped against a lower cutoff says
        nothing about it and is not returned. The default accepts every pruned result,
        which is right when the cutoffs only fall (:class:`Incumbent`)."""
        for t in self._seen if self._reuse else ():
            if t.valid_from <= theta + LOAD_TOL and theta + LOAD_TOL < t.valid_below:
                if isinstance(t, Failed) and t.pruned and t.bar < bar:
                    continue
                return t
        return None

    def result(self, theta: float, bar: float = -np.inf, **extra: Any) -> Trial | Failed:
        """The trial at ``theta`` (``extra`` goes to the runner when it runs; ``bar`` as
        in :meth:`lookup`)."""
        if (known := self.lookup(theta, bar)) is not None:
            return known
        self.runs += 1
        t = self._run(theta, **extra)
        self._seen.append(t)
        return t

    def put(self, result: Trial | Failed) -> None:
        """Record a result known without running it (valid on its range)."""
        self._seen.append(result)


def bisect_theta(
    horizon: int, attempt: Callable[[int], Trial | None], rule: str = "paper", incumbent: Incumbent | None = None
) -> tuple[Trial | None, int | None, int]:
    """Alg. 1's bisection over the integer load limit theta in [1, T].

    ``rule="paper"`` (default), as the paper analyses it: ``right`` moves down only when the
    trial at theta improves on the best makespan so far; otherwise ``left`` moves up; the
    result is the best-makespan trial. ``rule="tightest"``: ``right`` moves down whenever
    the trial is feasible, and the result is the trial at the smallest feasible theta
    found (the load-balancing reading that Lemma 2 needs). Returns (trial, its theta,
    number of theta values tried). With ``incumbent`` (rule ``"paper"`` only), its makespan
    is kept at the best accepted so far: a later trial that cannot beat it does not move
    the bisection, so ``attempt`` may cut such trials short (:func:`run_list`'s cutoff).
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
            if incumbent is not None and rule == "paper":
                incumbent.makespan = trial.makespan
        else:
            left = theta + 1
    return best, best_theta, tried
