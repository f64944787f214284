"""One neighbourhood of a schedule as a CP-SAT model: some unsplit jobs move, the rest stay.

The solver layer (:mod:`rar_opt.solvers.neighbourhoods`) searches a schedule's
neighbourhoods one after another; this module builds each one and reads its answer back.
docs/exactness.md ("Exact neighbourhoods") argues why every answer is a schedule of the
instance with exactly the objective the model states:

* :class:`Runs` is a schedule as intervals: every job's start, its run length (from the
  simulator) and its GPUs per server;
* the *free* jobs are unsplit jobs; each may take any start from its release and any one
  server of ``servers`` that holds its GPUs, for its unsplit time ``Instance.modes.single``
  (one server: no contention, so that time is exact whatever runs beside it);
* every other job keeps its interval and its GPUs, and its run length does not change:
  contention counts split jobs only, and no split job moves, except that a split job
  offered in ``unsplit`` may stay as it is or run unsplit like a free job; moving it
  only lowers the contention of the split jobs that shared a server with it, so their
  held lengths are upper bounds, and the caller re-simulates;
* one cumulative per server, the objective sum_j C_j (a constant less for the flow time),
  and no job ends after ``last`` (the current makespan: a cap or the horizon stays kept);
* the hint is the current schedule, complete, so CP-SAT starts from a solution and the
  search keeps an answer only when it is better.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from ortools.sat.python import cp_model

from rar_opt.instance import Instance
from rar_opt.schedule import Schedule
from rar_opt.simulate import simulate

Moves = dict[int, tuple[int, int]]
"""Per moved job: its new start and its one server."""


@dataclass(frozen=True)
class Runs:
    """A schedule as intervals; :meth:`of` takes a schedule, :meth:`moved` applies moves."""

    instance: Instance
    start: np.ndarray  # a_j
    length: np.ndarray  # C_j - a_j (the simulator's)
    placements: np.ndarray  # y[j, s]

    @classmethod
    def of(cls, instance: Instance, schedule: Schedule) -> Runs:
        """The runs of ``schedule``, with the simulator's completion times."""
        start = schedule.start_array.astype(np.int64)
        completion = simulate(instance, schedule).completion.astype(np.int64)
        return cls(instance, start, completion - start, schedule.placement_array.astype(np.int64))

    @property
    def split(self) -> np.ndarray:
        """Which jobs run on two servers or more."""
        return np.asarray((self.placements > 0).sum(axis=1) > 1)

    @property
    def server(self) -> np.ndarray:
        """Each unsplit job's server (-1 for a split job)."""
        return np.where(self.split, -1, self.placements.argmax(axis=1))

    @property
    def end(self) -> np.ndarray:
        """C_j."""
        return np.asarray(self.start + self.length)

    def total(self) -> int:
        """sum_j C_j."""
        return int(self.end.sum())

    def moved(self, moves: Moves) -> Runs:
        """These runs with the moved jobs at their new starts and servers, unsplit."""
        start, length, placements = self.start.copy(), self.length.copy(), self.placements.copy()
        single = self.instance.modes.single
        for j, (a, s) in moves.items():
            start[j], length[j] = a, single[j]
            placements[j] = 0
            placements[j, s] = self.instance.modes.gpus[j]
        return Runs(self.instance, start, length, placements)

    def schedule(self, meta: dict[str, Any] | None = None) -> Schedule:
        """The schedule of these runs (starts and placements)."""
        return Schedule.from_arrays(self.instance.name, self.start, self.placements, meta=meta)


@dataclass
class Neighbourhood:
    """A built neighbourhood: the CP-SAT model and its variables; ``moves`` once solved."""

    model: cp_model.CpModel
    free: tuple[int, ...]
    start: dict[int, Any]
    on: dict[tuple[int, int], Any]
    moves: Moves | None = field(default=None)

    def load(self, value: Callable[[Any], int]) -> None:
        """Keep the solution that ``value`` (the solver's ``value`` of a variable) gives."""
        placed = {j: s for (j, s), on in self.on.items() if value(on)}
        self.moves = {j: (int(value(self.start[j])), int(placed[j])) for j in self.free if j in placed}


def movable(runs: Runs) -> np.ndarray:
    """The jobs a neighbourhood may free: unsplit in ``runs`` and able to run unsplit."""
    return np.nonzero(~runs.split & (runs.instance.modes.n_min == 1))[0]


