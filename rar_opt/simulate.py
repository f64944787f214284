"""The simulator: the judge of a schedule's completion times (docs/model.md section 3).

Given starts and placements, one causal forward pass gives every job's completion slot.
Between two events (a start, or the slot after a completion) the active set, and hence
the contention and every job's iterations per slot, is constant; so the simulator jumps
from event to event instead of stepping slot by slot. It needs O(J) segments of O(J S)
work each, whatever the horizon.

The simulator evaluates any structurally valid schedule, feasible or not (the checker,
:mod:`rar_opt.check`, uses it to find capacity and horizon violations). A job whose
iterations per slot are 0 (possible only in an infeasible schedule) never completes: it
is reported as stalled, with completion -1.

With a network topology (docs/model.md section 3.8) the time model counts split rings
per link instead of per server; the segments then also record the counts on the
switch-to-switch links (``Segment.links``). Without one, the paper's path runs unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from rar_opt.cluster.timemodel import NEVER, slots_needed

if TYPE_CHECKING:
    from rar_opt.instance import Instance
    from rar_opt.schedule import Schedule


@dataclass(frozen=True)
class Segment:
    """Slots ``first..last`` (inclusive) in which the active set is constant."""

    first: int
    last: int
    active: np.ndarray  # (J,) bool
    contention: np.ndarray  # (S,) int, c_s (split rings on each server's uplink)
    iterations: np.ndarray  # (J,) int, phi_j per slot (0 when inactive)
    links: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    """(E,) int: split rings on each switch-to-switch link of the topology (empty for the star)."""


@dataclass(frozen=True)
class Trace:
    """Per-slot view of a simulation, for slots ``origin .. origin + len - 1``."""

    origin: int
    active: np.ndarray  # (slots, J) bool
    contention: np.ndarray  # (slots, S) int
    iterations: np.ndarray  # (slots, J) int
    links: np.ndarray | None = None  # (slots, E) int: rings per switch-to-switch link (topology only)


@dataclass(frozen=True)
class SimResult:
    """Completion times and metrics of one simulated schedule.

    ``completion[j]`` = C_j = e_j + 1 (slots since time 0), or -1 if job j stalls.
    Metrics are over all jobs; when any job stalls they are ``None``.
    """

    completion: np.ndarray
    end_slot: np.ndarray
    stalled: np.ndarray
    segments: tuple[Segment, ...]

    def __post_init__(self) -> None:
        for array in (self.completion, self.end_slot, self.stalled):
            array.setflags(write=False)  # a result is a verdict: nobody edits it afterwards

    @property
    def all_complete(self) -> bool:
        """Whether every job completed."""
        return not bool(self.stalled.any())

    @property
    def makespan(self) -> int | None:
        """max_j C_j, or None if some job never completes."""
        return int(self.completion.max()) if self.all_complete else None

    @property
    def avg_jct(self) -> float | None:
        """The mean of the C_j, or None if one never completes. This is the paper's average JCT,
        where every job arrives at slot 0; with releases it is the mean completion time counted
        from slot 0, and the mean flow time is it less the mean release (docs/formats.md)."""
        return float(self.completion.mean()) if self.all_complete else None

    def avg_flow(self, releases: np.ndarray) -> float | None:
        """The mean flow time, the mean of C_j - r_j over the jobs' ``releases`` (the
        instance's ``releases``), or None if one never completes. Without releases it is
        :attr:`avg_jct`."""
        return float((self.completion - np.asarray(releases)).mean()) if self.all_complete else None

    @property
    def min_jct(self) -> int | None:
        """The smallest C_j, or None if some job never completes."""
        return int(self.completion.min()) if self.all_complete else None

    @property
    def max_jct(self) -> int | None:
        """The largest C_j (the makespan), or None if some job never completes."""
        return self.makespan

    def to_dict(self) -> dict[str, object]:
        """The metrics as plain JSON-ready values (:func:`rar_opt.results.to_dict` gives
        the same for every result type)."""
        return self.summary()

    def summary(self) -> dict[str, object]:
        """The metrics as plain JSON-ready values (the older name of :meth:`to_dict`)."""
        return {
            "makespan": self.makespan,
            "avg_jct": self.avg_jct,
            "min_jct": self.min_jct,
            "max_jct": self.max_jct,
            "completion": [int(c) for c in self.completion],
            "stalled": [int(j) for j in np.flatnonzero(self.stalled)],
        }

    def trace(self) -> Trace:
        """Expand the segments into per-slot arrays (active jobs, c_s, phi_j)."""
        if not self.segments:
            raise ValueError("empty simulation has no trace")
        origin = self.segments[0].first
        lengths = np.array([s.last - s.first + 1 for s in self.segments])
        idle_j = np.zeros_like(self.segments[0].active)
        idle_s = np.zeros_like(self.segments[0].contention)
        idle_l = np.zeros_like(self.segments[0].links)
        act, con, its, lnk = [], [], [], []
        previous_last = origin - 1
        for seg, length in zip(self.segments, lengths, strict=True):
            gap = seg.first - previous_last - 1  # idle slots between segments
            if gap:
                act.append(np.repeat(idle_j[None], gap, 0))
                con.append(np.repeat(idle_s[None], gap, 0))
                its.append(np.repeat(np.zeros_like(seg.iterations)[None], gap, 0))
                lnk.append(np.repeat(idle_l[None], gap, 0))
            act.append(np.repeat(seg.active[None], length, 0))
            con.append(np.repeat(seg.contention[None], length, 0))
            its.append(np.repeat(seg.iterations[None], length, 0))
            lnk.append(np.repeat(seg.links[None], length, 0))
            previous_last = seg.last
        links = np.concatenate(lnk) if len(idle_l) else None
        return Trace(origin, np.concatenate(act), np.concatenate(con), np.concatenate(its), links)


class Clock:
    """The incremental forward pass: start jobs at the current slot, run to an event.

    This is the one event loop of rar-opt. :func:`simulate_arrays` drives it from a whole
    schedule; the list-scheduling engine (:mod:`rar_opt.algorithms.engine`) drives it one
    placement at a time, waiting for completions as Alg. 2 and 3 of the paper do.
    """

    def __init__(self, instance: Instance, record: bool = True) -> None:
        n_jobs, n_servers = instance.num_jobs, instance.num_servers
        self.tm = instance.time_model
        self.n_servers = n_servers
        self.n = np.zeros(n_jobs, dtype=np.int64)
        # the (job, server) pairs of the split jobs started so far; those of jobs no longer
        # active are dropped when the rates are next computed (contention needs only these)
        self._pair_job = np.zeros(0, dtype=np.int64)
        self._pair_server = np.zeros(0, dtype=np.int64)
        self._new_pairs: list[tuple[int, np.ndarray]] = []
        self.remaining = instance.arrays.iterations.astype(np.int64).copy()
        self.start_slot = np.full(n_jobs, -1, dtype=np.int64)
        self.end = np.full(n_jobs, -1, dtype=np.int64)
        self.active = np.zeros(n_jobs, dtype=bool)
        self.stalled = np.zeros(n_jobs, dtype=bool)
        self.t: int | None = None
        self.record = record
        self.segments: list[Segment] = []
        self._rates: tuple[np.ndarray, np.ndarray] | None = None  # cache while the active set holds
        # with the rates: the active jobs and the slot each would end after at those rates
        # (t + ceil(remaining / phi) does not move while the rates hold)
        self._finish: tuple[np.ndarray, np.ndarray] | None = None
        self._links = np.zeros(0, dtype=np.int64)  # rings per switch-to-switch link (topology only)

    def start(self, job: int, placement: np.ndarray, slot: int) -> None:
        """Start ``job`` with ``placement`` (a dense row) at ``slot`` (>= the current slot)."""
        self.start_on(job, np.flatnonzero(np.asarray(placement) > 0), slot)

    def start_on(self, job: int, servers: np.ndarray, slot: int) -> None:
        """Start ``job`` on ``servers`` (those where it has GPUs, ascending) at ``slot``."""
        self.run_until(slot)
        self.n[job] = len(servers)
        if len(servers) >= 2:
            self._new_pairs.append((job, servers))
        self.start_slot[job] = slot
        self.active[job] = True
        self._rates = None

    def next_completion(self) -> int:
        """The slot after the earliest completion among the active jobs (NEVER if none)."""
        if self.t is None or not self.active.any():
            return NEVER
        _, finish = self._finishing()
        return int(finish.min())

    def run_until(self, slot: int) -> np.ndarray:
        """Advance to ``slot`` with no new start; returns the jobs that completed meanwhile.

        ``run_until(NEVER)`` runs until every active job has completed (or stalled).
        """
        done: list[np.ndarray] = []
        if self.t is None:
            self.t = slot
        while self.t < slot:
            if not self.active.any():
                if slot < NEVER:
                    self.t = slot
                break
            c, phi = self._current_rates()
            idx, finish = self._finishing()
            need = finish - self.t
            t_next = min(slot, int(finish.min()))
            if t_next >= NEVER:  # the active jobs make no progress and nothing else starts
                if self.record:
                    self.segments.append(Segment(self.t, self.t, self.active.copy(), c, phi, self._links))
                self.stalled[idx] = True
                self.active[idx] = False
                self._rates = None
                break
            if self.record:
                self.segments.append(Segment(self.t, t_next - 1, self.active.copy(), c, phi, self._links))
            self.remaining[idx] -= phi[idx] * (t_next - self.t)
            finished = self.remaining[idx] <= 0
            if finished.any():
                self.end[idx[finished]] = self.t + need[finished] - 1
                self.active[idx[finished]] = False
                done.append(idx[finished])
                self._rates = None
            self.t = t_next
        return np.concatenate(done) if done else np.zeros(0, dtype=np.int64)

    def _finishing(self) -> tuple[np.ndarray, np.ndarray]:
        """The active jobs and the slot after each one's end at the current rates."""
        if self._rates is None or self._finish is None:
            _, phi = self._current_rates()
            idx = np.flatnonzero(self.active)
            self._finish = (idx, self.t + slots_needed(self.remaining[idx], phi[idx]))
        return self._finish

    def _current_rates(self) -> tuple[np.ndarray, np.ndarray]:
        if self._rates is None:
            self._finish = None
            if self._new_pairs:
                self._pair_job = np.concatenate(
                    [self._pair_job, *(np.full(len(s), j, dtype=np.int64) for j, s in self._new_pairs)]
                )
                self._pair_server = np.concatenate([self._pair_server, *(s for _, s in self._new_pairs)])
                self._new_pairs = []
            keep = self.active[self._pair_job]
            if not keep.all():
                self._pair_job, self._pair_server = self._pair_job[keep], self._pair_server[keep]
            c, self._links, phi = self.tm.rates(self.active, self.n, self._pair_job, self._pair_server, self.n_servers)
            self._rates = (c, phi)
        return self._rates

    def result(self) -> SimResult:
        """Completion times of every job (call after ``run_until(NEVER)``)."""
        completion = np.where(self.stalled | (self.end < 0), -1, self.end + 1)
        return SimResult(
            completion=completion,
            end_slot=self.end.copy(),
            stalled=self.stalled | (self.end < 0),
            segments=tuple(self.segments),
        )


def simulate_arrays(instance: Instance, starts: np.ndarray, placements: np.ndarray) -> SimResult:
    """Simulate starts (J,) and placements (J, S) on ``instance`` (no shape checks)."""
    starts = np.asarray(starts, dtype=np.int64)
    placements = np.asarray(placements, dtype=np.int64)
    clock = Clock(instance)
    for j in np.argsort(starts, kind="stable"):
        clock.start(int(j), placements[j], int(starts[j]))
    clock.run_until(NEVER)
    return clock.result()


def simulate(instance: Instance, schedule: Schedule) -> SimResult:
    """Simulate ``schedule`` on ``instance`` (the schedule must match its shape). Reads the
    placements' nonzero entries only, never the dense J x S matrix."""
    schedule.require_matches(instance)
    starts, rows = schedule.start_array, schedule.sparse
    clock = Clock(instance)
    for j in np.argsort(starts, kind="stable"):
        servers, counts = rows.row_entries(int(j))
        clock.start_on(int(j), servers[counts > 0], int(starts[j]))
    clock.run_until(NEVER)
    return clock.result()
