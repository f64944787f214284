"""The constants a time-indexed model of RAR-DDLS reads, taken once from the instance.

The compact MILP (:mod:`.compact`) and the CP-SAT model (:mod:`.cpsat`) both read their
capacities, GPU counts, iterations, fastest execution times, spans and the time model's
rate table phi[j, p, n] from one :class:`CompactData`, built (and its horizon checked) in
one place.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rar_opt.errors import InputError
from rar_opt.instance import Instance


@dataclass(frozen=True)
class CompactData:
    """The constants the row families read, taken once from the instance and its time model."""

    horizon: int
    cap: list[int]  # O_s
    gpus: list[int]  # G_j
    iters: list[int]  # F_j
    rho_min: list[int]  # fastest execution time of each job
    release: list[int]  # r_j: the first slot job j may start in (0 without arrivals)
    n_lo: list[int]  # fewest servers job j can span
    n_hi: list[int]  # most servers job j can span
    splittable: list[bool]  # n_hi >= 2
    levels: int  # P: the most contenders a split job can see
    phi: np.ndarray  # phi[j, p, n] (the time model's table)
    phi_max: list[int]  # iterations per slot at best
    link_level: np.ndarray | None = None  # topology: [l, c] level of link l carrying c rings (docs/model.md 3.8)
    link_side: np.ndarray | None = None  # topology: [e, s] server s is on one side of switch link e

    @classmethod
    def of(cls, instance: Instance, horizon: int) -> CompactData:
        """The constants of ``instance`` over ``horizon`` slots; a horizon shorter than a
        job's fastest completion (its release plus its fastest execution time) is refused
        (no model over it has a point)."""
        tm, b = instance.time_model, instance.bounds
        longest = int((instance.releases + b.rho_min).max())
        if horizon < longest:
            raise InputError(f"= {horizon} is shorter than a job's fastest completion {longest}", where="horizon")
        cap = [int(o) for o in instance.cluster.servers]
        n_hi = [int(n) for n in b.n_max]
        splittable = [n >= 2 for n in n_hi]
        levels = max(1, min(sum(splittable), max(cap)))
        link_level = None
        if tm.links is not None:  # a topology: the level of each link at each count (links: uplinks, then inner)
            bound = np.minimum(tm.link_bound, sum(splittable))
            link_level = np.zeros((len(bound), int(bound.max()) + 1), dtype=np.int64)
            for link, (bw, top) in enumerate(zip(tm.link_bandwidth, bound, strict=True)):
                link_level[link, 1 : top + 1] = tm.level_of(bw, np.arange(1, top + 1))
            levels = max(1, int(link_level.max()))
        return cls(
            horizon=horizon,
            cap=cap,
            gpus=[int(g) for g in instance.arrays.gpus],
            iters=[int(f) for f in instance.arrays.iterations],
            rho_min=[int(r) for r in b.rho_min],
            release=[int(r) for r in instance.releases],
            n_lo=[int(n) for n in b.n_min],
            n_hi=n_hi,
            splittable=splittable,
            levels=levels,
            phi=tm.phi_table(levels),
            phi_max=[int(p) for p in b.phi_max],
            link_level=link_level,
            link_side=None if tm.links is None else tm.links.inner_side,
        )
