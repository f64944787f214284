"""Buddy lanes (rar_opt.algorithms.lanes) and pack's lanes start: feasibility, the tree's
sums, determinism and the limits of the class."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rar_opt import Instance, Schedule, check
from rar_opt.algorithms import PackParams, lanes, run_policy
from rar_opt.instances.generate import generate
from rar_opt.instances.library import instance_path

from ..strategies import tiny_instances, with_releases


def _search(inst: Instance, seed: int = 0, patience: int = 50, time_limit: float = 60.0) -> lanes.Lanes | None:
    m = inst.modes
    return lanes.search(
        m.capacity,
        m.gpus,
        m.single,
        seed=seed,
        patience=patience,
        time_limit=time_limit,
        has_releases=inst.has_releases,
    )


def _paths(forest: lanes.Forest, node: np.ndarray, length: np.ndarray) -> np.ndarray:
    """The load of every root-to-leaf path, summed leaf by leaf in plain Python."""
    load = [0] * forest.leaves
    for j, v in enumerate(node.tolist()):
        for leaf in range(int(forest.first[v]), int(forest.first[v] + forest.width[v])):
            load[leaf] += int(length[j])
    return np.array(load)


def test_the_forest_cuts_each_server_into_blocks_of_its_bits() -> None:
    forest = lanes.Forest.of(np.array([12, 1, 4]))
    roots = forest.parent < 0
    assert forest.width[roots].tolist() == [8, 4, 1, 4]
    assert forest.server[roots].tolist() == [0, 0, 1, 2]
    assert forest.leaves == 17
    # every GPU is one leaf, and a node of width w covers w consecutive leaves of its server
    leaves = forest.width == 1
    assert np.bincount(forest.server[leaves]).tolist() == [12, 1, 4]
    for v in np.flatnonzero(~leaves).tolist():
        kids = np.flatnonzero(forest.parent == v)
        assert forest.width[kids].tolist() == [forest.width[v] // 2] * 2
        assert forest.first[kids].tolist() == [forest.first[v], forest.first[v] + forest.width[v] // 2]


@settings(max_examples=60, deadline=None)
@given(inst=tiny_instances(max_jobs=8), seed=st.integers(0, 3))
def test_a_lanes_schedule_passes_the_checker_and_ends_when_the_search_says(inst: Instance, seed: int) -> None:
    found = _search(inst, seed)
    m = inst.modes
    if found is None:  # outside the class: a release, or a job wider than every block
        widest = 1 << (int(m.capacity.max()).bit_length() - 1)
        assert inst.has_releases or (lanes.widths(m.gpus) > widest).any()
        return
    assert (found.server >= 0).all() and (m.capacity[found.server] >= m.gpus).all()
    y = np.zeros((inst.num_jobs, inst.num_servers), dtype=np.int64)
    y[np.arange(inst.num_jobs), found.server] = m.gpus
    roomy = dataclasses.replace(inst, horizon=max(inst.horizon, found.makespan))
    sched = Schedule(inst.name, tuple(found.starts.tolist()), tuple(tuple(r) for r in y.tolist()))
    report = check(roomy, sched)
    assert report.feasible, report.violations
    assert report.result.makespan == found.makespan  # unsplit jobs: the class's times are exact
    assert found.makespan >= int(m.single.max())


def test_the_tree_sums_bound_the_makespan_on_a_paper_instance() -> None:
    inst = generate("paper", 6, jobs=160, servers=20, preset="paper-literal")
    m = inst.modes
    forest = lanes.Forest.of(m.capacity)
    tries = lanes._Tries(forest, m.gpus, m.single)
    node, _ = tries.fits(400, np.random.default_rng(0), 50)
    assert node is not None
    assert _paths(forest, node, m.single).max() <= 400
    assert (
        tries.tops(node)
        == [
            _paths(forest, node, m.single)[forest.server[forest.width == 1] == s].max() for s in range(inst.num_servers)
        ]
    ).all()
    starts = tries.starts(node)
    assert (starts + m.single).max() == _paths(forest, node, m.single).max()


def test_the_same_seed_gives_the_same_lanes_schedule() -> None:
    inst = generate("paper", 2, jobs=40, servers=6, preset="paper-literal")
    a, b = _search(inst, seed=3, patience=30), _search(inst, seed=3, patience=30)
    assert a is not None and b is not None
    assert a.makespan == b.makespan and a.history == b.history
    assert (a.starts == b.starts).all() and (a.server == b.server).all()


def test_releases_and_too_wide_jobs_are_outside_the_class() -> None:
    assert not lanes.applies(np.array([8, 4]), np.array([1, 8]), has_releases=True)
    assert not lanes.applies(np.array([6, 6]), np.array([6]), has_releases=False)  # 6 -> a block of 8; blocks 4+2
    assert lanes.applies(np.array([6, 6]), np.array([3, 4, 2]), has_releases=False)


@settings(max_examples=25, deadline=None)
@given(inst=with_releases(tiny_instances(max_jobs=6)))
def test_pack_with_releases_does_not_use_lanes(inst: Instance) -> None:
    run = run_policy(inst, "pack", time_limit=5.0)
    assert run.search["start"] != "lanes"
    assert check(inst, run.schedule).feasible


def test_pack_keeps_a_lanes_start_only_when_it_is_better() -> None:
    inst = generate("paper", 8, jobs=160, servers=20, preset="paper-literal")
    without = run_policy(inst, "pack", lanes=0.0, iterations=0, time_limit=30.0)
    with_lanes = run_policy(inst, "pack", iterations=0, time_limit=30.0, lanes_patience=100)
    assert without.search["start"] != "lanes"
    span = check(inst, with_lanes.schedule).result.makespan
    assert span <= check(inst, without.schedule).result.makespan
    assert with_lanes.search["lanes_makespan"] is not None
    if with_lanes.search["start"] == "lanes":
        assert span <= with_lanes.search["lanes_makespan"]


@pytest.mark.parametrize(
    "field, value",
    [
        ("lanes", -0.1),
        ("lanes", 1.5),
        ("lanes", True),
        ("lanes", "half"),
        ("lanes_patience", -1),
        ("lanes_patience", 2.5),
        ("lanes_tries", 0),
        ("lanes_tries", 1.5),
        ("lanes_tries", True),
    ],
)
def test_pack_refuses_bad_lanes_options(field: str, value: object) -> None:
    with pytest.raises(ValueError, match=field):
        dataclasses.replace(PackParams(), **{field: value})


def test_the_neighbourhoods_run_however_large_the_patience() -> None:
    # auto's improvement phase passes an unbounded patience: the first stage must still end
    inst = generate("paper", 3, jobs=60, servers=8, preset="paper-literal")
    found = _search(inst, patience=10**9, time_limit=3.0)
    assert found is not None
    m = inst.modes
    floor = max(int(m.single.max()), -(-int((m.gpus * m.single).sum()) // int(m.capacity.sum())))
    assert found.neighbourhoods > 0 or found.makespan <= floor


def test_a_count_of_tries_ends_the_search_whatever_the_clock() -> None:
    # auto's counted searches (rar_opt.solvers.plan.COUNTED_IMPROVERS) rest on this: where
    # the count ends the search first, a longer time limit changes nothing
    inst = Instance.read(instance_path("tiny-24x8x150-s1"))  # no floor reached: the search goes on
    m = inst.modes

    def counted(limit: float, tries: int) -> lanes.Lanes:
        found = lanes.search(m.capacity, m.gpus, m.single, seed=1, patience=10**9, time_limit=limit, max_tries=tries)
        assert found is not None
        return found

    short, long, more = counted(60.0, 500), counted(600.0, 500), counted(600.0, 600)
    # counted after the first span that fits (461 tries here), then checked between tries and
    # between neighbourhoods: at most one neighbourhood past the count
    assert short.history[0][1] < 500 <= short.tries <= 500 + lanes.RECREATE + lanes.SIDEWAYS and more.tries >= 600
    assert short.tries == long.tries and short.history == long.history
    assert (short.starts == long.starts).all() and (short.server == long.server).all()
    assert more.makespan <= short.makespan and more.history[: len(short.history)] == short.history


def test_pack_records_the_lanes_tries_and_stops_on_them() -> None:
    inst = Instance.read(instance_path("tiny-24x8x150-s1"))  # 461 tries to the first span that fits
    runs = [
        run_policy(
            inst, "pack", seed=2, iterations=3, time_limit=limit, lanes=0.8, lanes_patience=10**9, lanes_tries=520
        )
        for limit in (60.0, 600.0)
    ]
    first, second = (r.search for r in runs)
    assert first is not None and second is not None
    assert 520 <= first["lanes_tries"] <= 520 + lanes.RECREATE + lanes.SIDEWAYS and first["iterations"] == 3
    assert first == second and runs[0].schedule == runs[1].schedule
    without = run_policy(inst, "pack", iterations=0, lanes=0.0)
    assert without.search is not None and without.search["lanes_tries"] == 0  # no lanes search ran
