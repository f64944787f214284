"""``pack``: schedules built on a time profile, where every job's time is known in advance.

The engine's list scheduler (:mod:`.engine`) moves one clock forward: a job never starts
before the job listed just before it, and a split job's speed depends on who else is
split, so it must simulate. ``pack`` builds schedules in a class where timing is exact
and known when a job is placed, so it can put a job anywhere in time, also into a hole
left before jobs placed earlier (a serial schedule-generation scheme with backfilling, as
in resource-constrained project scheduling; Kolisch 1996):

* **A job that fits on one server runs there unsplit**, unless splitting by choice ends
  it earlier (below). Unsplit it sees no contention (docs/model.md section 3: only split
  jobs count in c_s), so it takes exactly rho_j(1) = ceil(F_j / phi_j(0, 1)) slots on
  any server, whatever else runs.
* **A job that fits on no server** (G_j above every O_s) is split over the fewest servers
  it can use at the time, and **no two split jobs share a server at the same time**. It
  then sees p = 1 in every slot and takes exactly rho_j(n) = ceil(F_j / phi_j(1, n))
  slots on n servers (the argument of the contention-free restriction, docs/exactness.md).
  On a network topology (docs/model.md section 3.8) links between switches are shared
  too, so there no two split jobs run at the same time anywhere, and a split job's time
  is that of its ring alone on its servers' links, from the time model.

Placing a job (``_Profile.place``): the earliest slot t >= r_j where it fits, over every
server that can hold it; among servers with that earliest slot, the one left with the
fewest idle GPUs at t (best fit), then the smallest server. The profile keeps an index of
its runs of idle GPUs (:mod:`.runs`), so that a placement reads a few rows and columns
instead of every server over the whole window (servers x slots per job at 100 times the
paper); the decisions are those of the scan.

**Splitting by choice** (``PackParams.split``). Under ``"may"`` a job that fits on one
server is also offered the split rule of a job that must split, and is split when that
ends it strictly earlier than its best unsplit slot; ``"must"`` never splits it;
``"both"`` (the default) starts the search under each rule and keeps the better.

The search:

1. **Start.** Three list orders: fewest possible hosts first then longest (jobs that fit
   only the largest servers go before the rest), longest first (LPT), largest area first.
2. **Forward-backward improvement** (justification; Valls, Ballestin and Quintanilla
   2005): schedule the jobs backwards in time in order of their completion (latest
   first), then forwards again in order of the backward starts; keep it while the
   makespan falls. Capacity and the split rule read the same backwards, so the backward
   pass is the same placement on a mirrored clock. Skipped with releases (a release is not
   symmetric in time).
3. **Buddy lanes** (:mod:`.lanes`), for ``lanes`` of ``time_limit`` (0 leaves it out):
   every job unsplit in a binary tree of GPU blocks per server, where a schedule's fit is
   a matter of sums along the tree, searched by greedy tries and then by large
   neighbourhoods (a few servers emptied and filled again). It stops after
   ``lanes_patience`` failures in a row. Its schedule, justified, replaces the best start
   when it is better (the record's ``search.start`` then says ``lanes``). Not used with
   releases, when a job fits on no server, or when a job is wider than every block.
4. **Iterate** ``iterations`` times: jitter the incumbent's start order (each start plus a
   drawn share, up to ``jitter``, of the job's length), schedule and justify again; keep
   the result when its (makespan, sum of completions) is not worse.

Every schedule is checked by :func:`rar_opt.check.check`, and its completions from the
simulator must equal the planned ones; a difference would be a bug and raises.
Determinism and ``time_limit`` work as in ``improve`` (:mod:`.search`). The time limit
covers every step: the first start's first plan is always built, and the other starts,
the justification rounds, the lanes and the restarts each begin only while time is left
(the record's ``search.starts`` says how many starts ran). Where the limit binds, the
result depends on the machine's speed: at 100 times the paper the starts alone take
minutes, so a run stops after the first.
"""

