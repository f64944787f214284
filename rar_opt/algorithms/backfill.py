"""``backfill``: list schedules with backfilling on the servers, aimed at completion times.

The engine of the paper's policies (:mod:`.engine`) starts the jobs in list order, so a
job that finds no room holds back every job behind it. For the sum of completion times
(the average JCT) that is costly where splits are expensive: the job at the head either
waits, and the jobs behind it with it, or splits and pays for the split. The builder here
schedules as batch systems do, with backfilling: at every event (slot 0, a release, a
completion) every job not yet started is tried in priority order, and each one that can
start now starts now, whether or not a job before it had to wait.

* **Unsplit first.** A job starts on one server with G_j free GPUs: the one with the
  fewest free GPUs (``fit="best"``, best fit), or the smallest such server, then the
  fewest free (``"small"``), or the largest such server, then the fewest free
  (``"large"``: the small jobs, which come first in shortest-first orders, fill the large
  servers and leave the small ones whole for the next size up). A job on one server sees no contention (docs/model.md
  section 3), so it runs exactly ceil(F_j / phi_j(0, 1)) slots, whatever else runs.
* **Splits without contention.** A job that no server holds now may start split over the
  servers that hold no other split job, those with the most free GPUs first, taking their
  free GPUs until it has G_j. Then no server carries two split rings, the job sees
  p_j = 1 in every slot and runs exactly ceil(F_j / phi_j(1, n)) slots on n servers. A job
  that fits on some server splits only when that ends it strictly earlier than the
  earliest unsplit end the running jobs' completions promise (``split="may"``; under
  ``"must"`` never; under ``"choose"`` as under ``"may"`` except for the jobs the search
  holds unsplit); a job wider than every server splits whenever it can. On a network topology (docs/model.md
  section 3.8) links between switches are shared, so there at most one split job runs at
  a time, and its length comes from the time model on its own servers.
* **Reservation** (``reserve``, EASY backfilling: Lifka 1995; Mu'alem and Feitelson
  2001). The first released job in priority order that cannot start keeps the server
  where, from the running jobs' completions, it could start unsplit at the earliest;
  until that slot a later job may take the server only if it ends by then, or (``spare``)
  if it takes only GPUs that the reserved job will not need there. Without it a stream of
  small jobs can keep a wide job waiting.

Every job's length is fixed when it starts, so the builder knows every completion without
simulating. The schedules leave the builder through :mod:`rar_opt.gpu_ids` (concrete
GPUs) and the checker; where the simulator's completions differ from the planned ones
the policy raises (a bug).

The policy ``backfill`` searches priority orders for the builder (an iterated local
search, :func:`backfill_policy`); ``auto`` for the sums runs it as one of its phases
(:mod:`rar_opt.solvers.sums`). None of the paper's policies uses this module.
"""

from __future__ import annotations

import heapq
import logging
import time
from dataclasses import dataclass

import numpy as np

from rar_opt.algorithms.baselines import BaselineParams
from rar_opt.algorithms.engine import Trial, planned_trial
from rar_opt.algorithms.estimators import estimate
from rar_opt.algorithms.order_search import Choice, choice_move, walk_orders
from rar_opt.algorithms.orders import SUM_ORDERS
from rar_opt.algorithms.result import PolicyResult, searched_result
from rar_opt.cluster.timemodel import NEVER, slots_needed
from rar_opt.errors import InputError, ParameterError
from rar_opt.instance import Instance
from rar_opt.schedule import Schedule
from rar_opt.support.checks import check_cap, check_search, is_finite
from rar_opt.support.processes import stop_requested
from rar_opt.support.progress import TRIALS

log = logging.getLogger(__name__)

FITS = ("best", "small", "large")
"""How a job picks among the servers that hold it now (module docstring)."""

SPLITS = ("may", "must", "choose")
"""Which jobs may split: any that no server holds now, only those wider than every server,
or (``"choose"``, the policy's search only) each job as the search decides: the walk
carries one flag per job beside the order and flips them (:data:`.order_search.FLIP_SHARE`)."""

