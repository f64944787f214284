"""Seeded, deterministic instance generators: ``tiny`` and ``paper``.

``paper`` reproduces the experimental setting of the paper (section 6; the experiments
are listed in docs/experiments.md): the Microsoft Philly job-size mix, servers of
{4, 8, 16, 32} GPUs, F_j in [1000, 6000], per-iteration time in [0.01, 0.05] slots, estimated execution time in
[50, 300] slots, contention plus overhead at most 15% of the execution time, T = 1200.

The paper gives its physical parameters only through those ranges, so they are
*calibrated* here, per job, in this order (the calibration is part of the instance's
``meta`` and is tested):

1. Draw F_j uniformly in [1000, 6000], then the job's nominal per-iteration time
   tau_j uniformly in [max(0.01, 50/F_j), min(0.05, 300/F_j)]; so tau_j is in
   [0.01, 0.05] and F_j tau_j is in [50, 300]. tau_j is the job's *best* per-iteration
   time (fewest servers, no other contender): tau_min_j = tau_j.
2. The 15% budget is split in equal halves between contention and per-server overhead
   (our reading of the paper's "xi1 = xi2": contention and overhead of comparable size;
   taken literally as equal numbers, xi1 = xi2 would either switch contention off through
   the clamp k = max(1, xi1 p) or make the overhead dwarf tau). Hence
   xi2 = 7.5% * min_j tau_j / (n_max_j - n_min_j), and each job's gradient size m_j is
   chosen so that its worst contention (p = min(J, max O_s) on the most servers) adds
   exactly 7.5% of tau_j to its best ring time. Together: tau_max_j <= 1.15 tau_min_j.
   (``budget`` changes the 15% for sensitivity studies; the draws stay the same.)
3. What remains of tau_j after communication, reduction and overhead is compute:
   25% forward (dF_j M_j, M_j drawn from {16, 32, 64, 128}) and 75% backward (dB_j).

Cluster constants: b_inter = 1, b_intra = 10, C = 50, alpha = 0.5, xi1 = 1 (every
contender communicates at once), linear contention.

``tiny`` draws 2-6 jobs on 1-4 servers of 1-4 GPUs with 2-10 iterations and per-iteration
times of 0.12-0.45 slots, and lets contention add 30-100% (capped so tau_max <= 0.9): small
enough for exact solvers, with contention that matters. Its horizon is the sum of the jobs'
worst execution times, so running the jobs one after another always fits.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from rar_opt.cluster.timemodel import LINEAR, linear_contention
from rar_opt.errors import InputError, ParameterError
from rar_opt.instance import MAX_SERVER_GPUS, Cluster, Instance, Job
from rar_opt.instances.calibration import PRESET_SUFFIX, PRESETS, Calibration
from rar_opt.instances.calibration import preset as preset_calibration
from rar_opt.support.checks import GENERATOR_MAX_SEED, is_int, is_real, seed_problem
from rar_opt.support.jsonio import INT_LIMIT

PHILLY_MIX: dict[int, int] = {1: 80, 2: 14, 4: 26, 8: 30, 16: 8, 32: 2}
"""Job sizes (GPUs) and their counts among the paper's 160 jobs (Microsoft Philly trace)."""

PAPER_SERVER_SIZES = (4, 8, 16, 32)


@dataclass(frozen=True)
class _Physics:
    b_inter: float = 1.0
    b_intra: float = 10.0
    reduce_speed: float = 50.0
    alpha: float = 0.5
    xi1: float = 1.0


def philly_sizes(n_jobs: int) -> list[int]:
    """The Philly size mix scaled to ``n_jobs`` (largest-remainder rounding), sorted."""
    total = sum(PHILLY_MIX.values())
    exact = {g: c * n_jobs / total for g, c in PHILLY_MIX.items()}
    counts = {g: int(np.floor(x)) for g, x in exact.items()}
    short = n_jobs - sum(counts.values())
    for g in sorted(exact, key=lambda g: (counts[g] - exact[g], g))[:short]:
        counts[g] += 1
    return [g for g in sorted(counts) for _ in range(counts[g])]


