"""The instance library: recorded optima are consistent and no heuristic beats them."""

from __future__ import annotations

from pathlib import Path

import pytest

from rar_opt import Instance, Schedule, check
from rar_opt.algorithms import POLICIES, run_policy
from rar_opt.solvers import Status, solve

LIB = Path(__file__).resolve().parent.parent / "instances"
PROVEN = sorted(p for p in LIB.glob("*.json") if Instance.read(p).meta.get("known_optimum") is not None)


def test_library_covers_what_it_promises() -> None:
    insts = [Instance.read(p) for p in PROVEN]
    assert len(insts) >= 10
    assert {i.num_servers for i in insts} >= {1, 2, 3, 4}
    assert min(i.num_jobs for i in insts) == 2 and max(i.num_jobs for i in insts) == 8
    split_in_opt = [
        bool(((Schedule.read(LIB / "optimal" / f"{i.name}.schedule.json").placement_array > 0).sum(axis=1) >= 2).any())
        for i in insts
    ]
    assert any(split_in_opt) and not all(split_in_opt)  # optima with split jobs, and without
    assert any(max(j.gpus for j in i.jobs) > max(i.cluster.servers) for i in insts)  # jobs that must split
    for inst in insts:
        proof = inst.meta["proof"]
        assert proof["status"] == "optimal" and proof["solver"]["name"] == "highs" and proof["solver"]["version"]


@pytest.mark.parametrize("path", PROVEN, ids=lambda p: p.stem)
def test_recorded_optimum_is_consistent(path: Path) -> None:
    inst = Instance.read(path)
    opt = inst.meta["known_optimum"]
    sched = Schedule.read(LIB / "optimal" / f"{inst.name}.schedule.json")
    report = check(inst, sched)
    assert report.feasible and report.result.makespan == opt
    for name in POLICIES:
        assert check(inst, run_policy(inst, name).schedule).result.makespan >= opt


def test_waiting_beats_starting_at_once() -> None:
    inst = Instance.read(LIB / "wait-beats-start.json")
    sched = Schedule.read(LIB / "optimal" / "wait-beats-start.schedule.json")
    assert sorted(sched.starts)[1] > 0  # the optimum delays a job ...
    for name in POLICIES:  # ... while every heuristic starts both at once and is slower
        assert check(inst, run_policy(inst, name).schedule).result.makespan > inst.meta["known_optimum"]


@pytest.mark.slow
@pytest.mark.parametrize("path", PROVEN, ids=lambda p: p.stem)
def test_recorded_optimum_is_reproved(path: Path) -> None:
    inst = Instance.read(path)
    res = solve(inst)
    assert res.status == Status.OPTIMAL and res.makespan == inst.meta["known_optimum"]