START_SPLITS = ("both", "none")
"""Under ``split="choose"``, how each start order is built: both letting the rule split and
with no job split by choice, or only the latter (the walk's flips may then add splits;
docs/exactness.md, "Racing the backfill search")."""

CLOCK_EVERY = 256
"""The builder reads the clock once per this many jobs tried (a deadline stops a build there)."""


class NoTimeToBuild(InputError):
    """The policy's time limit passed before one start order was built."""


@dataclass(frozen=True)
class BuildRules:
    """The builder's choices: the server rule, the reservation (and whether a later job may
    use the reserved server's spare GPUs) and splitting by choice."""

    fit: str = "best"
    reserve: bool = True
    split: str = "may"
    spare: bool = True

    def __post_init__(self) -> None:
        if self.fit not in FITS:
            raise ParameterError(f"must be one of {', '.join(FITS)}, got {self.fit!r}", where="fit")
        for name in ("reserve", "spare"):
            if not isinstance(getattr(self, name), bool):
                raise ParameterError(f"must be true or false, got {getattr(self, name)!r}", where=name)
        if self.split not in SPLITS:
            raise ParameterError(f"must be one of {', '.join(SPLITS)}, got {self.split!r}", where="split")

    @property
    def label(self) -> str:
        """``best+reserve``, ``small+reserve-spare+must``, ``large+choose``, ``best`` (what the search records)."""
        held = ("+reserve" if self.spare else "+reserve-spare") if self.reserve else ""
        return self.fit + held + ("" if self.split == "may" else "+" + self.split)


@dataclass(frozen=True)
class Plan:
    """One schedule of the builder: starts, completions and the GPUs per server used."""

    starts: np.ndarray
    completion: np.ndarray
    used: tuple[tuple[tuple[int, int], ...], ...]  # per job: (server, GPUs), servers ascending

    @property
    def total(self) -> int:
        """sum_j C_j."""
        return int(self.completion.sum())

    @property
    def makespan(self) -> int:
        return int(self.completion.max(initial=0))

    @property
    def split_jobs(self) -> int:
        """Jobs that span two servers or more."""
        return sum(len(u) > 1 for u in self.used)


