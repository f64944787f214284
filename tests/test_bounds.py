"""Lower bounds and Theorem 5's bound (rar_opt.bounds), against values derived by hand.

Execution times by hand (docs/model.md section 3), rho = ceil(F / floor(1 / tau)):

* wait-beats-start: each job 3 slots alone (tau 0.252), 8 when the two share a server
  (tau 0.652); n_g = 3.
* theorem5-p-cmax: five 1-GPU jobs (no ring), tau = dB: 1, 1, 1, 2 and 3 slots on one
  2-GPU server; n_g = 1.
* theorem5-list-order: four 1-GPU jobs, tau = dB + xi2: 1, 1, 1 and 2 slots on 3 GPUs.
* lemma3-underestimate (servers of 1 and 3 GPUs, p_worst = 2): job 0 (F 17) 2 slots on
  the 3-GPU server (tau 0.111), 5 split alone (tau 0.201), 9 split with the other
  (tau 0.351); job 1 (F 20) 1 slot at best, 2 at worst (tau 0.0702); n_g = 2.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given

from rar_opt import Instance
from rar_opt.algorithms import run_policy
from rar_opt.bounds import load_bound, lower_bounds, theorem5_bound, varphi_bound

from .helpers import Counterexample, policy_makespans
from .strategies import reference_rho_range, tiny_instances


def test_bounds_of_wait_beats_start(wait_beats_start: Instance) -> None:
    # longest job 3; work 2 jobs x 3 GPUs x 3 slots over 6 GPUs = 3
    basic = lower_bounds(wait_beats_start, structural=False)
    assert (basic.longest, basic.work, basic.best, basic.energetic) == (3, 3, 3, None)
    # the two jobs must split and share a server when they overlap: one after the other (rar_opt.bounds.structural)
    lb = lower_bounds(wait_beats_start)
    assert (lb.split_pairs, lb.best) == (6, 6)
    assert varphi_bound(wait_beats_start) == pytest.approx(8 / 3)
    # the default estimate charges rho_min: u = 1, l = min rho_min / rho_max = 3/8
    run = run_policy(wait_beats_start, "sjf-bco")
    assert (run.lower, run.upper) == pytest.approx((3 / 8, 1.0))
    assert theorem5_bound(wait_beats_start, run.lower, run.upper) == pytest.approx(3 * (8 / 3) / (3 / 8))


def test_bounds_of_the_counterexamples(
    theorem5_p_cmax: Counterexample, theorem5_list_order: Counterexample, lemma3_underestimate: Counterexample
) -> None:
    # single-GPU jobs without a ring: every execution time is fixed, so varphi = u = l = 1
    # and n_g = 1: Theorem 5 claims SJF-BCO is optimal
    for cx, pair in ((theorem5_p_cmax, (3, 4)), (theorem5_list_order, (2, 2))):
        run = run_policy(cx.instance, "sjf-bco")
        basic = lower_bounds(cx.instance, structural=False)
        assert (basic.longest, basic.work) == pair
        assert (run.lower, run.upper) == (1.0, 1.0)
        assert theorem5_bound(cx.instance, run.lower, run.upper) == 1.0
    # lemma3: varphi <= max(9/2, 2/1); l = min(2/9, 1/2); bound 2 x 4.5 / (2/9) = 40.5
    inst = lemma3_underestimate.instance
    run = run_policy(inst, "sjf-bco")
    assert varphi_bound(inst) == pytest.approx(4.5)
    assert (run.lower, run.upper) == pytest.approx((2 / 9, 1.0))
    assert theorem5_bound(inst, run.lower, run.upper) == pytest.approx(40.5)
    # (2 x 2 + 2 x 1) / 4 GPUs, rounded up
    basic = lower_bounds(inst, structural=False)
    assert (basic.longest, basic.work) == (2, 2)


def test_load_bound_by_hand(lemma3_underestimate: Counterexample, wait_beats_start: Instance) -> None:
    # lemma3: job 0 alone on the 3-GPU server (2 slots) beside job 1 split (1 slot): every
    # GPU carries at most 2, and the longest job needs 2 alone: theta* = 2 = OPT
    assert load_bound(lemma3_underestimate.instance, max_start=3) == 2 == lemma3_underestimate.optimum
    # wait-beats-start: between the longest job (3) and OPT (6)
    assert 3 <= load_bound(wait_beats_start, max_start=3) <= 6


@given(tiny_instances())
def test_lower_bounds_match_the_reference_and_hold_for_every_policy(inst: Instance) -> None:
    rho_min = [reference_rho_range(inst, j)[0] for j in range(inst.num_jobs)]
    work = sum(job.gpus * r for job, r in zip(inst.jobs, rho_min, strict=True)) / inst.cluster.num_gpus
    lb = lower_bounds(inst)
    assert (lb.longest, lb.work) == (max(rho_min), math.ceil(work - 1e-9))
    assert lb.best <= min(policy_makespans(inst).values())


def test_a_relaxation_with_nothing_in_the_horizon_proves_the_horizon_too_short() -> None:
    """The contention-free relaxation over T is a relaxation of every schedule within T: when
    it has none, nothing fits, and its answer says so (a bound past T), not "nothing proven"."""
    import dataclasses

    import rar_opt
    from rar_opt.bounds import registry

    inst = rar_opt.generate("tiny", seed=2, jobs=6, servers=3)
    short = dataclasses.replace(inst, horizon=registry.floor(inst) - 1)
    found = {b.name: b for b in registry.compute(short, "makespan", time_limits={"relaxation": 10.0})}
    relaxed = found["relaxation"]
    assert relaxed.value == short.horizon + 1 and relaxed.exact and "nothing fits" in relaxed.note
