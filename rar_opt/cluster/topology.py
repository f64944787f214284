"""The cluster's network as a tree of links (docs/model.md section 3.8).

The paper's setting is a star: every server has one uplink to a central switch, and a
split ring's traffic crosses the uplinks of all its servers. A :class:`Topology`
generalises this to any tree of servers and switches (servers, top-of-rack switches, a
spine), each link with its own bandwidth. A ring *uses* a link when it has servers on both
sides of it (the link's removal would cut the ring): with servers as leaves, that is the
uplink of every server of a split job, plus every switch-to-switch link that separates
its servers (for two racks under a spine: both racks' uplinks when the ring spans both).

In an instance file (docs/formats.md) a topology is either an explicit edge list,
``{"links": [[0, "tor0", 25.0], ["tor0", "spine", 40.0], ...]}`` (an integer endpoint is
a server index, a string a switch name), or the two-level shorthand
``{"racks": [[0, 1], [2, 3]], "server_link": 25.0, "rack_link": 40.0}`` (one ToR switch
per rack, a spine above them; with one rack there is no spine and it is the star).

This module only describes the network and which links a ring uses; the time model
(:mod:`rar_opt.cluster.timemodel`) turns link counts into bandwidths.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from rar_opt.errors import InputError
from rar_opt.support import jsonio as jio

if TYPE_CHECKING:
    import networkx as nx

# networkx is imported where a topology is used (a star, the paper's setting, needs none):
# it is a quarter of a second of every command's start-up

Node = int | str
"""A server (its index) or a switch (its name)."""


@dataclass(frozen=True)
class LinkLayout:
    """The links of a topology as arrays over the servers 0..S-1.

    ``server_bw[s]``: bandwidth of server s's uplink (used by every split ring on s).
    ``inner_side[e]``: the servers on one side of switch-to-switch link e (a ring uses e
    when it has servers on both sides); ``inner_bw[e]`` its bandwidth; ``inner_name[e]``
    the link as ``"a-b"``. Links that separate no servers are left out (no ring uses them).
    """

    server_bw: np.ndarray  # (S,) float
    inner_side: np.ndarray  # (E, S) bool
    inner_bw: np.ndarray  # (E,) float
    inner_name: tuple[str, ...]

    @property
    def num_inner(self) -> int:
        """E, the number of switch-to-switch links some ring can use."""
        return len(self.inner_bw)

    @property
    def uniform(self) -> bool:
        """Whether every link has the same bandwidth."""
        bw = np.concatenate([self.server_bw, self.inner_bw])
        return bool(np.all(bw == bw[0]))

    @property
    def is_star(self) -> bool:
        """The paper's setting: no switch-to-switch link and one bandwidth on every uplink."""
        return self.num_inner == 0 and self.uniform

    def used_links(self, servers: np.ndarray) -> np.ndarray:
        """Which switch-to-switch links a ring over ``servers`` (indices) uses, (E,) bool."""
        servers = np.asarray(servers, dtype=np.int64)
        if len(servers) < 2:
            return np.zeros(self.num_inner, dtype=bool)
        inside = self.inner_side[:, servers].sum(axis=1)
        return (inside > 0) & (inside < len(servers))