class Builder:
    """The builder of one instance under ``rules`` (module docstring); :meth:`plan` runs it."""

    def __init__(self, instance: Instance, rules: BuildRules | None = None) -> None:
        self.instance = instance
        self.rules = rules or BuildRules()
        tm = instance.time_model
        self.gpus: list[int] = instance.arrays.gpus.astype(np.int64).tolist()
        self.cap: list[int] = instance.cluster.capacity.astype(np.int64).tolist()
        self.release: list[int] = instance.releases.astype(np.int64).tolist()
        single = tm.execution_slots(tm.phi_one_server)
        fits = np.asarray(self.gpus) <= max(self.cap)
        self.single: list[int] = np.where(fits, single, NEVER).tolist()
        self.star = tm.links is None
        self._split_slots: dict[tuple[int, tuple[int, ...]], int] = {}
        self.builds = 0
        self.tried = 0  # jobs tried over every build (the clock is read every CLOCK_EVERY)

    # -- durations from the time model -------------------------------------------------
    def split_time(self, j: int, servers: tuple[int, ...]) -> int:
        """Slots of job j split over ``servers`` as the only split ring on them: on the star
        it depends on their number only (p = 1, eq. 6-9); on a topology the time model's
        rates for the ring alone on its links."""
        key = (j, (len(servers),) if self.star else servers)
        found = self._split_slots.get(key)
        if found is None:
            tm = self.instance.time_model
            if self.star:
                phi = tm.phi(np.ones(1), np.full(1, len(servers)), np.array([j]))
            else:
                n = np.zeros(len(self.gpus), dtype=np.int64)
                n[j] = len(servers)
                active = np.zeros(len(self.gpus), dtype=bool)
                active[j] = True
                pairs = np.array(servers, dtype=np.int64)
                phi = tm.rates(active, n, np.full(len(pairs), j), pairs, len(self.cap))[2][j : j + 1]
            found = int(slots_needed(int(self.instance.arrays.iterations[j]), phi)[0])
            self._split_slots[key] = found
        return found

    # -- one build -------------------------------------------------------------------------
    def plan(
        self, order: list[int], deadline: float | None = None, unsplit: frozenset[int] = frozenset()
    ) -> Plan | None:
        """The schedule of priority ``order`` (every job once); None when the
        ``time.perf_counter()`` clock passes ``deadline`` before it is built. The jobs in
        ``unsplit`` never split by choice (under ``split="may"`` or ``"choose"``)."""
        reporter, n = TRIALS.listener(), len(order)
        if reporter is not None:  # one build is one trial of the run's progress
            reporter.trials += 1
            reporter.report(reporter.trials, 0, n)
        found = self._run(order, NEVER if deadline is None else deadline, unsplit)
        if found is None:
            return None
        if reporter is not None:
            reporter.report(reporter.trials, n, n)
        starts, ends, used = found
        return Plan(np.array(starts, dtype=np.int64), np.array(ends, dtype=np.int64), tuple(used))

    def _run(
        self, order: list[int], deadline: float, unsplit: frozenset[int]
    ) -> tuple[list[int], list[int], list[tuple[tuple[int, int], ...]]] | None:
        gpus, single, cap, rel = self.gpus, self.single, self.cap, self.release
        reserve = self.rules.reserve
        # the server rule: by size first ("small": smallest, "large": largest), then fewest free GPUs
        first = {"small": list(cap), "large": [-c for c in cap]}.get(self.rules.fit)
        may_split = self.rules.split != "must"
        n_srv = len(cap)
        self.builds += 1
        free = list(cap)
        split_on = [False] * n_srv  # the server carries a split ring
        holding: list[list[tuple[int, int]]] = [[] for _ in range(n_srv)]  # per server: (end, GPUs) running
        starts, ends = [0] * len(gpus), [0] * len(gpus)
        used: list[tuple[tuple[int, int], ...]] = [()] * len(gpus)
        running: list[tuple[int, int]] = []  # (end, job)
        arrivals = sorted({r for r in rel if r > 0}, reverse=True)  # popped from the end
        pending, t = list(order), 0
        while pending:
            waiting: list[int] = []
            held, until, spare, head_done = -1, NEVER, 0, False  # the reservation of the first job that waits
            most = max(free)
            known = _Known(self, free, split_on, holding)
            for j in pending:
                self.tried += 1
                if self.tried % CLOCK_EVERY == 0 and time.perf_counter() > deadline:
                    return None
                if rel[j] > t:
                    waiting.append(j)
                    continue
                g, end = gpus[j], 0
                place: tuple[tuple[int, int], ...] | None = None
                if g <= most:
                    best, best_key = -1, (NEVER, NEVER)
                    for s in range(n_srv):
                        if free[s] >= g and (s != held or t + single[j] <= until or g <= spare):
                            key = (free[s], 0) if first is None else (first[s], free[s])
                            if key < best_key:
                                best, best_key = s, key
                    if best >= 0:
                        place, end = ((best, g),), t + single[j]
                if place is None and g > 1 and ((may_split and j not in unsplit) or single[j] >= NEVER):
                    found = self._split(j, t, known)
                    if found is not None and not (
                        found[1] > until and any(s == held and k > spare for s, k in found[0])
                    ):
                        place, end = found
                if place is None:
                    if reserve and not head_done:
                        head_done = True
                        held, until = known.earliest(g)
                        if held >= 0 and self.rules.spare:
                            room = free[held] + sum(k for e, k in holding[held] if e <= until)
                            spare = room - g
                    waiting.append(j)
                    continue
                for s, k in place:
                    if s == held and end > until:
                        spare -= k
                    free[s] -= k
                    holding[s].append((end, k))
                    if len(place) > 1:
                        split_on[s] = True
                most = max(free)
                known = _Known(self, free, split_on, holding)
                starts[j], ends[j], used[j] = t, end, place
                heapq.heappush(running, (end, j))
            pending = waiting
            if not pending:
                break
            while arrivals and arrivals[-1] <= t:
                arrivals.pop()
            nxt = arrivals[-1] if arrivals else NEVER
            if running and running[0][0] <= nxt:
                t = running[0][0]
                while running and running[0][0] == t:
                    _, j = heapq.heappop(running)
                    for s, k in used[j]:
                        free[s] += k
                        holding[s].remove((t, k))
                        if len(used[j]) > 1:
                            split_on[s] = False
            elif nxt < NEVER:
                t = nxt
            else:  # a valid instance never gets here: on an empty cluster every job starts
                raise RuntimeError("backfill: a job fits nowhere on an empty cluster")
        return starts, ends, [tuple(sorted(u)) for u in used]

    def _split(self, j: int, t: int, known: _Known) -> tuple[tuple[tuple[int, int], ...], int] | None:
        """Job j split at slot t over servers free of split rings (module docstring), with
        its end, if it ends strictly before any unsplit start the running jobs promise."""
        g = self.gpus[j]
        found = known.split_place(g)
        if found is None:
            return None
        place, servers = found
        end = t + self.split_time(j, servers)
        if known.earliest(g)[1] <= end - self.single[j]:
            return None  # waiting for one server ends no later
        return place, end


