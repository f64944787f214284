"""Hypothesis strategies and deliberately naive reference code for the tests.

The reference here (``reference_*``) steps slot by slot and writes the time model, the
execution-time bounds and the constraints out from docs/model.md sections 2-3 in plain
Python, independently of :mod:`rar_opt.cluster.timemodel`, :mod:`rar_opt.simulate` and
:mod:`rar_opt.check`, so that the package can be compared with it.

Strategies: ``tiny_instances`` (broad), ``micro_instances`` (brute-forceable),
``communication_heavy_instances`` (estimates and truth drift apart),
``contended_instances`` (heuristics and the optimum part ways), and schedules for them.
"""

from __future__ import annotations

import dataclasses
import math

from hypothesis import reject
from hypothesis import strategies as st

from rar_opt import Cluster, InputError, Instance, Job, Schedule, check
from rar_opt.instances.generate import tiny


def serial_horizon_instance(name: str, cluster: Cluster, jobs, max_horizon: int | None = None) -> Instance:
    """The instance with horizon = sum of worst execution times (running the jobs one after
    another always fits); hypothesis rejects jobs that could stall and too long horizons."""
    try:
        probe = Instance(name="probe", horizon=10**6, cluster=cluster, jobs=tuple(jobs))
    except InputError:  # a job that could stall: not a valid instance
        reject()
    horizon = int(probe.bounds.rho_max.sum())
    if max_horizon is not None and horizon > max_horizon:
        reject()
    return Instance(name=name, horizon=horizon, cluster=cluster, jobs=tuple(jobs))


@st.composite
def tiny_instances(draw: st.DrawFn, max_jobs: int = 6, max_servers: int = 4) -> Instance:
    """Tiny instances: from the ``tiny`` generator, or built field by field."""
    if draw(st.booleans()):
        seed = draw(st.integers(0, 10**6))
        jobs = draw(st.integers(2, max_jobs))
        servers = draw(st.integers(1, max_servers))
        return tiny(seed, jobs=jobs, servers=servers)
    servers = draw(st.lists(st.integers(1, 4), min_size=1, max_size=max_servers))
    cluster = Cluster(
        servers=tuple(servers),
        b_inter=draw(st.floats(0.5, 2.0)),
        b_intra=draw(st.floats(2.0, 20.0)),
        reduce_speed=draw(st.floats(10.0, 100.0)),
        alpha=draw(st.floats(0.0, 1.0)),
        xi1=draw(st.sampled_from([1.0, 0.5, 0.3])),
        xi2=draw(st.sampled_from([0.0, 0.01, 0.02])),
        contention=draw(st.sampled_from(["linear", "power"])),
    )
    n_jobs = draw(st.integers(1, max_jobs))
    jobs = []
    for j in range(n_jobs):
        jobs.append(
            Job(
                name=f"j{j}",
                gpus=draw(st.integers(1, min(sum(servers), 4))),
                iterations=draw(st.integers(1, 12)),
                grad_size=draw(st.floats(0.0, 0.02)),
                batch_size=draw(st.integers(1, 8)),
                fwd_time=draw(st.floats(0.0, 0.01)),
                bwd_time=draw(st.sampled_from([0.1, 0.125, 0.2, 0.25, 1 / 3, 0.3])),
            )
        )
    return serial_horizon_instance("h", cluster, jobs)


@st.composite
def placements(draw: st.DrawFn, instance: Instance, j: int) -> tuple[int, ...]:
    """A random gang placement of job j that fits the servers' capacities."""
    need = instance.jobs[j].gpus
    free = list(instance.cluster.servers)
    y = [0] * len(free)
    while need:
        s = draw(st.sampled_from([s for s in range(len(free)) if free[s] > 0]))
        take = draw(st.integers(1, min(need, free[s])))
        y[s] += take
        free[s] -= take
        need -= take
    return tuple(y)


@st.composite
def feasible_schedules(draw: st.DrawFn, instance: Instance) -> Schedule:
    """A random feasible schedule: jobs in random order, each at a random start that keeps
    the whole schedule feasible (falling back to "after everything so far", which always is)."""
    order = draw(st.permutations(range(instance.num_jobs)))
    starts = [0] * instance.num_jobs
    ys = [(0,) * instance.num_servers] * instance.num_jobs
    placed: list[int] = []
    makespan = 0  # of the jobs placed so far
    for j in order:
        ys[j] = draw(placements(instance, j))
        placed.append(j)
        sub = _restrict(instance, placed)
        for t in (draw(st.integers(0, makespan)), makespan):
            starts[j] = t
            report = check(sub, _restrict_schedule(sub, placed, starts, ys))
            if report.feasible:
                break
        else:  # unreachable: after everything placed so far always fits
            raise AssertionError("the fallback start was infeasible")
        makespan = int(report.result.completion.max())
    return Schedule.from_arrays(instance.name, starts, ys)


