from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rar_opt import Instance, check
from rar_opt.algorithms import POLICIES, SjfBcoParams, run_policy, sjf_bco
from rar_opt.algorithms.estimators import ESTIMATORS, estimate
from rar_opt.errors import InputError, NoScheduleError
from rar_opt.generate import paper

from .strategies import tiny_instances

POLICY_NAMES = sorted(POLICIES)


@given(tiny_instances(), st.sampled_from(POLICY_NAMES), st.integers(0, 1000))
def test_every_policy_returns_a_feasible_schedule(inst: Instance, name: str, seed: int) -> None:
    result = run_policy(inst, name, seed=seed)
    sched = result.schedule
    report = check(inst, sched)
    assert report.feasible, report.violations
    assert result.policy == name == sched.meta["method"]
    assert check(inst, sched).result.makespan <= inst.horizon


@given(tiny_instances(), st.sampled_from(["printed", "packing"]), st.sampled_from(sorted(ESTIMATORS)))
def test_sjf_bco_variants_are_feasible(inst: Instance, rule: str, est: str) -> None:
    sched = sjf_bco(inst, SjfBcoParams(small_rule=rule, estimator=est)).schedule
    assert check(inst, sched).feasible


@given(tiny_instances(max_jobs=5), st.integers(0, 2**31 - 1))
def test_same_seed_same_schedule(inst: Instance, seed: int) -> None:
    for name in POLICY_NAMES:
        assert run_policy(inst, name, seed=seed) == run_policy(inst, name, seed=seed)


def test_rand_depends_on_its_seed() -> None:
    inst = paper(0, jobs=40, servers=6)
    assert len({run_policy(inst, "rand", seed=s).schedule.placements for s in range(4)}) > 1


@given(tiny_instances())
def test_kappa_over_distinct_sizes_equals_the_full_loop(inst: Instance) -> None:
    fast = sjf_bco(inst, SjfBcoParams(kappas="distinct"))
    full = sjf_bco(inst, SjfBcoParams(kappas="all"))
    assert (fast.schedule.starts, fast.schedule.placements, fast.schedule.gpu_ids) == (
        full.schedule.starts,
        full.schedule.placements,
        full.schedule.gpu_ids,
    )
    assert fast.theta == full.theta


def test_kappa_equivalence_at_paper_scale() -> None:
    inst = paper(3, jobs=48, servers=8)
    fast = sjf_bco(inst, SjfBcoParams(kappas="distinct"))
    full = sjf_bco(inst, SjfBcoParams(kappas="all"))
    assert (fast.schedule.starts, fast.schedule.placements) == (full.schedule.starts, full.schedule.placements)
    assert full.trials_requested > fast.trials_requested


@given(tiny_instances())
def test_reusing_trials_changes_nothing(inst: Instance) -> None:
    reused = sjf_bco(inst, SjfBcoParams(reuse_trials=True))
    fresh = sjf_bco(inst, SjfBcoParams(reuse_trials=False))
    assert (reused.schedule.starts, reused.schedule.placements, reused.schedule.gpu_ids) == (
        fresh.schedule.starts,
        fresh.schedule.placements,
        fresh.schedule.gpu_ids,
    )
    assert reused.theta == fresh.theta and reused.kappa == fresh.kappa
    assert reused.trials <= fresh.trials


def test_reusing_trials_at_paper_scale(paper_instance: Instance) -> None:
    reused = sjf_bco(paper_instance, SjfBcoParams(reuse_trials=True))
    fresh = sjf_bco(paper_instance, SjfBcoParams(reuse_trials=False))
    assert (reused.schedule.starts, reused.schedule.placements) == (fresh.schedule.starts, fresh.schedule.placements)
    assert reused.trials < fresh.trials == fresh.trials_requested


