"""The per-slot time model (docs/model.md section 3; paper eq. (6)-(9)), implemented once.

Everything in rar-opt that needs a speed (the simulator, the list-scheduling engine, the
coefficients of the exact formulations, the bounds) calls this module. All functions are
vectorised over jobs with numpy.

For an active job j in slot t, with n_j servers spanned (split_j = n_j >= 2):

* (6)  c_s = number of active *split* jobs with y_.s > 0; p_j = max_{s: y_js > 0} c_s if
  split_j, else 0 (a single-server job neither suffers nor causes contention);
* (7)  k_j = max(1, xi1 * p_j)  -- **resolution**: the clamp keeps f at or above f(1) = 1;
* B_j = b_intra if not split_j, else b_inter / f(k_j);
* (8)  tau_j = 2 m_j (G_j-1)/(G_j B_j) + m_j (G_j-1)/(G_j C) + xi2 n_j + dF_j M_j + dB_j;
* (9)  phi_j = floor(1 / tau_j), computed robustly: a tau within a relative 1e-12 of 1/k
  counts as exactly 1/k, so floating-point noise never loses an iteration.

A job started at a_j completes in the first slot e_j at which its iterations reach F_j;
its completion time is C_j = e_j + 1.

With a network topology (:mod:`rar_opt.cluster.topology`, docs/model.md section 3.8) the servers
of (6) generalise to links: c_l counts the active split jobs whose ring uses link l, a
link of bandwidth b_l gives each of them the share b_l / f(max(1, xi1 c_l)), and a split
job's bandwidth is its tightest share, B_j = min over its links. On the star with every
uplink at b_inter this is (6)-(8) exactly, and the code takes the paper's path unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from rar_opt.cluster.topology import LinkLayout, Topology

ContentionFunction = Callable[[Any, float], Any]
"""f(k, alpha) for k >= 1 (array); must satisfy f(1) = 1 and be increasing in k."""


def linear_contention(k: Any, alpha: float) -> Any:
    """The paper's example (section 3): f(k) = k + alpha (k - 1)."""
    return k + alpha * (k - 1.0)


def power_contention(k: Any, alpha: float) -> Any:
    """A convex variant for formulation research: f(k) = k ** (1 + alpha)."""
    return k ** (1.0 + alpha)


@dataclass(frozen=True)
class Contention:
    """A contention function f as a value that travels with the cluster.

    ``fn`` must be a module-level function (so that pickling sends it by reference and a
    worker process gets the same function without any registration); ``name`` is what an
    instance file stores. ``Contention(name, fn)`` checks ``fn`` on a grid: f(1) = 1 and f
    non-decreasing. Calling the value evaluates f(k, alpha); it takes numpy arrays and
    Pyomo expressions alike (the nonconvex model uses it on variables).
    """

    name: str
    fn: ContentionFunction

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"a contention function needs a non-empty name, got {self.name!r}")
        k = np.linspace(1.0, 64.0, 253)
        values = np.asarray(self.fn(k, 0.5), dtype=float)
        if abs(values[0] - 1.0) > 1e-12 or np.any(np.diff(values) < -1e-12):
            raise ValueError(f"contention function {self.name!r} must have f(1) = 1 and be non-decreasing")

    def __call__(self, k: Any, alpha: float) -> Any:
        return self.fn(k, alpha)


LINEAR = Contention("linear", linear_contention)
POWER = Contention("power", power_contention)

CONTENTION_FUNCTIONS: dict[str, Contention] = {c.name: c for c in (LINEAR, POWER)}
"""The names an instance file may use for ``cluster.contention``. Only JSON reading and
writing consult it: a cluster holds the :class:`Contention` value itself."""

FLOOR_RTOL = 1e-12
"""Relative tolerance of the robust floor in (9). tau comes out of about ten floating-point
operations, each off by at most 2^-53 relative, so its error is near 1e-15: 1e-12 absorbs
that with a margin of a thousand, and a tau truly 1e-10 above 1/k keeps its k - 1 iterations
(docs/model.md section 3.5)."""


