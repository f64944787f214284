"""A time-indexed LP relaxation for the total completion time sum_j C_j (arrays, no solve).

Drop the servers' boundaries, the placements' shapes and the contention of a schedule and
keep only what no schedule can avoid (docs/exactness.md, "The flow LP"): job j holds G_j of the
cluster's N GPUs in every slot from its start a_j >= r_j to its completion, and runs for at
least rho_min_j slots. So its GPUs are held in at least the slots a_j .. a_j + rho_min_j - 1,
and C_j >= a_j + rho_min_j. The time-indexed LP over the GPU pool (the classical
time-indexed relaxation of parallel-machine scheduling; van den Akker, Hoogeveen and van
de Velde, INFORMS J. Comput. 11(2), 1999) has one column x[k, t] per job *kind* k and
start slot t:

* sum over the kinds k of job j and their starts t >= r_j of x[k, t] = 1 (one row per job);
* for every resource q and slot tau: sum of u[k, q] x[k, t] over the columns that hold
  their GPUs in slot tau (t <= tau < t + d_k) is at most capacity[q];
* objective: sum of (t + d_k) x[k, t].

Resources and kinds (``Options.classes``):

* resource 0 is the pool, capacity N; every kind holds G_j of it for d_k slots;
* without classes, each job has one kind: d = rho_min_j;
* with classes, server class A_c = {s : O_s >= c} for each capacity c above the smallest,
  capacity N_A = sum of O_s over A_c. A job with G_j > max{O_s : O_s < c} fits unsplit on no
  server outside A_c (a *member* of A_c). Each job has up to two kinds: ``single`` (unsplit,
  d = single_j of :attr:`Instance.modes <rar_opt.instance.Instance.modes>`, holding G_j of every class it is a member
  of) and ``split`` (over two servers or more, d = split_j, holding only the pool). A single
  kind that is no faster than the split kind is left out (the split kind is as short and
  holds less), and a job that is a member of no class has one kind, d = rho_min_j.

Rows are indexed resource-major: row q * slots + tau; the job rows follow.

Size: each kind can start in every slot, so the full LP has up to kinds x slots columns,
and column generation prices all of them in every round (about a second per 20 million
at 100 times the paper). :func:`too_large` refuses an instance whose jobs x slots
(:func:`count_cells`) pass :data:`MAX_CELLS`: a loose horizon (10^9 slots) or an
instance far beyond 100 times the paper.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rar_opt.cluster.timemodel import NEVER
from rar_opt.formulations.base import check_flag
from rar_opt.instance import Instance

MAX_CELLS = 50_000_000
"""The largest LP built by the bounds, in jobs x slots cells (16,000 jobs x 1,500 slots is 24 million)."""


def count_cells(instance: Instance) -> int:
    """The LP's size measure: jobs x slots, slots = the horizon plus the longest kind."""
    m = instance.modes
    longest = max(int(np.max(np.where(t < NEVER, t, 0), initial=0)) for t in (m.rho, m.single, m.split))
    return instance.num_jobs * (instance.horizon + longest)


def too_large(instance: Instance, max_cells: int = MAX_CELLS) -> str | None:
    """Why the LP of ``instance`` is not built for a bound, or None."""
    cells = count_cells(instance)
    return f"{cells:,} job x slot cells (limit {max_cells:,})" if cells > max_cells else None


@dataclass(frozen=True)
class Options:
    """Options of the flow LP."""

    classes: bool = True  # the server-class resources and the single/split kinds
    slots: int | None = None  # time-indexed rows 0..slots-1; None: the horizon plus the longest kind

    def __post_init__(self) -> None:
        check_flag(self.classes, "classes")
        if self.slots is not None and (not isinstance(self.slots, int) or self.slots < 1):
            raise ValueError(f"slots must be a positive integer or None, got {self.slots!r}")


@dataclass(frozen=True)
class FlowLp:
    """The data of the LP: resources (rows per slot), kinds (columns per start)."""

    name: str
    slots: int  # capacity rows per resource: slots 0..slots-1
    capacity: np.ndarray  # (Q,) GPUs of each resource (0: the pool)
    resource_names: tuple[str, ...]
    num_jobs: int
    job: np.ndarray  # (K,) the job of each kind
    duration: np.ndarray  # (K,) slots the kind holds its GPUs, at least
    release: np.ndarray  # (K,) its job's release: the earliest start
    usage: np.ndarray  # (K, Q) GPUs of each resource the kind holds while it runs
    kind_names: tuple[str, ...]  # "rho", "single" or "split"

    @property
    def num_kinds(self) -> int:
        return len(self.job)

    @property
    def num_resources(self) -> int:
        return len(self.capacity)

    @property
    def num_capacity_rows(self) -> int:
        return self.num_resources * self.slots

    def last_start(self) -> np.ndarray:
        """(K,) the last start whose slots all lie inside the rows (may be < release: none)."""
        return self.slots - self.duration


