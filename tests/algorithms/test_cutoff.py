"""A trial stopped because it cannot beat the incumbent (``run_list``'s cutoff) is one whose
full run fails or reaches the cutoff; a trial not stopped is the full run, unchanged. The
policies that use the cutoff choose the same theta, kappa and schedule as without it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rar_opt.algorithms.baselines import BisectedParams, first_fit_policy, job_order
from rar_opt.algorithms.engine import (
    Failed,
    Incumbent,
    ThetaCache,
    Trial,
    bisect_theta,
    first_fit_rule,
    least_loaded_rule,
    run_list,
)
from rar_opt.algorithms.estimators import estimate
from rar_opt.algorithms.orders import fewest_gpus_first
from rar_opt.algorithms.sjf_bco import SjfBcoParams, sjf_bco
from rar_opt.instances.generate import paper


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), theta_share=st.floats(0.05, 1.0), cut_share=st.floats(0.3, 1.5))
def test_a_stopped_trial_could_not_have_beaten_the_cutoff(seed: int, theta_share: float, cut_share: float) -> None:
    inst = paper(seed, jobs=40, servers=5)
    weight = estimate(inst, "best").weight
    order = fewest_gpus_first(inst)
    theta = max(1.0, theta_share * inst.horizon)
    full = run_list(inst, order, least_loaded_rule, theta, weight, eligible_only=True)
    span = full.makespan if isinstance(full, Trial) else inst.horizon
    cutoff = Incumbent(max(1.0, round(cut_share * span)))
    cut = run_list(inst, order, least_loaded_rule, theta, weight, eligible_only=True, cutoff=cutoff)
    if isinstance(cut, Failed) and cut.pruned:
        assert isinstance(full, Failed) or full.makespan >= cutoff.makespan
    else:  # not stopped: the full run, decision for decision
        assert type(cut) is type(full)
        if isinstance(cut, Trial):
            assert isinstance(full, Trial)
            assert np.array_equal(cut.starts, full.starts) and cut.gpu_ids == full.gpu_ids
            assert cut.makespan == full.makespan


def test_the_cutoff_is_reached_and_cuts() -> None:
    # the test above would pass if nothing were ever stopped: here a cutoff below the full
    # run's makespan must stop it, before the last job
    inst = paper(3, jobs=60, servers=6)
    weight = estimate(inst, "best").weight
    order = fewest_gpus_first(inst)
    full = run_list(inst, order, least_loaded_rule, inst.horizon, weight, eligible_only=True)
    assert isinstance(full, Trial)
    cut = run_list(
        inst, order, least_loaded_rule, inst.horizon, weight, eligible_only=True, cutoff=Incumbent(full.makespan // 2)
    )
    assert isinstance(cut, Failed) and cut.pruned and cut.at < inst.num_jobs


@pytest.mark.parametrize("seed", [0, 4, 9])
def test_policies_choose_alike_with_and_without_the_cutoff(seed: int) -> None:
    inst = paper(seed, jobs=80, servers=10)
    a, b = sjf_bco(inst), sjf_bco(inst, SjfBcoParams(reuse_trials=False))  # reuse off: no cutoff
    assert np.array_equal(a.schedule.start_array, b.schedule.start_array)
    assert a.schedule.gpu_ids == b.schedule.gpu_ids
    assert (a.theta, a.kappa, a.max_load) == (b.theta, b.kappa, b.max_load)
    assert a.trials <= b.trials
    # ff: the policy (cutoff under the paper rule) against the same bisection run without it
    params = BisectedParams()
    weight = estimate(inst, params.estimator).weight
    order = job_order(inst, params.order)
    plain = ThetaCache(lambda th: run_list(inst, order, first_fit_rule, th, weight))
    trial, theta, _ = bisect_theta(inst.horizon, plain, "paper")
    ff = first_fit_policy(inst, params)
    assert trial is not None and ff.theta == theta
    assert np.array_equal(ff.schedule.start_array, trial.starts)
    assert ff.trials <= plain.runs


def test_a_pruned_result_answers_only_cutoffs_no_higher_than_its_own() -> None:
    # a trial stopped at cutoff 50 has a makespan of at least 50: it answers a question
    # asked with cutoff 50 or less at any theta of its range, but not one with cutoff 60
    # (where a smaller kappa's longer trial, say, lets it matter again)
    runs: list[float] = []

    def run(theta: float, cutoff: Incumbent | None = None) -> Failed:
        runs.append(theta)
        bar = np.inf if cutoff is None else cutoff.makespan
        return Failed(10.0, 20.0, at=3, pruned=bar < np.inf, bar=bar)

    cache = ThetaCache(run)
    first = cache.result(12.0, bar=50.0, cutoff=Incumbent(50.0))
    assert first.pruned and first.bar == 50.0
    assert cache.lookup(15.0, 50.0) is first and cache.lookup(15.0, 40.0) is first
    assert cache.lookup(15.0) is first  # no cutoff given: cutoffs only fall (baselines)
    assert cache.lookup(15.0, 60.0) is None and cache.lookup(25.0, 10.0) is None
    again = cache.result(15.0, bar=60.0, cutoff=Incumbent(60.0))
    assert again is not first and again.bar == 60.0 and runs == [12.0, 15.0]