class _Known:
    """What one state of a build tells, worked out on first use: the servers a split may
    use with their free GPUs, and per width the earliest unsplit start the running jobs'
    completions promise. A start changes the state, and the builder makes a new one."""

    def __init__(
        self, builder: Builder, free: list[int], split_on: list[bool], holding: list[list[tuple[int, int]]]
    ) -> None:
        self.builder, self.free, self.split_on, self.holding = builder, free, split_on, holding
        self._pool: tuple[list[tuple[int, int]], int] | None = None
        self._earliest: dict[int, tuple[int, int]] = {}
        self._places: dict[int, tuple[tuple[tuple[int, int], ...], tuple[int, ...]] | None] = {}

    def split_place(self, g: int) -> tuple[tuple[tuple[int, int], ...], tuple[int, ...]] | None:
        """Where a split job of g GPUs would go now: (server, GPUs) taken from :meth:`pool`
        in its order, every free GPU of a server until g, and the servers ascending; None
        when the pool holds fewer than g GPUs or one server would do."""
        if g in self._places:
            return self._places[g]
        pool, total = self.pool()
        found = None
        if total >= g:
            got, place = 0, []
            for s, k in pool:
                take = min(k, g - got)
                place.append((s, take))
                got += take
                if got == g:
                    break
            if len(place) >= 2:
                found = (tuple(place), tuple(sorted(s for s, _ in place)))
        self._places[g] = found
        return found

    def pool(self) -> tuple[list[tuple[int, int]], int]:
        """(server, free GPUs) of the servers free of split rings with a free GPU, the most
        free first (ties: lower index), and their sum; empty on a topology while a split
        ring runs (one at a time there)."""
        if self._pool is None:
            free, on = self.free, self.split_on
            if not self.builder.star and any(on):
                self._pool = ([], 0)
            else:
                pool = sorted(
                    ((s, free[s]) for s in range(len(free)) if not on[s] and free[s] > 0), key=lambda x: -x[1]
                )
                self._pool = (pool, sum(k for _, k in pool))
        return self._pool

    def earliest(self, g: int) -> tuple[int, int]:
        """(server, slot): where and when a job of g GPUs could start unsplit at the earliest
        if only the running jobs ended (the first server on a tie); (-1, NEVER) when no
        server holds it. The slot is a completion: a job that cannot start now waits for one."""
        found = self._earliest.get(g)
        if found is None:
            best, when = -1, NEVER
            cap = self.builder.cap
            for s in range(len(cap)):
                if cap[s] < g:
                    continue
                room = self.free[s]
                for e, k in sorted(self.holding[s]):
                    room += k
                    if room >= g:
                        if e < when:
                            best, when = s, e
                        break
            found = self._earliest[g] = (best, when)
        return found


def plan_trial(instance: Instance, plan: Plan, weight: np.ndarray) -> Trial:
    """The plan as an engine :class:`~.engine.Trial` (concrete GPUs, loads ``weight``)."""
    job = np.array([j for j, u in enumerate(plan.used) for _ in u], dtype=np.int64)
    server = np.array([s for u in plan.used for s, _ in u], dtype=np.int64)
    count = np.array([k for u in plan.used for _, k in u], dtype=np.int64)
    return planned_trial(instance.cluster.capacity, weight, plan.starts, plan.completion, job, server, count)


