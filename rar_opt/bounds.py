"""Lower bounds on the optimal makespan, Theorem 5's bound, and checks of Lemmas 2-3.

Lower bounds (all valid for every feasible schedule):

* ``longest``: max_j rho_min_j, the longest job's best execution time;
* ``work``: ceil(sum_j G_j rho_min_j / N), best-case GPU-slots over the cluster's GPUs;
* ``load``: the tightest integer theta of the load ILP (14)-(16) over enumerated schedules
  (tiny instances only; :func:`load_bound`);
* ``relaxation``: the contention-free relaxation solved by CP-SAT within a time limit, or
  CP-SAT's bound on it when the limit is reached (every job at its uncontended rate, so no
  schedule is faster: docs/exactness.md). It needs a solve, so it is computed only when
  :func:`lower_bounds` is given ``relaxation_time_limit``; it works at paper scale;
* the structural floors of :mod:`rar_opt.floors` (``energetic``, ``disjunctive``,
  ``classes``, ``halves``, ``split_pairs``, ``gpu_bins``, ``gpu_bins_lp``, ...): cheap
  bounds that see the servers, the jobs that cannot run together and the jobs that must
  split (docs/exactness.md, "Structural floors"). Computed unless :func:`lower_bounds` is given ``structural=False``;
* ``server_bins`` (:func:`every_bound` with ``bins_time_limit``): the GPU-bins relaxation of
  :mod:`rar_opt.formulations.gpubins` solved by CP-SAT, asked upward from the best of the
  others (docs/exactness.md, "GPU bins with servers").
"""

from __future__ import annotations

import heapq
import time
from dataclasses import dataclass

import numpy as np

from .algorithms.result import PolicyResult
from .floors import BOUNDS as STRUCTURAL
from .floors import structural_bounds
from .instance import Instance
from .integral import ceil_bound


@dataclass(frozen=True)
class LowerBounds:
    """Lower bounds on the optimal makespan, each valid for every feasible schedule."""

    longest: int
    work: int
    load: int | None = None
    relaxation: int | None = None
    relaxation_proven: bool | None = None  # True: the relaxation's optimum; False: CP-SAT's bound on it
    # the structural floors (rar_opt.floors); None: not computed
    energetic: int | None = None
    disjunctive: int | None = None
    classes: int | None = None
    halves: int | None = None
    split_pairs: int | None = None
    release: int | None = None  # max_j (r_j + rho_min_j) (docs/arrivals.md)
    release_energy: int | None = None  # energy over release windows
    gpu_bins: int | None = None  # the jobs' GPU-lengths packed into N bins (bin packing's L2)
    gpu_bins_lp: int | None = None  # the same bin packing by its Gilmore-Gomory LP (rar_opt.binpacking)
    structural_seconds: float | None = None  # all of them together

    @property
    def structural(self) -> dict[str, int]:
        """The structural floors computed, by name."""
        return {k: getattr(self, k) for k in STRUCTURAL if getattr(self, k) is not None}

    @property
    def best(self) -> int:
        """The largest of the bounds computed."""
        values = (self.longest, self.work, self.load, self.relaxation, *self.structural.values())
        return max(v for v in values if v is not None)


def lower_bounds(
    instance: Instance,
    load: int | None = None,
    *,
    relaxation_time_limit: float | None = None,
    seed: int = 0,
    structural: bool = True,
) -> LowerBounds:
    """The longest-job and work bounds of ``instance`` (and ``load`` if already computed);
    with ``relaxation_time_limit`` (seconds) also the contention-free relaxation's bound
    (on a network that is not a star that relaxation does not apply and is skipped);
    with ``structural`` (the default) the structural floors of :mod:`rar_opt.floors`."""
    b = instance.bounds
    work = float(np.sum(instance.arrays.gpus * b.rho_min)) / instance.cluster.num_gpus
    relaxation = proven = None
    if relaxation_time_limit is not None and instance.time_model.links is None:
        from .solvers import relaxation_bound

        found = relaxation_bound(instance, time_limit=relaxation_time_limit, seed=seed)
        relaxation, proven = found.bound, found.proven if found.bound is not None else None
    floors: dict[str, int | float] = {}
    if structural:
        found_floors = structural_bounds(instance)
        floors = {k: v for k, (v, _) in found_floors.items()}
        floors["structural_seconds"] = sum(t for _, t in found_floors.values())
    return LowerBounds(
        longest=int(b.rho_min.max()),
        work=ceil_bound(work),
        load=load,
        relaxation=relaxation,
        relaxation_proven=proven,
        **floors,  # type: ignore[arg-type]
    )


@dataclass(frozen=True)
class CompletionBounds:
    """Lower bounds on sum_j C_j and sum_j (C_j - r_j), each valid for every feasible schedule."""

    total: int  # on the total completion time sum_j C_j
    flow: int  # on the total flow time: ``total`` less the constant sum_j r_j
    simple_total: int  # sum_j (r_j + rho_min_j), the per-job bound alone (``total`` is at least it)
    jobs: int

    @property
    def mean_completion(self) -> float:
        """On the average completion time (the simulator's average JCT, counted from slot 0)."""
        return self.total / self.jobs

    @property
    def mean_flow(self) -> float:
        """On the average flow time (completion less release)."""
        return self.flow / self.jobs