from __future__ import annotations

import bisect
import dataclasses
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from rar_opt.algorithms import lanes
from rar_opt.algorithms.baselines import BaselineParams
from rar_opt.algorithms.engine import Trial, planned_trial
from rar_opt.algorithms.estimators import estimate
from rar_opt.algorithms.result import PolicyResult, searched_result
from rar_opt.algorithms.runs import OPEN, RunIndex, ranked, scan_earliest, window
from rar_opt.algorithms.search import MAX_SEED
from rar_opt.cluster.timemodel import NEVER, slots_needed
from rar_opt.errors import InputError, ParameterError
from rar_opt.instance import Instance
from rar_opt.support.checks import is_int, is_real, seconds_problem, seed_problem
from rar_opt.support.processes import stop_requested
from rar_opt.support.progress import TRIALS

log = logging.getLogger(__name__)

SPLIT_RULES = ("both", "must", "may")
"""``PackParams.split``: which jobs may split (module docstring, "Splitting by choice")."""

MAX_CELLS = 60_000_000
"""The largest time profile (servers x slots) ``pack`` builds; larger instances are refused."""

INDEX_SERVERS = 64
"""From this many servers on, placements are found in the run index (:mod:`.runs`); on a
smaller cluster the scan of every server is faster (the paper's 20 servers: about half the
time). Both give the same decisions."""


@dataclass(frozen=True)
class PackParams(BaselineParams):
    """``pack``: restarts (the stopping rule), a wall-time cap in seconds, the seed, the
    largest jitter of a restart (a share of a job's length) and forward-backward passes."""

    iterations: int = 20
    time_limit: float = 10.0
    seed: int = 0
    jitter: float = 0.3
    justify: bool = True
    split: str = "both"  # "must": only jobs that fit on no server split; "may": any job may; "both": the better
    lanes: float = 0.5  # the share of time_limit for the buddy-lanes start (0: none; module docstring)
    lanes_patience: int = 30  # the lanes search's stages stop after this many failures in a row

    def modes(self) -> tuple[bool, ...]:
        """Whether a job that fits on one server may split, for each start of the search."""
        return {"must": (False,), "may": (True,), "both": (False, True)}[self.split]

    def __post_init__(self) -> None:
        super().__post_init__()
        if not is_int(self.iterations) or self.iterations < 0:
            raise ParameterError(f"must be an integer >= 0, got {self.iterations!r}", where="iterations")
        if problem := seconds_problem(self.time_limit):
            raise ParameterError(problem, where="time_limit")
        if problem := seed_problem(self.seed, MAX_SEED):
            raise ParameterError(problem, where="seed")
        if not is_real(self.jitter) or not 0 <= self.jitter <= 1:
            raise ParameterError(f"must be a number in [0, 1], got {self.jitter!r}", where="jitter")
        if not isinstance(self.justify, bool):
            raise ParameterError(f"must be true or false, got {self.justify!r}", where="justify")
        if self.split not in SPLIT_RULES:
            raise ParameterError(f"must be one of {', '.join(SPLIT_RULES)}, got {self.split!r}", where="split")
        if not is_real(self.lanes) or not 0 <= self.lanes <= 1:
            raise ParameterError(f"must be a share of the time limit in [0, 1], got {self.lanes!r}", where="lanes")
        patience = self.lanes_patience
        if not is_int(patience) or patience < 0:
            raise ParameterError(f"must be an integer >= 0, got {patience!r}", where="lanes_patience")


