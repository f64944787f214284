"""The instance library: recorded optima are consistent and no heuristic beats them."""

from __future__ import annotations

import pytest

from rar_opt import Instance
from rar_opt.solvers import Status, solve

from .helpers import PAPER_FILE, Known, policy_makespans
from .strategies import reference_simulate, reference_violations


def test_library_covers_what_it_promises(library: list[Known]) -> None:
    insts = [k.instance for k in library]
    assert len(insts) >= 10
    assert {i.num_servers for i in insts} >= {1, 2, 3, 4}
    assert min(i.num_jobs for i in insts) == 2 and max(i.num_jobs for i in insts) == 8
    split_in_opt = [bool(((k.schedule.placement_array > 0).sum(axis=1) >= 2).any()) for k in library]
    assert any(split_in_opt) and not all(split_in_opt)  # optima with split jobs, and without
    assert any(max(j.gpus for j in i.jobs) > max(i.cluster.servers) for i in insts)  # jobs that must split
    for inst in insts:
        proof = inst.meta["proof"]
        assert proof["status"] == "optimal" and proof["solver"]["name"] == "highs" and proof["solver"]["version"]


def test_recorded_optimum_is_consistent(known: Known) -> None:
    # the stored schedule is feasible and reaches the optimum by the slot-by-slot reference
    assert known.schedule.instance == known.instance.name
    assert reference_violations(known.instance, known.schedule) == set()
    assert max(reference_simulate(known.instance, known.schedule)["completion"]) == known.optimum
    # and no heuristic does better
    assert min(policy_makespans(known.instance).values()) >= known.optimum


def test_waiting_beats_starting_at_once(wait_beats_start: Instance, library: list[Known]) -> None:
    (known,) = [k for k in library if k.name == "wait-beats-start"]
    assert known.optimum == 6  # docs/model.md section 3.6: 3 + 3 slots one after the other
    assert sorted(known.schedule.starts) == [0, 3]  # the optimum delays a job until the other is done
    # every policy but pack and backfill starts both at once; sharing a server, both need 8 slots
    spans = policy_makespans(wait_beats_start)
    waiters = {"pack", "backfill"}  # they never let two split jobs share a server: they wait
    assert {name: span for name, span in spans.items() if name not in waiters} == dict.fromkeys(set(spans) - waiters, 8)
    assert spans["pack"] == spans["backfill"] == 6


def test_bundled_paper_instance_is_the_generators(paper_instance: Instance) -> None:
    # README: instances/paper-160x20-s0.json is `rar-opt generate paper --seed 0`
    assert Instance.read(PAPER_FILE).to_dict() == paper_instance.to_dict()


@pytest.mark.slow
def test_recorded_optimum_is_reproved(known: Known) -> None:
    res = solve(known.instance)
    assert res.status == Status.OPTIMAL and res.makespan == known.optimum