def squashed_completions(instance: Instance) -> np.ndarray:
    """The completion times, in slots and rounded up, of the shortest-remaining-work-first
    schedule of the "squashed" jobs: the cluster as one machine that does N GPU-slots per
    slot, job j as G_j rho_min_j GPU-slots released at r_j, preemption allowed. Sorted.

    Its k-th completion is a lower bound on the k-th completion of every feasible schedule:
    a schedule holds job j's G_j GPUs for at least rho_min_j slots inside [r_j, C_j) and at
    most N GPUs in a slot, so it is a fractional schedule of the squashed jobs on that
    machine finishing each job by C_j; earliest-deadline-first turns it into a preemptive
    one finishing each job no later (Horn's condition holds on every window), and shortest
    remaining work first completes at least as many jobs as any preemptive schedule by
    every time (Schrage 1968). Integer arithmetic: time is counted in 1/N slots."""
    n_gpus = instance.cluster.num_gpus
    work = [int(w) for w in instance.arrays.gpus * instance.bounds.rho_min]
    released = sorted((int(r) * n_gpus, j) for j, r in enumerate(instance.releases))
    waiting: list[tuple[int, int]] = []  # (remaining GPU-slots, job)
    t, i, done = 0, 0, []
    while i < len(released) or waiting:
        if not waiting:
            t = max(t, released[i][0])
        while i < len(released) and released[i][0] <= t:
            heapq.heappush(waiting, (work[released[i][1]], released[i][1]))
            i += 1
        left, j = heapq.heappop(waiting)
        following = released[i][0] if i < len(released) else None
        if following is None or t + left <= following:
            t += left
            done.append(t)
        else:  # preempted by the next release (it may be shorter)
            heapq.heappush(waiting, (left - (following - t), j))
            t = following
    return np.sort(-(-np.array(done, dtype=np.int64) // n_gpus))


def completion_bounds(instance: Instance) -> CompletionBounds:
    """Lower bounds on the total completion and the total flow time of ``instance``.

    Number the jobs of any feasible schedule in the order they complete. The k-th
    completion is at least the k-th smallest r_j + rho_min_j (every job j ends no earlier
    than r_j + rho_min_j) and at least the k-th completion of
    :func:`squashed_completions`; so sum_j C_j is at least the sum over k of the larger of
    the two, and the flow bound is that less sum_j r_j. Without releases this is the
    per-rank bound of docs/experiments.md ("Longest first"): the k-th smallest rho_min_j
    against the k smallest areas over N."""
    alone = np.sort(instance.releases + instance.bounds.rho_min.astype(np.int64))
    total = int(np.maximum(alone, squashed_completions(instance)).sum())
    return CompletionBounds(total, total - int(instance.releases.sum()), int(alone.sum()), instance.num_jobs)


@dataclass(frozen=True)
class NamedBound:
    """One lower bound on the optimal makespan, by name, with the seconds it took."""

    name: str
    value: int | None  # None: it proved nothing (the relaxation ran out of time without a bound)
    seconds: float
    note: str = ""


def every_bound(
    instance: Instance,
    *,
    relaxation_time_limit: float | None = None,
    seed: int = 0,
    bins_time_limit: float | None = None,
) -> list[NamedBound]:
    """Every lower bound rar-opt can prove on ``instance``, each timed: the longest job, the
    work bound, the structural floors (:mod:`rar_opt.floors`), with
    ``relaxation_time_limit`` the contention-free relaxation (star networks only), and with
    ``bins_time_limit`` the GPU-bins relaxation, asked upward from the best of the others."""
    began = time.perf_counter()
    cheap = lower_bounds(instance, structural=False)
    seconds = time.perf_counter() - began
    out = [
        NamedBound("longest", cheap.longest, seconds, "the longest job's fastest execution time"),
        NamedBound("work", cheap.work, seconds, "best-case GPU-slots over the cluster's GPUs"),
    ]
    notes = {
        "energetic": "energetic reasoning on the cluster's GPUs as one pool",
        "disjunctive": "jobs too large to overlap anywhere run one after another",
        "classes": "jobs that fit unsplit only on the larger servers, splits priced",
        "halves": "jobs over half of every host run one at a time per host",
        "split_pairs": "two jobs that must split and share a server contend",
        "release": "the latest release plus fastest execution time",
        "release_energy": "GPU-slots of the jobs released from r on, after r",
        "gpu_bins": "each GPU's jobs in a row: the GPU-lengths as bin packing (Martello-Toth L2)",
        "gpu_bins_lp": "the same bin packing by its Gilmore-Gomory LP (Farley's bound certifies)",
    }
    out += [
        NamedBound(name, value, took, notes.get(name, ""))
        for name, (value, took) in structural_bounds(instance).items()
    ]
    if relaxation_time_limit is not None and instance.time_model.links is None:
        from .solvers import relaxation_bound

        found = relaxation_bound(instance, time_limit=relaxation_time_limit, seed=seed)
        note = "the relaxation's optimum" if found.proven else "CP-SAT's bound on the relaxation (time limit)"
        out.append(NamedBound("relaxation", found.bound, found.seconds, note))
    if bins_time_limit is not None:
        from .solvers import gpu_bins_bound

        floor = max(b.value for b in out if b.value is not None)
        binned = gpu_bins_bound(instance, floor, time_limit=bins_time_limit, seed=seed)
        asked = ", ".join(f"{slot}: {answer}" for slot, answer in binned.asked)
        note = binned.note or f"GPU bins that know their servers, splits priced (CP-SAT; asked {asked})"
        out.append(NamedBound("server_bins", binned.bound, binned.seconds, note))
    return out


def load_bound(instance: Instance, max_start: int, time_limit: float | None = 60.0) -> int | None:
    """The tightest integer theta for which the load ILP (14)-(16) is feasible, by
    bisection over [1, max_start + max rho_max]; None when a solve is inconclusive."""
    from .formulations import enumerative
    from .solvers import Status, solve_model

    enumerated = enumerative.enumerate_schedules(instance, max_start=max_start)
    left, right = 1, int(enumerated.completion.max())  # the schedules' makespans are all feasible thetas
    best = right
    while left <= right:
        theta = (left + right) // 2
        status = solve_model(enumerative.build_load(instance, enumerated, theta), time_limit=time_limit).status
        if status in (Status.OPTIMAL, Status.FEASIBLE):
            best, right = theta, theta - 1
        elif status == Status.INFEASIBLE:
            left = theta + 1
        else:
            return None
    return best


@dataclass(frozen=True)
class ClaimCheck:
    """One claim checked on one run: whether it held, and by what margin (>= 0 = holds)."""

    claim: str
    holds: bool | None  # None: inconclusive (compared with a lower bound only)
    margin: float
    detail: str


def varphi_bound(instance: Instance) -> float:
    """An upper bound on varphi = max_j max_{k1,k2} rho_j(y^k1) / rho_j(y^k2) (Lemma 4):
    every execution time of job j lies in [rho_min_j, rho_max_j], so varphi <=
    max_j rho_max_j / rho_min_j. Using it makes the evaluated bound an upper bound of the
    paper's n_g varphi u / l (the check is then weaker, never falsely failed)."""
    b = instance.bounds
    return float(np.max(b.rho_max / b.rho_min))


def theorem5_bound(instance: Instance, lower: float, upper: float) -> float:
    """n_g * varphi * u / l (Theorem 5) with varphi from :func:`varphi_bound`."""
    return int(instance.arrays.gpus.max()) * varphi_bound(instance) * upper / lower


def check_sjf_bco_claims(
    instance: Instance,
    makespan: int,
    run: PolicyResult,
    optimum: int | None = None,
    lower_bound: int | None = None,
) -> list[ClaimCheck]:
    """Lemma 2, Lemma 3 and Theorem 5 on one SJF-BCO run (``makespan`` from the simulator)."""
    n_g = int(instance.arrays.gpus.max())
    if run.theta is None or run.exceeds_horizon:
        return [ClaimCheck("within_horizon", False, 0.0, "no trial ended within T: the lemmas do not apply")]
    theta, load = int(run.theta), float(run.max_load)
    out = [
        ClaimCheck("load_within_theta", load <= theta + 1e-9, theta - load, f"max load {load:.6g} <= theta {theta}"),
        # Lemma 2: the largest estimated load equals the tightest theta (on the integer grid of theta)
        ClaimCheck(
            "lemma2",
            theta - 1 < load <= theta + 1e-9,
            (load - (theta - 1)) if load <= theta else theta - load,
            f"theta {theta}, max load {load:.6g}",
        ),
        ClaimCheck(
            "lemma3",
            makespan <= n_g * load + 1e-9,
            n_g * load - makespan,
            f"makespan {makespan} <= n_g {n_g} x max load {load:.6g}",
        ),
    ]
    bound = theorem5_bound(instance, run.lower, run.upper)
    if optimum is not None:
        out.append(
            ClaimCheck(
                "theorem5",
                makespan <= bound * optimum + 1e-9,
                bound * optimum - makespan,
                f"makespan {makespan} <= {bound:.4g} x OPT {optimum}",
            )
        )
    elif lower_bound is not None:
        ok = makespan <= bound * lower_bound + 1e-9
        out.append(
            ClaimCheck(
                "theorem5",
                True if ok else None,
                bound * lower_bound - makespan,
                f"makespan {makespan} <= {bound:.4g} x lower bound {lower_bound}"
                + ("" if ok else " fails: inconclusive without OPT"),
            )
        )
    return out
