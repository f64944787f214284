"""Symmetry breaking for the CP-SAT models: identical servers and identical jobs.

On the paper's star network a server is nothing but its GPU count O_s, and a job nothing
but its data (G_j, F_j, gradient, batch, compute times, weight). Two schedules that differ
by a permutation of equal servers, or by swapping two equal jobs, have the same true
completion times up to that relabelling, so the same makespan. The CP-SAT models may
therefore keep one schedule of each such orbit:

* **equal jobs** j < j' (same data): a_j <= a_j'.
* **equal servers** s < s' (same O_s): the first job placed on s comes no later in job
  order than the first job placed on s' (an unused server counts as "after every job").

Both hold together for some optimal schedule: sort each class of equal jobs by start (a
relabelling of jobs), then sort each class of equal servers by their first job (a
relabelling of servers, which leaves starts alone). :func:`canonical` does exactly this to
a schedule, so a hint or a warm start always satisfies the rows (docs/exactness.md).

A third symmetry serves only the question "does a schedule end by slot H?" (a probe):
**time reversal**. Without releases, a schedule that ends by H, mirrored (each job starts
at H - C_j on the same servers), ends by H too: every slot of the mirror sees the active
set of its mirror slot, so each job gets the same iterations in the same number of slots,
and a job that finishes early only lowers the others' contention. A job k that is in no
class of equal jobs then satisfies a_k + C_k <= H in the schedule or in its mirror, and
the relabellings above leave k's times alone: :func:`add_reversal` adds that row.
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any

import numpy as np

from rar_opt.instance import Instance
from rar_opt.schedule import Schedule


def job_key(job: Any) -> tuple[Any, ...]:
    """A job's data without its name: two jobs with the same key are interchangeable."""
    return tuple(getattr(job, f.name) for f in dataclasses.fields(job) if f.name != "name")


def job_classes(instance: Instance) -> list[list[int]]:
    """Classes of two or more jobs whose data are equal (job order within a class)."""
    groups: dict[tuple[Any, ...], list[int]] = {}
    for j, job in enumerate(instance.jobs):
        groups.setdefault(job_key(job), []).append(j)
    return [g for g in groups.values() if len(g) >= 2]


def server_classes(instance: Instance) -> list[list[int]]:
    """Classes of two or more servers with the same GPU count (on the star network only,
    given or implied: on racks or links servers differ by where they sit, and no class is
    returned)."""
    if instance.time_model.links is not None:
        return []
    groups: dict[int, list[int]] = {}
    for s, gpus in enumerate(instance.cluster.servers):
        groups.setdefault(int(gpus), []).append(s)
    return [g for g in groups.values() if len(g) >= 2]


def add_rows(model: Any, instance: Instance, start: list[Any], used: list[list[Any]]) -> int:
    """Add the two symmetry-breaking families to a CP-SAT model whose job starts are
    ``start[j]`` and whose "job j uses server s" literals are ``used[j][s]``; the number of
    ordering rows added."""
    n_jobs, rows = instance.num_jobs, 0
    for group in job_classes(instance):
        for j, k in itertools.pairwise(group):
            model.add(start[j] <= start[k])
            rows += 1
    for group in server_classes(instance):
        first = {}
        for s in group:
            # n_jobs - (n_jobs - j) z_js is j when job j uses s, else n_jobs; the least is s's first job
            first[s] = model.new_int_var(0, n_jobs, f"first{s}")
            model.add_min_equality(first[s], [n_jobs - (n_jobs - j) * used[j][s] for j in range(n_jobs)])
        for s, r in itertools.pairwise(group):
            model.add(first[s] <= first[r])
            rows += 1
    return rows


def reversal_job(instance: Instance) -> int | None:
    """The job of the time-reversal row (module docstring), or None where it is not valid
    (a job with a release) or no job is alone in its class.

    Any job alone in its class would do; we take the one of median area G_j rho_min_j
    (ties by index). Measured on ``heavy-16x8x100-s1`` at H = 45 (docs/exactness.md): the
    median job cut the conflicts of the refutation by 39-47% over four seeds; the largest
    job (which has two possible starts) left them as they were (144k against 143k)."""
    if any(job.release > 0 for job in instance.jobs):
        return None
    paired = {j for group in job_classes(instance) for j in group}
    alone = [j for j in range(instance.num_jobs) if j not in paired]
    if not alone:
        return None
    area = instance.arrays.gpus.astype(np.int64) * instance.bounds.rho_min.astype(np.int64)
    ranked = sorted(alone, key=lambda j: (int(area[j]), j))
    return ranked[len(ranked) // 2]


def add_reversal(model: Any, instance: Instance, start: list[Any], end: list[Any], horizon: int) -> int | None:
    """Add the time-reversal row a_k + C_k <= ``horizon`` to a CP-SAT model whose only
    question is "does a schedule end by ``horizon``?" (module docstring); it is not valid
    with an objective. The job k, or None when no row is added (:func:`reversal_job`)."""
    k = reversal_job(instance)
    if k is not None:
        model.add(start[k] + end[k] <= horizon)
    return k


def canonical(instance: Instance, schedule: Schedule) -> Schedule:
    """The schedule of ``schedule``'s orbit that satisfies :func:`add_rows`: equal jobs
    relabelled in order of start, then equal servers in order of their first job."""
    starts = np.array(schedule.starts, dtype=np.int64).copy()
    y = np.array(schedule.placements, dtype=np.int64).copy()
    for group in job_classes(instance):
        order = sorted(group, key=lambda j: (starts[j], j))
        starts[group], y[group] = starts[order], y[order]
    n_jobs = instance.num_jobs
    for group in server_classes(instance):
        used = y[:, group] > 0
        first = [int(np.argmax(used[:, k])) if used[:, k].any() else n_jobs for k in range(len(group))]
        order = [group[k] for k in sorted(range(len(group)), key=lambda k: (first[k], k))]
        y[:, group] = y[:, order]
    return Schedule.from_arrays(schedule.instance, starts, y, meta=dict(schedule.meta))
