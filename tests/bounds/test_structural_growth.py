"""The structural floors that were quadratic in the jobs give the values they gave then.

``disjunctive`` (best clashing pair), ``split_pairs`` (pairs that must share a server) and
``release_energy`` (energy released from r on) read their pairs or suffixes through a sort
now (issue 32, growth of ``rar-opt bounds``); the loops they replaced are kept here as the
reference, and each is asked on instances where it has something to find."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from rar_opt import Cluster, Instance, Job
from rar_opt.bounds import structural
from rar_opt.bounds.structural import disjunctive_bound, release_energy_bound, split_pairs_bound

from ..strategies import serial_horizon_instance, tiny_instances, with_releases


def _disjunctive(instance: Instance) -> int:
    m = instance.modes
    big = 2 * m.gpus > m.num_gpus
    best = int(m.rho[big].sum()) if big.any() else 0
    order = np.argsort(-m.gpus, kind="stable")
    g, r = m.gpus[order], m.rho[order]
    for i in range(len(g)):
        clash = g[i] + g[i + 1 :] > m.num_gpus
        if not clash.any():
            break
        best = max(best, int(r[i] + r[i + 1 :][clash].max()))
    return best


def _split_pairs(instance: Instance) -> int:
    tm = instance.time_model
    if tm.links is not None:
        return 0
    m = instance.modes
    forced = np.flatnonzero(m.n_min >= 2)
    if len(forced) < 2:
        return 0
    span = np.maximum(m.n_min[forced], 2)
    alone = tm.phi(np.ones(len(forced)), span, forced)
    shared = tm.phi(np.full(len(forced), 2), span, forced)
    iters = instance.arrays.iterations[forced]
    best = 0
    for x in range(len(forced)):
        for y in range(x + 1, len(forced)):
            if m.n_min[forced[x]] + m.n_min[forced[y]] <= len(m.capacity):
                continue
            best = max(best, structural._pair_floor(iters[[x, y]], shared[[x, y]], alone[[x, y]]))
    return best


def _release_energy(instance: Instance) -> int:
    m = instance.modes
    energy = m.gpus * m.rho
    best = 0
    for r in np.unique(instance.releases).tolist():
        work = float(energy[instance.releases >= r].sum()) / m.num_gpus
        best = max(best, int(r) + math.ceil(work - 1e-9))
    return best


@st.composite
def crowded(draw: st.DrawFn) -> Instance:
    """Few small servers and many jobs wider than any of them: pairs that must share a
    server (n_min_i + n_min_j > S), pairs too wide to overlap, and releases."""
    servers = draw(st.lists(st.integers(1, 4), min_size=2, max_size=4))
    cluster = Cluster(servers=tuple(servers), b_inter=1.0, b_intra=10.0, reduce_speed=50.0, alpha=0.5)
    jobs = [
        Job(
            name=f"j{j}",
            gpus=draw(st.integers(1, sum(servers))),
            iterations=draw(st.integers(1, 40)),
            grad_size=draw(st.floats(0.0, 0.05)),
            batch_size=4,
            fwd_time=0.01,
            bwd_time=draw(st.sampled_from([0.1, 0.2, 0.3])),
        )
        for j in range(draw(st.integers(2, 14)))
    ]
    return draw(with_releases(st.just(serial_horizon_instance("crowded", cluster, jobs)), max_release=5))


@settings(max_examples=80, deadline=None)
@given(st.one_of(crowded(), tiny_instances(), with_releases(tiny_instances())))
def test_the_sorted_floors_equal_the_loops_they_replaced(inst: Instance) -> None:
    assert disjunctive_bound(inst) == _disjunctive(inst)
    assert split_pairs_bound(inst) == _split_pairs(inst)
    assert release_energy_bound(inst) == _release_energy(inst)


def test_split_pairs_evaluates_no_pair_when_no_two_jobs_must_share(monkeypatch) -> None:
    # 400 jobs wider than a server, each needing 2 of 40 servers: none must share, so the
    # bound is 0 after a sort, without a look at any of the 79,800 pairs
    cluster = Cluster(servers=(4,) * 40, b_inter=1.0, b_intra=10.0, reduce_speed=50.0, alpha=0.5)
    jobs = [Job(f"j{j}", 8, 20 + j % 7, 0.01, 4, 0.01, 0.2) for j in range(400)]
    inst = serial_horizon_instance("wide", cluster, jobs)
    calls: list[int] = []
    real = structural._pair_floor
    monkeypatch.setattr(structural, "_pair_floor", lambda *a: calls.append(1) or real(*a))
    assert split_pairs_bound(inst) == 0 and not calls
