"""Every registered policy: feasible schedules (judged by the reference), determinism, parameters, provenance."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rar_opt import Cluster, Instance, Job, check
from rar_opt.algorithms import POLICIES, run_policy
from rar_opt.errors import InputError
from rar_opt.instances.generate import paper

from ..helpers import BEYOND_HORIZON
from ..strategies import reference_simulate, reference_violations, tiny_instances

POLICY_NAMES = sorted(POLICIES)


@given(tiny_instances(), st.sampled_from(POLICY_NAMES), st.integers(0, 1000))
def test_every_policy_returns_a_feasible_schedule(inst: Instance, name: str, seed: int) -> None:
    result = run_policy(inst, name, seed=seed)
    sched = result.schedule
    # judged independently: only a schedule marked as ending after T may end after T
    allowed = BEYOND_HORIZON if result.exceeds_horizon else frozenset()
    assert reference_violations(inst, sched) <= allowed
    assert check(inst, sched).names() <= allowed  # and its GPU ids are consistent and exclusive
    if not result.exceeds_horizon:
        assert max(reference_simulate(inst, sched)["completion"]) <= inst.horizon
    assert result.policy == name == sched.meta["method"]
    assert sched.gpu_ids is not None and all(
        len(ids) == job.gpus for ids, job in zip(sched.gpu_ids, inst.jobs, strict=True)
    )


def test_a_horizon_no_trial_fits_gives_a_marked_schedule(wait_beats_start: Instance) -> None:
    # T = 7: the optimum (6) fits, but every list heuristic starts both jobs at once (8
    # slots); pack and backfill never run two split jobs on one server at once: they find the 6
    short = dataclasses.replace(wait_beats_start, horizon=7)
    for name in ("pack", "backfill"):
        packed = run_policy(short, name)
        assert not packed.exceeds_horizon and max(reference_simulate(short, packed.schedule)["completion"]) == 6
    too_short = dataclasses.replace(wait_beats_start, horizon=5)  # below the optimum: nothing fits
    assert run_policy(too_short, "pack").exceeds_horizon
    assert reference_violations(too_short, run_policy(too_short, "pack").schedule) == {"completion_in_horizon"}
    for name in [n for n in POLICY_NAMES if n not in ("pack", "backfill")]:
        result = run_policy(short, name)
        assert result.exceeds_horizon and result.schedule.meta["exceeds_horizon"] is True
        assert max(reference_simulate(short, result.schedule)["completion"]) == 8
        assert reference_violations(short, result.schedule) == {"completion_in_horizon"}
    assert run_policy(short, "sjf-bco").theta is None
    assert run_policy(wait_beats_start, "sjf-bco").exceeds_horizon is False


def test_a_schedule_marked_beyond_the_horizon_ends_after_it() -> None:
    # rand's trial at theta = T splits the 2-GPU job (26 slots > T = 25); its fallback
    # "without limits" reuses the advanced random generator, draws the 3-GPU server for it
    # and ends at 4, yet the result says the schedule ends after T
    cluster = Cluster(servers=(1, 3), b_inter=1.0, b_intra=50.0, reduce_speed=50.0, alpha=1.0, xi1=0.5, xi2=0.0)
    jobs = (
        Job("j0", gpus=2, iterations=26, grad_size=0.42537313432835827, bwd_time=0.1),
        Job("j1", gpus=1, iterations=1, bwd_time=0.1),
        Job("j2", gpus=1, iterations=1, bwd_time=0.1),
    )
    inst = Instance("rand-beyond", 25, cluster, jobs)
    result = run_policy(inst, "rand")
    assert result.exceeds_horizon == (max(reference_simulate(inst, result.schedule)["completion"]) > inst.horizon)


@given(tiny_instances(max_jobs=5), st.integers(0, 2**31 - 1))
def test_same_seed_same_schedule(inst: Instance, seed: int) -> None:
    for name in POLICY_NAMES:
        assert run_policy(inst, name, seed=seed) == run_policy(inst, name, seed=seed)


def test_rand_depends_on_its_seed() -> None:
    inst = paper(0, jobs=40, servers=6)
    assert len({run_policy(inst, "rand", seed=s).schedule.placements for s in range(4)}) > 1


def test_a_seed_drawn_with_is_recorded_and_one_never_drawn_is_not() -> None:
    """meta.seed names the seed a schedule's random draws came from (docs/formats.md): the
    random tie-break of ls draws, its index tie-break and lpt draw nothing."""
    inst = paper(0, jobs=40, servers=6)
    assert run_policy(inst, "ls", tie_break="random", seed=5).record()["seed"] == 5
    assert run_policy(inst, "rand", seed=5).record()["seed"] == 5
    assert run_policy(inst, "ls", seed=5).record()["seed"] is None
    assert run_policy(inst, "lpt").record()["seed"] is None


def test_bad_params_are_input_errors(paper_instance: Instance) -> None:
    with pytest.raises(InputError, match="lambda"):
        run_policy(paper_instance, "sjf-bco", lam=0.5)
    with pytest.raises(InputError, match="unknown policy"):
        run_policy(paper_instance, "nope")
    with pytest.raises(InputError, match="seed"):
        run_policy(paper_instance, "rand", seed=-1)


def test_every_params_class_validates_its_own_fields(paper_instance: Instance) -> None:
    for name in POLICY_NAMES:
        with pytest.raises(InputError, match="unknown estimator 'nope'"):
            run_policy(paper_instance, name, estimator="nope")
    seeded = ["backfill", "improve", "ls", "pack", "rand"]  # ls: its tie-break
    assert [n for n in POLICY_NAMES if POLICIES[n].seeded] == seeded
    with pytest.raises(InputError, match=r"ff does not take kappa \(its options: bisection, estimator, order\)"):
        run_policy(paper_instance, "ff", kappa=3)
    bad = (("ls", "tie_break", "coin"), ("rand", "mode", "racks"), ("ff", "order", "longest"))
    bad += (
        ("pack", "iterations", -1),
        ("pack", "jitter", 1.5),
        ("pack", "time_limit", 0),
        ("pack", "justify", 1),
        ("pack", "split", "never"),
    )
    for name, option, value in bad:
        with pytest.raises(InputError, match=option):
            run_policy(paper_instance, name, **{option: value})


def test_meta_is_read_only_provenance(paper_instance: Instance) -> None:
    result = run_policy(paper_instance, "sjf-bco")
    assert result.schedule.meta["theta"] == result.theta and result.schedule.meta["kappa"] == result.kappa
    with pytest.raises(TypeError, match="read-only"):
        result.schedule.meta["theta"] = 999
    with pytest.raises(TypeError, match="read-only"):
        result.schedule.meta["params"]["lam"] = 2.0  # nested objects too
    with pytest.raises(TypeError, match="read-only"):
        paper_instance.meta["seed"] = 999