def _calibrate(
    rng: np.random.Generator,
    name: str,
    servers: list[int],
    sizes: list[int],
    iterations: np.ndarray,
    tau_nominal: np.ndarray,
    comm_share: np.ndarray,
    overhead_share: float,
    physics: _Physics,
    reference: str | tuple[int, int] = "worst",
) -> tuple[Cluster, list[Job]]:
    """Choose xi2 and per-job (m, M, dF, dB) so that each job's best tau is tau_nominal and,
    at the ``reference`` point ("worst": its most servers and min(J, max O_s) contenders;
    (n, p): n servers and p contenders), contention adds comm_share * tau and the overhead
    at most overhead_share * tau."""
    n_servers = len(servers)
    cum = np.cumsum(sorted(servers, reverse=True))
    g = np.array(sizes)
    n_min = np.searchsorted(cum, g, side="left") + 1
    n_max = np.minimum(g, n_servers)
    if isinstance(reference, tuple):  # a split over n servers (or the job's fewest, if more), p contenders
        n_ref, p_ref = np.clip(np.maximum(reference[0], n_min), None, n_max), reference[1]
    else:  # the worst case: the most servers, the most contenders
        n_ref, p_ref = n_max, min(len(sizes), max(servers))
    spread = n_ref - n_min
    xi2 = overhead_share * float(np.min(tau_nominal[spread > 0] / spread[spread > 0])) if (spread > 0).any() else 0.0
    f_ref = float(linear_contention(max(1.0, physics.xi1 * p_ref), physics.alpha))
    cluster = Cluster(
        servers=tuple(servers),
        b_inter=physics.b_inter,
        b_intra=physics.b_intra,
        reduce_speed=physics.reduce_speed,
        alpha=physics.alpha,
        xi1=physics.xi1,
        xi2=xi2,
        contention=LINEAR,
    )
    jobs = []
    for j, size in enumerate(sizes):
        frac = (size - 1) / size
        tau = float(tau_nominal[j])
        best_bw = physics.b_intra if n_min[j] == 1 else physics.b_inter
        growth = f_ref / physics.b_inter - 1.0 / best_bw  # ring-time growth per unit of 2 m frac
        if size >= 2 and n_max[j] >= 2 and growth > 1e-12:
            # worst minus best ring time = comm_share * tau ...
            m = comm_share[j] * tau / (2.0 * frac * growth)
            # ... unless the best ring time would then eat more than half of tau
            m = min(m, 0.5 * (tau - xi2 * n_min[j]) / (2.0 * frac / best_bw + frac / physics.reduce_speed))
        else:  # a job that sees no contention: a small gradient for realism
            m = float(rng.uniform(0.001, 0.01)) if size >= 2 else 0.0
        compute = tau - 2.0 * m * frac / best_bw - m * frac / physics.reduce_speed - xi2 * n_min[j]
        batch = int(rng.choice([16, 32, 64, 128]))
        jobs.append(
            Job(
                name=f"{name}j{j}",
                gpus=size,
                iterations=int(iterations[j]),
                grad_size=m,
                batch_size=batch,
                fwd_time=0.25 * compute / batch,
                bwd_time=0.75 * compute,
            )
        )
    return cluster, jobs


