"""Symmetry breaking in the CP-SAT models: the canonical schedule of an orbit is as good and
satisfies the rows, and the models with the rows still find the true optimum on instances
full of equal jobs and equal servers."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from rar_opt import Cluster, Instance, Job, check
from rar_opt.formulations import symmetry
from rar_opt.solvers import Status, solve

from ..bruteforce import brute_force
from ..helpers import policy_makespans
from ..strategies import (
    communication_heavy_instances,
    feasible_schedules,
    micro_instances,
    serial_horizon_instance,
    tiny_instances,
)


@st.composite
def with_twins(
    draw: st.DrawFn,
    base: st.SearchStrategy[Instance],
    max_twins: int = 2,
    max_horizon: int | None = None,
    max_jobs: int | None = None,
) -> Instance:
    """An instance with some of its jobs repeated (equal data, new names), so that it has
    classes of equal jobs (servers of equal GPU counts are common in every strategy). With
    ``max_jobs``, the twins take the place of the last jobs rather than add to them;
    ``max_horizon`` and ``max_jobs`` keep it small enough for brute force."""
    inst = draw(base)
    jobs = list(inst.jobs)
    if max_jobs is not None:  # room for at least one twin
        max_twins = min(max_twins, max_jobs - 1)
        jobs = jobs[: max_jobs - max_twins]
    twins = draw(st.lists(st.integers(0, len(jobs) - 1), min_size=1, max_size=max_twins))
    for j in twins:
        jobs.append(dataclasses.replace(jobs[j], name=f"{jobs[j].name}-twin{len(jobs)}"))
    return serial_horizon_instance(inst.name, inst.cluster, jobs, max_horizon)


def _orbit_rows_hold(instance: Instance, starts: np.ndarray, y: np.ndarray) -> bool:
    for group in symmetry.job_classes(instance):
        if any(starts[j] > starts[k] for j, k in itertools.pairwise(group)):
            return False
    for group in symmetry.server_classes(instance):
        first = [int(np.argmax(y[:, s] > 0)) if (y[:, s] > 0).any() else instance.num_jobs for s in group]
        if first != sorted(first):
            return False
    return True


def test_classes_of_equal_jobs_and_servers() -> None:
    cluster = Cluster(servers=(2, 4, 2, 1, 4, 2))
    a, b = Job("a", gpus=2, iterations=5, grad_size=0.01), Job("b", gpus=2, iterations=6, grad_size=0.01)
    inst = Instance("sym", 60, cluster, (a, b, dataclasses.replace(a, name="a2"), dataclasses.replace(a, name="a3")))
    assert symmetry.job_classes(inst) == [[0, 2, 3]]
    assert symmetry.server_classes(inst) == [[0, 2, 5], [1, 4]]


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_the_canonical_schedule_is_as_good_and_satisfies_the_rows(data: st.DataObject) -> None:
    inst = data.draw(with_twins(tiny_instances()))
    schedule = data.draw(feasible_schedules(inst))
    same = symmetry.canonical(inst, schedule)
    before, after = check(inst, schedule).result, check(inst, same).result
    assert after.makespan == before.makespan
    assert sorted(after.completion.tolist()) == sorted(before.completion.tolist())  # a relabelling
    assert _orbit_rows_hold(inst, np.array(same.starts), np.array(same.placements))


@settings(max_examples=20, deadline=None)
@given(with_twins(micro_instances(), max_twins=1, max_horizon=12, max_jobs=3))
def test_cpsat_with_symmetry_rows_equals_brute_force_on_twins(inst: Instance) -> None:
    bf = brute_force(inst, min(policy_makespans(inst).values()))
    assert bf is not None
    res = solve(inst, "cpsat", warm_start="sjf-bco")
    assert res.status == Status.OPTIMAL and res.makespan == bf[0]
    assert _orbit_rows_hold(inst, np.array(res.schedule.starts), np.array(res.schedule.placements))
    for method in ("decompose", "auto"):
        assert solve(inst, method).makespan == bf[0]


def _mirror(inst: Instance, schedule, horizon: int):
    """``schedule`` mirrored within ``horizon`` slots: each job starts at horizon - C_j."""
    completion = check(inst, schedule).result.completion
    starts = [horizon - int(c) for c in completion]
    return dataclasses.replace(schedule, starts=tuple(starts))


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_the_mirror_of_a_schedule_ends_by_the_same_slot(data: st.DataObject) -> None:
    # the lemma of the time-reversal row: mirrored within H, a schedule still ends by H and
    # a_j + C_j goes to at most 2H - (a_j + C_j), so a job past the middle comes before it
    inst = data.draw(st.one_of(with_twins(tiny_instances()), communication_heavy_instances()))
    schedule = data.draw(feasible_schedules(inst))
    before = check(inst, schedule)
    assert before.feasible
    horizon = data.draw(st.integers(before.result.makespan, inst.horizon))
    mirror = _mirror(inst, schedule, horizon)
    after = check(inst, mirror)
    assert after.feasible and after.result.makespan <= horizon
    for j in range(inst.num_jobs):
        ends = int(before.result.completion[j]) + schedule.starts[j]
        assert mirror.starts[j] + int(after.result.completion[j]) <= 2 * horizon - ends


def test_the_reversal_job_is_alone_in_its_class_and_needs_no_releases() -> None:
    cluster = Cluster(servers=(2, 4))
    times = {"grad_size": 0.01, "fwd_time": 0.1, "bwd_time": 0.1}
    a, b = Job("a", gpus=2, iterations=5, **times), Job("b", gpus=1, iterations=6, **times)
    c = Job("c", gpus=4, iterations=9, **times)
    twins = (a, dataclasses.replace(a, name="a2"))
    inst = Instance("rev", 60, cluster, (*twins, b, c))
    k = symmetry.reversal_job(inst)
    assert k in (2, 3) and k not in {j for g in symmetry.job_classes(inst) for j in g}
    area = inst.arrays.gpus * inst.bounds.rho_min
    assert k == max((2, 3), key=lambda j: (int(area[j]), j))  # the upper median of two
    assert symmetry.reversal_job(Instance("twins", 60, cluster, twins)) is None  # every job has a twin
    late = dataclasses.replace(b, release=1)
    assert symmetry.reversal_job(Instance("late", 60, cluster, (*twins, late, c))) is None  # releases
