"""The lower bounds that use releases (rar_opt.bounds.structural.release_bound, release_energy_bound;
docs/arrivals.md): values by hand, never above the optimum, and no change without releases."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings

from rar_opt import Cluster, Instance, Job
from rar_opt.bounds import lower_bounds, registry
from rar_opt.bounds.structural import release_bound, release_energy_bound, trivial_floor
from rar_opt.solvers import Status, solve

from .strategies import micro_instances, tiny_instances, with_releases


def structural_bounds(inst):  # {name: (value, seconds)} of the structural family
    names = {b.name for b in registry.entries("makespan", families=("structural",))}
    return {b.name: (b.value, b.seconds) for b in registry.cheap(inst) if b.name in names}


BOUNDS = [b.name for b in registry.entries("makespan", families=("structural",))]
structural_floor = registry.floor


def _fast(name: str, release: int = 0) -> Job:
    return Job(name, 2, 20, bwd_time=0.1, release=release)  # 10 iterations per slot: 2 slots


def test_release_bounds_by_hand() -> None:
    # one 2-GPU server; a at 0, b at 5: b ends at 7 at the earliest
    inst = Instance("late", 12, Cluster(servers=(2,)), (_fast("a"), _fast("b", 5)))
    assert release_bound(inst) == 7 and trivial_floor(inst) == 4
    # three jobs released at 3 on one 2-GPU server: 6 slots of work after slot 3
    crowd = Instance("crowd", 12, Cluster(servers=(2,)), (_fast("a"), *(_fast(f"b{i}", 3) for i in range(3))))
    assert release_bound(crowd) == 5 and release_energy_bound(crowd) == 9
    lb = lower_bounds(crowd)
    assert (lb.release, lb.release_energy, lb.best) == (5, 9, 9)
    res = solve(crowd, "compact")
    assert res.status == Status.OPTIMAL and res.makespan == 9


@settings(max_examples=40)
@given(tiny_instances())
def test_without_releases_they_are_the_trivial_bounds(inst: Instance) -> None:
    assert release_bound(inst) == int(inst.bounds.rho_min.max())
    assert release_energy_bound(inst) <= trivial_floor(inst)


@settings(max_examples=12, deadline=None)
@given(with_releases(micro_instances(), max_release=5))
def test_no_floor_exceeds_the_optimum_with_releases(inst: Instance) -> None:
    res = solve(inst, "compact")
    assert res.status == Status.OPTIMAL and res.makespan is not None
    for name, (value, _) in structural_bounds(inst).items():
        assert value <= res.makespan, f"{name} = {value} above OPT {res.makespan}"
    shifted = dataclasses.replace(inst, jobs=tuple(dataclasses.replace(j, release=0) for j in inst.jobs))
    assert release_bound(inst) >= release_bound(shifted)