def paper(
    seed: int,
    jobs: int = 160,
    servers: int = 20,
    horizon: int | None = None,
    budget: float | None = None,
    preset: str = "paper-literal",
    calibration: Calibration | None = None,
    server_gpus: int | None = None,
) -> Instance:
    """The paper's setting (section 6) with ``jobs`` jobs on ``servers`` servers.

    ``server_gpus`` (G): a homogeneous cluster, every server with G GPUs, in place of the
    paper's drawn sizes. The draws are the same as without it (the server sizes are still
    drawn, then replaced), so a seed gives the same jobs (sizes, iterations, best
    per-iteration times) on either cluster; only the calibration, which depends on the
    cluster, differs. The job sizes are not cut to the cluster: a job larger than all its
    GPUs is an error naming the job (the paper's 16- and 32-GPU jobs must then span servers).

    ``preset`` names a reading of the paper's "within 15%" (:mod:`rar_opt.instances.calibration`;
    every preset uses the same draws for a seed); ``calibration`` gives one directly.
    ``budget`` is the knob of the default reading: the share contention and overhead may
    add at worst (the paper: 15%), split evenly between the two. The contention part is
    capped so that the uncontended ring time stays below half of tau.
    """
    _check_counts(jobs=jobs, servers=servers)
    if server_gpus is not None and (not is_int(server_gpus) or not 1 <= server_gpus <= MAX_SERVER_GPUS):
        raise ParameterError(
            f"must be an integer in 1..{MAX_SERVER_GPUS} (GPUs per server), got {server_gpus!r}", where="server_gpus"
        )
    cal = calibration if calibration is not None else preset_calibration(preset)
    if budget is not None:  # the knob of the literal reading: halves of a total share
        check_budget(budget)
        cal = Calibration(cal.reference, budget / 2.0, budget / 2.0)
    rng = np.random.default_rng(seed)
    capacity = [int(o) for o in rng.choice(PAPER_SERVER_SIZES, size=servers)]
    if server_gpus is not None:  # drawn above all the same: the draws that follow stay the seed's
        capacity = [server_gpus] * servers
    n_gpus = sum(capacity)
    sizes = [g if server_gpus is not None else min(g, n_gpus) for g in philly_sizes(jobs)]
    rng.shuffle(sizes)
    if server_gpus is not None and max(sizes) > n_gpus:
        j = int(np.argmax(sizes))
        raise ParameterError(
            f"= {servers} servers of {server_gpus} GPUs ({n_gpus} GPUs) cannot hold job j{j} of {sizes[j]} GPUs; "
            "give more servers or more GPUs per server",
            where="servers",
        )
    iterations = rng.integers(1000, 6000, size=jobs, endpoint=True)
    lo = np.maximum(0.01, 50.0 / iterations)
    hi = np.minimum(0.05, 300.0 / iterations)
    tau = rng.uniform(lo, hi)
    if cal.size_link == "sorted":  # the same draws, the longest runs to the largest jobs
        by_duration = np.argsort(iterations * tau, kind="stable")
        by_size = np.argsort(np.array(sizes), kind="stable")
        iterations, tau = iterations.copy(), tau.copy()
        iterations[by_size], tau[by_size] = iterations[by_duration], tau[by_duration]
    shares = np.full(jobs, cal.contention)
    cluster, job_list = _calibrate(
        rng, "", capacity, sizes, iterations, tau, shares, cal.overhead, _Physics(), cal.reference
    )
    named = next((n for n, c in PRESETS.items() if c == cal), None)
    literal = cal.reference == "worst" and cal.contention == cal.overhead and cal.size_link == "none"
    params: dict[str, Any]
    if literal:  # the literal reading, described as it always was (its output is unchanged)
        described = f"contention {cal.contention:.1%} + overhead {cal.overhead:.1%}"
        params = {"jobs": jobs, "servers": servers, "budget": cal.contention + cal.overhead}
    else:
        described = cal.label
        params = {"jobs": jobs, "servers": servers, "calibration": cal.to_dict()}
    meta = {
        "generator": "paper",
        "seed": seed,
        "params": params,
        "calibration": f"best tau in [0.01, 0.05], F*tau in [50, 300], {described}",
        "known_optimum": None,
    }
    if named is not None and named != "paper-literal":
        meta["preset"] = named
    if server_gpus is not None:  # recorded only when given: the paper's output stays as it was
        params["server_gpus"] = server_gpus
    # the name carries every parameter that differs from the paper's setting
    horizon = 1200 if horizon is None else horizon
    if named is not None:
        variant = PRESET_SUFFIX[named]
    elif literal:
        variant = f"-b{cal.contention + cal.overhead:g}"
    else:
        variant = "-custom"
    suffix = variant + ("" if server_gpus is None else f"-g{server_gpus}")
    suffix += "" if horizon == 1200 else f"-T{horizon}"
    return Instance(
        name=f"paper-{jobs}x{servers}-s{seed}{suffix}",
        horizon=horizon,
        cluster=cluster,
        jobs=tuple(job_list),
        meta=meta,
    )


def check_budget(budget: Any) -> None:
    """The paper generator's ``budget`` (the literal reading's worst-case contention +
    overhead share) in (0, 2], else a ParameterError naming it."""
    if not (is_real(budget) and 0.0 < budget <= 2.0):
        raise ParameterError(
            f"must be in (0, 2] (half of it is contention, half overhead), got {budget!r}", where="budget"
        )


def _check_counts(**counts: Any) -> None:
    """Each count of a generator (``jobs``, ``servers``) at least 1, else a ParameterError naming it."""
    for name, value in counts.items():
        if not is_int(value) or value < 1:
            raise ParameterError(f"must be an integer >= 1, got {value!r}", where=name)