@st.composite
def arbitrary_schedules(draw: st.DrawFn, instance: Instance, max_start: int = 6) -> Schedule:
    """Gang placements that fit each server on their own, at random starts in 0..max_start:
    often over capacity, late or stalled when jobs overlap."""
    starts = [draw(st.integers(0, max_start)) for _ in range(instance.num_jobs)]
    ys = [draw(placements(instance, j)) for j in range(instance.num_jobs)]
    return Schedule.from_arrays(instance.name, starts, ys)


@st.composite
def instance_and_schedule(draw: st.DrawFn, feasible: bool = True) -> tuple[Instance, Schedule]:
    """A tiny instance with a feasible schedule, or with an arbitrary one."""
    inst = draw(tiny_instances())
    return inst, draw(feasible_schedules(inst) if feasible else arbitrary_schedules(inst))


def _restrict(instance: Instance, jobs: list[int]) -> Instance:
    return Instance(
        name=instance.name,
        horizon=instance.horizon,
        cluster=instance.cluster,
        jobs=tuple(instance.jobs[j] for j in jobs),
    )


def _restrict_schedule(sub: Instance, jobs: list[int], starts: list[int], ys: list) -> Schedule:
    return Schedule.from_arrays(sub.name, [starts[j] for j in jobs], [ys[j] for j in jobs])


# -- the naive reference ---------------------------------------------------------------
def reference_tau(instance: Instance, j: int, p: int, n: int) -> float:
    """eq. (7)-(8) for job j of ``instance``, written out by hand."""
    return reference_job_tau(instance.cluster, instance.jobs[j], p, n)


def reference_job_tau(c: Cluster, job: Job, p: int, n: int) -> float:
    """eq. (7)-(8) for one job on n servers at contention count p, written out by hand."""
    g = job.gpus
    if n >= 2:
        k = max(1.0, c.xi1 * p)
        f = k + c.alpha * (k - 1) if c.contention.name == "linear" else k ** (1 + c.alpha)
        bw = c.b_inter / f
    else:
        bw = c.b_intra
    comm = 2 * job.grad_size * (g - 1) / (g * bw)
    reduce = job.grad_size * (g - 1) / (g * c.reduce_speed)
    return comm + reduce + c.xi2 * n + job.fwd_time * job.batch_size + job.bwd_time


def reference_phi(tau: float) -> int:
    """eq. (9) with the tolerance model.md asks for: floor((1 / tau) (1 + 1e-9))."""
    return math.floor((1 / tau) * (1 + 1e-9))


def reference_spans(servers: tuple[int, ...], gpus: int) -> range:
    """The spans n a job of ``gpus`` GPUs can have: from the fewest servers that hold it
    (largest first) to min(G, S)."""
    total, n_min = 0, 0
    for o in sorted(servers, reverse=True):
        total, n_min = total + o, n_min + 1
        if total >= gpus:
            break
    return range(n_min, min(gpus, len(servers)) + 1)


