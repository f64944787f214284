"""Strategies and a deliberately naive slot-by-slot reference for topologies (docs/model.md 3.8).

The reference finds the links a ring uses as the union of the paths (networkx shortest
paths on the tree) between every two of its servers, counts rings per link, and takes
the tightest share b_l / f(max(1, xi1 c_l)); it shares no code with the package's
time model (which uses the servers on each side of a link) or simulator (which jumps
from event to event).
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any

import networkx as nx
from hypothesis import reject
from hypothesis import strategies as st

from rar_opt import Cluster, InputError, Instance, Job, Schedule
from rar_opt.cluster.topology import Topology

from .strategies import (
    arbitrary_schedules,
    communication_heavy_instances,
    feasible_schedules,
    reference_phi,
    tiny_instances,
)


def with_topology(
    instance: Instance, racks: Any, server_link: Any, rack_link: Any = None, horizon: int | None = None
) -> Instance:
    """``instance`` on servers in ``racks`` under a spine (InputError if a job could now stall)."""
    cluster = dataclasses.replace(instance.cluster, topology=Topology.from_racks(racks, server_link, rack_link))
    return dataclasses.replace(instance, cluster=cluster, horizon=horizon or instance.horizon)


@st.composite
def topologies(draw: st.DrawFn, n_servers: int, b_inter: float) -> Topology:
    """Two or three racks under a spine (or a deeper chain of switches), link bandwidths
    drawn around ``b_inter`` (often all equal, often mixed)."""
    kind = draw(st.sampled_from(["racks", "racks", "chain"]))
    bw = st.sampled_from([b_inter, b_inter, 0.5 * b_inter, 2.0 * b_inter, 0.75 * b_inter])
    if kind == "chain":  # switches a - b - c in a line, each server hangs off one of them
        home = [draw(st.sampled_from("abc")) for _ in range(n_servers)]
        links = [(s, home[s], draw(bw)) for s in range(n_servers)]
        return Topology((*links, ("a", "b", draw(bw)), ("b", "c", draw(bw))))
    n_racks = draw(st.integers(2, min(3, n_servers)))
    rack_of = [s % n_racks for s in range(n_servers)]
    rack_of = draw(st.permutations(rack_of))
    racks = [[s for s in range(n_servers) if rack_of[s] == r] for r in range(n_racks)]
    server_link = draw(st.one_of(bw, st.lists(bw, min_size=n_servers, max_size=n_servers)))
    rack_link = draw(st.one_of(bw, st.lists(bw, min_size=n_racks, max_size=n_racks)))
    order = [s for r in racks for s in r]
    if isinstance(server_link, list):  # from_racks lists per server in rack order
        server_link = [server_link[s] for s in order]
    return Topology.from_racks(racks, server_link, rack_link)


def _on(instance: Instance, topology: Topology, horizon: int | None = None) -> Instance:
    try:
        cluster = dataclasses.replace(instance.cluster, topology=topology)
        return dataclasses.replace(instance, cluster=cluster, horizon=horizon or instance.horizon)
    except InputError:  # slower links can make a job's worst case stall: not an instance
        reject()


@st.composite
def topology_instance_and_schedule(draw: st.DrawFn, feasible: bool = True) -> tuple[Instance, Schedule]:
    """A tiny (or communication-heavy) instance on two or more servers with a drawn
    topology, and a schedule for it."""
    base = draw(st.one_of(tiny_instances(), communication_heavy_instances()))
    if base.num_servers < 2:
        reject()
    inst = _on(base, draw(topologies(base.num_servers, base.cluster.b_inter)), horizon=10**6)
    return inst, draw(feasible_schedules(inst) if feasible else arbitrary_schedules(inst))


@st.composite
def micro_topology_instances(draw: st.DrawFn) -> Instance:
    """Brute-forceable: 2-3 jobs on three small servers in two racks, rings that must often
    split, rack links often slower than the uplinks (so crossing the racks costs)."""
    servers = tuple(draw(st.lists(st.integers(1, 2), min_size=3, max_size=3)))
    cluster = Cluster(
        servers=servers,
        b_inter=1.0,
        b_intra=draw(st.sampled_from([4.0, 10.0])),
        alpha=draw(st.sampled_from([0.5, 1.0])),
        xi2=draw(st.sampled_from([0.0, 0.02])),
    )
    jobs = tuple(
        Job(
            f"j{j}",
            gpus=draw(st.integers(1, 3)),
            iterations=draw(st.integers(1, 6)),
            grad_size=draw(st.sampled_from([0.0, 0.05, 0.1, 0.15])),
            bwd_time=draw(st.sampled_from([0.1, 0.15, 0.2])),
        )
        for j in range(draw(st.integers(2, 3)))
    )
    base = Instance("micro-topology", 10**6, cluster, jobs)
    racks = draw(st.sampled_from([[[0, 1], [2]], [[0], [1, 2]], [[0, 2], [1]]]))
    server_link = draw(st.sampled_from([1.0, [1.0, 1.0, 0.6]]))
    topo = Topology.from_racks(racks, server_link, draw(st.sampled_from([0.3, 0.5, 1.0, 2.0])))
    probe = _on(base, topo)
    horizon = int(probe.bounds.rho_max.sum())
    if horizon > 12:
        reject()
    return _on(base, topo, horizon=horizon)


# -- the reference ---------------------------------------------------------------------------
def reference_links(topology: Topology, servers: list[int]) -> set[frozenset]:
    """The links on the paths between every two of ``servers`` (a ring over them uses these)."""
    used: set[frozenset] = set()
    for a, b in itertools.combinations(servers, 2):
        path = nx.shortest_path(topology.graph, a, b)
        used |= {frozenset(e) for e in itertools.pairwise(path)}
    return used


def reference_topology_simulate(instance: Instance, schedule: Schedule, max_slots: int = 10_000) -> dict:
    """Step slot by slot with per-link contention; completion times and per slot (c_s on the
    server uplinks, phi, rings per link keyed by the link's two ends)."""
    c, topo = instance.cluster, instance.cluster.topology
    assert topo is not None
    bandwidth = {frozenset((a, b)): bw for a, b, bw in topo.links}
    n_jobs, n_servers = instance.num_jobs, instance.num_servers
    y, a = schedule.placement_array, schedule.starts
    servers = [[s for s in range(n_servers) if y[j][s] > 0] for j in range(n_jobs)]
    links = [reference_links(topo, servers[j]) for j in range(n_jobs)]
    done, completion, trace = [0] * n_jobs, [-1] * n_jobs, {}
    t = min(a)
    while any(v < 0 for v in completion) and t < min(a) + max_slots:
        active = [j for j in range(n_jobs) if a[j] <= t and completion[j] < 0]
        count = {link: sum(1 for j in active if link in links[j]) for link in bandwidth}
        its = [0] * n_jobs
        for j in active:
            job, n = instance.jobs[j], len(servers[j])
            if n >= 2:
                shares = []
                for link in links[j]:
                    k = max(1.0, c.xi1 * count[link])
                    f = k + c.alpha * (k - 1) if c.contention.name == "linear" else k ** (1 + c.alpha)
                    shares.append(bandwidth[link] / f)
                bw = min(shares)
            else:
                bw = c.b_intra
            g = job.gpus
            tau = (
                2 * job.grad_size * (g - 1) / (g * bw)
                + job.grad_size * (g - 1) / (g * c.reduce_speed)
                + c.xi2 * n
                + job.fwd_time * job.batch_size
                + job.bwd_time
            )
            its[j] = reference_phi(tau)
        for j in active:
            done[j] += its[j]
            if done[j] >= instance.jobs[j].iterations:
                completion[j] = t + 1
        uplinks = [count[frozenset((s, next(iter(topo.graph[s]))))] for s in range(n_servers)]
        trace[t] = (uplinks, its, count)
        t += 1
    return {"completion": completion, "trace": trace}