def register_contention(name: str, fn: ContentionFunction) -> Contention:
    """Make ``fn`` readable from instance files as ``"contention": name``; returns the value.

    Registration matters only for reading JSON in this process: a cluster built in one
    process carries its function to worker processes by itself. Re-registering a name
    with another function is an error (a file would silently change meaning).
    """
    value = Contention(name, fn)
    known = CONTENTION_FUNCTIONS.get(name)
    if known is not None and known != value:
        raise ValueError(f"contention function {name!r} is already registered with another function")
    CONTENTION_FUNCTIONS[name] = value
    return value


def unregister_contention(name: str) -> None:
    """Forget a name registered with :func:`register_contention` (the built-ins stay)."""
    if name in (LINEAR.name, POWER.name):
        raise ValueError(f"{name!r} is built in and cannot be unregistered")
    CONTENTION_FUNCTIONS.pop(name, None)


class ClusterData(Protocol):
    """What the time model reads of a cluster (:class:`rar_opt.instance.Cluster` has it)."""

    @property
    def capacity(self) -> np.ndarray: ...
    @property
    def b_inter(self) -> float: ...
    @property
    def b_intra(self) -> float: ...
    @property
    def reduce_speed(self) -> float: ...
    @property
    def alpha(self) -> float: ...
    @property
    def xi1(self) -> float: ...
    @property
    def xi2(self) -> float: ...
    @property
    def contention(self) -> Contention: ...
    @property
    def topology(self) -> Topology | None: ...


@dataclass(frozen=True)
class JobArrays:
    """The jobs' fields as read-only numpy arrays (index j = job j)."""

    gpus: np.ndarray
    iterations: np.ndarray
    grad_size: np.ndarray
    batch_size: np.ndarray
    fwd_time: np.ndarray
    bwd_time: np.ndarray


NEVER = np.iinfo(np.int64).max // 4
"""Sentinel slot count of a job that makes no progress (phi = 0)."""


