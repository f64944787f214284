"""SJF-BCO (Alg. 1-3): its loads, its kappa loop and trial reuse (exact shortcuts), its bisection rules."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rar_opt import Instance, check
from rar_opt.algorithms import SjfBcoParams, sjf_bco
from rar_opt.algorithms.estimators import ESTIMATORS
from rar_opt.instances.generate import paper

from ..helpers import BEYOND_HORIZON
from ..strategies import reference_rho_range, reference_violations, tiny_instances


def reference_weights(inst: Instance, estimator: str) -> list[float]:
    """docs/algorithms.md section 6 from the reference execution-time ranges: rho_hat is
    rho_min, rho_max or their geometric mean; u = max(1, max_j rho_hat_j / rho_min_j);
    every GPU of job j is charged rho_hat_j / u."""
    rho = [reference_rho_range(inst, j) for j in range(inst.num_jobs)]
    rho_hat = {
        "best": [lo for lo, _ in rho],
        "worst": [hi for _, hi in rho],
        "geometric": [math.sqrt(lo * hi) for lo, hi in rho],
    }[estimator]
    u = max(1.0, max(h / lo for h, (lo, _) in zip(rho_hat, rho, strict=True)))
    return [h / u for h in rho_hat]


@given(tiny_instances(), st.sampled_from(sorted(ESTIMATORS)), st.sampled_from(["paper", "tightest"]))
def test_loads_are_the_charged_estimates_and_respect_theta(inst: Instance, est: str, rule: str) -> None:
    run = sjf_bco(inst, SjfBcoParams(estimator=est, bisection=rule))
    w = reference_weights(inst, est)
    loads: Counter = Counter()
    for j, ids in enumerate(run.schedule.gpu_ids):
        for g in ids:
            loads[g] += w[j]
    assert run.max_load == pytest.approx(max(loads.values()))
    if not run.exceeds_horizon:
        assert run.max_load <= run.theta + 1e-9


@given(
    tiny_instances(),
    st.sampled_from(["printed", "packing"]),
    st.sampled_from(sorted(ESTIMATORS)),
    st.sampled_from(["paper", "tightest"]),
)
def test_sjf_bco_variants_are_feasible(inst: Instance, rule: str, est: str, bisection: str) -> None:
    run = sjf_bco(inst, SjfBcoParams(small_rule=rule, estimator=est, bisection=bisection))
    assert reference_violations(inst, run.schedule) <= (BEYOND_HORIZON if run.exceeds_horizon else set())


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


def test_paper_instance_run_as_documented(paper_instance: Instance) -> None:
    # docs/algorithms.md section 2.1 and 2.3: theta 600, largest load 326 (paper rule),
    # theta 326 (tightest); 10 trials run for 66 (theta, kappa) pairs
    run = sjf_bco(paper_instance)
    assert (run.theta, math.ceil(run.max_load), run.trials, run.trials_requested) == (600, 326, 10, 66)
    tight = sjf_bco(paper_instance, SjfBcoParams(bisection="tightest"))
    assert tight.theta == 326 and tight.theta - 1 < tight.max_load <= tight.theta


def test_jobs_start_in_list_order(paper_instance: Instance) -> None:
    sched = sjf_bco(paper_instance)
    order = np.argsort(paper_instance.arrays.gpus, kind="stable")
    assert np.all(np.diff(np.asarray(sched.schedule.starts)[order]) >= 0)


def test_too_short_horizon_gives_a_marked_schedule(paper_instance: Instance) -> None:
    import dataclasses

    short = dataclasses.replace(paper_instance, horizon=int(paper_instance.bounds.rho_min.max()))
    run = sjf_bco(short)
    assert run.exceeds_horizon and run.theta is None
    assert run.schedule.meta["exceeds_horizon"] is True
    assert check(short, run.schedule).names() == {"completion_in_horizon"}  # feasible but for T
