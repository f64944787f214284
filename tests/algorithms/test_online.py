"""Policies under releases (docs/arrivals.md): offline list scheduling waits for a job's
release, online policies decide at arrivals and completions without seeing later jobs."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from rar_opt import Cluster, InputError, Instance, Job, check
from rar_opt.algorithms import POLICIES, run_policy
from rar_opt.algorithms.engine import least_loaded_rule
from rar_opt.algorithms.online import run_online

from ..helpers import BEYOND_HORIZON
from ..strategies import reference_violations, tiny_instances, with_releases

ONLINE = sorted(name for name in POLICIES if name.startswith("online-"))


@settings(max_examples=40, deadline=None)
@given(with_releases(tiny_instances(max_jobs=5), max_release=6), st.sampled_from(sorted(POLICIES)))
def test_no_policy_starts_a_job_before_its_release(inst: Instance, name: str) -> None:
    result = run_policy(inst, name)
    allowed = BEYOND_HORIZON if result.exceeds_horizon else frozenset()
    assert check(inst, result.schedule).names() <= allowed
    assert reference_violations(inst, result.schedule) <= allowed
    assert all(a >= job.release for a, job in zip(result.schedule.starts, inst.jobs, strict=True))


def _changed_future(inst: Instance, k: int) -> Instance:
    """Job k with other data (one GPU, more iterations): what an online policy must not see
    before job k arrives. The horizon grows so that the instance stays valid."""
    job = inst.jobs[k]
    jobs = list(inst.jobs)
    jobs[k] = dataclasses.replace(job, gpus=1, iterations=job.iterations + 7, bwd_time=0.05)
    return Instance(inst.name, inst.horizon * 2 + 40, inst.cluster, tuple(jobs))


@settings(max_examples=40, deadline=None)
@given(with_releases(tiny_instances(max_jobs=6), max_release=8), st.sampled_from(ONLINE))
def test_online_decisions_before_an_arrival_ignore_the_arriving_job(inst: Instance, name: str) -> None:
    k = int(np.argmax(inst.releases))
    arrival = int(inst.releases[k])
    assume(arrival > 0)
    first = run_policy(inst, name).schedule
    second = run_policy(_changed_future(inst, k), name).schedule
    before = [j for j in range(inst.num_jobs) if first.starts[j] < arrival]
    assert before == [j for j in range(inst.num_jobs) if second.starts[j] < arrival]
    for j in before:  # the same start on the same GPUs
        assert (first.starts[j], first.gpu_ids[j]) == (second.starts[j], second.gpu_ids[j])


def test_the_no_peek_test_catches_a_policy_that_peeks() -> None:
    # a priority that reads a later job (here: jobs of the size of the last job go first)
    # changes the decisions at slot 0 when that job changes; the comparison above sees it,
    # while the same loop with an honest priority passes it
    cluster = Cluster(servers=(2,))
    jobs = tuple(
        Job(f"j{i}", g, 20, bwd_time=0.1, release=r) for i, (g, r) in enumerate([(1, 0), (2, 0), (1, 0), (2, 5)])
    )
    inst = Instance("peek", 40, cluster, jobs)

    def peeking(instance: Instance) -> list[int]:
        last = int(instance.arrays.gpus[-1])
        priority = np.abs(instance.arrays.gpus - last).astype(float)
        return run_online(instance, priority, least_loaded_rule).starts.tolist()

    honest = run_online(inst, inst.arrays.gpus.astype(float), least_loaded_rule).starts.tolist()
    changed = _changed_future(inst, 3)
    assert run_online(changed, changed.arrays.gpus.astype(float), least_loaded_rule).starts[:3].tolist() == honest[:3]
    assert peeking(changed)[:3] != peeking(inst)[:3]


def test_online_by_hand_a_late_job_waits_for_its_arrival() -> None:
    # one 2-GPU server: a (2 slots) at 0, b arrives at 5; c (released 1) runs when a is done
    fast = Job("a", 2, 20, bwd_time=0.1)
    jobs = (fast, dataclasses.replace(fast, name="b", release=5), dataclasses.replace(fast, name="c", release=1))
    inst = Instance("late", 20, Cluster(servers=(2,)), jobs)
    for name in ONLINE:
        sched = run_policy(inst, name).schedule
        assert sched.starts == (0, 5, 2), name
    # offline list scheduling takes jobs by release: c before b, so b still starts at 5
    assert run_policy(inst, "ff").schedule.starts == (0, 5, 2)


def test_online_without_backfill_blocks_behind_the_head() -> None:
    # servers (2,): a (1 GPU, long) at 0, b (2 GPUs) and c (1 GPU) at 1: first come first
    # served; with backfill c runs beside a while b waits, without it c waits behind b
    a = Job("a", 1, 100, bwd_time=0.1)
    b = Job("b", 2, 10, bwd_time=0.1, release=1)
    c = Job("c", 1, 10, bwd_time=0.1, release=1)
    inst = Instance("blocking", 60, Cluster(servers=(2,)), (a, b, c))
    assert run_policy(inst, "online-ff").schedule.starts == (0, 10, 1)
    assert run_policy(inst, "online-ff", backfill=False).schedule.starts == (0, 10, 11)


def test_online_params_are_validated() -> None:
    inst = Instance("x", 10, Cluster(servers=(2,)), (Job("a", 1, 10, bwd_time=0.1),))
    with pytest.raises(InputError, match="take 'best' only"):
        run_policy(inst, "online-ff", estimator="worst")
    with pytest.raises(InputError, match="kappa"):
        run_policy(inst, "online-sjf-bco", kappa=0)
    with pytest.raises(InputError, match="backfill"):
        run_policy(inst, "online-ll", backfill="yes")
