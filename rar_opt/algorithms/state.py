"""The state of one list-scheduling trial: GPU identities, occupancy and loads, with the
index structures that let a placement rule touch only the GPUs and servers it uses
(docs/algorithms.md section 1). :mod:`rar_opt.algorithms.engine` drives it."""

from __future__ import annotations

import copy

import numpy as np

from rar_opt.algorithms.index import CountTree, MinTree, SortedKeys
from rar_opt.instance import Instance
from rar_opt.simulate import Clock

LOAD_TOL = 1e-9
INF = float("inf")


class ClusterState:
    """GPU identities, occupancy and loads during one trial (read by placement rules).

    A :data:`GpuPicker` reads the numpy arrays ``server``, ``load`` and ``owner`` (the last
    two built on demand from the plain lists ``loads`` and ``owners``). The state keeps
    index structures (:mod:`.index`) so that the built-in rules
    (:func:`least_loaded_rule`, :func:`first_fit_rule` and the policies' own) cost
    O(log G) plus the GPUs and servers they touch per decision instead of a scan of every
    GPU; they take the same decisions as the scans, which the tests compare.
    """

    def __init__(self, instance: Instance, theta: float, weight: np.ndarray) -> None:
        cap = instance.cluster.capacity
        self.instance = instance
        self.theta = float(theta)
        self.weight = weight
        self.capacity = cap
        self.server = np.repeat(np.arange(len(cap)), cap)
        self.local = np.concatenate([np.arange(o) for o in cap])
        self.clock = Clock(instance, record=False)
        self.now = 0
        # the trial makes the same decisions for every theta' in [theta_low, theta_high):
        # the largest U_g + w_j it accepted and the smallest it refused (see ThetaCache)
        self.theta_low = 0.0
        self.theta_high = np.inf
        # plain-Python mirrors and the index structures (docs/algorithms.md section 1)
        n_gpus = len(self.server)
        self.gpus_needed: list[int] = instance.arrays.gpus.tolist()
        self.weights: list[float] = np.asarray(weight, dtype=float).tolist()
        self.caps: list[int] = cap.tolist()
        self.first_gpu: list[int] = (np.cumsum(cap) - cap).tolist()
        self.server_of: list[int] = self.server.tolist()
        self.loads: list[float] = [0.0] * n_gpus
        self._load_array = np.zeros(n_gpus)  # the same loads as a numpy array, for whole-cluster tests
        self.busy: list[bool] = [False] * n_gpus
        self.owners: list[int] = [-1] * n_gpus
        self.idle = SortedKeys([(0.0, g) for g in range(n_gpus)])  # idle GPUs by (load, index)
        self.idle_counts: list[int] = cap.tolist()  # idle GPUs per server
        self._threshold = self.theta + LOAD_TOL
        self._by_average: SortedKeys | None = None  # servers by (average load, index), on demand
        self._average: list[float] = []
        self._by_idle: list[SortedKeys] | None = None  # servers by idle count, on demand
        self._idle_flags: CountTree | None = None  # idle GPUs by index, on demand
        self._idle_min: MinTree | None = None  # per server, the least load of its idle GPUs, on demand

    def fork(self, theta: float) -> ClusterState:
        """An independent copy of the state (the clock's too) that continues with load limit
        ``theta``: what a trial at ``theta`` would have reached, when every comparison made so
        far gives the same answer at ``theta`` (``theta_low <= theta + tol < theta_high``;
        :class:`Checkpoints`). The lists hold immutable numbers, so shallow copies suffice."""
        new = copy.copy(self)
        new.theta, new._threshold = float(theta), float(theta) + LOAD_TOL
        for name in ("loads", "busy", "owners", "idle_counts", "_average"):
            setattr(new, name, getattr(self, name).copy())
        new._load_array = self._load_array.copy()
        new.idle = self.idle.copy()
        new._by_average = None if self._by_average is None else self._by_average.copy()
        new._by_idle = None if self._by_idle is None else [k.copy() for k in self._by_idle]
        new._idle_flags = None if self._idle_flags is None else self._idle_flags.copy()
        new._idle_min = None if self._idle_min is None else self._idle_min.copy()
        clock = copy.copy(self.clock)  # its arrays and lists copied; the time model shared
        for name, value in vars(self.clock).items():
            if isinstance(value, (np.ndarray, list)):
                setattr(clock, name, value.copy())
        new.clock = clock
        return new

    @property
    def load(self) -> np.ndarray:
        """U_g of every GPU (a fresh array: the state keeps its loads as Python floats)."""
        return np.array(self.loads)

    @property
    def owner(self) -> np.ndarray:
        """The job running on every GPU, -1 when idle (a fresh array)."""
        return np.array(self.owners, dtype=np.int64)

    def eligible(self, job: int) -> np.ndarray:
        """Idle GPUs whose load stays within theta with job ``job`` added (bool mask)."""
        idle = self.owner < 0
        after = self.load + self.weight[job]
        fits = after <= self.theta + LOAD_TOL
        ok, refused = after[idle & fits], after[idle & ~fits]
        if len(ok):
            self.theta_low = max(self.theta_low, float(ok.max()))
        if len(refused):
            self.theta_high = min(self.theta_high, float(refused.min()))
        return idle & fits

    def eligible_cut(self, job: int) -> tuple[float | None, bool]:
        """What :meth:`eligible` finds, from the index: (the largest load of an eligible GPU,
        or None when none is, and whether every idle GPU is eligible). A GPU is eligible
        exactly when it is idle and its load is at most that cut (U + w is monotone in U,
        also in floating point), and theta_low / theta_high are recorded as by
        :meth:`eligible`. O(log G)."""
        w, limit = self.weights[job], self._threshold
        last, refused = self.idle.split(lambda key: key[0] + w <= limit)
        if last is not None:
            self.theta_low = max(self.theta_low, last[0] + w)
        if refused is not None:
            self.theta_high = min(self.theta_high, refused[0] + w)
        return (None if last is None else last[0]), refused is None

    def enough(self, job: int, cut: float | None) -> bool:
        """Whether at least G_j GPUs are eligible (``cut`` from :meth:`eligible_cut`)."""
        if cut is None:
            return False
        need = self.gpus_needed[job]
        first = self.idle.first(need)
        return len(first) == need and first[-1][0] <= cut

    def gpus_on(self, s: int, cut: float) -> list[int]:
        """The eligible GPUs of server ``s`` in index order (``cut`` from :meth:`eligible_cut`)."""
        loads, busy, a = self.loads, self.busy, self.first_gpu[s]
        return [g for g in range(a, a + self.caps[s]) if not busy[g] and loads[g] <= cut]

    def dead_end(self, job: int) -> bool:
        """Whether fewer than G_j GPUs of the whole cluster, idle or busy, have U_g + w_j
        within theta: then a rule that takes eligible GPUs only can never start the job,
        since loads only grow. Records the smallest value that would have changed the
        answer (the G_j-th smallest U_g + w_j) in ``theta_high`` when it is a dead end. O(G)."""
        need, w = self.gpus_needed[job], self.weights[job]
        after = self._load_array + w  # the same float sums as the eligibility tests make
        if np.count_nonzero(after <= self._threshold) >= need:
            return False
        self.theta_high = min(self.theta_high, float(np.partition(after, need - 1)[need - 1]))
        return True

    def server_in_use(self) -> np.ndarray:
        """Servers hosting at least one running job (bool per server)."""
        return np.bincount(self.server[self.owner >= 0], minlength=len(self.capacity)) > 0

    # -- changes: a job placed, jobs done -------------------------------------------------
    def place(self, job: int, gpus: list[int]) -> None:
        """Job ``job`` starts on ``gpus`` (sorted): they become busy and carry its weight."""
        w, loads = self.weights[job], self.loads
        for g in gpus:
            self.idle.remove((loads[g], g))
            loads[g] += w
            self.busy[g] = True
            self.owners[g] = job
        self._load_array[gpus] += w
        self._touched(gpus, -1, loads_changed=True)

    def release(self, gpus: list[int]) -> None:
        """The job on ``gpus`` has completed: they become idle (their loads stay)."""
        for g in gpus:
            self.busy[g] = False
            self.owners[g] = -1
            self.idle.add((self.loads[g], g))
        self._touched(gpus, +1, loads_changed=False)

    def _touched(self, gpus: list[int], delta: int, loads_changed: bool) -> None:
        """Bring the per-server structures up to date after ``gpus`` (sorted) changed."""
        if self._idle_flags is not None:
            for g in gpus:
                self._idle_flags.add(g, delta)
        server_of = self.server_of
        i = 0
        while i < len(gpus):  # the GPUs of one server are consecutive in a sorted list
            s = server_of[gpus[i]]
            count = 1
            while i + count < len(gpus) and server_of[gpus[i + count]] == s:
                count += 1
            i += count
            before = self.idle_counts[s]
            self.idle_counts[s] = before + delta * count
            if self._idle_min is not None:
                self._idle_min.set(s, self._least_idle_load(s))
            if self._by_idle is not None:
                self._by_idle[before].remove(s)
                self._by_idle[before + delta * count].add(s)
            if loads_changed and self._by_average is not None:
                self._by_average.remove((self._average[s], s))
                self._average[s] = self._server_average(s)
                self._by_average.add((self._average[s], s))

    # -- structures some rules need, built on first use ---------------------------------------
    def _server_average(self, s: int) -> float:
        # summed GPU by GPU in index order from 0.0, as numpy's bincount does: the same float
        total, a = 0.0, self.first_gpu[s]
        for g in range(a, a + self.caps[s]):
            total += self.loads[g]
        return total / self.caps[s]

    def _least_idle_load(self, s: int) -> float:
        loads, busy, a = self.loads, self.busy, self.first_gpu[s]
        least = INF
        for g in range(a, a + self.caps[s]):
            if not busy[g] and loads[g] < least:
                least = loads[g]
        return least

    def idle_min(self) -> MinTree:
        """Per server, the least load of its idle GPUs (``inf`` when none is idle)."""
        if self._idle_min is None:
            self._idle_min = MinTree([self._least_idle_load(s) for s in range(len(self.caps))])
        return self._idle_min

    def by_average(self) -> SortedKeys:
        """Servers by (average GPU load sum_g U_g / O_s, index)."""
        if self._by_average is None:
            self._average = [self._server_average(s) for s in range(len(self.caps))]
            self._by_average = SortedKeys([(a, s) for s, a in enumerate(self._average)])
        return self._by_average

    def by_idle(self) -> list[SortedKeys]:
        """Per count c = 0..max O_s, the servers with exactly c idle GPUs (by index)."""
        if self._by_idle is None:
            groups: list[list[int]] = [[] for _ in range(max(self.caps) + 1)]
            for s, c in enumerate(self.idle_counts):
                groups[c].append(s)
            self._by_idle = [SortedKeys(g) for g in groups]
        return self._by_idle

    def idle_flags(self) -> CountTree:
        """The idle GPUs by index (the k-th idle GPU in O(log G))."""
        if self._idle_flags is None:
            self._idle_flags = CountTree([0 if b else 1 for b in self.busy])
        return self._idle_flags
