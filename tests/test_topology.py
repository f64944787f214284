"""The network topology (docs/model.md section 3.8): its format, its validation, and that
the star given explicitly is the paper's model on every instance of the library."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rar_opt import Cluster, InputError, Instance, simulate
from rar_opt.cluster.topology import Topology
from rar_opt.solvers import Status, solve

from .bruteforce import brute_force
from .helpers import INSTANCES, instance_dict, policy_makespans, run
from .topology_strategies import micro_topology_instances, reference_topology_simulate, with_topology


def with_star(instance: Instance, bandwidth: float | None = None) -> Instance:
    """``instance`` with the star written out: every uplink at ``bandwidth`` (b_inter)."""
    c = instance.cluster
    star = Topology.star(c.num_servers, c.b_inter if bandwidth is None else bandwidth)
    return dataclasses.replace(instance, cluster=dataclasses.replace(c, topology=star))


# -- the star is the paper's model --------------------------------------------------------
def test_star_equals_the_paper_model_on_the_library(library) -> None:
    for known in library:
        inst, star = known.instance, with_star(known.instance)
        assert star.time_model.links is None  # the paper's path, not an emulation of it
        a, b = simulate(inst, known.schedule), simulate(star, known.schedule)
        assert list(a.completion) == list(b.completion) and b.makespan == known.optimum, known.name
        for field in ("tau_min", "tau_max", "rho_min", "rho_max"):
            assert np.array_equal(getattr(inst.bounds, field), getattr(star.bounds, field)), (known.name, field)
        assert np.array_equal(inst.time_model.phi_table(), star.time_model.phi_table())


def test_star_equals_the_paper_model_for_every_heuristic(library) -> None:
    for known in library[:6]:
        assert policy_makespans(with_star(known.instance)) == policy_makespans(known.instance), known.name


def test_a_star_at_another_bandwidth_is_the_paper_model_at_that_b_inter(tiny_8x2_s20: Instance) -> None:
    inst = tiny_8x2_s20
    moved = dataclasses.replace(inst, cluster=dataclasses.replace(inst.cluster, b_inter=0.8))
    star = with_star(inst, 0.8)
    assert np.array_equal(moved.time_model.phi_table(), star.time_model.phi_table())


def test_uniform_links_make_levels_counts_and_mixed_links_order_shares(tiny_8x2_s20: Instance) -> None:
    inst = tiny_8x2_s20
    c = inst.cluster
    uniform = with_topology(inst, [[0], [1]], c.b_inter, c.b_inter)
    # one bandwidth everywhere: a level is a count, the shares are the paper's b / f(k)
    p = np.arange(1, 4)
    assert np.allclose(uniform.time_model.bandwidth(p, np.full(3, 2)), inst.time_model.bandwidth(p, np.full(3, 2)))
    mixed = with_topology(inst, [[0], [1]], c.b_inter, c.b_inter / 3)
    tm = mixed.time_model
    levels = np.arange(1, tm.p_worst() + 1)
    shares = tm.bandwidth(levels, np.full(len(levels), 2))
    assert np.all(np.diff(shares) <= 0)  # a higher level never has more bandwidth
    assert shares[-1] == pytest.approx(c.b_inter / 3 / c.contention(max(1.0, c.xi1 * 2), c.alpha))


# -- the format ---------------------------------------------------------------------------
@given(racks=st.integers(1, 4), seed=st.integers(0, 100))
def test_racks_and_links_round_trip(racks: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    servers = rng.permutation(6)
    groups = [list(map(int, g)) for g in np.array_split(servers, racks)]
    server_link = [float(b) for b in rng.uniform(0.5, 2.0, 6)]
    rack_link = float(rng.uniform(0.5, 2.0)) if racks >= 2 else None
    topo = Topology.from_racks(groups, server_link, rack_link)
    cluster = Cluster(servers=(2,) * 6, topology=topo)
    again = Cluster.from_dict(json.loads(json.dumps(cluster.to_dict())))
    assert again == cluster and again.topology is not None
    by_links = Topology.from_dict({"links": [list(link) for link in topo.links]}, 1.0)
    assert by_links == topo and np.array_equal(by_links.layout(6).inner_side, topo.layout(6).inner_side)


def test_server_link_defaults_to_b_inter() -> None:
    cluster = Cluster.from_dict(
        {**instance_dict()["cluster"], "b_inter": 1.25, "topology": {"racks": [[0], [1]], "rack_link": 3.0}}
    )
    assert cluster.topology is not None
    assert list(cluster.topology.layout(2).server_bw) == [1.25, 1.25]
    assert "topology" not in Cluster(servers=(1, 1)).to_dict()  # absent stays absent


def test_a_ring_uses_the_links_that_separate_its_servers() -> None:
    topo = Topology(
        ((0, "a", 1.0), (1, "a", 1.0), (2, "b", 1.0), (3, "c", 1.0), ("a", "b", 2.0), ("b", "c", 3.0), ("c", "d", 4.0))
    )
    lay = topo.layout(4)
    assert lay.inner_name == ("a-b", "b-c")  # c-d separates no servers: never used
    assert list(lay.used_links(np.array([0, 1]))) == [False, False]
    assert list(lay.used_links(np.array([0, 2]))) == [True, False]
    assert list(lay.used_links(np.array([1, 3]))) == [True, True]
    assert list(lay.used_links(np.array([2, 3]))) == [False, True]
    assert list(lay.used_links(np.array([3]))) == [False, False]


# -- bad input ----------------------------------------------------------------------------
BAD = {
    "disconnected": ({"links": [[0, "t0", 1.0], [1, "t1", 1.0]]}, "cluster.topology.links", "disconnected"),
    "cycle": (
        {"links": [[0, "t0", 1.0], [1, "t1", 1.0], ["t0", "t1", 1.0], ["t0", "s", 1.0], ["t1", "s", 1.0]]},
        "cluster.topology.links",
        "cycle",
    ),
    "missing server": ({"links": [[0, "t0", 1.0]]}, "cluster.topology.links", "server 1 is missing"),
    "unknown server": (
        {"links": [[0, "t0", 1.0], [1, "t0", 1.0], [2, "t0", 1.0]]},
        "cluster.topology.links",
        "server 2",
    ),
    "zero bandwidth": ({"links": [[0, "t0", 1.0], [1, "t0", 0.0]]}, "cluster.topology.links[1][2]", "above 0"),
    "negative server link": ({"racks": [[0], [1]], "server_link": -1, "rack_link": 1}, "server_link", "above 0"),
    "negative rack link": ({"racks": [[0], [1]], "rack_link": [1.0, -2.0]}, "rack_link[1]", "above 0"),
    "text bandwidth": ({"links": [[0, "t0", "fast"], [1, "t0", 1.0]]}, "links[0][2]", "must be a number"),
    "server to server": ({"links": [[0, 1, 1.0]]}, "cluster.topology.links[0]", "two servers"),
    "server in two racks": ({"racks": [[0, 1], [1]], "rack_link": 1.0}, "cluster.topology.racks", "more than one"),
    "server off a rack": ({"racks": [[0]]}, "cluster.topology.racks", "server 1 is missing"),
    "links and racks": ({"links": [[0, "t0", 1.0]], "racks": [[0]]}, "cluster.topology", "either links or racks"),
    "no rack link": ({"racks": [[0], [1]]}, "cluster.topology.rack_link", "required"),
    "unknown key": ({"racks": [[0, 1]], "spine": 2}, "cluster.topology", "unknown key 'spine'"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_topology_names_the_field(case: str) -> None:
    topology, where, words = BAD[case]
    data = instance_dict()
    data["cluster"]["topology"] = topology
    with pytest.raises(InputError) as err:
        Instance.from_dict(data)
    assert where in str(err.value) and words in str(err.value)


@pytest.mark.parametrize("case", ["disconnected", "missing server", "zero bandwidth"])
def test_bad_topology_exits_2_on_the_command_line(case: str, tmp_path) -> None:
    topology, where, words = BAD[case]
    data = instance_dict()
    data["cluster"]["topology"] = topology
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    out = run("schedule", str(path), "-o", str(tmp_path / "out.json"))
    assert out.returncode == 2, out.stderr
    assert "bad.json" in out.stderr and where in out.stderr and words in out.stderr
    assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out.json").exists()


# -- the compact MILP ---------------------------------------------------------------------
def test_star_compact_optimum_equals_the_library(library) -> None:
    for known in library[:4]:
        res = solve(with_star(known.instance), "compact", time_limit=60)
        assert res.status == Status.OPTIMAL and res.makespan == known.optimum, known.name


@settings(max_examples=20)
@given(micro_topology_instances(), st.sampled_from(["staircase", "onehot"]))
def test_compact_milp_on_a_topology_equals_brute_force(inst: Instance, linearization: str) -> None:
    upper = min(policy_makespans(inst).values())
    bf = brute_force(inst, upper)  # judged by the checker, i.e. the simulator with the topology
    assert bf is not None
    res = solve(inst, "compact", linearization=linearization)
    assert res.status == Status.OPTIMAL and res.schedule is not None
    ref = reference_topology_simulate(inst, res.schedule)
    assert max(ref["completion"]) == res.makespan == bf[0] <= upper


@settings(max_examples=10)
@given(micro_topology_instances(), st.sampled_from(["sjf-bco", "ls", "ff"]), st.sampled_from(["staircase", "onehot"]))
def test_a_heuristic_schedule_is_a_feasible_point_of_the_topology_milp(inst: Instance, policy: str, lin: str) -> None:
    from rar_opt.algorithms import run_policy
    from rar_opt.formulations import compact, compact_start
    from rar_opt.formulations.values import violated

    sched = run_policy(inst, policy).schedule
    span = simulate(inst, sched).makespan
    if span is None or span > inst.horizon:
        return
    model = compact.build(inst, compact.Options(linearization=lin, symmetry=False))
    compact_start.set_start(model, inst, sched)
    assert violated(model) == []
    assert round(model.makespan.value) == span


@pytest.mark.parametrize("name", ["topology-two-rack", "topology-6x4-two-rack"])
def test_the_topology_instances_keep_their_optima(name: str) -> None:
    inst = Instance.read(INSTANCES / f"{name}.json")
    assert inst.cluster.topology is not None and inst.time_model.links is not None
    res = solve(inst, "compact", warm_start="sjf-bco", time_limit=120)
    assert res.status == Status.OPTIMAL and res.schedule is not None
    assert max(reference_topology_simulate(inst, res.schedule)["completion"]) == res.makespan
    assert res.makespan == inst.meta["topology_optimum"] == inst.meta.get("brute_force", res.makespan)


def test_the_policies_on_the_topology_instances_are_as_the_library_says() -> None:
    # instances/README.md: on two racks pack and backfill still wait and find 6, every other
    # policy starts both jobs at once (8); on tiny-6x4-s17's racks offline 5-6, online 5-8
    spans = policy_makespans(Instance.read(INSTANCES / "topology-two-rack.json"))
    waiters = {"pack", "backfill"}
    assert {name: span for name, span in spans.items() if name not in waiters} == dict.fromkeys(set(spans) - waiters, 8)
    assert spans["pack"] == spans["backfill"] == 6
    spans = policy_makespans(Instance.read(INSTANCES / "topology-6x4-two-rack.json"))
    online = [span for name, span in spans.items() if name.startswith("online-")]
    offline = [span for name, span in spans.items() if not name.startswith("online-")]
    assert (min(offline), max(offline), min(online), max(online)) == (5, 6, 5, 8)


def test_a_topology_travels_to_worker_processes(tiny_8x2_s20: Instance) -> None:
    import pickle

    inst = with_topology(tiny_8x2_s20, [[0], [1]], tiny_8x2_s20.cluster.b_inter, 0.7 * tiny_8x2_s20.cluster.b_inter)
    again = pickle.loads(pickle.dumps(inst))
    assert again == inst and again.cluster.topology is not None and again.cluster.topology.graph.number_of_edges() == 4
    assert np.array_equal(again.time_model.phi_table(), inst.time_model.phi_table())
