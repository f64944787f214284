"""The frontier instances (instances/frontier/): what their files claim holds.

The fast tests judge the stored schedules and the recorded proofs; re-proving an optimum
takes minutes (the GPU bins or a probe one slot below it), so that carries the ``slow``
marker."""

from __future__ import annotations

import json

import pytest

from rar_opt import Instance, Schedule
from rar_opt.instances.library import instance_path
from rar_opt.solvers import Status
from rar_opt.solvers.decompose import gpu_bins_bound
from rar_opt.solvers.probe import probe

from .helpers import INSTANCES, policy_makespans
from .strategies import reference_simulate, reference_violations

FRONTIER = INSTANCES / "frontier"
NAMES = sorted(p.stem for p in FRONTIER.glob("*.json"))


def _load(name: str) -> tuple[Instance, Schedule, dict]:
    inst = Instance.read(FRONTIER / f"{name}.json")
    return inst, Schedule.read(FRONTIER / "schedules" / f"{name}.schedule.json"), inst.meta


def test_the_frontier_holds_proven_and_open_instances() -> None:
    metas = [_load(n)[2] for n in NAMES]
    assert len(NAMES) >= 2 and any(m["known_optimum"] is not None for m in metas)
    assert all(instance_path(n) == FRONTIER / f"{n}.json" for n in NAMES)  # addressable by name


@pytest.mark.parametrize("name", NAMES)
def test_a_frontier_record_is_consistent(name: str) -> None:
    inst, schedule, meta = _load(name)
    best, bound = meta["best_known"]["makespan"], meta["best_known"]["bound"]
    # the stored schedule is feasible and ends at the best known makespan, by the slot-by-slot reference
    assert schedule.instance == inst.name and reference_violations(inst, schedule) == set()
    assert max(reference_simulate(inst, schedule)["completion"]) == best
    assert bound <= best and meta["known_optimum"] in (None, best)
    assert (meta["known_optimum"] is not None) == (bound == best)
    # the record proves exactly its bound and its makespan: the solves' best, then each probe's answer
    solves, probes = meta["proof"]["solves"], meta["proof"]["probes"]
    assert {"auto", "decompose"} <= set(solves) <= {"auto", "decompose", "auto-full-first"}
    proven = [p["proves_lower_bound"] for p in probes if p["status"] == "infeasible"]
    found = [p["schedule_makespan"] for p in probes if p["status"] == "feasible"]
    # make_frontier --search: the backfill search from the stored record, each run recorded
    searches = meta["proof"].get("searches", [])
    assert all({"fit", "split", "seed", "seconds", "makespan"} <= set(r) for r in searches)
    found += [r["makespan"] for r in searches if r["makespan"] is not None]
    # make_frontier --auto-seeds: auto with other CP-SAT seeds from the stored record, each run recorded
    # with its time limit, or its work limit and the work it spent (a run any machine repeats exactly)
    reseeded = meta["proof"].get("reseeded", [])
    assert all({"seed", "status", "makespan", "bound"} <= set(r) for r in reseeded)
    assert all("time_limit" in r or {"work_limit", "work_spent"} <= set(r) for r in reseeded)
    found += [r["makespan"] for r in reseeded if r["makespan"] is not None]
    proven += [-(-r["bound"] // 1) for r in reseeded if r["bound"] is not None]
    # make_frontier --restriction: the contention-free restriction asked by the bound, each ask recorded
    restricted = meta["proof"].get("restricted", [])
    assert all({"horizon", "seed", "seconds", "status", "makespan"} <= set(r) for r in restricted)
    assert all(r["makespan"] is None or r["makespan"] <= r["horizon"] for r in restricted)
    found += [r["makespan"] for r in restricted if r["makespan"] is not None]
    assert bound == max([-(-r["bound"] // 1) for r in solves.values() if r["bound"] is not None] + proven)
    assert best == min([r["makespan"] for r in solves.values() if r["makespan"] is not None] + found)
    for p in probes:  # every answer is consistent with the bound and records how it was reached
        asked = p["makespan_asked"]
        assert p["status"] != "feasible" or asked >= bound  # a yes below the proven bound is a contradiction
        assert p["status"] != "infeasible" or p["proves_lower_bound"] > asked
        assert p["versions"]["ortools"] and p["solver"]["name"] in ("cpsat", "rar-opt") and "seed" in p
    # no heuristic beats the best known schedule's makespan when it is the optimum
    if meta["known_optimum"] is not None:
        assert min(policy_makespans(inst).values()) >= best


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in NAMES if _load(n)[2]["known_optimum"] is not None])
def test_a_frontier_optimum_is_proven_again(name: str) -> None:
    inst, _, meta = _load(name)
    optimum = meta["known_optimum"]
    # the GPU bins first: a relaxation, so its "nothing fits by optimum - 1" proves the bound
    # too, and where it holds it is quick (heavy-24x8x150-s1: 83 in about 1 s, where the
    # probe at 83 stayed undecided for 900 s)
    binned = gpu_bins_bound(inst, optimum - 1, time_limit=120)
    if binned.bound is not None and binned.bound >= optimum:
        return
    below = probe(inst, optimum - 1, time_limit=1800)
    assert below.status == Status.INFEASIBLE, json.dumps(below.summary())[:500]