def backfill_schedule(instance: Instance, order: list[int] | np.ndarray, rules: BuildRules | None = None) -> Schedule:
    """The builder's schedule of priority ``order`` under ``rules`` (module docstring),
    with concrete GPU ids and no record."""
    order = [int(j) for j in order]
    if sorted(order) != list(range(instance.num_jobs)):
        raise ValueError("order must hold every job index once")
    plan = Builder(instance, rules).plan(order)
    assert plan is not None  # no deadline
    return plan_trial(instance, plan, np.zeros(instance.num_jobs)).to_schedule(instance, {})


# -- the policy: an iterated local search over priority orders ------------------------------


@dataclass(frozen=True)
class BackfillParams(BaselineParams):
    """``backfill``: the builder's rules, the search's moves (the stopping rule), a
    wall-time cap in seconds, the seed, one more start order and a makespan cap."""

    iterations: int = 200
    time_limit: float = 10.0
    seed: int = 0
    fit: str = "best"
    reserve: bool = True
    split: str = "may"
    spare: bool = True
    start_order: tuple[int, ...] | None = None  # tried beside the sum orders
    makespan_cap: int | None = None  # below T: schedules ending later score by how much first
    focus: float = 0.0  # the share of order moves whose jobs are drawn by their GPU-slots
    # under split="choose": each start order built both letting the rule split and with no
    # job split by choice ("both"), or only the latter ("none"; the walk may add splits)
    start_splits: str = "both"

    def __post_init__(self) -> None:
        super().__post_init__()
        check_search(self.iterations, self.time_limit, self.seed, self.start_order)
        check_cap("makespan_cap", self.makespan_cap)
        if not is_finite(self.focus) or not 0.0 <= self.focus <= 1.0:
            raise ParameterError(f"must be a number in [0, 1], got {self.focus!r}", where="focus")
        if self.start_splits not in START_SPLITS:
            raise ParameterError(
                f"must be one of {', '.join(START_SPLITS)}, got {self.start_splits!r}", where="start_splits"
            )
        self.rules()  # the builder's own checks

    def rules(self) -> BuildRules:
        return BuildRules(self.fit, self.reserve, self.split, self.spare)


def _score(plan: Plan, cap: int) -> tuple[int, int, int]:
    """(slots past the makespan cap, those slots summed over the jobs, sum of completions):
    smaller is better. The middle term tells apart schedules that end equally late: fewer
    jobs, or jobs less far, past the cap is nearer a schedule within it (measured:
    docs/exactness.md, "The slots past the cap, summed"). Within the cap both are 0."""
    past = np.maximum(plan.completion - cap, 0)
    return (int(past.max(initial=0)), int(past.sum()), plan.total)


def backfill_policy(instance: Instance, params: BackfillParams | None = None) -> PolicyResult:
    """backfill: the builder driven by an iterated local search over priority orders.

    1. **Start.** The sum orders of :data:`~.orders.SUM_ORDERS` (shortest first, smallest
       area first, fewest GPUs first) and ``start_order`` if given, under ``split="choose"``
       each with no job split by choice and (``start_splits="both"``) letting the rule
       split; the best is the incumbent, so the search is never worse than any of them.
    2. **Iterate** ``iterations`` moves (:func:`walk_orders`, :func:`move`) from the
       current order; a neighbour no worse than the current one replaces it (plateaus are
       crossed), and after :data:`.order_search.PATIENCE` moves without a strict gain the search returns
       to the best.
    3. **Result.** The best order's schedule, checked, its completions confirmed by the
       simulator.

    Scores are (slots past the horizon T, or past ``makespan_cap`` when it is smaller,
    those slots summed over the jobs, sum of completions; :func:`_score`): a schedule that
    ends after T is no answer. Random numbers come from
    ``numpy.random.default_rng(seed)`` only and the move budget stops the search, so a seed
    gives the same schedule anywhere; ``time_limit`` (or a stop request) may cut it short,
    and the record says so (``search.capped``).
    """
    return backfill_search(instance, params)[0]


