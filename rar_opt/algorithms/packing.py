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

Placing a job (``Profile.place``): the earliest slot t >= r_j where it fits, over every
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
from rar_opt.algorithms.profile import Jobs, Profile, jobs_of
from rar_opt.algorithms.result import PolicyResult, searched_result
from rar_opt.algorithms.search import MAX_SEED
from rar_opt.cluster.timemodel import NEVER
from rar_opt.errors import ParameterError
from rar_opt.instance import Instance
from rar_opt.support.checks import is_int, is_real, seconds_problem, seed_problem
from rar_opt.support.processes import stop_requested
from rar_opt.support.progress import TRIALS

log = logging.getLogger(__name__)

SPLIT_RULES = ("both", "must", "may")
"""``PackParams.split``: which jobs may split (module docstring, "Splitting by choice")."""


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
    lanes_tries: int | None = None  # and after this many tries in all (a count of work; None: no count)

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
        if self.lanes_tries is not None and (not is_int(self.lanes_tries) or self.lanes_tries < 1):
            raise ParameterError(f"must be an integer >= 1 or None, got {self.lanes_tries!r}", where="lanes_tries")


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

    def __init__(self, jobs: Jobs, slots: int) -> None:
        self.jobs, self.slots, self.runs = jobs, slots, 0
        self.may_split = False  # the rule of the plans built now (PackParams.split)
        self.reporter = TRIALS.listener()  # progress as the engine's trials report it

    def build(self, order: np.ndarray, releases: bool = True) -> _Plan:
        """Place the jobs of ``order`` one by one, each at its earliest room (module docstring)."""
        jobs = self.jobs
        profile = Profile(jobs, self.slots, self.may_split)
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


def _start_orders(jobs: Jobs) -> dict[str, np.ndarray]:
    length = np.array(
        [int(jobs.single[j]) if j not in jobs.must else int(jobs.split[j].min()) for j in range(len(jobs.gpus))]
    )
    hosts = jobs.hosts.sum(axis=1)
    return {
        "fewest-hosts": np.lexsort((-length, hosts)),
        "longest-first": np.argsort(-length, kind="stable"),
        "largest-area-first": np.argsort(-length * jobs.gpus, kind="stable"),
    }


def _lanes_plan(instance: Instance, jobs: Jobs, p: PackParams, began: float, beat: int) -> tuple[_Plan, int] | None:
    """The buddy-lanes start (:mod:`.lanes`): every job unsplit in a tree of GPU blocks,
    searched for ``p.lanes`` of the time limit (and at most ``p.lanes_tries`` tries), with
    the tries it made; None where the class does not apply."""
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
        max_tries=p.lanes_tries,
    )
    if found is None:
        return None
    every = np.arange(len(jobs.gpus), dtype=np.int64)
    server = np.asarray(found.server, dtype=np.int64)
    plan = _Plan(found.starts, jobs.single.astype(np.int64), every, server, jobs.gpus.astype(np.int64))
    return plan, found.tries


def pack_policy(instance: Instance, params: PackParams | None = None) -> PolicyResult:
    """pack: the best justified profile schedule of three orders, then jittered restarts."""
    p = params or PackParams()
    est = estimate(instance, p.estimator)
    jobs = jobs_of(instance)
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
    lanes_span, lanes_tries = None, 0
    if p.lanes > 0 and not capped and stop_requested() is None:
        lanes = _lanes_plan(instance, jobs, p, began, best.score[0])
        if lanes is not None:
            plan, lanes_tries = lanes
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
        "lanes_tries": lanes_tries,  # 0: no lanes search
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
