"""The time profile that ``pack`` (:mod:`rar_opt.algorithms.packing`) builds its schedules
on: idle GPUs per server and slot, the slots of each server that a split job holds, and
what placing needs to know of each job (its GPUs, release, unsplit time, the servers that
hold it unsplit, and its time on n servers when split). Every job's time is known when it
is placed: unsplit at its uncontended rate, split as the only split job on its servers."""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import numpy as np

from rar_opt.algorithms.runs import OPEN, RunIndex, ranked, scan_earliest, window
from rar_opt.cluster.timemodel import NEVER, slots_needed
from rar_opt.errors import InputError
from rar_opt.instance import Instance

MAX_CELLS = 60_000_000
"""The largest time profile (servers x slots) ``pack`` builds; larger instances are refused."""

INDEX_SERVERS = 64
"""From this many servers on, placements are found in the run index (:mod:`.runs`); on a
smaller cluster the scan of every server is faster (the paper's 20 servers: about half the
time). Both give the same decisions."""


@dataclass(frozen=True)
class Jobs:
    """What placing needs per job: GPUs, release, unsplit time, the servers that hold it
    unsplit, and for a job that must split its time on n servers (index n)."""

    gpus: np.ndarray
    release: np.ndarray
    single: np.ndarray
    hosts: np.ndarray  # (J, S) bool: server s holds job j unsplit
    split: dict[int, np.ndarray]  # job that can span 2+ servers -> rho_j(n) for n = 0..S (NEVER where impossible)
    must: frozenset[int]  # the jobs that fit on no server
    capacity: np.ndarray
    instance: Instance

    @property
    def star(self) -> bool:
        """The paper's network: contention per server only."""
        return self.instance.time_model.links is None

    def split_time(self, j: int, servers: np.ndarray) -> int:
        """Slots of split job j on ``servers`` as the only split job on the network."""
        if self.star:
            return int(self.split[j][len(servers)])
        tm, n_servers = self.instance.time_model, len(self.capacity)
        n = np.zeros(len(self.gpus), dtype=np.int64)
        n[j] = len(servers)
        active = np.zeros(len(self.gpus), dtype=bool)
        active[j] = True
        _, _, phi = tm.rates(active, n, np.full(len(servers), j), servers.astype(np.int64), n_servers)
        return int(slots_needed(int(self.instance.jobs[j].iterations), phi[j : j + 1])[0])


def jobs_of(instance: Instance) -> Jobs:
    m = instance.modes
    hosts = m.capacity[None, :] >= m.gpus[:, None]
    tm = instance.time_model
    must = np.flatnonzero(~hosts.any(axis=1))
    split: dict[int, np.ndarray] = {}
    n_servers = len(m.capacity)
    for j in np.flatnonzero(m.split < NEVER).tolist():
        spans = np.arange(n_servers + 1)
        phi = tm.phi(np.ones(n_servers + 1), np.maximum(spans, 2), np.full(n_servers + 1, j))
        times = slots_needed(int(instance.jobs[j].iterations), phi)
        times[: max(2, int(m.n_min[j]))] = NEVER  # too few servers for G_j
        times[min(int(m.gpus[j]), n_servers) + 1 :] = NEVER  # more servers than GPUs
        if (times < NEVER).any():
            split[j] = times
    return Jobs(
        m.gpus,
        instance.releases.astype(np.int64),
        m.single,
        hosts,
        split,
        frozenset(must.tolist()),
        m.capacity,
        instance,
    )


