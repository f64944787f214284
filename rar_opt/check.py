"""The schedule checker: every violated constraint, by name (docs/model.md section 2).

Constraint names (stable; tests and users may rely on them):

* ``start_in_horizon``      0 <= a_j <= T - 1
* ``before_release``        a_j >= r_j (a job never starts before it arrives; docs/arrivals.md)
* ``placement_nonnegative`` y_js >= 0 (the Schedule type already guarantees integers)
* ``gang_size``             sum_s y_js = G_j                                  (1)
* ``server_capacity``       GPUs in use on server s in slot t <= O_s          (2)
* ``completion_in_horizon`` C_j <= T (the job completes by the end of the horizon)
* ``job_stalls``            the job makes no progress and never completes
* ``gpu_ids``               ids name existing GPUs of the servers in y_j, match y_j in
                            number per server, and do not repeat within a job
* ``gpu_exclusive``         no GPU id is used by two jobs active in the same slot

No-preemption and no-migration (3), (4) hold by construction: a schedule gives one start
and one placement per job, held until completion.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from rar_opt._placements import SparseRows
from rar_opt.instance import Instance
from rar_opt.schedule import Schedule
from rar_opt.simulate import SimResult, simulate


@dataclass(frozen=True)
class Violation:
    """One violated constraint: its name, where it happens, and a readable message."""

    constraint: str
    message: str
    jobs: tuple[int, ...] = ()
    server: int | None = None
    slot: int | None = None

    def __str__(self) -> str:
        return f"{self.constraint}: {self.message}"


@dataclass(frozen=True)
class CheckReport:
    """The checker's verdict, with the simulation it was based on."""

    violations: tuple[Violation, ...]
    result: SimResult

    @property
    def feasible(self) -> bool:
        """Whether no constraint is violated."""
        return not self.violations

    def names(self) -> set[str]:
        """The names of the violated constraints (``gang_size``, ``server_capacity``, ...)."""
        return {v.constraint for v in self.violations}


def check(instance: Instance, schedule: Schedule) -> CheckReport:
    """Check ``schedule`` against every constraint of ``instance``; never stops early.
    Works on the placements' nonzero entries (no dense J x S matrix)."""
    result = simulate(instance, schedule)
    a = schedule.start_array
    rows = schedule.sparse
    entry_job = rows.jobs()
    gangs = np.bincount(entry_job, weights=rows.counts, minlength=instance.num_jobs).astype(np.int64)
    need = instance.arrays.gpus
    horizon = instance.horizon
    release = instance.releases
    out: list[Violation] = []
    for j in range(instance.num_jobs):
        if not 0 <= a[j] <= horizon - 1:
            out.append(Violation("start_in_horizon", f"job {j} starts at {a[j]}, outside 0..{horizon - 1}", (j,)))
        if a[j] < release[j]:
            out.append(
                Violation(
                    "before_release",
                    f"job {j} starts at {a[j]}, before its release {release[j]}",
                    (j,),
                    None,
                    int(a[j]),
                )
            )
        servers, counts = rows.row_entries(j)
        for s, c in zip(servers[counts < 0].tolist(), counts[counts < 0].tolist(), strict=True):
            out.append(Violation("placement_nonnegative", f"job {j} has y = {c} on server {s}", (j,), int(s)))
        gang = int(gangs[j])
        wanted = int(need[j])
        if gang != wanted:
            out.append(Violation("gang_size", f"job {j} is placed on {gang} GPUs, needs {wanted}", (j,)))
        if result.stalled[j]:
            out.append(Violation("job_stalls", f"job {j} makes no progress from slot {a[j]} on", (j,)))
        elif result.completion[j] > horizon:
            out.append(
                Violation("completion_in_horizon", f"job {j} completes at {result.completion[j]} > T = {horizon}", (j,))
            )
    out += _capacity(instance, a, rows, entry_job, result)
    if schedule.gpu_ids is not None:
        out += _gpu_ids(instance, schedule, result)
    return CheckReport(tuple(out), result)


def _last_slot(result: SimResult) -> np.ndarray:
    """Last slot each job occupies its GPUs (stalled jobs: forever)."""
    return np.where(result.stalled, np.iinfo(np.int64).max, result.end_slot)


def _capacity(
    instance: Instance, a: np.ndarray, rows: SparseRows, entry_job: np.ndarray, result: SimResult
) -> list[Violation]:
    # usage only rises at a start, so checking at each distinct start slot suffices; per
    # slot, the GPUs of the active jobs' entries are summed per server
    cap = instance.cluster.capacity
    n_servers = len(cap)
    last = _last_slot(result)
    used = np.clip(rows.counts, 0, None)
    entry_start, entry_last = a[entry_job], last[entry_job]
    out = []
    for t in np.unique(a):
        live = (entry_start <= t) & (entry_last >= t)
        usage = np.bincount(rows.servers[live], weights=used[live], minlength=n_servers).astype(np.int64)
        for s in np.flatnonzero(usage > cap):
            on_s = live & (rows.servers == s) & (rows.counts > 0)
            jobs = tuple(sorted(int(j) for j in entry_job[on_s]))
            out.append(
                Violation(
                    "server_capacity",
                    f"server {s} has {usage[s]} GPUs in use at slot {t}, capacity {cap[s]} (jobs {list(jobs)})",
                    jobs,
                    int(s),
                    int(t),
                )
            )
    return out