def build(
    runs: Runs, free: Iterable[int], servers: Iterable[int], last: int, unsplit: Iterable[int] = ()
) -> Neighbourhood:
    """The neighbourhood in which the jobs ``free`` (unsplit, see :func:`movable`) may move
    to any start and any one of ``servers`` that holds them, ending by ``last``; a hint
    keeps each where it is when it may stay. Each job of ``unsplit`` (split in ``runs``,
    able to run unsplit) either stays as it is or moves unsplit like a free job; the held
    split jobs keep their run lengths, which a move of a split job can only shorten (the
    caller re-simulates)."""
    inst, modes = runs.instance, runs.instance.modes
    free, servers = tuple(sorted(int(j) for j in free)), sorted(int(s) for s in servers)
    unsplit = tuple(sorted(int(j) for j in unsplit))
    m = cp_model.CpModel()
    intervals: list[list[Any]] = [[] for _ in modes.capacity]
    demands: list[list[int]] = [[] for _ in modes.capacity]
    ends: list[Any] = []
    start: dict[int, Any] = {}
    on: dict[tuple[int, int], Any] = {}
    fixed = np.ones(inst.num_jobs, dtype=bool)
    fixed[list(free) + list(unsplit)] = False
    for i in np.nonzero(fixed)[0].tolist():
        begin, length = int(runs.start[i]), int(runs.length[i])
        for k in np.nonzero(runs.placements[i])[0].tolist():
            intervals[k].append(m.new_fixed_size_interval_var(begin, length, f"job{i}_{k}"))
            demands[k].append(int(runs.placements[i, k]))
        ends.append(begin + length)
    release, current = inst.releases, runs.server
    for j in free:
        d = int(modes.single[j])
        start[j] = a = m.new_int_var(int(release[j]), last - d, f"a{j}")
        m.add_hint(a, int(runs.start[j]))
        for s in servers:
            if modes.capacity[s] >= modes.gpus[j]:
                on[j, s] = b = m.new_bool_var(f"on{j}_{s}")
                m.add_hint(b, bool(s == current[j]))
                intervals[s].append(m.new_optional_fixed_size_interval_var(a, d, b, f"job{j}_{s}"))
                demands[s].append(int(modes.gpus[j]))
        choices = [b for (i, _), b in on.items() if i == j]
        if not choices:
            raise ValueError(f"job {j} fits none of the servers {servers}")
        m.add_exactly_one(choices)
        ends.append(a + d)
    for j in unsplit:
        ends.append(_stay_or_unsplit(m, runs, j, servers, last, intervals, demands, start, on))
    for s, cap in enumerate(modes.capacity):
        if intervals[s]:
            m.add_cumulative(intervals[s], demands[s], int(cap))
    m.minimize(sum(ends))
    return Neighbourhood(m, free + unsplit, start, on)


def _stay_or_unsplit(
    m: cp_model.CpModel,
    runs: Runs,
    j: int,
    servers: list[int],
    last: int,
    intervals: list[list[Any]],
    demands: list[list[int]],
    start: dict[int, Any],
    on: dict[tuple[int, int], Any],
) -> Any:
    """Split job ``j`` either keeps its run (``stay``) or runs unsplit on one of ``servers``
    for its unsplit time; its end, a variable."""
    modes = runs.instance.modes
    begin, length, d = int(runs.start[j]), int(runs.length[j]), int(modes.single[j])
    stay = m.new_bool_var(f"stay{j}")
    m.add_hint(stay, True)
    for k in np.nonzero(runs.placements[j])[0].tolist():
        intervals[k].append(m.new_optional_fixed_size_interval_var(begin, length, stay, f"job{j}_{k}"))
        demands[k].append(int(runs.placements[j, k]))
    low = int(runs.instance.releases[j])
    start[j] = a = m.new_int_var(low, max(low, last - d), f"a{j}")
    m.add_hint(a, low)
    choices = [stay]
    for s in servers:
        if modes.capacity[s] >= modes.gpus[j]:
            on[j, s] = b = m.new_bool_var(f"on{j}_{s}")
            m.add_hint(b, False)
            intervals[s].append(m.new_optional_fixed_size_interval_var(a, d, b, f"job{j}_{s}"))
            demands[s].append(int(modes.gpus[j]))
            choices.append(b)
    m.add_exactly_one(choices)
    end = m.new_int_var(0, max(last, begin + length), f"end{j}")
    m.add(end == begin + length).only_enforce_if(stay)
    m.add(end == a + d).only_enforce_if(stay.Not())
    if low + d > last:
        m.add(stay == 1)
    return end