@dataclass(frozen=True)
class _Jobs:
    """What placing needs per job: GPUs, release, unsplit time, the servers that hold it
    unsplit, and for a job that must split its time on n servers (index n)."""

    gpus: np.ndarray
    release: np.ndarray
    single: np.ndarray
    hosts: np.ndarray  # (J, S) bool: server s holds job j unsplit
    split: dict[int, np.ndarray]  # job that can span 2+ servers -> rho_j(n) for n = 0..S (NEVER where impossible)
    must: frozenset[int]  # the jobs that fit on no server
    capacity: np.ndarray
    instance: Instance

    @property
    def star(self) -> bool:
        """The paper's network: contention per server only."""
        return self.instance.time_model.links is None

    def split_time(self, j: int, servers: np.ndarray) -> int:
        """Slots of split job j on ``servers`` as the only split job on the network."""
        if self.star:
            return int(self.split[j][len(servers)])
        tm, n_servers = self.instance.time_model, len(self.capacity)
        n = np.zeros(len(self.gpus), dtype=np.int64)
        n[j] = len(servers)
        active = np.zeros(len(self.gpus), dtype=bool)
        active[j] = True
        _, _, phi = tm.rates(active, n, np.full(len(servers), j), servers.astype(np.int64), n_servers)
        return int(slots_needed(int(self.instance.jobs[j].iterations), phi[j : j + 1])[0])


def _jobs(instance: Instance) -> _Jobs:
    m = instance.modes
    hosts = m.capacity[None, :] >= m.gpus[:, None]
    tm = instance.time_model
    must = np.flatnonzero(~hosts.any(axis=1))
    split: dict[int, np.ndarray] = {}
    n_servers = len(m.capacity)
    for j in np.flatnonzero(m.split < NEVER).tolist():
        spans = np.arange(n_servers + 1)
        phi = tm.phi(np.ones(n_servers + 1), np.maximum(spans, 2), np.full(n_servers + 1, j))
        times = slots_needed(int(instance.jobs[j].iterations), phi)
        times[: max(2, int(m.n_min[j]))] = NEVER  # too few servers for G_j
        times[min(int(m.gpus[j]), n_servers) + 1 :] = NEVER  # more servers than GPUs
        if (times < NEVER).any():
            split[j] = times
    return _Jobs(
        m.gpus,
        instance.releases.astype(np.int64),
        m.single,
        hosts,
        split,
        frozenset(must.tolist()),
        m.capacity,
        instance,
    )