class Profile:
    """Idle GPUs per server and slot, and which slots of a server a split job holds."""

    def __init__(self, jobs: Jobs, slots: int, may_split: bool = False) -> None:
        self.jobs, self.may_split = jobs, may_split
        self.free = np.repeat(jobs.capacity[:, None].astype(np.int32), slots, axis=1)
        self.split_busy = np.zeros_like(self.free, dtype=bool) if jobs.split else None
        self.busy_until = 0  # every slot from here on is idle
        self.ends: list[int] = [0]  # slots where GPUs come free, sorted (the split search's candidates)
        # where a job fits (.runs); a small cluster is scanned, which is faster there
        self.runs = RunIndex(self.free, jobs.capacity, self.split_busy) if len(jobs.capacity) >= INDEX_SERVERS else None

    def _room(self, slots: int) -> None:
        """Make the profile at least ``slots`` long (the new slots are idle)."""
        have = self.free.shape[1]
        if slots <= have:
            return
        extra = max(slots - have, have)
        cells = self.free.shape[0] * (have + extra)
        if cells > MAX_CELLS:
            raise InputError(
                f"pack: a time profile of {self.free.shape[0]} servers x {have + extra} slots is larger than "
                f"{MAX_CELLS} cells; use another policy for an instance this large",
                where="instance",
            )
        cap = self.jobs.capacity[:, None].astype(np.int32)
        self.free = np.hstack([self.free, np.repeat(cap, extra, axis=1)])
        if self.split_busy is not None:
            self.split_busy = np.hstack([self.split_busy, np.zeros((len(cap), extra), dtype=bool)])
        if self.runs is not None:
            self.runs.grow(self.free, self.split_busy)

    def place(self, j: int, lo: int) -> tuple[int, int, np.ndarray, np.ndarray]:
        """Put job j at its earliest slot >= ``lo``: (start, length, its servers ascending,
        its GPUs on each)."""
        if j in self.jobs.must:
            found = self._place_split(j, lo, None)
            assert found is not None  # after busy_until every server is idle and free of split jobs
            self._take(*found, split=True)
            return found
        whole = self._place_whole(j, lo)
        if self.may_split and j in self.jobs.split:
            found = self._place_split(j, lo, whole[0] + whole[1])
            if found is not None:  # it ends strictly earlier split
                self._take(*found, split=True)
                return found
        self._take(*whole, split=False)
        return whole

    def _place_whole(self, j: int, lo: int) -> tuple[int, int, np.ndarray, np.ndarray]:
        """Job j unsplit at its earliest slot >= ``lo`` (not taken yet)."""
        g, d = int(self.jobs.gpus[j]), int(self.jobs.single[j])
        latest = max(self.busy_until, lo)  # from busy_until on every slot is idle: it fits there
        self._room(latest + d)
        if self.runs is not None and self.runs.has_room(g):
            t, s = self.runs.earliest(g, d, lo, latest)  # the earliest slot, then best fit (.runs)
        else:
            t, s = scan_earliest(self.free, self.jobs.capacity, g, d, lo, latest)
        return t, d, np.array([s], dtype=np.int64), np.array([g], dtype=np.int64)

    def _place_split(self, j: int, lo: int, beat: int | None) -> tuple[int, int, np.ndarray, np.ndarray] | None:
        """The earliest completion of job j split, over every span n, its servers free of
        other split jobs over its whole run (so it sees p = 1; module docstring); with
        ``beat``, only a completion before it (None if there is none). Not taken yet.

        Ties go to the fewest servers. The candidate starts are ``lo`` and the slots where
        GPUs come free; on the star all of them are tested at once per length (a sliding
        minimum of the idle GPUs), on a topology one by one (the length depends on the
        servers there)."""
        g, times = int(self.jobs.gpus[j]), self.jobs.split[j]
        best: tuple[int, int, np.ndarray, np.ndarray] | None = None
        end = NEVER if beat is None else beat
        later = self.ends[bisect.bisect_left(self.ends, lo) :]
        starts = np.array(later if later[:1] == [lo] else [lo, *later], dtype=np.int64)
        windows: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        spans = np.flatnonzero(times < NEVER).tolist()
        for n in spans:
            d = int(times[n])
            self._room(max(self.busy_until, lo) + d)
            if self.jobs.star:
                if d not in windows:
                    windows[d] = self._windows(starts[starts + d < end], d, spans[-1], n)
                cand, top, total = windows[d]
                ok = (cand + d < end) & (total[n - 1] >= g) & (top[n - 1] >= 1)
                if not ok.any():
                    continue
                t = int(cand[int(ok.argmax())])
                found = self._split_at(j, g, n, t, d)
                assert found is not None and found[0] == d  # the same test, one start
                best, end = (t, *found), t + d
                continue
            for t in starts.tolist():
                if t + d >= end:
                    break
                found = self._split_at(j, g, n, t, d)
                if found is not None and t + found[0] < end:
                    best, end = (t, *found), t + found[0]
                    break
        return best

    def _windows(
        self, cand: np.ndarray, d: int, most: int, fewest: int = 1
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For every start t of ``cand``, over [t, t + d): the ``most`` largest idle GPU
        counts of a server (0 where a split job holds it), from the most idle, and their
        running sums, exact for the spans from ``fewest`` to ``most`` servers (a start with
        fewer than ``fewest`` open servers has only zeros: no such span fits there). Only
        the servers open over a window (the runs' ``open`` table: an idle GPU throughout, no split
        job) are read, at the starts where enough servers are open."""
        lo, hi = (int(cand[0]), int(cand[-1]) + d) if len(cand) else (0, 0)
        self._room(hi)
        if self.runs is None or not self.runs.has_room(OPEN):  # read every server
            assert self.split_busy is not None
            idle = window(self.free[:, lo:hi], cand - lo, d, np.minimum).astype(np.int64)
            idle[window(self.split_busy[:, lo:hi], cand - lo, d, np.maximum)] = 0
            return cand, *ranked(idle, most)
        end, top = self.runs.table(OPEN)
        servers = self.runs.rows(np.flatnonzero((top[:, cand] >= cand + d).any(axis=1)))  # blocks open somewhere
        opened = end[servers][:, cand] >= cand + d  # (those servers, candidates)
        some = np.flatnonzero(opened.sum(axis=0) >= fewest)
        rows = np.flatnonzero(opened[:, some].any(axis=1))
        idle = np.zeros((max(len(rows), most), len(cand)), dtype=np.int64)
        if len(rows):
            mins = window(self.free[servers[rows], lo:hi], cand[some] - lo, d, np.minimum)
            idle[: len(rows), some] = np.where(opened[np.ix_(rows, some)], mins, 0)
        return cand, *ranked(idle, most)

    def _split_at(self, j: int, g: int, n: int, t: int, d: int) -> tuple[int, np.ndarray, np.ndarray] | None:
        """Job j on the n servers with the most idle GPUs over [t, t + d), if they hold it:
        (its exact length there, the servers ascending, its GPUs on each); None otherwise."""
        for _ in range(2):  # on a topology the length depends on the servers: check it again
            self._room(t + d)
            idle = self.free[:, t : t + d].min(axis=1)
            held = self.split_busy[:, t : t + d].any(axis=1)  # type: ignore[index]
            if not self.jobs.star and held.any():
                return None  # on a topology one split job at a time, anywhere
            idle[held] = 0
            top = np.sort(np.argsort(-idle, kind="stable")[:n])
            if idle[top].min() < 1 or idle[top].sum() < g:
                return None
            exact = self.jobs.split_time(j, top)
            if exact <= d:
                y = np.zeros(len(idle), dtype=np.int64)
                y[top] = 1
                for s in top[np.argsort(-idle[top], kind="stable")].tolist():  # the rest, most idle first
                    y[s] += min(int(idle[s]) - 1, g - int(y.sum()))
                return exact, top, y[top]
            d = exact
        return None

    def _take(self, t: int, d: int, on: np.ndarray, y: np.ndarray, split: bool) -> None:
        """Job's GPUs ``y`` of the servers ``on`` (ascending) taken over [t, t + d)."""
        before = self.free[on, t : t + d].copy()
        self.free[on, t : t + d] -= y[:, None].astype(np.int32)
        held = split and self.split_busy is not None
        if held:
            self.split_busy[on, t : t + d] = True  # type: ignore[index]
        if self.runs is not None:
            for k, s in enumerate(on.tolist()):
                self.runs.update(s, t, t + d, int(y[k]), before[k], held)
        self.busy_until = max(self.busy_until, t + d)
        at = bisect.bisect_left(self.ends, t + d)
        if self.ends[at : at + 1] != [t + d]:
            self.ends.insert(at, t + d)
