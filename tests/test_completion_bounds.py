"""Lower bounds on the total completion and flow time (rar_opt.bounds.completion_bounds):
values by hand, never above the exact optimum with releases, and without releases the
per-rank bound of docs/experiments.md."""

from __future__ import annotations

import dataclasses

import numpy as np
from hypothesis import given, settings

from rar_opt import Cluster, Instance, Job
from rar_opt.bounds import completion_bounds, squashed_completions
from rar_opt.solvers import Status, solve

from .strategies import micro_instances, tiny_instances, with_releases


def _job(name: str, gpus: int, slots: int, release: int = 0) -> Job:
    return Job(name, gpus, 10 * slots, bwd_time=0.1, release=release)  # 10 iterations per slot


def test_completion_bounds_by_hand() -> None:
    # one 2-GPU server; a (2 slots) at 0, three more like it at 3: the optimum runs them
    # back to back, C = 2, 5, 7, 9, and the bound finds exactly that
    crowd = Instance("crowd", 12, Cluster(servers=(2,)), (_job("a", 2, 2), *(_job(f"b{i}", 2, 2, 3) for i in range(3))))
    assert list(squashed_completions(crowd)) == [2, 5, 7, 9]
    b = completion_bounds(crowd)
    assert (b.total, b.flow, b.simple_total) == (23, 14, 2 + 3 * 5)
    assert b.mean_flow == 3.5 and b.mean_completion == 23 / 4
    assert solve(crowd, "compact", objective="total").objective == 23


def test_the_squashed_schedule_preempts_for_a_shorter_arrival() -> None:
    # one GPU; a (5 slots) at 0, b (1 slot) at 1: shortest remaining work first runs b at 1
    # and a to 6; no real schedule preempts, its best is b at 1, a at 2 (2 + 7) or a first (5 + 6)
    inst = Instance("preempt", 12, Cluster(servers=(1,)), (_job("a", 1, 5), _job("b", 1, 1, 1)))
    assert list(squashed_completions(inst)) == [2, 6]
    b = completion_bounds(inst)
    assert b.total == 2 + 6 and b.flow == 8 - 1
    assert solve(inst, "compact", objective="total").objective == 9 >= b.total


@settings(max_examples=15, deadline=None)
@given(with_releases(micro_instances(), max_release=4))
def test_never_above_the_optimum_with_releases(inst: Instance) -> None:
    b = completion_bounds(inst)
    flow = solve(inst, "compact", objective="flow")
    total = solve(inst, "compact", objective="total")
    assert flow.status == total.status == Status.OPTIMAL
    assert b.flow <= round(flow.objective) and b.total <= round(total.objective)
    assert b.total >= b.simple_total == int((inst.releases + inst.bounds.rho_min).sum())
    assert b.total - b.flow == int(inst.releases.sum())


@settings(max_examples=40)
@given(tiny_instances())
def test_without_releases_it_is_the_per_rank_bound(inst: Instance) -> None:
    rho = np.sort(inst.bounds.rho_min)
    area = np.sort(inst.arrays.gpus * inst.bounds.rho_min)
    squashed = -(-np.cumsum(area) // inst.cluster.num_gpus)
    b = completion_bounds(inst)
    assert b.total == b.flow == int(np.maximum(rho, squashed).sum())


@settings(max_examples=40)
@given(with_releases(tiny_instances(), max_release=6))
def test_later_releases_never_lower_the_completion_bound(inst: Instance) -> None:
    at_zero = dataclasses.replace(inst, jobs=tuple(dataclasses.replace(j, release=0) for j in inst.jobs))
    assert completion_bounds(inst).total >= completion_bounds(at_zero).total
