"""The simulator: the judge of a schedule's completion times (model.md section 3).

Given starts and placements, one causal forward pass gives every job's completion slot.
Between two events (a start, or the slot after a completion) the active set, and hence
the contention and every job's iterations per slot, is constant; so the simulator jumps
from event to event instead of stepping slot by slot. It needs O(J) segments of O(J S)
work each, whatever the horizon.

The simulator evaluates any structurally valid schedule, feasible or not (the checker,
:mod:`rar_opt.check`, uses it to find capacity and horizon violations). A job whose
iterations per slot are 0 (possible only in an infeasible schedule) never completes: it
is reported as stalled, with completion -1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .timemodel import NEVER, slots_needed

if TYPE_CHECKING:
    from .instance import Instance
    from .schedule import Schedule


@dataclass(frozen=True)
class Segment:
    """Slots ``first..last`` (inclusive) in which the active set is constant."""

    first: int
    last: int
    active: np.ndarray  # (J,) bool
    contention: np.ndarray  # (S,) int, c_s
    iterations: np.ndarray  # (J,) int, phi_j per slot (0 when inactive)


@dataclass(frozen=True)
class Trace:
    """Per-slot view of a simulation, for slots ``origin .. origin + len - 1``."""

    origin: int
    active: np.ndarray  # (slots, J) bool
    contention: np.ndarray  # (slots, S) int
    iterations: np.ndarray  # (slots, J) int


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

    @property
    def all_complete(self) -> bool:
        return not bool(self.stalled.any())

    @property
    def makespan(self) -> int | None:
        return int(self.completion.max()) if self.all_complete else None

    @property
    def avg_jct(self) -> float | None:
        return float(self.completion.mean()) if self.all_complete else None

    @property
    def min_jct(self) -> int | None:
        return int(self.completion.min()) if self.all_complete else None

    @property
    def max_jct(self) -> int | None:
        return self.makespan

    def summary(self) -> dict[str, object]:
        """The metrics as plain JSON-ready values."""
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
        act, con, its = [], [], []
        previous_last = origin - 1
        for seg, length in zip(self.segments, lengths, strict=True):
            gap = seg.first - previous_last - 1  # idle slots between segments
            if gap:
                act.append(np.repeat(idle_j[None], gap, 0))
                con.append(np.repeat(idle_s[None], gap, 0))
                its.append(np.repeat(np.zeros_like(seg.iterations)[None], gap, 0))
            act.append(np.repeat(seg.active[None], length, 0))
            con.append(np.repeat(seg.contention[None], length, 0))
            its.append(np.repeat(seg.iterations[None], length, 0))
            previous_last = seg.last
        return Trace(origin, np.concatenate(act), np.concatenate(con), np.concatenate(its))


def simulate_arrays(instance: Instance, starts: np.ndarray, placements: np.ndarray) -> SimResult:
    """Simulate starts (J,) and placements (J, S) on ``instance`` (no shape checks)."""
    tm = instance.time_model
    starts = np.asarray(starts, dtype=np.int64)
    spans = np.asarray(placements) > 0
    n = spans.sum(axis=1)
    n_jobs = len(starts)
    remaining = instance.arrays.iterations.astype(np.int64).copy()
    end = np.full(n_jobs, -1, dtype=np.int64)
    stalled = np.zeros(n_jobs, dtype=bool)
    segments: list[Segment] = []
    pending = np.argsort(starts, kind="stable")  # jobs by start slot
    next_pending = 0
    active = np.zeros(n_jobs, dtype=bool)
    t = int(starts[pending[0]])
    while True:
        while next_pending < n_jobs and starts[pending[next_pending]] <= t:
            active[pending[next_pending]] = True
            next_pending += 1
        next_start = int(starts[pending[next_pending]]) if next_pending < n_jobs else NEVER
        if not active.any():
            if next_pending == n_jobs:
                break
            t = next_start
            continue
        c, phi = tm.slot_rates(active, spans, n)
        idx = np.flatnonzero(active)
        need = slots_needed(remaining[idx], phi[idx])
        t_next = min(next_start, t + int(need.min()))
        if t_next >= NEVER:  # the active jobs make no progress and nothing else starts
            segments.append(Segment(t, t, active.copy(), c, phi))
            stalled[idx] = True
            break
        segments.append(Segment(t, t_next - 1, active.copy(), c, phi))
        remaining[idx] -= phi[idx] * (t_next - t)
        finished = remaining[idx] <= 0
        end[idx[finished]] = t + need[finished] - 1
        active[idx[finished]] = False
        t = t_next
    completion = np.where(stalled, -1, end + 1)
    return SimResult(completion=completion, end_slot=end, stalled=stalled, segments=tuple(segments))


def simulate(instance: Instance, schedule: Schedule) -> SimResult:
    """Simulate ``schedule`` on ``instance`` (the schedule must match its shape)."""
    schedule.require_matches(instance)
    return simulate_arrays(instance, schedule.start_array, schedule.placement_array)
