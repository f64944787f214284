"""Trials that start from an earlier trial's saved state (engine.Checkpoints) are the trials
run from the empty cluster: the same starts, GPUs, makespan and theta range."""

from __future__ import annotations

import dataclasses
import importlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rar_opt.algorithms import engine
from rar_opt.algorithms.engine import Checkpoints, ThetaCache, Trial, run_list
from rar_opt.algorithms.estimators import estimate
from rar_opt.algorithms.orders import fewest_gpus_first as sjf_order
from rar_opt.algorithms.sjf_bco import SjfBcoParams, fa_ffp, lbsgf, parting_positions, sjf_bco
from rar_opt.algorithms.state import ClusterState
from rar_opt.instances.generate import paper, with_arrivals
from rar_opt.simulate import simulate

sjf_bco_module = importlib.import_module("rar_opt.algorithms.sjf_bco")  # the package exports a function by that name


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


def _makespan(inst) -> int:
    return int(simulate(inst, sjf_bco(inst).schedule).makespan)


@settings(max_examples=12, deadline=None)
@given(
    seed=st.integers(0, 50),
    jobs=st.integers(8, 30),
    servers=st.integers(2, 6),
    tight=st.floats(0.3, 1.5),
    packing=st.booleans(),
    arrivals=st.booleans(),
    kappas=st.sampled_from(["distinct", "all"]),
)
def test_shared_work_changes_no_result(
    seed: int, jobs: int, servers: int, tight: float, packing: bool, arrivals: bool, kappas: str
) -> None:
    """Checkpoints, the kappas' shared prefixes (the largest kappa first), the cutoffs and
    the dead-end test (reuse_trials=True) give the run without any reuse, on horizons
    tight enough that trials fail; with releases the list (and so where kappas part) is
    no longer sorted by size."""
    base = paper(seed, jobs=jobs, servers=servers)
    if arrivals:
        base = with_arrivals(base, load=0.9, seed=seed)
    earliest = int((base.releases + base.bounds.rho_min).max())  # every job can still end by T
    inst = dataclasses.replace(base, horizon=max(earliest, int(tight * _makespan(base))))
    rule = "packing" if packing else "printed"
    a = sjf_bco(inst, SjfBcoParams(small_rule=rule, kappas=kappas))
    b = sjf_bco(inst, SjfBcoParams(small_rule=rule, kappas=kappas, reuse_trials=False))
    assert a.schedule == b.schedule
    assert (a.theta, a.kappa, a.exceeds_horizon) == (b.theta, b.kappa, b.exceeds_horizon)
    assert a.trials <= b.trials


def test_the_shared_work_is_reached() -> None:
    """On a tight horizon the relay hands states on, a kappa inherits a failure, and a
    trial ends at a dead end (so the test above exercises all three)."""
    inst = paper(3, jobs=200, servers=12)
    inst = dataclasses.replace(inst, horizon=int(0.8 * _makespan(inst)))
    order = sjf_order(inst)
    kappas = [1, *sorted({int(g) for g in inst.arrays.gpus})]
    parts = parting_positions(inst, order, kappas)
    sizes = inst.arrays.gpus[order]
    for k, k_next, at in zip(kappas, kappas[1:], parts, strict=False):  # the first job in (k, k']
        assert at == len(order) or k < sizes[at] <= k_next
        assert not np.any((sizes[:at] > k) & (sizes[:at] <= k_next))
    seen = {"dead": 0, "inherited": 0, "offered": 0}
    real_dead_end = ClusterState.dead_end

    def dead_end(self, job):
        out = real_dead_end(self, job)
        seen["dead"] += out
        return out

    real_put = ThetaCache.put

    def put(self, result):
        seen["inherited"] += 1
        real_put(self, result)

    real_run = engine.run_list

    def run_list(*args, **kwargs):
        relay = kwargs.get("relay")
        seen["offered"] += relay is not None and relay.offer is not None
        return real_run(*args, **kwargs)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ClusterState, "dead_end", dead_end)
        mp.setattr(ThetaCache, "put", put)
        mp.setattr(sjf_bco_module, "run_list", run_list)
        sjf_bco(inst)
    assert all(seen.values()), seen