@given(tiny_instances())
def test_sjf_bco_loads_respect_theta(inst: Instance) -> None:
    sched = sjf_bco(inst)
    assert sched.max_load <= sched.theta + 1e-9
    # the loads are the estimates charged: every GPU of job j got rho_hat_j / u
    w = estimate(inst).weight
    per_gpu: dict[tuple[int, int], float] = {}
    for j, ids in enumerate(sched.schedule.gpu_ids):
        for g in ids:
            per_gpu[g] = per_gpu.get(g, 0.0) + w[j]
    assert max(per_gpu.values()) == pytest.approx(sched.max_load)


def test_jobs_start_in_list_order(paper_instance: Instance) -> None:
    sched = sjf_bco(paper_instance)
    order = np.argsort(paper_instance.arrays.gpus, kind="stable")
    assert np.all(np.diff(np.asarray(sched.schedule.starts)[order]) >= 0)


def test_bad_params_are_input_errors(paper_instance: Instance) -> None:
    with pytest.raises(InputError, match="lambda"):
        run_policy(paper_instance, "sjf-bco", lam=0.5)
    with pytest.raises(InputError, match="unknown policy"):
        run_policy(paper_instance, "nope")
    with pytest.raises(InputError, match="seed"):
        run_policy(paper_instance, "rand", seed=-1)


def test_too_short_horizon_is_reported(paper_instance: Instance) -> None:
    import dataclasses

    short = dataclasses.replace(paper_instance, horizon=int(paper_instance.bounds.rho_min.max()))
    with pytest.raises(NoScheduleError, match="within T"):
        sjf_bco(short)


@given(st.lists(st.booleans(), min_size=1, max_size=60), st.sampled_from(["paper", "tightest"]))
def test_bisection_rules_on_any_feasibility_pattern(pattern: list[bool], rule: str) -> None:
    # feasibility in theta need not be monotone; makespans are arbitrary but deterministic
    from rar_opt.algorithms.engine import Trial, bisect_theta

    def attempt(theta: int) -> Trial | None:
        if not pattern[theta - 1]:
            return None
        z = np.zeros(1, dtype=np.int64)
        return Trial(z, z.reshape(1, 1), ((),), z, makespan=(theta * 7919) % 13 + 1, max_load=0.0)

    trial, theta, tried = bisect_theta(len(pattern), attempt, rule)
    assert tried <= len(pattern).bit_length() + 1
    if trial is None:
        assert theta is None
        return
    assert pattern[theta - 1]
    if rule == "tightest":  # the theta just below the answer was tried and failed
        assert theta == 1 or not pattern[theta - 2]


@given(tiny_instances())
def test_tightest_bisection_is_feasible_and_reported(inst: Instance) -> None:
    sched = sjf_bco(inst, SjfBcoParams(bisection="tightest"))
    assert check(inst, sched.schedule).feasible
    assert sched.params.bisection == "tightest"
    assert sched.max_load <= sched.theta + 1e-9


def test_every_params_class_validates_its_own_fields(paper_instance: Instance) -> None:
    for name in POLICY_NAMES:
        with pytest.raises(InputError, match="unknown estimator 'nope'"):
            run_policy(paper_instance, name, estimator="nope")
    assert [n for n in POLICY_NAMES if POLICIES[n].seeded] == ["rand"]
    with pytest.raises(InputError, match=r"ff does not take kappa \(its options: estimator\)"):
        run_policy(paper_instance, "ff", kappa=3)


def test_meta_is_read_only_provenance(paper_instance: Instance) -> None:
    result = run_policy(paper_instance, "sjf-bco")
    assert result.schedule.meta["theta"] == result.theta and result.schedule.meta["kappa"] == result.kappa
    with pytest.raises(TypeError, match="read-only"):
        result.schedule.meta["theta"] = 999
    with pytest.raises(TypeError, match="read-only"):
        result.schedule.meta["params"]["lam"] = 2.0  # nested objects too
    with pytest.raises(TypeError, match="read-only"):
        paper_instance.meta["seed"] = 999