def _gpu_ids(instance: Instance, schedule: Schedule, result: SimResult) -> list[Violation]:
    if _gpu_ids_hold(instance, schedule, result):  # the common case, in numpy
        return []
    return _gpu_id_violations(instance, schedule, result)


def _gpu_ids_hold(instance: Instance, schedule: Schedule, result: SimResult) -> bool:
    """Whether the ids break neither ``gpu_ids`` nor ``gpu_exclusive`` (the same rules as
    :func:`_gpu_id_violations`, which lists what breaks them), decided on flat arrays of
    (job, server, GPU): milliseconds where the loop over jobs takes a second at 16,000 jobs."""
    assert schedule.gpu_ids is not None
    cap = np.asarray(instance.cluster.capacity, dtype=np.int64)
    n_servers = len(cap)
    per_job = [ids or () for ids in schedule.gpu_ids]
    sizes = np.fromiter((len(ids) for ids in per_job), dtype=np.int64, count=len(per_job))
    flat = np.fromiter(
        (v for ids in per_job for pair in ids for v in pair), dtype=np.int64, count=2 * int(sizes.sum())
    ).reshape(-1, 2)
    job = np.repeat(np.arange(len(per_job), dtype=np.int64), sizes)
    server, gpu = flat[:, 0], flat[:, 1]
    if np.any((server < 0) | (server >= n_servers)):
        return False
    if np.any((gpu < 0) | (gpu >= cap[server])):
        return False
    # within a job no id twice, and per server as many ids as the placement has GPUs
    gid = server * int(cap.max(initial=1)) + gpu  # one number per GPU of the cluster
    by_job = np.lexsort((gid, job))
    if np.any((job[by_job][1:] == job[by_job][:-1]) & (gid[by_job][1:] == gid[by_job][:-1])):
        return False
    named = job * n_servers + server
    rows = schedule.sparse
    with_ids = np.array([ids is not None for ids in schedule.gpu_ids])
    entry_job = rows.jobs()
    keep = with_ids[entry_job] & (rows.counts > 0)
    placed_key = entry_job[keep] * n_servers + rows.servers[keep]
    order = np.argsort(placed_key, kind="stable")
    keys, counts = np.unique(named, return_counts=True)
    if not (np.array_equal(keys, placed_key[order]) and np.array_equal(counts, rows.counts[keep][order])):
        return False
    # no GPU held by two jobs at once: per id, by start, each job ends before the next starts
    a, last = schedule.start_array, _last_slot(result)
    by = np.lexsort((a[job], gid))
    same = gid[by][1:] == gid[by][:-1]
    return not np.any(same & (a[job[by]][1:] <= last[job[by]][:-1]))


def _gpu_id_violations(instance: Instance, schedule: Schedule, result: SimResult) -> list[Violation]:
    """Every ``gpu_ids`` and ``gpu_exclusive`` violation, job by job."""
    cap = instance.cluster.capacity
    rows = schedule.sparse
    assert schedule.gpu_ids is not None
    out = []
    for j, ids in enumerate(schedule.gpu_ids):
        if ids is None:
            continue
        for s, g in ids:
            if not (0 <= s < len(cap) and 0 <= g < cap[s]):
                out.append(Violation("gpu_ids", f"job {j} names GPU ({s}, {g}), which does not exist", (j,)))
        repeated = [gid for gid, count in Counter(ids).items() if count > 1]
        if repeated:
            out.append(Violation("gpu_ids", f"job {j} names GPU {repeated[0]} more than once", (j,)))
        per_server = Counter(s for s, _ in ids)
        servers, counts = rows.row_entries(j)
        placed = {int(s): max(int(c), 0) for s, c in zip(servers.tolist(), counts.tolist(), strict=True)}
        for s in sorted(set(per_server) | set(placed)):
            if not 0 <= s < len(cap):
                continue  # named above as a GPU that does not exist
            if per_server.get(s, 0) != placed.get(s, 0):
                out.append(
                    Violation(
                        "gpu_ids",
                        f"job {j} names {per_server.get(s, 0)} GPUs on server {s}, "
                        f"its placement has {placed.get(s, 0)}",
                        (j,),
                        s,
                    )
                )
    a = schedule.start_array
    last = _last_slot(result)
    owners: dict[tuple[int, int], list[int]] = {}
    for j, ids in enumerate(schedule.gpu_ids):
        for gid in set(ids or ()):
            owners.setdefault(gid, []).append(j)
    for gid, jobs in owners.items():
        for i, j in enumerate(jobs):
            for k in jobs[i + 1 :]:
                if a[j] <= last[k] and a[k] <= last[j]:
                    t = int(max(a[j], a[k]))
                    out.append(
                        Violation(
                            "gpu_exclusive", f"GPU {gid} is used by jobs {j} and {k} in slot {t}", (j, k), gid[0], t
                        )
                    )
    return out
