"""The simulator and the heuristics on a topology (docs/model.md section 3.8), against the
slot-by-slot reference of tests/topology_strategies.py and a hand-derived example."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rar_opt import Cluster, Instance, Job, Schedule, simulate

from .helpers import policy_makespans
from .strategies import reference_phi
from .topology_strategies import reference_topology_simulate, topology_instance_and_schedule, with_topology


@pytest.mark.parametrize("feasible", [True, False])
@given(data=st.data())
def test_event_jumping_matches_slot_by_slot_on_a_topology(feasible: bool, data: st.DataObject) -> None:
    inst, sched = data.draw(topology_instance_and_schedule(feasible=feasible))
    res = simulate(inst, sched)
    ref = reference_topology_simulate(inst, sched)
    assert list(res.completion) == ref["completion"]
    trace = res.trace()
    inner = [frozenset(name.split("-")) for name in inst.time_model.links.inner_name] if inst.time_model.links else []
    for row in range(len(trace.iterations)):
        uplinks, its, count = ref["trace"][trace.origin + row]
        assert list(trace.iterations[row]) == its, f"slot {trace.origin + row}"
        assert list(trace.contention[row]) == uplinks, f"slot {trace.origin + row}"
        if inner:
            assert trace.links is not None and list(trace.links[row]) == [count[e] for e in inner]


def crossing_pair() -> Instance:
    """Four 1-GPU servers, two 2-GPU jobs that never share a server.

    By hand (docs/model.md section 3.4): m = 0.2, G = 2, so the ring term is 0.2 / B; the
    rest is 0.2 (0.5) / 50 + 0.1 = 0.102. Alone on two servers B = 1: tau = 0.302, phi = 3.
    The paper's star: the jobs share no uplink, so both stay at phi = 3 (12 iterations in 4
    slots). Racks {0, 1} and {2, 3} with rack links of bandwidth 1, job a on servers 0 and
    2, job b on 1 and 3: both rings cross both rack links, c = 2, f(2) = 2 + 0.5 = 2.5,
    B = 0.4, tau = 0.5 + 0.102 = 0.602, phi = 1 (12 slots). With job b on 1 and 0 instead
    (inside rack 0) only a crosses the racks and nothing is shared: 4 slots each.
    """
    cluster = Cluster(servers=(1, 1, 1, 1), b_inter=1.0, b_intra=10.0, reduce_speed=50.0, alpha=0.5)
    jobs = tuple(Job(n, gpus=2, iterations=12, grad_size=0.2, bwd_time=0.1) for n in "ab")
    return Instance("crossing", 30, cluster, jobs)


def test_rings_crossing_the_racks_contend_on_the_rack_links() -> None:
    star = crossing_pair()
    racks = with_topology(star, [[0, 1], [2, 3]], 1.0, 1.0)
    across = Schedule.from_arrays("crossing", [0, 0], [[1, 0, 1, 0], [0, 1, 0, 1]])
    assert list(simulate(star, across).completion) == [4, 4]
    res = simulate(racks, across)
    assert list(res.completion) == [12, 12]
    assert list(res.segments[0].links) == [2, 2] and list(res.segments[0].contention) == [1, 1, 1, 1]
    assert reference_phi(0.2 / 0.4 + 0.102) == 1
    inside = Schedule.from_arrays("crossing", [0, 0], [[0, 0, 1, 1], [1, 1, 0, 0]])
    assert list(simulate(racks, inside).completion) == [4, 4]
    # a faster spine takes the contention away again: 2.5x the bandwidth, share 1.0 = B alone
    fast = with_topology(star, [[0, 1], [2, 3]], 1.0, 2.5)
    assert list(simulate(fast, across).completion) == [4, 4]


def test_the_time_model_takes_the_tightest_link() -> None:
    # a slow server uplink binds even when the rack links are free
    inst = with_topology(crossing_pair(), [[0, 1], [2, 3]], [0.4, 1.0, 1.0, 1.0], 10.0)
    res = simulate(inst, Schedule.from_arrays("crossing", [0, 0], [[1, 0, 1, 0], [0, 1, 0, 1]]))
    assert list(res.completion) == [12, 4]  # job a: B = 0.4, phi = 1; job b: B = 1, phi = 3


@settings(max_examples=15)
@given(data=st.data())
def test_every_heuristic_is_feasible_and_simulated_on_a_topology(data: st.DataObject) -> None:
    inst, _ = data.draw(topology_instance_and_schedule(feasible=True))
    spans = policy_makespans(inst)  # each schedule checked, its makespan the simulator's
    assert all(span >= int(inst.bounds.rho_min.max()) for span in spans.values())


def test_the_trace_shows_the_rack_links_on_a_topology(tmp_path) -> None:
    from rar_opt.algorithms import run_policy
    from rar_opt.instances.library import instance_path

    from .helpers import run

    inst = Instance.read(instance_path("topology-two-rack"))
    run_policy(inst, "sjf-bco").schedule.write(tmp_path / "s.json")
    out = run("simulate", str(instance_path("topology-two-rack")), str(tmp_path / "s.json"), "--trace", "--json")
    assert out.returncode == 0, out.stderr
    trace = json.loads(out.stdout)["trace"]
    expected = simulate(inst, Schedule.read(tmp_path / "s.json")).trace()
    assert [row["links"] for row in trace] == [[int(v) for v in r] for r in expected.links]