def slots_needed(remaining: np.ndarray | int, phi: np.ndarray) -> np.ndarray:
    """ceil(remaining / phi) elementwise, and :data:`NEVER` where phi = 0."""
    remaining, phi = np.broadcast_arrays(np.asarray(remaining, np.int64), np.asarray(phi, np.int64))
    out = np.full(phi.shape, NEVER, dtype=np.int64)
    ok = phi > 0
    out[ok] = -(-remaining[ok] // phi[ok])
    return out


PHI_CAP = 2**53
"""The most iterations per slot (9) counts: beyond 2^53 a float no longer holds every
integer, so floor(1 / tau) means nothing there. A tau of 0 (or below 2^-53) is counted as
the cap, and an instance refuses a job that reaches it (docs/model.md section 3.5)."""


def robust_floor_inverse(tau: np.ndarray) -> np.ndarray:
    """phi = floor(1 / tau) as int64, robust against floating-point error (eq. 9), at most
    :data:`PHI_CAP`."""
    with np.errstate(divide="ignore"):
        q = 1.0 / np.asarray(tau, dtype=float)
    return np.floor(np.minimum(q * (1.0 + FLOOR_RTOL), PHI_CAP)).astype(np.int64)


@dataclass(frozen=True)
class JobBounds:
    """Per-job extremes of the time model over every placement and contention level.

    ``tau_min``/``tau_max``: best and worst per-iteration time (slots); ``phi_max``/
    ``phi_min``: the matching iterations per slot; ``rho_min``/``rho_max``: execution time
    in slots at best and at worst (ceil(F / phi)); ``n_min``/``n_max``: fewest and most
    servers a job can span; ``p_worst``: the largest contention count any job can see.
    """

    tau_min: np.ndarray
    tau_max: np.ndarray
    phi_min: np.ndarray
    phi_max: np.ndarray
    rho_min: np.ndarray
    rho_max: np.ndarray
    n_min: np.ndarray
    n_max: np.ndarray
    p_worst: int

    def __post_init__(self) -> None:
        for name in ("tau_min", "tau_max", "phi_min", "phi_max", "rho_min", "rho_max", "n_min", "n_max"):
            getattr(self, name).setflags(write=False)  # frozen all through: bounds are read from them


class TimeModel:
    """The time model of a cluster and its jobs. Cheap to build; cached on ``Instance.time_model``.

    It reads plain data only (the cluster's constants and capacities, the jobs' arrays),
    so it sits below the data model and imports nothing from it.
    """

    def __init__(self, cluster: ClusterData, jobs: JobArrays) -> None:
        c, a = cluster, jobs
        self.capacity = c.capacity
        self.gpus = a.gpus
        self.iterations = a.iterations
        self._f = c.contention
        self._alpha = c.alpha
        self._b_inter = c.b_inter
        self._b_intra = c.b_intra
        self._xi1 = c.xi1
        self._xi2 = c.xi2
        topology = getattr(c, "topology", None)
        layout = None if topology is None else topology.layout(len(c.capacity))
        if layout is not None and layout.is_star:  # the paper's model, at the uplinks' bandwidth
            self._b_inter = float(layout.server_bw[0])
            layout = None
        self.links: LinkLayout | None = layout
        """The network's links, or None for the paper's per-server model (the star)."""
        # (S + E,): each link's bandwidth and the most split rings it can carry (topology only)
        self.link_bandwidth = np.zeros(0)
        self.link_bound = np.zeros(0, dtype=np.int64)
        self._share_levels: np.ndarray | None = None  # bandwidth per contention level (mixed links)
        self._p_worst = int(min(len(a.gpus), int(c.capacity.max())))
        self._best_level = 1
        if layout is not None:
            self._init_levels(layout)
        frac = (a.gpus - 1) / a.gpus
        # finite inputs whose products overflow (a gradient of 1e308) give inf here, which the
        # instance's check then names as a job whose iteration exceeds a slot; numpy's own
        # warning would only repeat that, on stderr, with a source line
        with np.errstate(over="ignore"):
            # ring exchange volume 2 m (G-1)/G, divided by the bottleneck bandwidth per slot
            self.ring_volume = 2.0 * a.grad_size * frac
            # placement-independent part: reduction compute + forward + backward
            self.fixed_time = a.grad_size * frac / c.reduce_speed + a.fwd_time * a.batch_size + a.bwd_time
            # iterations per slot of every job on one server, where no contention reaches it:
            # the rates below read it instead of evaluating (8)-(9) again at every event; the
            # same operations as tau / tau_at_bandwidth at n = 1, so the same floats
            tau_one = self.ring_volume / np.full(len(a.gpus), self._b_intra) + self.fixed_time + self._xi2 * 1.0
            self.phi_one_server = _readonly(robust_floor_inverse(tau_one))

    def _init_levels(self, lay: LinkLayout) -> None:
        """Contention levels of a topology (docs/model.md section 3.8).

        A link can carry at most min(J, GPUs on either side of it) split rings (each has a
        GPU on both sides; for a server uplink, O_s). With one bandwidth on every link the
        level of a job is its contention count p_j, as in the paper. With several, the
        levels are the pairs (link bandwidth, count) sorted by their share, fastest first,
        so a higher level always means a smaller bandwidth, and a job's level is the one of
        its tightest link: the exact formulations index their rate tables by it.
        """
        cap = self.capacity
        side = lay.inner_side.astype(np.int64) @ cap
        bound = np.concatenate(
            [np.minimum(cap, len(self.gpus)), np.minimum(np.minimum(side, cap.sum() - side), len(self.gpus))]
        )
        bw = np.concatenate([lay.server_bw, lay.inner_bw])
        self.link_bandwidth, self.link_bound = _readonly(bw), _readonly(bound.astype(np.int64))
        classes = sorted({float(b) for b in bw}, reverse=True)
        if len(classes) == 1:
            self._b_inter = classes[0]
            self._p_worst = max(1, int(bound.max()))
            return
        bws = np.concatenate([np.full(int(bound[bw == b].max()), b) for b in classes])
        counts = np.concatenate([np.arange(1, int(bound[bw == b].max()) + 1) for b in classes])
        shares = self.link_share(bws, counts)
        order = np.lexsort((counts, -bws, -shares))  # by share, fastest first; ties by bandwidth, count
        self._share_levels = np.concatenate([[np.nan], shares[order]])
        self._p_worst = len(order)
        best = float(self.link_share(lay.server_bw.max(), 1))
        self._best_level = 1 + int(np.sum(shares > best))

    def level_of(self, bandwidth: np.ndarray | float, count: np.ndarray | int) -> np.ndarray:
        """The contention level of a link of ``bandwidth`` carrying ``count`` split rings:
        the count itself when every link has one bandwidth, else the first level whose
        share equals the link's (so ``bandwidth(level_of(b, c), 2)`` is b's share at c)."""
        count = np.asarray(count, dtype=np.int64)
        if self._share_levels is None:
            return count
        share = self.link_share(bandwidth, count)
        return 1 + np.sum(self._share_levels[1:] > share[..., None], axis=-1)

    @property
    def b_inter(self) -> float:
        """The inter-server bandwidth eq. (8) divides: the cluster's b_inter, or the uplinks'
        bandwidth of an explicit star (docs/model.md section 3.8)."""
        return float(self._b_inter)

    def link_share(self, bandwidth: np.ndarray | float, count: np.ndarray | int) -> np.ndarray:
        """What each of ``count`` split rings gets of a link of ``bandwidth``: b / f(max(1, xi1 count))."""
        return np.asarray(bandwidth, dtype=float) / self._f(self.effective_contenders(np.asarray(count)), self._alpha)

    # -- eq. (7)-(9) ------------------------------------------------------------------
    def effective_contenders(self, p: np.ndarray) -> np.ndarray:
        """k = max(1, xi1 p), eq. (7) with the clamp."""
        return np.maximum(1.0, self._xi1 * np.asarray(p, dtype=float))

    def bandwidth(self, p: np.ndarray, n: np.ndarray) -> np.ndarray:
        """Bottleneck bandwidth: b_intra on one server, b_inter / f(k) when split.

        With a topology of links of several bandwidths, ``p`` is a contention level
        (:meth:`_init_levels`) and the bandwidth its share.
        """
        n = np.asarray(n, dtype=float)
        if self._share_levels is not None:  # a topology with links of several bandwidths: p is a level
            q = np.clip(np.asarray(p).astype(np.int64), 1, len(self._share_levels) - 1)
            return np.where(n >= 2, self._share_levels[q], self._b_intra)
        f = self._f(self.effective_contenders(p), self._alpha)
        return np.where(n >= 2, self._b_inter / f, self._b_intra)

    def tau(self, p: np.ndarray, n: np.ndarray, jobs: np.ndarray | slice = slice(None)) -> np.ndarray:
        """Per-iteration time (8) of ``jobs`` at contention count ``p`` and span ``n``.

        ``p`` and ``n`` broadcast against the selected jobs (shape ``(len(jobs),)`` or with
        extra trailing axes when the job axis is first and the arrays are shaped to match).
        """
        p = np.asarray(p, dtype=float)
        n = np.asarray(n, dtype=float)
        ring = _expand(self.ring_volume[jobs], p.ndim)
        fixed = _expand(self.fixed_time[jobs], p.ndim)
        return ring / self.bandwidth(p, n) + fixed + self._xi2 * n

    def phi_at_bandwidth(
        self, bandwidth: np.ndarray, n: np.ndarray, jobs: np.ndarray | slice = slice(None)
    ) -> np.ndarray:
        """Iterations per slot (8)-(9) of ``jobs`` at a split ring's ``bandwidth`` (b_intra where n = 1)."""
        return robust_floor_inverse(self.tau_at_bandwidth(bandwidth, n, jobs))

    def tau_at_bandwidth(
        self, bandwidth: np.ndarray, n: np.ndarray, jobs: np.ndarray | slice = slice(None)
    ) -> np.ndarray:
        """Per-iteration time (8) of ``jobs`` at a split ring's ``bandwidth`` (b_intra where n = 1)."""
        n = np.asarray(n, dtype=float)
        bw = np.where(n >= 2, bandwidth, self._b_intra)
        return self.ring_volume[jobs] / bw + self.fixed_time[jobs] + self._xi2 * n

    def phi(self, p: np.ndarray, n: np.ndarray, jobs: np.ndarray | slice = slice(None)) -> np.ndarray:
        """Iterations per slot (9) of ``jobs`` at contention ``p`` and span ``n``."""
        return robust_floor_inverse(self.tau(p, n, jobs))

    # -- eq. (6) ----------------------------------------------------------------------
    @staticmethod
    def contention_pairs(
        pair_job: np.ndarray, pair_server: np.ndarray, n_jobs: int, n_servers: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """Contention per server c_s and per job p_j (6) for one slot, from the (job, server)
        pairs y_js > 0 of the active *split* jobs only (each pair once).

        c_s counts the pairs on server s; p_j is the largest c_s over job j's servers (0 for
        jobs without pairs: inactive or on one server). Its cost is the number of pairs, not
        J x S: the list-scheduling engine calls it at every event.
        """
        c = np.bincount(pair_server, minlength=n_servers).astype(np.int64)
        p = np.zeros(n_jobs, dtype=np.int64)
        np.maximum.at(p, pair_job, c[pair_server])
        return c, p

    def rates(
        self, active: np.ndarray, n: np.ndarray, pair_job: np.ndarray, pair_server: np.ndarray, n_servers: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(c_s, c_e, phi_j) of one slot from the (job, server) pairs of the active split
        jobs: split rings per server, per switch-to-switch link e (empty on the paper's star;
        docs/model.md section 3.8), and iterations per slot (0 when inactive).

        On the star a split job's level p_j is the largest c_s over its servers (6); on a
        topology its bandwidth is the smallest share over the links its ring uses.
        """
        phi = np.zeros(len(n), dtype=np.int64)
        idx = np.flatnonzero(active)
        phi[idx] = self.phi_one_server[idx]  # the split jobs' are overwritten below
        split = idx[n[idx] >= 2]
        if self.links is None:
            c, level = self.contention_pairs(pair_job, pair_server, len(n), n_servers)
            phi[split] = self.phi(level[split], n[split], split)
            return c, np.zeros(0, dtype=np.int64), phi
        c, c_inner, bw = self.link_bandwidths(n, pair_job, pair_server, n_servers)
        phi[split] = self.phi_at_bandwidth(bw[split], n[split], split)
        return c, c_inner, phi

    def link_bandwidths(
        self, n: np.ndarray, pair_job: np.ndarray, pair_server: np.ndarray, n_servers: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(c_s, c_e, B_j) on a topology: split rings per server uplink and per
        switch-to-switch link, and each job's bandwidth, the smallest share over the links
        its ring uses (infinite for a job in no pair). The pairs are the active split jobs'
        (job, server) pairs."""
        lay = self.links
        assert lay is not None, "link_bandwidths needs a topology"
        c = np.bincount(pair_server, minlength=n_servers).astype(np.int64)
        bw = np.full(len(n), np.inf)
        np.minimum.at(bw, pair_job, self.link_share(lay.server_bw[pair_server], c[pair_server]))
        c_inner = np.zeros(lay.num_inner, dtype=np.int64)
        if lay.num_inner and len(pair_job):
            jobs = np.unique(pair_job)
            inside = np.zeros((len(jobs), lay.num_inner), dtype=np.int64)
            np.add.at(inside, np.searchsorted(jobs, pair_job), lay.inner_side[:, pair_server].T.astype(np.int64))
            used = (inside > 0) & (inside < np.asarray(n)[jobs][:, None])
            c_inner = used.sum(axis=0).astype(np.int64)
            share = self.link_share(lay.inner_bw, c_inner)
            bw[jobs] = np.minimum(bw[jobs], np.where(used, share[None, :], np.inf).min(axis=1))
        return c, c_inner, bw

    def slot_rates(self, active: np.ndarray, spans: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(c_s, phi_j) of one slot: contention per server and iterations of every job.

        Inactive jobs get phi = 0.
        """
        pair_job, pair_server = np.nonzero(spans & (active & (n >= 2))[:, None])
        c, _, phi = self.rates(active, n, pair_job, pair_server, spans.shape[1])
        return c, phi

    # -- bounds -----------------------------------------------------------------------
    def span_range(self) -> tuple[np.ndarray, np.ndarray]:
        """Fewest and most servers each job can span: n_min (largest servers first), n_max."""
        cum = np.cumsum(np.sort(self.capacity)[::-1])
        n_min = np.searchsorted(cum, self.gpus, side="left") + 1
        n_max = np.minimum(self.gpus, len(self.capacity))
        return n_min.astype(np.int64), n_max.astype(np.int64)

    def p_worst(self) -> int:
        """The worst contention level a split job can see, as the ``p`` of :meth:`tau` and
        :meth:`phi` takes it. On the paper's star a level is a count of split rings on a
        server, and the worst is min(J, max_s O_s) (docs/model.md section 3); on a topology
        it is the level whose bandwidth equals the narrowest link share a ring can get
        (:meth:`level_of`, docs/model.md section 3.8)."""
        return self._p_worst

    def job_bounds(self) -> JobBounds:
        """Each job's extremes over every feasible span and contention level (:class:`JobBounds`)."""
        n_min, n_max = self.span_range()
        # tau grows with the span (the overhead xi2 n) and with the contention count, so over
        # a job's feasible spans the extremes sit at the ends: one server (if it fits), the
        # fewest split servers at one contender, the most servers at the worst contention.
        # Evaluating those points only keeps this O(J) (a (J, S) grid took 1.5 GB at
        # 16,000 jobs x 2,000 servers) and gives the same floats as the full grid.
        one = np.ones_like(n_min)
        single = np.where(n_min == 1, self.tau(np.zeros_like(n_min), one), np.nan)
        can_split = n_max >= 2
        split_lo = np.maximum(n_min, 2)
        best_split = np.where(can_split, self.tau(np.full_like(n_min, self._best_level), split_lo), np.nan)
        worst_split = np.where(can_split, self.tau(np.full_like(n_max, self.p_worst()), np.maximum(n_max, 2)), np.nan)
        tau_min = np.fmin(single, best_split)
        tau_max = np.fmax(single, worst_split)
        phi_max = robust_floor_inverse(tau_min)
        phi_min = robust_floor_inverse(tau_max)
        return JobBounds(
            tau_min=tau_min,
            tau_max=tau_max,
            phi_min=phi_min,
            phi_max=phi_max,
            rho_min=self.execution_slots(phi_max),
            rho_max=self.execution_slots(phi_min),
            n_min=n_min,
            n_max=n_max,
            p_worst=self.p_worst(),
        )

    def execution_slots(self, phi: np.ndarray) -> np.ndarray:
        """Slots each job needs at a constant ``phi`` iterations per slot: ceil(F / phi)."""
        return slots_needed(self.iterations, phi)

    def phi_table(self, p_max: int | None = None) -> np.ndarray:
        """phi[j, p, n] for p = 0..p_max and n = 0..S (n = 0 and infeasible spans are 0).

        The coefficients of the exact formulations come from this table. For n = 1 the
        contention count is irrelevant (a single-server job sees none); for n >= 2, p = 0
        cannot occur for an active job and is filled as p = 1.
        """
        if p_max is None:
            p_max = self.p_worst()
        n_jobs, n_servers = len(self.gpus), len(self.capacity)
        p = np.arange(p_max + 1)[None, :, None]
        n = np.arange(n_servers + 1)[None, None, :]
        p_eff = np.where(n >= 2, np.maximum(p, 1), 0)
        shape = (n_jobs, p_max + 1, n_servers + 1)
        table = self.phi(np.broadcast_to(p_eff, shape), np.broadcast_to(n, shape))
        n_min, n_max = self.span_range()
        ok = (n >= n_min[:, None, None]) & (n <= n_max[:, None, None])
        return np.where(ok, table, 0)


def _readonly(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


def _expand(values: np.ndarray, ndim: int) -> np.ndarray:
    """Give a per-job vector trailing axes so it broadcasts against (jobs, ...) arrays."""
    return values.reshape(values.shape + (1,) * max(0, ndim - values.ndim))