def classes_of(instance: Instance) -> list[tuple[int, int, int]]:
    """The server classes: (c, N_A, largest capacity outside A) for each capacity c above the smallest."""
    return capacity_classes(instance.cluster.capacity)


def capacity_classes(capacity: np.ndarray) -> list[tuple[int, int, int]]:
    """:func:`classes_of` for the servers' capacities ``capacity``."""
    cap = np.asarray(capacity, dtype=np.int64)
    out = []
    for c in np.unique(cap)[1:]:
        out.append((int(c), int(cap[cap >= c].sum()), int(cap[cap < c].max())))
    return out


def rows_hold(capacity: np.ndarray, sizes: np.ndarray) -> bool:
    """Whether jobs of ``sizes`` GPUs, all unsplit at once, satisfy one slot's rows of the
    LP: the pool row, every class row, and each job on some server of its size or more.

    Necessary for the jobs to fit unsplit on the servers; when every size and capacity is
    a power of two it is also sufficient (docs/exactness.md, "What a slot-by-slot bound
    cannot see"): then the LP's integer points are the migratory schedules."""
    cap = np.asarray(capacity, dtype=np.int64)
    g = np.asarray(sizes, dtype=np.int64)
    if len(g) == 0:
        return True
    if int(g.max()) > int(cap.max()) or int(g.sum()) > int(cap.sum()):
        return False
    return all(int(g[g > outside].sum()) <= n_a for _, n_a, outside in capacity_classes(cap))


def build(instance: Instance, options: Options | None = None) -> FlowLp:
    """The LP's data for ``instance`` (module docstring)."""
    options = options or Options()
    m = instance.modes
    gpus = m.gpus
    releases = instance.releases.astype(np.int64)
    classes = classes_of(instance) if options.classes else []
    n_res = 1 + len(classes)
    capacity = np.array([m.num_gpus] + [n_a for _, n_a, _ in classes], dtype=np.int64)
    names = ("pool", *(f"O>={c}" for c, _, _ in classes))
    job, dur, use, kname = [], [], [], []
    for j in range(instance.num_jobs):
        member = np.array([gpus[j] > outside for _, _, outside in classes], dtype=bool)
        single, split, rho = int(m.single[j]), int(m.split[j]), int(m.rho[j])
        if not member.any():
            job.append(j)
            dur.append(rho)
            u = np.zeros(n_res, dtype=np.int64)
            u[0] = gpus[j]
            use.append(u)
            kname.append("rho")
            continue
        if single < NEVER and (split >= NEVER or single < split):
            u = np.zeros(n_res, dtype=np.int64)
            u[0] = gpus[j]
            u[1:][member] = gpus[j]
            job.append(j)
            dur.append(single)
            use.append(u)
            kname.append("single")
        if split < NEVER:
            u = np.zeros(n_res, dtype=np.int64)
            u[0] = gpus[j]
            job.append(j)
            dur.append(split)
            use.append(u)
            kname.append("split")
    duration = np.array(dur, dtype=np.int64)
    slots = options.slots if options.slots is not None else int(instance.horizon + duration.max())
    job_a = np.array(job, dtype=np.int64)
    return FlowLp(
        name=instance.name,
        slots=slots,
        capacity=capacity,
        resource_names=names,
        num_jobs=instance.num_jobs,
        job=job_a,
        duration=duration,
        release=releases[job_a],
        usage=np.array(use, dtype=np.int64).reshape(len(job), n_res),
        kind_names=tuple(kname),
    )