def backfill_search(
    instance: Instance, params: BackfillParams | None = None, resume: Choice | None = None
) -> tuple[PolicyResult, Choice]:
    """The search of :func:`backfill_policy`, which also returns its best state (the order
    and the jobs held unsplit), and which ``resume`` (such a state, from an earlier run on
    the same instance and rules) joins as one more start: a race of short runs can go on
    from the best of them (``auto`` for the sums, :mod:`rar_opt.solvers.sums`)."""
    p = params or BackfillParams()
    est = estimate(instance, p.estimator)
    builder = Builder(instance, p.rules())
    n = instance.num_jobs
    starts = {name: make(instance, p.estimator).tolist() for name, make in SUM_ORDERS.items()}
    if p.start_order is not None:
        if len(p.start_order) != n:
            raise ValueError(f"start_order has {len(p.start_order)} jobs, the instance {n}")
        starts["given"] = list(p.start_order)
    cap = instance.horizon if p.makespan_cap is None else min(p.makespan_cap, instance.horizon)
    began = time.perf_counter()
    deadline = began + p.time_limit
    # under "choose" each start also without any split by choice (as under "must")
    flippable = _flippable(builder) if p.split == "choose" else []
    area = (instance.modes.gpus * instance.modes.rho).astype(np.float64)  # GPU-slots at rho_min: the focus's weights
    if not flippable:
        leaves: tuple[frozenset[int], ...] = (frozenset(),)
    else:
        leaves = (frozenset(flippable),) if p.start_splits == "none" else (frozenset(), frozenset(flippable))
    tried = [(name, Choice(order, unsplit)) for name, order in starts.items() for unsplit in leaves]
    if resume is not None:
        if sorted(resume.order) != list(range(n)) or not resume.unsplit <= frozenset(flippable):
            raise ValueError("resume is not a state of this instance's search")
        tried.insert(0, ("resumed", resume))
    best_name, best_state, best, capped = "", Choice([], frozenset()), None, False
    for name, state in tried:
        plan = builder.plan(state.order, deadline, state.unsplit)
        if plan is None or (best is not None and stop_requested() is not None):
            capped = True
            break
        if best is None or _score(plan, cap) < _score(best, cap):
            label = name if name == "resumed" or not state.unsplit else name + " unsplit"
            best_name, best_state, best = label, state, plan
    if best is None:
        raise NoTimeToBuild(
            f"backfill built no schedule of the {n} jobs within its time limit of {p.time_limit:g} s; "
            "give it more time (time_limit, --time-limit)",
            where="time_limit",
        )
    start_plan = best
    rng = np.random.default_rng(p.seed)
    moves = 0 if capped or n < 2 else p.iterations
    walk = walk_orders(
        rng,
        best_state,
        best,
        lambda c: builder.plan(c.order, deadline, c.unsplit),
        lambda q: _score(q, cap),
        moves,
        lambda r, c: choice_move(r, c, flippable, area, p.focus),
    )
    best, done, improved, capped = walk.value, walk.moves, walk.improvements, capped or walk.capped
    if capped:
        log.info("backfill: the time limit of %g s stopped the search after %d moves", p.time_limit, done)
    search = {
        "start": best_name,
        "rules": p.rules().label,
        "start_total_completion": start_plan.total,
        "start_makespan": start_plan.makespan,
        "iterations": done,
        "improvements": improved,
        "capped": capped,
        "split": best.split_jobs,
    }
    trial = plan_trial(instance, best, est.weight)
    result, report = searched_result(instance, "backfill", trial, p, est, builder.builds, search)
    if not np.array_equal(np.asarray(report.result.completion), best.completion):
        raise RuntimeError("backfill planned completion times that the simulator does not reproduce")
    return result, walk.order


def _flippable(builder: Builder) -> list[int]:
    """The jobs that may split by choice: more than one GPU, and one server holds them."""
    return [j for j, (g, t) in enumerate(zip(builder.gpus, builder.single, strict=True)) if g > 1 and t < NEVER]
