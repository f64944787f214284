"""Pricing contention on intervals: rows that every schedule satisfies (docs/exactness.md,
"Pricing contention on intervals").

Two split jobs i and j that use a common server s are both counted in c_s in every slot
where both are active, so each sees a contention level p >= 2 there and gets at most
phi(2, n) iterations in such a slot (phi is non-increasing in p), against phi(1, n)
alone. So job j has O_j >= (the slots its interval shares with i's) contended slots for
every such i, and over its d_j = C_j - a_j slots it needs

    phi(1, n) (d_j - O_j) + phi(2, n) O_j >= F_j.

Every schedule satisfies these rows with its own starts, completions and placements and
O_j its largest such overlap (at most its contended slots; the row's left side falls as
O_j grows, so a smaller O_j keeps it). The contention-free relaxation with these rows
(``cfree.Options(priced=True)``) is a relaxation that sees contention; in the full model
(``cpsat.Options(pricing=True)``) they are redundant rows for the search.
"""

from __future__ import annotations

from typing import Any

from ortools.sat.python import cp_model

from rar_opt.instance import Instance

__all__ = ["add_pricing", "contention_rates"]


def contention_rates(instance: Instance) -> dict[tuple[int, int], tuple[int, int]]:
    """(phi_j(1, n), phi_j(2, n)) for every job j and span n >= 2 it may take, where the
    second is below the first: the iterations per slot of job j split over n servers,
    alone on its servers and at contention level 2 (at least as many as at any higher
    level: phi is non-increasing in p). Spans where contention costs nothing are left out."""
    phi, b = instance.time_model.phi_table(2), instance.bounds
    out = {}
    for j in range(instance.num_jobs):
        for n in range(max(2, int(b.n_min[j])), int(b.n_max[j]) + 1):
            alone, shared = int(phi[j, 1, n]), int(phi[j, 2, n])
            if shared < alone:
                out[j, n] = (alone, shared)
    return out


def add_pricing(
    m: cp_model.CpModel,
    instance: Instance,
    horizon: int,
    start: list[Any],
    end: list[Any],
    durations: list[Any],
    spans: dict[int, dict[int, Any]],
    used: list[list[Any]],
    split: dict[int, Any],
) -> int:
    """The pricing rows (module docstring) on a CP-SAT model with job starts ``start``,
    completions ``end``, durations ``durations`` (end - start), the span literals
    ``spans[j][n]`` and split literal ``split[j]`` of every split-capable job j, and the
    "j uses s" literals ``used[j][s]``: per such job its contended slots O_j, at least its
    overlap with every split job that shares a server with it, and
    phi(1, n) d_j - (phi(1, n) - phi(2, n)) O_j >= F_j on span n. Returns the number of
    pairs priced."""
    rates = contention_rates(instance)
    priced = sorted({j for j, _ in rates})
    if not priced:
        return 0
    capable = sorted(split)
    contended = {j: m.new_int_var(0, horizon, f"O{j}") for j in priced}
    for (j, n), (alone, shared) in rates.items():
        iters = int(instance.jobs[j].iterations)
        m.add(alone * durations[j] - (alone - shared) * contended[j] >= iters).only_enforce_if(spans[j][n])
        m.add(contended[j] <= durations[j])
    pairs = 0
    n_servers = instance.num_servers
    for i in capable:
        for j in capable:
            if j <= i or (i not in contended and j not in contended):
                continue
            share = m.new_bool_var(f"share{i}_{j}")
            for s in range(n_servers):  # both split and both on s: they count each other in c_s
                m.add_bool_or([~used[i][s], ~used[j][s], ~split[i], ~split[j], share])
            low = m.new_int_var(0, horizon, f"lo{i}_{j}")
            high = m.new_int_var(0, horizon, f"hi{i}_{j}")
            m.add_max_equality(low, [start[i], start[j]])
            m.add_min_equality(high, [end[i], end[j]])
            for k in (i, j):
                if k in contended:
                    m.add(contended[k] >= high - low).only_enforce_if(share)
            pairs += 1
    return pairs