def _checked(lp: FlowLp, kinds: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    kinds = np.asarray(kinds, dtype=np.int64)
    starts = np.asarray(starts, dtype=np.int64)
    if np.any(starts < lp.release[kinds]) or np.any(starts > lp.last_start()[kinds]):
        raise ValueError("a column starts before its release or runs past the rows")
    return kinds, starts


def dense_columns(
    lp: FlowLp, kinds: np.ndarray, starts: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The columns (kind, start) of the *dense* form, in CSC: (cost, col_starts, row_index, value).

    Rows: capacity rows q * slots + tau, sum of u x <= capacity[q], then one row per job
    (= 1). Each column has value u[k, q] in the rows of each resource q it holds, for each
    of its slots tau, and 1 in its job's row. Every start must satisfy
    release <= t <= last_start."""
    kinds, starts = _checked(lp, kinds, starts)
    cost = (starts + lp.duration[kinds]).astype(float)
    col, q = np.nonzero(lp.usage[kinds])  # one block of d_k entries per held resource
    length = lp.duration[kinds][col]
    first = np.cumsum(length) - length
    offset = np.arange(int(length.sum()), dtype=np.int64) - np.repeat(first, length)
    cap_col = np.repeat(col, length)
    cap_row = np.repeat(q * lp.slots + starts[col], length) + offset
    cap_val = np.repeat(lp.usage[kinds][col, q].astype(float), length)
    n = len(kinds)
    all_col = np.concatenate([cap_col, np.arange(n, dtype=np.int64)])
    all_row = np.concatenate([cap_row, lp.num_capacity_rows + lp.job[kinds]])
    all_val = np.concatenate([cap_val, np.ones(n)])
    order = np.argsort(all_col, kind="stable")
    index, value = all_row[order], all_val[order]
    counts = np.bincount(all_col, minlength=n)
    col_starts = (np.cumsum(counts) - counts).astype(np.int64)
    return cost, col_starts, index, value


def all_columns(lp: FlowLp) -> tuple[np.ndarray, np.ndarray]:
    """Every column of the full LP: (kinds, starts), kinds in order, starts ascending."""
    last = lp.last_start()
    kinds, starts = [], []
    for k in range(lp.num_kinds):
        t = np.arange(int(lp.release[k]), int(last[k]) + 1, dtype=np.int64)
        kinds.append(np.full(len(t), k, dtype=np.int64))
        starts.append(t)
    return np.concatenate(kinds), np.concatenate(starts)


def dense_row_bounds(lp: FlowLp) -> tuple[np.ndarray, np.ndarray]:
    """The dense form's row bounds: capacity rows (-inf, capacity], job rows = 1."""
    cap = np.repeat(lp.capacity.astype(float), lp.slots)
    lower = np.concatenate([np.full(len(cap), -np.inf), np.ones(lp.num_jobs)])
    upper = np.concatenate([cap, np.ones(lp.num_jobs)])
    return lower, upper


# -- the event form: the same LP with three nonzeros per column --------------------------
# A dense column has d_k nonzeros per resource. Take instead one *load* variable
# L[q, tau] per resource and slot, bounded above by capacity[q] (free below), and one
# balance row per resource and slot:
#     L[q, tau] - L[q, tau - 1] - (u of the columns starting at tau) + (u of those whose
#     last slot is tau - 1) = 0        (L[q, -1] = 0)
# By induction L[q, tau] is the load of resource q in slot tau, so the bound on L is the
# dense capacity row, and the two LPs have the same feasible x and the same optimum. A
# column has -u[k, q] in row (q, t) and +u[k, q] in row (q, t + d_k) (none when
# t + d_k = slots). The price of capacity in slot tau is minus the reduced cost of
# L[q, tau] (>= 0 at an optimum: L is at its upper bound or basic).


def event_columns(
    lp: FlowLp, kinds: np.ndarray, starts: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The columns (kind, start) of the event form in CSC: (cost, col_starts, row_index, value).
    Rows as in the dense form (balance rows q * slots + tau, then the job rows)."""
    kinds, starts = _checked(lp, kinds, starts)
    cost = (starts + lp.duration[kinds]).astype(float)
    n = len(kinds)
    col, q = np.nonzero(lp.usage[kinds])
    u = lp.usage[kinds][col, q].astype(float)
    end = starts[col] + lp.duration[kinds][col]
    inside = end < lp.slots
    all_col = np.concatenate([col, col[inside], np.arange(n, dtype=np.int64)])
    all_row = np.concatenate(
        [q * lp.slots + starts[col], q[inside] * lp.slots + end[inside], lp.num_capacity_rows + lp.job[kinds]]
    )
    all_val = np.concatenate([-u, u[inside], np.ones(n)])
    order = np.argsort(all_col, kind="stable")
    counts = np.bincount(all_col, minlength=n)
    return cost, (np.cumsum(counts) - counts).astype(np.int64), all_row[order], all_val[order]


def load_columns(lp: FlowLp) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The load variables L[q, tau] (column q * slots + tau) in CSC:
    (cost, lower, upper, col_starts, row_index, value)."""
    n = lp.num_capacity_rows
    idx = np.arange(n, dtype=np.int64)
    nxt = (idx % lp.slots) < lp.slots - 1
    all_col = np.concatenate([idx, idx[nxt]])
    all_row = np.concatenate([idx, idx[nxt] + 1])
    all_val = np.concatenate([np.ones(n), -np.ones(int(nxt.sum()))])
    order = np.argsort(all_col, kind="stable")
    counts = np.bincount(all_col, minlength=n)
    upper = np.repeat(lp.capacity.astype(float), lp.slots)
    return (
        np.zeros(n),
        np.full(n, -np.inf),
        upper,
        (np.cumsum(counts) - counts).astype(np.int64),
        all_row[order],
        all_val[order],
    )


def event_row_bounds(lp: FlowLp) -> tuple[np.ndarray, np.ndarray]:
    """The event form's row bounds: balance rows = 0, job rows = 1."""
    rhs = np.concatenate([np.zeros(lp.num_capacity_rows), np.ones(lp.num_jobs)])
    return rhs, rhs.copy()