def reference_rho_range(instance: Instance, j: int) -> tuple[int, int]:
    """(rho_min_j, rho_max_j): job j's fastest and slowest execution times over every span
    and contention level (p = 1 best, p = min(J, max O_s) worst; model.md section 3.7)."""
    c, job = instance.cluster, instance.jobs[j]
    p_worst = min(instance.num_jobs, max(c.servers))
    spans = reference_spans(c.servers, job.gpus)
    best = max(reference_phi(reference_job_tau(c, job, 1 if n >= 2 else 0, n)) for n in spans)
    worst = min(reference_phi(reference_job_tau(c, job, p_worst if n >= 2 else 0, n)) for n in spans)
    return -(-job.iterations // best), -(-job.iterations // worst)


def reference_simulate(instance: Instance, schedule: Schedule, max_slots: int = 10_000) -> dict:
    """Step slot by slot; returns completion times and per-slot iterations/contention."""
    n_jobs, n_servers = instance.num_jobs, instance.num_servers
    y = schedule.placement_array
    a = schedule.starts
    done = [0] * n_jobs
    completion = [-1] * n_jobs
    trace = {}
    t = min(a)
    while any(c < 0 for c in completion) and t < min(a) + max_slots:
        active = [j for j in range(n_jobs) if a[j] <= t and completion[j] < 0]
        split = {j: sum(1 for s in range(n_servers) if y[j][s] > 0) >= 2 for j in range(n_jobs)}
        cont = [sum(1 for j in active if split[j] and y[j][s] > 0) for s in range(n_servers)]
        its = [0] * n_jobs
        for j in active:
            servers = [s for s in range(n_servers) if y[j][s] > 0]
            p = max(cont[s] for s in servers) if split[j] else 0
            tau = reference_tau(instance, j, p, len(servers))
            its[j] = reference_phi(tau)
        for j in active:
            done[j] += its[j]
            if done[j] >= instance.jobs[j].iterations:
                completion[j] = t + 1
        trace[t] = (cont, its)
        t += 1
    return {"completion": completion, "trace": trace}


def reference_violations(instance: Instance, schedule: Schedule) -> set[str]:
    """The names of the constraints (model.md section 2) a schedule without GPU ids breaks,
    judged slot by slot from :func:`reference_simulate`."""
    a, y = schedule.starts, schedule.placements
    horizon, caps = instance.horizon, instance.cluster.servers
    completion = reference_simulate(instance, schedule)["completion"]
    names = set()
    for j, job in enumerate(instance.jobs):
        if not 0 <= a[j] < horizon:
            names.add("start_in_horizon")
        if a[j] < job.release:
            names.add("before_release")
        if min(y[j]) < 0:
            names.add("placement_nonnegative")
        if sum(y[j]) != job.gpus:
            names.add("gang_size")
        if completion[j] < 0:
            names.add("job_stalls")
        elif completion[j] > horizon:
            names.add("completion_in_horizon")
    # a job holds its GPUs from a_j through C_j - 1 (forever if it stalls)
    last = max(max(a), max(completion)) + 1
    for t in range(min(a), last + 1):
        running = [j for j in range(instance.num_jobs) if a[j] <= t and (completion[j] < 0 or t < completion[j])]
        for s, cap in enumerate(caps):
            if sum(max(y[j][s], 0) for j in running) > cap:
                names.add("server_capacity")
    return names


@st.composite
def _ranged_instances(
    draw: st.DrawFn,
    name: str,
    max_gpus: int,
    max_servers: int,
    b_intra: list[float],
    alpha: list[float],
    jobs: tuple[int, int],
    max_job: int,
    iterations: tuple[int, int],
    grad: list[float],
    bwd: list[float],
    max_horizon: int | None = None,
) -> Instance:
    """Small instances with the given ranges (b_inter = 1, C = 50, xi1 = 1)."""
    servers = tuple(draw(st.lists(st.integers(1, max_gpus), min_size=2, max_size=max_servers)))
    cluster = Cluster(
        servers=servers,
        b_inter=1.0,
        b_intra=draw(st.sampled_from(b_intra)),
        reduce_speed=50.0,
        alpha=draw(st.sampled_from(alpha)),
        xi1=1.0,
        xi2=draw(st.sampled_from([0.0, 0.02])),
    )
    job_list = tuple(
        Job(
            name=f"j{j}",
            gpus=draw(st.integers(1, min(sum(servers), max_job))),
            iterations=draw(st.integers(*iterations)),
            grad_size=draw(st.sampled_from(grad)),
            bwd_time=draw(st.sampled_from(bwd)),
        )
        for j in range(draw(st.integers(*jobs)))
    )
    return serial_horizon_instance(name, cluster, job_list, max_horizon=max_horizon)


@st.composite
def with_releases(draw: st.DrawFn, base: st.SearchStrategy[Instance], max_release: int = 3) -> Instance:
    """An instance of ``base`` whose jobs arrive at random slots 0..max_release (at least one
    job at slot 0, so that no instance is a shifted copy of another), with the horizon
    lengthened by the latest release: running the jobs one after another from the last
    arrival still fits."""
    inst = draw(base)
    releases = [draw(st.integers(0, max_release)) for _ in inst.jobs]
    releases[draw(st.integers(0, len(releases) - 1))] = 0
    jobs = tuple(dataclasses.replace(job, release=r) for job, r in zip(inst.jobs, releases, strict=True))
    return Instance(inst.name, inst.horizon + max(releases), inst.cluster, jobs, inst.meta)


def micro_instances() -> st.SearchStrategy[Instance]:
    """2-3 jobs on 1-3 small servers with execution times of a few slots: brute-forceable."""
    return _ranged_instances(
        "micro",
        3,
        3,
        [1.5, 4.0, 10.0],
        [0.0, 0.5, 1.0],
        (2, 3),
        3,
        (1, 8),
        [0.0, 0.02, 0.05, 0.08],
        [0.15, 0.2, 0.25, 1 / 3],
        max_horizon=12,
    )


def communication_heavy_instances() -> st.SearchStrategy[Instance]:
    """Small instances where communication dominates: estimates and truth drift apart."""
    return _ranged_instances(
        "heavy",
        4,
        4,
        [2.0, 10.0, 50.0],
        [0.0, 0.5, 1.0, 2.0],
        (2, 5),
        4,
        (5, 30),
        [0.1, 0.05, 0.02],
        [0.02, 0.05, 0.1],
    )


@st.composite
def contended_instances(
    draw: st.DrawFn,
    max_jobs: int = 5,
    max_servers: int = 3,
    max_horizon: int = 25,
    max_gpus: int = 3,
    max_cells: int = 240,
) -> Instance:
    """Instances on which the heuristics and the optimum part ways (for "OPT <= every
    heuristic" and Theorem 5; steer them with ``hypothesis.target``).

    The physics is drawn: xi1 below 1 (the clamp k = max(1, xi1 p)), linear and power
    contention, b_inter, b_intra, C, alpha, xi2. A multi-GPU job's gradient is a drawn
    share of the largest one that keeps its worst case (p = min(J, max O_s) contenders, any
    span) within one slot per iteration, so contention can cost it most of its speed.
    Two or three small servers and three to five jobs keep GPUs scarce, so starts, waits
    and placements matter. Iterations are drawn in units of the job's best iterations per
    slot. The horizon is the serial one (sum of worst execution times) capped at
    ``max_horizon`` and at ``max_cells`` job-server-slot cells (so that a MILP solve takes
    well under a second); it stays feasible because running the jobs one after another,
    each alone at its best span, takes sum_j rho_min_j slots, which is kept within the cap.
    Heuristics may end after such a horizon (they then say so, ``exceeds_horizon``).
    """
    servers = tuple(draw(st.lists(st.integers(1, max_gpus), min_size=2, max_size=max_servers)))
    cluster = Cluster(
        servers=servers,
        b_inter=draw(st.sampled_from([1.0, 0.5, 2.0])),
        b_intra=draw(st.sampled_from([10.0, 2.0, 50.0])),
        reduce_speed=draw(st.sampled_from([50.0, 10.0])),
        alpha=draw(st.sampled_from([1.0, 0.0, 0.5, 2.0])),
        xi1=draw(st.sampled_from([1.0, 0.75, 0.5, 0.3])),
        xi2=draw(st.sampled_from([0.0, 0.02, 0.05])),
        contention=draw(st.sampled_from(["linear", "power"])),
    )
    n_jobs = draw(st.integers(3, max_jobs))
    p_worst = min(n_jobs, max(servers))
    cap = min(max_horizon, max_cells // (n_jobs * len(servers)))  # keeps the MILP solve short
    per_job = max(1, cap // n_jobs)
    jobs = []
    for j in range(n_jobs):
        job = Job(
            name=f"j{j}",
            gpus=draw(st.integers(1, min(sum(servers), 4))),
            iterations=1,
            batch_size=draw(st.sampled_from([1, 4])),
            fwd_time=draw(st.sampled_from([0.0, 0.01])),
            bwd_time=draw(st.sampled_from([0.1, 0.05, 0.2, 0.25, 1 / 3])),
        )
        spans = reference_spans(servers, job.gpus)
        worst = [(p_worst if n >= 2 else 0, n) for n in spans]
        if job.gpus > 1:  # tau is affine in the gradient size: the largest that cannot stall
            unit = dataclasses.replace(job, grad_size=1.0)
            grad_max = min(
                (1 - reference_job_tau(cluster, job, p, n))
                / (reference_job_tau(cluster, unit, p, n) - reference_job_tau(cluster, job, p, n))
                for p, n in worst
            )
            share = draw(st.sampled_from([0.95, 0.8, 0.6, 0.3, 0.0]))
            job = dataclasses.replace(job, grad_size=share * grad_max)
        phi_best = max(reference_phi(reference_job_tau(cluster, job, 1 if n >= 2 else 0, n)) for n in spans)
        slots = draw(st.integers(1, per_job))
        iterations = draw(st.integers((slots - 1) * phi_best + 1, slots * phi_best))
        jobs.append(dataclasses.replace(job, iterations=iterations))
    try:
        probe = Instance(name="probe", horizon=10**6, cluster=cluster, jobs=tuple(jobs))
    except InputError:  # a job that could stall (rounding at the edge): not a valid instance
        reject()
    if probe.bounds.rho_min.sum() > cap:
        reject()
    horizon = min(int(probe.bounds.rho_max.sum()), cap)
    return Instance(name="contended", horizon=horizon, cluster=cluster, jobs=tuple(jobs))
