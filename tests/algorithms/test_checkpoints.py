"""Trials that start from an earlier trial's saved state (engine.Checkpoints) are the trials
run from the empty cluster: the same starts, GPUs, makespan and theta range."""

from __future__ import annotations

import numpy as np
import pytest

from rar_opt.algorithms.engine import Checkpoints, Trial, run_list
from rar_opt.algorithms.estimators import estimate
from rar_opt.algorithms.orders import fewest_gpus_first as sjf_order
from rar_opt.algorithms.sjf_bco import SjfBcoParams, fa_ffp, lbsgf, sjf_bco
from rar_opt.instances.generate import paper


def _same(a, b) -> None:
    assert type(a) is type(b)
    assert (a.valid_from, a.valid_below) == (b.valid_from, b.valid_below)
    if isinstance(a, Trial):
        assert np.array_equal(a.starts, b.starts)
        assert a.gpu_ids == b.gpu_ids
        assert a.makespan == b.makespan and a.max_load == b.max_load


@pytest.mark.parametrize(("seed", "kappa", "packing"), [(0, 1, False), (1, 4, False), (2, 2, True), (3, 8, False)])
def test_a_trial_resumed_from_a_checkpoint_is_the_trial_run_afresh(seed: int, kappa: int, packing: bool) -> None:
    inst = paper(seed, jobs=120, servers=12)
    weight = estimate(inst, "best").weight
    order, sizes = sjf_order(inst), inst.arrays.gpus
    small, large = fa_ffp(packing), lbsgf(1.0)

    def rule(state, job):
        return small(state, job) if sizes[job] <= kappa else large(state, job)

    saved = Checkpoints(inst.num_jobs, every=7)
    resumed = 0
    for theta in (inst.horizon // 2, inst.horizon // 4, 3 * inst.horizon // 8, inst.horizon // 2 - 1, 40, 41, 39):
        resumed += saved.find(theta) is not None
        _same(run_list(inst, order, rule, theta, weight, checkpoints=saved), run_list(inst, order, rule, theta, weight))
    assert resumed  # the test reaches the resumption


@pytest.mark.parametrize("seed", [0, 5])
def test_sjf_bco_is_the_same_with_and_without_reuse(seed: int) -> None:
    inst = paper(seed, jobs=80, servers=10)
    a, b = sjf_bco(inst), sjf_bco(inst, SjfBcoParams(reuse_trials=False))
    assert np.array_equal(a.schedule.start_array, b.schedule.start_array)
    assert {k: a.schedule.meta[k] for k in ("theta", "kappa")} == {k: b.schedule.meta[k] for k in ("theta", "kappa")}