class _Profile:
    """Idle GPUs per server and slot, and which slots of a server a split job holds."""

    def __init__(self, jobs: _Jobs, slots: int, may_split: bool = False) -> None:
        self.jobs, self.may_split = jobs, may_split
        self.free = np.repeat(jobs.capacity[:, None].astype(np.int32), slots, axis=1)
        self.split_busy = np.zeros_like(self.free, dtype=bool) if jobs.split else None
        self.busy_until = 0  # every slot from here on is idle
        self.ends: list[int] = [0]  # slots where GPUs come free, sorted (the split search's candidates)
        # where a job fits (.runs); a small cluster is scanned, which is faster there
        self.runs = RunIndex(self.free, jobs.capacity, self.split_busy) if len(jobs.capacity) >= INDEX_SERVERS else None

    def _room(self, slots: int) -> None:
        """Make the profile at least ``slots`` long (the new slots are idle)."""
        have = self.free.shape[1]
        if slots <= have:
            return
        extra = max(slots - have, have)
        cells = self.free.shape[0] * (have + extra)
        if cells > MAX_CELLS:
            raise InputError(
                f"pack: a time profile of {self.free.shape[0]} servers x {have + extra} slots is larger than "
                f"{MAX_CELLS} cells; use another policy for an instance this large",
                where="instance",
            )
        cap = self.jobs.capacity[:, None].astype(np.int32)
        self.free = np.hstack([self.free, np.repeat(cap, extra, axis=1)])
        if self.split_busy is not None:
            self.split_busy = np.hstack([self.split_busy, np.zeros((len(cap), extra), dtype=bool)])
        if self.runs is not None:
            self.runs.grow(self.free, self.split_busy)

    def place(self, j: int, lo: int) -> tuple[int, int, np.ndarray, np.ndarray]:
        """Put job j at its earliest slot >= ``lo``: (start, length, its servers ascending,
        its GPUs on each)."""
        if j in self.jobs.must:
            found = self._place_split(j, lo, None)
            assert found is not None  # after busy_until every server is idle and free of split jobs
            self._take(*found, split=True)
            return found
        whole = self._place_whole(j, lo)
        if self.may_split and j in self.jobs.split:
            found = self._place_split(j, lo, whole[0] + whole[1])
            if found is not None:  # it ends strictly earlier split
                self._take(*found, split=True)
                return found
        self._take(*whole, split=False)
        return whole

    def _place_whole(self, j: int, lo: int) -> tuple[int, int, np.ndarray, np.ndarray]:
        """Job j unsplit at its earliest slot >= ``lo`` (not taken yet)."""
        g, d = int(self.jobs.gpus[j]), int(self.jobs.single[j])
        latest = max(self.busy_until, lo)  # from busy_until on every slot is idle: it fits there
        self._room(latest + d)
        if self.runs is not None and self.runs.has_room(g):
            t, s = self.runs.earliest(g, d, lo, latest)  # the earliest slot, then best fit (.runs)
        else:
            t, s = scan_earliest(self.free, self.jobs.capacity, g, d, lo, latest)
        return t, d, np.array([s], dtype=np.int64), np.array([g], dtype=np.int64)

    def _place_split(self, j: int, lo: int, beat: int | None) -> tuple[int, int, np.ndarray, np.ndarray] | None:
        """The earliest completion of job j split, over every span n, its servers free of
        other split jobs over its whole run (so it sees p = 1; module docstring); with
        ``beat``, only a completion before it (None if there is none). Not taken yet.

        Ties go to the fewest servers. The candidate starts are ``lo`` and the slots where
        GPUs come free; on the star all of them are tested at once per length (a sliding
        minimum of the idle GPUs), on a topology one by one (the length depends on the
        servers there)."""
        g, times = int(self.jobs.gpus[j]), self.jobs.split[j]
        best: tuple[int, int, np.ndarray, np.ndarray] | None = None
        end = NEVER if beat is None else beat
        later = self.ends[bisect.bisect_left(self.ends, lo) :]
        starts = np.array(later if later[:1] == [lo] else [lo, *later], dtype=np.int64)
        windows: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        spans = np.flatnonzero(times < NEVER).tolist()
        for n in spans:
            d = int(times[n])
            self._room(max(self.busy_until, lo) + d)
            if self.jobs.star:
                if d not in windows:
                    windows[d] = self._windows(starts[starts + d < end], d, spans[-1], n)
                cand, top, total = windows[d]
                ok = (cand + d < end) & (total[n - 1] >= g) & (top[n - 1] >= 1)
                if not ok.any():
                    continue
                t = int(cand[int(ok.argmax())])
                found = self._split_at(j, g, n, t, d)
                assert found is not None and found[0] == d  # the same test, one start
                best, end = (t, *found), t + d
                continue
            for t in starts.tolist():
                if t + d >= end:
                    break
                found = self._split_at(j, g, n, t, d)
                if found is not None and t + found[0] < end:
                    best, end = (t, *found), t + found[0]
                    break
        return best

    def _windows(
        self, cand: np.ndarray, d: int, most: int, fewest: int = 1
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For every start t of ``cand``, over [t, t + d): the ``most`` largest idle GPU
        counts of a server (0 where a split job holds it), from the most idle, and their
        running sums, exact for the spans from ``fewest`` to ``most`` servers (a start with
        fewer than ``fewest`` open servers has only zeros: no such span fits there). Only
        the servers open over a window (the runs' ``open`` table: an idle GPU throughout, no split
        job) are read, at the starts where enough servers are open."""
        lo, hi = (int(cand[0]), int(cand[-1]) + d) if len(cand) else (0, 0)
        self._room(hi)
        if self.runs is None or not self.runs.has_room(OPEN):  # read every server
            assert self.split_busy is not None
            idle = window(self.free[:, lo:hi], cand - lo, d, np.minimum).astype(np.int64)
            idle[window(self.split_busy[:, lo:hi], cand - lo, d, np.maximum)] = 0
            return cand, *ranked(idle, most)
        end, top = self.runs.table(OPEN)
        servers = self.runs.rows(np.flatnonzero((top[:, cand] >= cand + d).any(axis=1)))  # blocks open somewhere
        opened = end[servers][:, cand] >= cand + d  # (those servers, candidates)
        some = np.flatnonzero(opened.sum(axis=0) >= fewest)
        rows = np.flatnonzero(opened[:, some].any(axis=1))
        idle = np.zeros((max(len(rows), most), len(cand)), dtype=np.int64)
        if len(rows):
            mins = window(self.free[servers[rows], lo:hi], cand[some] - lo, d, np.minimum)
            idle[: len(rows), some] = np.where(opened[np.ix_(rows, some)], mins, 0)
        return cand, *ranked(idle, most)

    def _split_at(self, j: int, g: int, n: int, t: int, d: int) -> tuple[int, np.ndarray, np.ndarray] | None:
        """Job j on the n servers with the most idle GPUs over [t, t + d), if they hold it:
        (its exact length there, the servers ascending, its GPUs on each); None otherwise."""
        for _ in range(2):  # on a topology the length depends on the servers: check it again
            self._room(t + d)
            idle = self.free[:, t : t + d].min(axis=1)
            held = self.split_busy[:, t : t + d].any(axis=1)  # type: ignore[index]
            if not self.jobs.star and held.any():
                return None  # on a topology one split job at a time, anywhere
            idle[held] = 0
            top = np.sort(np.argsort(-idle, kind="stable")[:n])
            if idle[top].min() < 1 or idle[top].sum() < g:
                return None
            exact = self.jobs.split_time(j, top)
            if exact <= d:
                y = np.zeros(len(idle), dtype=np.int64)
                y[top] = 1
                for s in top[np.argsort(-idle[top], kind="stable")].tolist():  # the rest, most idle first
                    y[s] += min(int(idle[s]) - 1, g - int(y.sum()))
                return exact, top, y[top]
            d = exact
        return None

    def _take(self, t: int, d: int, on: np.ndarray, y: np.ndarray, split: bool) -> None:
        """Job's GPUs ``y`` of the servers ``on`` (ascending) taken over [t, t + d)."""
        before = self.free[on, t : t + d].copy()
        self.free[on, t : t + d] -= y[:, None].astype(np.int32)
        held = split and self.split_busy is not None
        if held:
            self.split_busy[on, t : t + d] = True  # type: ignore[index]
        if self.runs is not None:
            for k, s in enumerate(on.tolist()):
                self.runs.update(s, t, t + d, int(y[k]), before[k], held)
        self.busy_until = max(self.busy_until, t + d)
        at = bisect.bisect_left(self.ends, t + d)
        if self.ends[at : at + 1] != [t + d]:
            self.ends.insert(at, t + d)


@dataclass(frozen=True)
class _Plan:
    """One schedule of the class: starts and lengths of every job, and its GPUs per server
    as entries (job, server, GPUs), one per server a job uses (not jobs x servers cells)."""

    starts: np.ndarray
    lengths: np.ndarray
    job: np.ndarray
    server: np.ndarray
    count: np.ndarray

    @property
    def split(self) -> int:
        """How many jobs are split (on two servers or more)."""
        return int((np.bincount(self.job, minlength=len(self.starts)) > 1).sum())

    @property
    def completion(self) -> np.ndarray:
        return self.starts + self.lengths

    @property
    def score(self) -> tuple[int, int]:
        """(makespan, sum of completion times): the order ``improve`` uses."""
        c = self.completion
        return int(c.max()), int(c.sum())


class _Packer:
    """Builds plans of one instance and counts them (each is one trial of the run)."""

    def __init__(self, jobs: _Jobs, slots: int) -> None:
        self.jobs, self.slots, self.runs = jobs, slots, 0
        self.may_split = False  # the rule of the plans built now (PackParams.split)
        self.reporter = TRIALS.listener()  # progress as the engine's trials report it

    def build(self, order: np.ndarray, releases: bool = True) -> _Plan:
        """Place the jobs of ``order`` one by one, each at its earliest room (module docstring)."""
        jobs = self.jobs
        profile = _Profile(jobs, self.slots, self.may_split)
        n = len(jobs.gpus)
        starts, lengths = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
        on: list[np.ndarray] = [np.zeros(0, dtype=np.int64)] * n
        y: list[np.ndarray] = [np.zeros(0, dtype=np.int64)] * n
        self.runs += 1
        step = max(1, n // 100)
        if self.reporter is not None:
            self.reporter.trials += 1
        for placed, j in enumerate(order.tolist()):
            if self.reporter is not None and placed % step == 0:
                self.reporter.report(self.reporter.trials, placed, n)
            lo = int(jobs.release[j]) if releases else 0
            starts[j], lengths[j], on[j], y[j] = profile.place(j, lo)
        if self.reporter is not None:
            self.reporter.report(self.reporter.trials, n, n)
        job = np.repeat(np.arange(n, dtype=np.int64), [len(s) for s in on])
        return _Plan(starts, lengths, job, np.concatenate(on), np.concatenate(y))

    def justify(self, plan: _Plan, stop: Callable[[], bool] = lambda: False) -> _Plan:
        """Forward-backward improvement: backward in order of completion, forward in order
        of the backward starts, while the makespan falls (the best plan seen is returned);
        ``stop()`` true before a round ends it there (the time limit)."""
        best = plan
        while not stop():
            back = self.build(np.lexsort((-best.starts, -best.completion)), releases=False)
            span = int(back.completion.max())
            mirrored = dataclasses.replace(back, starts=span - back.completion)  # the same plan read backwards
            fwd = self.build(np.lexsort((mirrored.completion, mirrored.starts)))
            cand = min((mirrored, fwd), key=lambda p: p.score)
            if cand.score[0] >= best.score[0]:
                return cand if cand.score < best.score else best
            best = cand
        return best


def _trial(plan: _Plan, capacity: np.ndarray, weight: np.ndarray) -> Trial:
    """The plan as a trial (:func:`.engine.planned_trial`: the profile guarantees the GPUs)."""
    return planned_trial(capacity, weight, plan.starts, plan.completion, plan.job, plan.server, plan.count)


START_ORDERS = ("fewest-hosts", "longest-first", "largest-area-first")
"""The list orders the search starts from (module docstring, step 1)."""


def _start_orders(jobs: _Jobs) -> dict[str, np.ndarray]:
    length = np.array(
        [int(jobs.single[j]) if j not in jobs.must else int(jobs.split[j].min()) for j in range(len(jobs.gpus))]
    )
    hosts = jobs.hosts.sum(axis=1)
    return {
        "fewest-hosts": np.lexsort((-length, hosts)),
        "longest-first": np.argsort(-length, kind="stable"),
        "largest-area-first": np.argsort(-length * jobs.gpus, kind="stable"),
    }


def _lanes_plan(instance: Instance, jobs: _Jobs, p: PackParams, began: float, beat: int) -> _Plan | None:
    """The buddy-lanes start (:mod:`.lanes`): every job unsplit in a tree of GPU blocks,
    searched for ``p.lanes`` of the time limit; None where the class does not apply."""
    if jobs.must:
        return None  # a job that fits on no server is outside the class
    budget = p.lanes * p.time_limit - (time.perf_counter() - began)
    found = lanes.search(
        jobs.capacity,
        jobs.gpus,
        jobs.single,
        seed=p.seed,
        patience=p.lanes_patience,
        time_limit=max(budget, 0.0),
        has_releases=instance.has_releases,
        beat=beat,
    )
    if found is None:
        return None
    every = np.arange(len(jobs.gpus), dtype=np.int64)
    server = np.asarray(found.server, dtype=np.int64)
    return _Plan(found.starts, jobs.single.astype(np.int64), every, server, jobs.gpus.astype(np.int64))


def pack_policy(instance: Instance, params: PackParams | None = None) -> PolicyResult:
    """pack: the best justified profile schedule of three orders, then jittered restarts."""
    p = params or PackParams()
    est = estimate(instance, p.estimator)
    jobs = _jobs(instance)
    # the profile's first length: the horizon, but never more than the jobs need one after
    # another from the latest release (it grows on demand, so this changes no decision; a
    # loose horizon such as 10^9 no longer allocates servers x horizon cells)
    # and never more than the latest release plus four times the longest job (it doubles
    # when a job needs more; 100x the paper with T = 120,000 no longer starts at 240 million)
    serial = int(jobs.release.max(initial=0)) + sum(
        int(jobs.single[j]) if j not in jobs.must else int(jobs.split[j].min()) for j in range(len(jobs.gpus))
    )
    longest = int(np.max(np.where(jobs.single < NEVER, jobs.single, 0), initial=1))
    slots = min(instance.horizon, serial, int(jobs.release.max(initial=0)) + 4 * longest) + longest
    justify = p.justify and not instance.has_releases  # a release is not symmetric in time
    packer = _Packer(jobs, slots)
    began = time.perf_counter()

    def over() -> bool:  # the time limit, or a signal asking the run to stop (Ctrl-C)
        return time.perf_counter() - began > p.time_limit or stop_requested() is not None

    best, start_name, may_split, capped, started = None, "", False, False, 0
    starts = [(rule, name, order) for rule in p.modes() for name, order in _start_orders(jobs).items()]
    for rule, name, order in starts:
        if best is not None and over():
            capped = True  # keep the best start so far: the first plan is always built
            break
        packer.may_split = rule
        plan = packer.build(order)
        if justify:
            plan = packer.justify(plan, over)
        started += 1
        if best is None or plan.score < best.score:
            best, start_name, may_split = plan, name, rule
    assert best is not None
    capped = capped or over()
    lanes_span = None
    if p.lanes > 0 and not capped and stop_requested() is None:
        lanes = _lanes_plan(instance, jobs, p, began, best.score[0])
        if lanes is not None:
            plan = lanes
            lanes_span = plan.score[0]
            packer.may_split = False
            if justify:
                plan = packer.justify(plan, over)
            if plan.score < best.score:
                best, start_name, may_split = plan, "lanes", False
    packer.may_split = may_split  # the restarts keep the rule of the best start
    start_score = best.score
    rng = np.random.default_rng(p.seed)
    done, improved = 0, 0
    for _ in range(p.iterations):
        if capped or over():
            capped = True  # keep the best
            break
        noise = rng.uniform(0.0, p.jitter, len(best.starts)) * best.lengths
        plan = packer.build(np.argsort(best.starts + noise, kind="stable"))
        if justify:
            plan = packer.justify(plan, over)
        done += 1
        if plan.score <= best.score:
            improved += plan.score < best.score
            best = plan
    if capped:
        log.info(
            "pack: the time limit of %g s stopped the search after %d of %d starts and %d restarts",
            p.time_limit,
            started,
            len(starts),
            done,
        )
    trial = _trial(best, jobs.capacity, est.weight)
    search = {
        "start": start_name,
        "lanes_makespan": lanes_span,
        "start_makespan": start_score[0],
        "start_total_completion": start_score[1],
        "starts": started,  # of the len(START_ORDERS) x rules starts: fewer when the time limit came first
        "iterations": done,
        "improvements": int(improved),
        "capped": capped,
        "justified": justify,
        "split_jobs": len(jobs.must),
        "split_by_choice": may_split,
        "split": best.split,
    }
    result, report = searched_result(instance, "pack", trial, p, est, packer.runs, search)
    if not np.array_equal(np.asarray(report.result.completion), best.completion):
        raise RuntimeError("pack planned completion times that the simulator does not reproduce")
    return result