def tiny(seed: int, jobs: int | None = None, servers: int | None = None) -> Instance:
    """A small instance (2-6 jobs, 1-4 servers of 1-4 GPUs) that exact solvers can prove."""
    rng = np.random.default_rng(seed)
    n_jobs = int(rng.integers(2, 6, endpoint=True)) if jobs is None else jobs
    n_servers = int(rng.integers(1, 4, endpoint=True)) if servers is None else servers
    _check_counts(jobs=n_jobs, servers=n_servers)
    capacity = [int(o) for o in rng.integers(1, 4, size=n_servers, endpoint=True)]
    n_gpus = sum(capacity)
    sizes = [int(g) for g in rng.integers(1, min(n_gpus, 4), size=n_jobs, endpoint=True)]
    iterations = rng.integers(2, 10, size=n_jobs, endpoint=True)
    tau = rng.uniform(0.12, 0.45, size=n_jobs)
    share = rng.uniform(0.3, 1.0, size=n_jobs)
    xi_over = 0.05  # per-server overhead budget, as a share of tau
    share = np.minimum(share, (0.9 - tau * (1.0 + xi_over)) / tau)
    physics = _Physics(alpha=float(np.round(rng.uniform(0.0, 1.0), 3)))
    cluster, job_list = _calibrate(rng, "", capacity, sizes, iterations, tau, share, xi_over, physics)
    probe = Instance(name="probe", horizon=10**9, cluster=cluster, jobs=tuple(job_list))
    meta = {
        "generator": "tiny",
        "seed": seed,
        "params": {"jobs": n_jobs, "servers": n_servers},
        "known_optimum": None,
    }
    # the name carries the parameters: JOBSxSERVERS and the seed. tiny(3) and tiny(3, jobs=4,
    # servers=2) differ even when the first happens to draw 4 jobs and 2 servers (the draws
    # that follow are not the same), so a size the seed drew is marked: tiny(3) is
    # tiny-4x2-s3-drawn, tiny(3, jobs=4) tiny-4x2-s3-drawn-servers, tiny(3, jobs=4,
    # servers=2) tiny-4x2-s3 (the library's names)
    drawn = {(True, True): "-drawn", (True, False): "-drawn-jobs", (False, True): "-drawn-servers"}
    name = f"tiny-{n_jobs}x{n_servers}-s{seed}{drawn.get((jobs is None, servers is None), '')}"
    return Instance(
        name=name,
        horizon=int(probe.bounds.rho_max.sum()),
        cluster=cluster,
        jobs=tuple(job_list),
        meta=meta,
    )


def nested_cluster(instance: Instance, servers: int) -> Instance:
    """The same jobs on the first ``servers`` servers of ``instance``'s cluster (the same
    physics): a servers sweep then compares server counts on one job draw."""
    cluster = instance.cluster
    if not 1 <= servers <= cluster.num_servers:
        raise InputError(f"= {servers} must be in 1..{cluster.num_servers}", where="servers")
    smaller = dataclasses.replace(cluster, servers=cluster.servers[:servers])
    meta = {**instance.meta, "nested": {"from_servers": cluster.num_servers, "servers": servers}}
    name = instance.name.replace(f"x{cluster.num_servers}-", f"x{servers}of{cluster.num_servers}-", 1)
    return Instance(name, instance.horizon, smaller, instance.jobs, meta)