@dataclass(frozen=True)
class Topology:
    """A tree network: ``links`` are ``(a, b, bandwidth)`` with a server as an int, a switch as a str.

    Validated on construction: every bandwidth finite and > 0, no self-loop, no repeated
    link, no link between two servers (a server hangs off a switch), connected and without
    cycles (a tree, so the path between two servers is unique). That every server of the
    cluster appears, and only those, is checked by :meth:`check_servers` (the cluster
    does it). ``shorthand`` remembers the racks form it was made from, for writing files.
    """

    links: tuple[tuple[Node, Node, float], ...]
    shorthand: Mapping[str, Any] | None = field(default=None, compare=False, hash=False)

    def __post_init__(self) -> None:
        links = jio.check_list(self.links, "links", min_len=1)
        clean: list[tuple[Node, Node, float]] = []
        seen: dict[frozenset[Node], int] = {}
        for i, link in enumerate(links):
            where = f"links[{i}]"
            item = jio.check_list(link, where)
            if len(item) != 3:
                raise InputError(f"must be [a, b, bandwidth], got {len(item)} entries", where=where)
            a, b = (_node(v, f"{where}[{k}]") for k, v in enumerate(item[:2]))
            bw = jio.check_real(item[2], f"{where}[2]", lo=0.0, lo_open=True)
            if a == b:
                raise InputError(f"links {a!r} to itself", where=where)
            if isinstance(a, int) and isinstance(b, int):
                raise InputError(f"joins two servers ({a}, {b}); a server hangs off a switch", where=where)
            key = frozenset((a, b))
            if key in seen:
                raise InputError(f"repeats links[{seen[key]}] ({a!r}-{b!r})", where=where)
            seen[key] = i
            clean.append((a, b, bw))
        object.__setattr__(self, "links", tuple(clean))
        import networkx as nx

        graph = self.graph
        if not nx.is_connected(graph):
            parts = sorted(nx.connected_components(graph), key=len, reverse=True)
            cut = sorted(map(str, parts[1]))
            raise InputError(f"the network is disconnected: {', '.join(cut)} cannot reach the rest", where="links")
        if graph.number_of_edges() != graph.number_of_nodes() - 1:
            cycle = nx.find_cycle(graph)
            raise InputError(
                f"the network has a cycle ({cycle[0][0]!r}-{cycle[0][1]!r}-...): it must be a tree", where="links"
            )

    @cached_property
    def graph(self) -> nx.Graph:
        """The network as a read-only networkx graph; edges carry ``bandwidth``."""
        import networkx as nx

        g = nx.Graph()
        for a, b, bw in self.links:
            g.add_edge(a, b, bandwidth=bw)
        return nx.freeze(g)

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "graph"}

    # -- construction ---------------------------------------------------------------------
    @classmethod
    def star(cls, n_servers: int, bandwidth: float) -> Topology:
        """The paper's setting: every server's uplink (``bandwidth``) to one switch."""
        return cls.from_racks([list(range(n_servers))], bandwidth)

    @classmethod
    def from_racks(cls, racks: Any, server_link: Any, rack_link: Any = None) -> Topology:
        """Servers in racks (lists of indices), one ToR switch per rack and a spine above.

        ``server_link`` is one bandwidth for every server uplink or a list per server (in
        the order the racks list them); ``rack_link`` one bandwidth or a list per rack
        (needed when there are two racks or more; one rack is the star, no spine).
        """
        racks_ = jio.check_list(racks, "racks", min_len=1)
        members = [jio.check_list(r, f"racks[{i}]", min_len=1) for i, r in enumerate(racks_)]
        servers = [jio.check_int(s, f"racks[{i}][{k}]", lo=0) for i, r in enumerate(members) for k, s in enumerate(r)]
        server_bw = _per_item(server_link, "server_link", len(servers))
        links: list[tuple[Node, Node, float]] = []
        for s, bw in zip(servers, server_bw, strict=True):
            rack = next(i for i, r in enumerate(members) if s in r)
            links.append((s, f"tor{rack}", bw))
        shorthand: dict[str, Any] = {"racks": [list(r) for r in members], "server_link": server_link}
        if len(members) >= 2:
            if rack_link is None:
                raise InputError("is required with two racks or more", where="rack_link")
            for i, bw in enumerate(_per_item(rack_link, "rack_link", len(members))):
                links.append((f"tor{i}", "spine", bw))
            shorthand["rack_link"] = rack_link
        elif rack_link is not None:
            raise InputError("has no meaning with one rack (the star has no spine)", where="rack_link")
        dup = sorted({s for s in servers if servers.count(s) > 1})
        if dup:
            raise InputError(f"server {dup[0]} is in more than one rack (or twice in one)", where="racks")
        return cls(tuple(links), shorthand=jio.freeze(shorthand))

    @classmethod
    def from_dict(cls, data: Any, default_bandwidth: float) -> Topology:
        """Read the JSON object: ``{"links": [...]}`` or ``{"racks", "server_link", "rack_link"}``.

        ``server_link`` defaults to ``default_bandwidth`` (the cluster's b_inter).
        """
        if isinstance(data, Mapping) and "links" in data:
            both = sorted(k for k in ("racks", "server_link", "rack_link") if k in data)
            if both:
                raise InputError(f"give either links or racks (with server_link, rack_link), not links and {both[0]}")
            d = jio.expect_object(data, required=("links",))
            return cls(tuple(d["links"]))
        d = jio.expect_object(data, required=("racks",), optional=("server_link", "rack_link"))
        return cls.from_racks(d["racks"], d.get("server_link", default_bandwidth), d.get("rack_link"))

    def to_dict(self) -> dict[str, Any]:
        """The JSON object (the racks form when it was made from one, else the edge list)."""
        if self.shorthand is not None:
            return {k: _thaw(v) for k, v in self.shorthand.items()}
        return {"links": [[a, b, bw] for a, b, bw in self.links]}

    # -- reading it ------------------------------------------------------------------------
    def check_servers(self, n_servers: int) -> None:
        """InputError (field ``links``, or ``racks`` for the racks form) unless the servers are
        exactly 0..n_servers-1, each a leaf."""
        field = "racks" if self.shorthand is not None else "links"
        servers = {v for v in self.graph.nodes if isinstance(v, int)}
        extra = sorted(s for s in servers if s >= n_servers)
        if extra:
            raise InputError(f"names server {extra[0]}, but the cluster has {n_servers} servers", where=field)
        missing = sorted(set(range(n_servers)) - servers)
        if missing:
            raise InputError(f"server {missing[0]} is missing from the network", where=field)
        inner = [s for s in sorted(servers) if self.graph.degree[s] != 1]
        if inner:
            raise InputError(
                f"server {inner[0]} has {self.graph.degree[inner[0]]} links; a server has one uplink", where="links"
            )

    def layout(self, n_servers: int) -> LinkLayout:
        """The links as arrays over servers 0..n_servers-1 (:class:`LinkLayout`)."""
        import networkx as nx

        self.check_servers(n_servers)
        g = self.graph
        server_bw = np.array([g.edges[s, next(iter(g[s]))]["bandwidth"] for s in range(n_servers)], dtype=float)
        sides, bws, names = [], [], []
        for a, b, bw in self.links:
            if isinstance(a, int) or isinstance(b, int):
                continue
            cut = g.copy()
            cut.remove_edge(a, b)
            side = np.zeros(n_servers, dtype=bool)
            side[[v for v in nx.node_connected_component(cut, a) if isinstance(v, int)]] = True
            if 0 < side.sum() < n_servers:  # a link that separates no servers is never used
                sides.append(side)
                bws.append(bw)
                names.append(f"{a}-{b}")
        return LinkLayout(
            server_bw=_readonly(server_bw),
            inner_side=_readonly(np.array(sides, dtype=bool).reshape(len(sides), n_servers)),
            inner_bw=_readonly(np.array(bws, dtype=float)),
            inner_name=tuple(names),
        )


def _node(value: Any, where: str) -> Node:
    if isinstance(value, str):
        if not value.strip():
            raise InputError("a switch name must not be empty", where=where)
        return value
    return jio.check_int(value, where, lo=0)


def _per_item(value: Any, where: str, count: int) -> list[float]:
    if isinstance(value, list | tuple):
        if len(value) != count:
            raise InputError(f"has {len(value)} entries, expected {count}", where=where)
        return [jio.check_real(v, f"{where}[{i}]", lo=0.0, lo_open=True) for i, v in enumerate(value)]
    return [jio.check_real(value, where, lo=0.0, lo_open=True)] * count


def _thaw(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_thaw(v) for v in value]
    return value


def _readonly(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a
