"""A loose horizon is valid input and costs nothing: `wait-beats-start` with T = 10^9.

Its optimum is 6 whatever the deadline. Every phase of ``solve`` (the heuristics with
``pack`` among them, and the floors) sizes its work by the jobs' own times, not by T: the
peak of Python's allocations stays far below one array of T slots (8 GB of int64 here;
the limit below is 50 MB). No wall-clock assertion: the machine may be busy.
"""

from __future__ import annotations

import dataclasses
import tracemalloc

import pytest

from rar_opt import Instance
from rar_opt.algorithms import run_policy
from rar_opt.bounds.registry import floor as structural_floor
from rar_opt.check import check
from rar_opt.instances.library import instance_path
from rar_opt.solvers import Status
from rar_opt.solvers.solve import solve

LOOSE = 10**9
PEAK = 50 * 2**20  # bytes: an array of T int32 slots is 4 GB


@pytest.fixture(scope="module")
def loose() -> Instance:
    inst = Instance.read(instance_path("wait-beats-start"))
    return dataclasses.replace(inst, horizon=LOOSE)


def _peak(fn):
    tracemalloc.start()
    try:
        out = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return out, peak


def test_auto_solves_a_horizon_of_a_billion_slots_to_its_optimum(loose: Instance) -> None:
    res, peak = _peak(lambda: solve(loose, "auto", time_limit=30))
    assert res.status == Status.OPTIMAL
    assert res.objective == 6
    assert peak < PEAK


@pytest.mark.parametrize("policy", ["pack", "sjf-bco", "ls", "ff", "lpt"])
def test_the_heuristics_of_auto_allocate_by_the_jobs_not_the_horizon(loose: Instance, policy: str) -> None:
    run, peak = _peak(lambda: run_policy(loose, policy))
    assert check(loose, run.schedule).result.makespan <= 8  # what they find at T = 20
    assert peak < PEAK


def test_the_structural_floors_allocate_by_the_jobs_not_the_horizon(loose: Instance) -> None:
    floor, peak = _peak(lambda: structural_floor(loose))
    assert floor == 6
    assert peak < PEAK