def with_arrivals(instance: Instance, load: float, seed: int, burst: float | None = None) -> Instance:
    """``instance`` with Poisson arrivals at the offered ``load`` (docs/arrivals.md).

    The load is offered GPU-time per GPU per slot: job j brings G_j rho_min_j GPU-slots of
    work, so jobs arrive at the rate lambda = load N / mean_j(G_j rho_min_j) per slot. The
    jobs arrive in a random order, with exponential gaps of mean 1 / lambda; the first at
    slot 0 (the cluster starts busy) and each release is its arrival time rounded down.
    The horizon grows by the last release, so a horizon that held every job before still
    does after its arrival. Seeded: the same instance, load and seed give the same releases
    (a stream of its own, apart from the generator's draws).

    With ``burst`` (b >= 1) the jobs arrive in batches (a batch Poisson process): batches
    at the rate lambda / b with exponential gaps, each of a geometric number of jobs with
    mean b, every job of a batch released in the same slot. The job rate, and so the
    offered load, stays the target; counts per window are 2b - 1 times as dispersed as
    Poisson counts. The batch sizes come from a third stream, so ``burst=1`` gives exactly
    the releases of plain Poisson arrivals."""
    if not is_real(load) or not np.isfinite(load) or load <= 0:
        raise ParameterError(
            f"must be a finite number > 0 (offered GPU-time per GPU per slot), got {load!r}", where="load"
        )
    if burst is not None and (not is_real(burst) or not np.isfinite(burst) or not 1 <= burst <= MAX_BURST):
        raise ParameterError(
            f"must be a number in [1, {MAX_BURST:g}] (mean jobs per arrival batch), got {burst!r}", where="burst"
        )
    rng = np.random.default_rng([seed, 23])
    work = instance.arrays.gpus * instance.bounds.rho_min
    rate = float(load) * instance.cluster.num_gpus / float(work.mean())
    if not rate * INT_LIMIT >= 1:  # a mean gap between arrivals beyond any horizon
        raise ParameterError(
            f"= {load!r} is so low that one arrival takes {1 / rate if rate else float('inf'):.3g} slots "
            f"on average, beyond the {INT_LIMIT:,} slots a horizon may have",
            where="load",
        )
    order = rng.permutation(instance.num_jobs)
    arrivals: dict[str, Any] = {"process": "poisson", "load": float(load), "seed": seed, "rate": rate}
    if burst is None:
        times = np.concatenate([[0.0], np.cumsum(rng.exponential(1.0 / rate, instance.num_jobs - 1))])
    else:
        sizes = batch_sizes(np.random.default_rng([seed, 23, 1]), instance.num_jobs, float(burst))
        starts = np.concatenate([[0.0], np.cumsum(rng.exponential(float(burst) / rate, len(sizes) - 1))])
        times = np.repeat(starts, sizes)
        arrivals |= {"process": "batch-poisson", "burst": float(burst), "batches": len(sizes)}
    if not times[-1] + instance.horizon <= INT_LIMIT:  # the horizon grows by the last release
        raise ParameterError(
            f"= {load!r} is so low that the arrivals spread over {times[-1]:.3g} slots, beyond the "
            f"{INT_LIMIT:,} slots a horizon may have",
            where="load",
        )
    releases = np.zeros(instance.num_jobs, dtype=np.int64)
    releases[order] = np.floor(times).astype(np.int64)
    jobs = tuple(dataclasses.replace(job, release=int(r)) for job, r in zip(instance.jobs, releases, strict=True))
    meta = {**instance.meta, "arrivals": arrivals}
    name = f"{instance.name}-L{float(load):g}" + ("" if burst is None else f"-B{float(burst):g}")
    return Instance(name, instance.horizon + int(releases.max()), instance.cluster, jobs, meta)


MAX_BURST = 1e9
"""The largest mean batch size ``burst`` takes: far above any job count, and small enough
for numpy's geometric draws (at 1e19 they overflowed and crashed the process)."""


def batch_sizes(rng: np.random.Generator, n: int, mean: float) -> np.ndarray:
    """Geometric batch sizes (on 1, 2, ..., mean ``mean``) that sum to ``n`` jobs: drawn
    until they cover n, the last one cut to what is left."""
    sizes = rng.geometric(1.0 / mean, size=n)  # n batches of at least one job always cover n
    count = int(np.searchsorted(np.cumsum(sizes), n)) + 1
    sizes = sizes[:count].copy()
    sizes[-1] -= int(sizes.sum()) - n
    return sizes


GENERATORS: dict[str, Callable[..., Instance]] = {
    "paper": paper,
    "paper-8gpu": functools.partial(paper, server_gpus=8),
    "paper-4gpu": functools.partial(paper, server_gpus=4),
    "tiny": tiny,
}
"""The generators by name. ``paper-8gpu`` and ``paper-4gpu``: the paper's jobs (the same
draws as ``paper`` for a seed) on homogeneous servers of 8 or 4 GPUs (``paper`` with
``server_gpus``), where the 16- and 32-GPU jobs must span servers and contend."""


def takes_paper_knobs(kind: str) -> bool:
    """Whether generator ``kind`` is the paper generator (plain or with a fixed
    ``server_gpus``), and so takes its presets and calibration knobs."""
    made = GENERATORS.get(kind)
    return made is paper or (isinstance(made, functools.partial) and made.func is paper)


GENERATOR_RANGES: dict[str, dict[str, Any]] = {
    "tiny": {
        "jobs": [2, 6],
        "servers": [1, 4],
        "gpus_per_server": [1, 4],
        "job_gpus": [1, 4],
        "iterations": [2, 10],
        "tau_slots": [0.12, 0.45],
        "contention_share": [0.3, 1.0],
        "overhead_share": 0.05,
        "alpha": [0.0, 1.0],
    },
    "paper": {
        "jobs": 160,
        "servers": 20,
        "gpus_per_server": list(PAPER_SERVER_SIZES),
        "job_gpus": sorted(PHILLY_MIX),
        "iterations": [1000, 6000],
        "tau_slots": [0.01, 0.05],
        "execution_slots": [50, 300],
        "contention_plus_overhead": 0.15,
        "horizon": 1200,
    },
}
"""What each generator draws, and from which ranges (defaults where a size is given):
recorded beside a study's results (``study report``) so that a reader can tell the family."""
GENERATOR_RANGES["paper-8gpu"] = {**GENERATOR_RANGES["paper"], "gpus_per_server": [8]}
GENERATOR_RANGES["paper-4gpu"] = {**GENERATOR_RANGES["paper"], "gpus_per_server": [4]}


def generate(
    kind: str,
    seed: int,
    *,
    jobs: int | None = None,
    servers: int | None = None,
    budget: float | None = None,
    preset: str | None = None,
    reference: str | tuple[int, int] | None = None,
    contention_share: float | None = None,
    overhead_share: float | None = None,
    size_link: str | None = None,
    load: float | None = None,
    burst: float | None = None,
    server_gpus: int | None = None,
) -> Instance:
    """Generate an instance of ``kind`` (a name of :data:`GENERATORS`) from ``seed``.

    With ``load``, the jobs arrive over time: Poisson arrivals at that offered load
    (:func:`with_arrivals`, seeded by ``seed``), in batches of mean size ``burst`` when
    given; without ``load`` every job is there at slot 0 (and ``burst`` is refused).

    The paper generator's calibration: a ``preset`` (default ``paper-literal``), or its
    knobs (``reference``, ``contention_share``, ``overhead_share``) changed from it, or the
    ``budget`` of the literal reading; ``server_gpus``: every server with that many GPUs
    (``paper`` only: ``paper-8gpu`` and ``paper-4gpu`` fix it). The tiny generator takes
    none of them."""
    if burst is not None and load is None:
        raise ParameterError("needs a load: bursts are a way of arriving over time", where="burst")
    if kind not in GENERATORS:
        raise InputError(f"unknown generator {kind!r} (known: {', '.join(sorted(GENERATORS))})")
    if problem := seed_problem(seed, GENERATOR_MAX_SEED):
        raise ParameterError(problem, where="seed")
    knobs = {"budget": budget, "preset": preset, "reference": reference}
    knobs |= {"contention_share": contention_share, "overhead_share": overhead_share, "size_link": size_link}
    if server_gpus is not None and kind != "paper":
        raise ParameterError(
            f"only the paper generator takes it, not {kind} (paper-8gpu and paper-4gpu fix it)", where="server_gpus"
        )
    given = [k for k, v in knobs.items() if v is not None]
    if not takes_paper_knobs(kind) and given:
        raise ParameterError(f"only the paper generator takes it, not {kind}", where=given[0])
    kwargs: dict[str, Any] = {
        k: v
        for k, v in (("jobs", jobs), ("servers", servers), ("budget", budget), ("server_gpus", server_gpus))
        if v is not None
    }
    if takes_paper_knobs(kind):
        base = preset_calibration(preset or "paper-literal")
        if any(v is not None for v in (reference, contention_share, overhead_share, size_link)):
            kwargs["calibration"] = Calibration(
                base.reference if reference is None else reference,
                base.contention if contention_share is None else contention_share,
                base.overhead if overhead_share is None else overhead_share,
                base.size_link if size_link is None else size_link,
            )
        elif preset is not None:
            kwargs["preset"] = preset
    instance = GENERATORS[kind](seed, **kwargs)
    return instance if load is None else with_arrivals(instance, load, seed, burst)
