"""The contention-free restriction with every placement written out: one mode per job and
GPU-count vector, for large-neighbourhood search towards a floor (:func:`build`) and for
the restriction solved whole (:func:`whole`, the stage ``"restrict"`` with
``Plan.restrict_formulation = "modes"``).

The restriction of :mod:`.cfree` (split jobs that share a server never overlap in time, so
every split job sees contention level 1 and runs at phi_j(1, n)) is written here with the
placement enumerated instead of chosen by integer variables. A *mode* of job j is a vector
y of GPU counts per server (y_s <= O_s, sum_s y_s = G_j) with its execution time
rho_j(y) = ceil(F_j / phi_j(p, n)), n the servers y uses and p = 0 for one server, 1 for
several (eq. 9 of the paper with that contention). A mode is an optional fixed-size interval
that takes y_s GPUs of each server s in one cumulative per server (eq. 2) and, when
n >= 2, the link of each server it uses in one no-overlap per server (the restriction's
row). Every solution is a schedule of the instance whose true completions are the model's
(the argument of :mod:`.cfree`), so the model only ever gives upper bounds.

*Sharing* (``sharing=True``, the restriction ``"shared"``) widens the restriction by the split
modes that lose no slot at contention 2: when ceil(F_j / phi_j(2, n)) equals the mode's
time at contention 1, the job ends in the same slot whether or not a second split job
shares its servers (its iterations per slot lie between the two rates in every slot, so
its completion lies between the two equal times). Such a mode takes one unit of each of
its servers' links, any other split mode two, in one cumulative of capacity 2 per server:
two sharing modes may overlap on a server (contention 2, which costs neither of them a
slot), a third split job or a mode that would slow down may not. Every solution is still a
schedule whose true completions are the model's, and the restriction holds schedules that
need contention, such as the optimum of ``tiny-24x8x150-s3`` (docs/exactness-log.md, "Sharing
the links"). Three or more split jobs on one server are left out: their tolerances do not
fit one cumulative exactly.

The enumeration grows fast with the GPUs of a job and the servers (a 4-GPU job on 8
servers has a few hundred modes); :func:`count_modes` counts before anything is built and
:data:`MAX_MODES` bounds it. The model is built for a neighbourhood: the jobs of ``free``
choose their mode and start; the others are fixed as the current solution has them
(:func:`build`). Its objective is the GPU-slots past a target slot, sum_j G_j max(0, e_j -
target), which has a slope where the makespan is flat (docs/exactness-log.md, "A gradient
towards the floor"). :mod:`rar_opt.solvers.floor_lns` solves it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from ortools.sat.python import cp_model

from rar_opt.cluster.timemodel import NEVER, slots_needed
from rar_opt.errors import InputError
from rar_opt.formulations import symmetry as symmetry_rows
from rar_opt.formulations.base import ModelData, require_star, resolve_horizon
from rar_opt.formulations.cpsat import CpsatModel
from rar_opt.instance import Instance
from rar_opt.schedule import Schedule

MAX_MODES = 50_000
"""The most modes (jobs x placements) :func:`table` builds; beyond, it refuses."""

Placement = tuple[int, ...]
Assignment = tuple[int, int]
"""A job's mode (its index in :attr:`ModeTable.modes`) and start slot."""


@dataclass(frozen=True)
class Mode:
    """A placement (GPUs per server), its execution time in slots, whether it splits, and
    whether it may share its servers' links with one other such mode (module docstring)."""

    placement: Placement
    duration: int
    split: bool
    shares: bool = False


@dataclass(frozen=True)
class ModeTable:
    """Every job's modes, the cluster's capacities, the jobs' GPUs and releases."""

    capacity: tuple[int, ...]
    gpus: tuple[int, ...]
    releases: tuple[int, ...]
    modes: tuple[tuple[Mode, ...], ...]

    def end(self, j: int, assignment: Assignment) -> int:
        """Job j's completion under ``assignment``."""
        return assignment[1] + self.modes[j][assignment[0]].duration

    def makespan(self, solution: Sequence[Assignment]) -> int:
        """The latest completion of ``solution``."""
        return max(self.end(j, a) for j, a in enumerate(solution))

    def past(self, solution: Sequence[Assignment], target: int) -> int:
        """GPU-slots past ``target``: sum_j G_j max(0, e_j - target)."""
        return sum(self.gpus[j] * max(0, self.end(j, a) - target) for j, a in enumerate(solution))

    def schedule(self, name: str, solution: Sequence[Assignment], method: str) -> Schedule:
        """``solution`` as a schedule of the instance ``name``."""
        starts = np.array([a[1] for a in solution], dtype=np.int64)
        placements = np.array([self.modes[j][a[0]].placement for j, a in enumerate(solution)], dtype=np.int64)
        return Schedule.from_arrays(name, starts, placements, meta={"method": method})

    def solution_of(self, schedule: Schedule) -> list[Assignment] | None:
        """The modes and starts of ``schedule``, or None if some job's placement is no mode
        (none is missing from a table built without a horizon)."""
        index = [{m.placement: k for k, m in enumerate(modes)} for modes in self.modes]
        out: list[Assignment] = []
        for j, (start, row) in enumerate(zip(schedule.start_array, schedule.placement_array, strict=True)):
            k = index[j].get(tuple(int(v) for v in row))
            if k is None:
                return None
            out.append((k, int(start)))
        return out


def _vectors(gpus: int, capacity: Sequence[int]) -> Iterable[Placement]:
    """Every GPU-count vector y with y_s <= capacity[s] and sum y = gpus."""
    n = len(capacity)
    rest = [sum(capacity[s:]) for s in range(n)] + [0]
    current = [0] * n

    def walk(s: int, left: int) -> Iterable[Placement]:
        if s == n:
            yield tuple(current)
            return
        for y in range(max(0, left - rest[s + 1]), min(left, capacity[s]) + 1):
            current[s] = y
            yield from walk(s + 1, left - y)
        current[s] = 0

    if gpus <= rest[0]:
        yield from walk(0, gpus)


def count_modes(instance: Instance) -> int:
    """How many modes :func:`table` would write out for ``instance`` (GPU-count vectors of
    every job, counted by dynamic programming over the servers)."""
    capacity = [int(c) for c in instance.time_model.capacity]
    top = int(max(instance.time_model.gpus))
    ways = np.zeros(top + 1, dtype=object)
    ways[0] = 1
    for cap in capacity:
        nxt = np.zeros_like(ways)
        for g in range(top + 1):
            nxt[g] = sum(ways[g - y] for y in range(min(g, cap) + 1))
        ways = nxt
    return int(sum(ways[int(g)] for g in instance.time_model.gpus))


def table(instance: Instance, horizon: int | None = None, sharing: bool = False) -> ModeTable:
    """Every job's modes (those longer than ``horizon`` left out, where given); with
    ``sharing``, the split modes that lose no slot at contention 2 marked as sharing."""
    require_star(instance, "the mode restriction")
    count = count_modes(instance)
    if count > MAX_MODES:
        raise InputError(f"{count:,} modes (limit {MAX_MODES:,})", where="modes")
    tm = instance.time_model
    capacity = tuple(int(c) for c in tm.capacity)
    # rho_j(p, n) = ceil(F_j / phi_j(p, n)) from the one time model, for p = 0, 1 and 2
    times = slots_needed(tm.iterations[:, None, None], tm.phi_table(2))
    modes = []
    for j, g in enumerate(tm.gpus):
        own = []
        for y in _vectors(int(g), capacity):
            n = sum(1 for v in y if v)
            duration = int(times[j, 0 if n == 1 else 1, n])
            if duration >= NEVER:  # no progress on this span (not a span of the job)
                continue
            if horizon is None or duration <= horizon:
                shares = sharing and n > 1 and int(times[j, 2, n]) == duration
                own.append(Mode(y, duration, n > 1, shares))
        modes.append(tuple(own))
    releases = tuple(int(job.release) for job in instance.jobs)
    return ModeTable(capacity, tuple(int(g) for g in tm.gpus), releases, tuple(modes))


Uses = list[list[tuple[cp_model.IntervalVar, int]]]
"""Per server, the intervals that take its GPUs (or its link), each with its demand."""

LINK = 2
"""A server link's capacity in the restriction's row: a split mode takes all of it, a
sharing mode half (module docstring)."""


def _place(uses: Uses, links: Uses, interval: cp_model.IntervalVar, mode: Mode) -> None:
    """Enter a mode's interval in the rows of the servers it uses."""
    for s, y in enumerate(mode.placement):
        if y:
            uses[s].append((interval, y))  # eq. (2): y_s GPUs of server s
            if mode.split:  # the restriction: one split job per server at a time, or two that share
                links[s].append((interval, 1 if mode.shares else LINK))


def _server_rows(m: cp_model.CpModel, uses: Uses, links: Uses, capacity: Sequence[int]) -> None:
    """Each server's capacity (eq. 2) and the restriction's one split job at a time (a
    no-overlap), or two sharing ones (a cumulative of capacity :data:`LINK`)."""
    for s, cap in enumerate(capacity):
        if uses[s]:
            m.add_cumulative([i for i, _ in uses[s]], [y for _, y in uses[s]], cap)
        if len(links[s]) > 1:
            if all(demand == LINK for _, demand in links[s]):
                m.add_no_overlap([i for i, _ in links[s]])
            else:
                m.add_cumulative([i for i, _ in links[s]], [d for _, d in links[s]], LINK)


@dataclass
class Neighbourhood:
    """A built neighbourhood: the CP-SAT model and, per free job and mode, its literal and
    start variable."""

    model: cp_model.CpModel
    choices: dict[tuple[int, int], tuple[cp_model.IntVar, cp_model.IntVar]]


def build(
    modes: ModeTable, solution: Sequence[Assignment], free: Iterable[int], horizon: int, target: int
) -> Neighbourhood:
    """The restriction over ``horizon`` slots with the jobs of ``free`` open (every mode that
    fits, any start; hinted with ``solution``) and the others fixed as ``solution`` has
    them; minimise the GPU-slots past ``target``, then the free jobs' completions."""
    m = cp_model.CpModel()
    free = set(free)
    n_servers = len(modes.capacity)
    uses: Uses = [[] for _ in range(n_servers)]
    links: Uses = [[] for _ in range(n_servers)]
    choices: dict[tuple[int, int], tuple[cp_model.IntVar, cp_model.IntVar]] = {}
    past = []
    ends = []

    for j, own in enumerate(modes.modes):
        if j not in free:
            k, start = solution[j]
            _place(uses, links, m.new_fixed_size_interval_var(start, own[k].duration, f"fixed_{j}"), own[k])
            continue
        end = m.new_int_var(0, horizon, f"e_{j}")
        literals = []
        for k, mode in enumerate(own):
            if modes.releases[j] + mode.duration > horizon:
                continue
            chosen = m.new_bool_var(f"x_{j}_{k}")
            begin = m.new_int_var(modes.releases[j], horizon - mode.duration, f"a_{j}_{k}")  # a_j >= r_j
            interval = m.new_optional_fixed_size_interval_var(begin, mode.duration, chosen, f"i_{j}_{k}")
            _place(uses, links, interval, mode)
            m.add(end == begin + mode.duration).only_enforce_if(chosen)
            literals.append(chosen)
            choices[(j, k)] = (chosen, begin)
            if solution[j][0] == k:
                m.add_hint(chosen, True)
                m.add_hint(begin, solution[j][1])
        if not literals:
            raise InputError(f"job {j} has no mode within {horizon} slots", where="horizon")
        m.add_exactly_one(literals)
        late = m.new_int_var(0, horizon, f"late_{j}")
        m.add_max_equality(late, [end - target, 0])
        past.append(modes.gpus[j] * late)
        ends.append(end)
    _server_rows(m, uses, links, modes.capacity)
    # first the GPU-slots past the target, then the free jobs' completions (earlier ends
    # leave room for the next neighbourhood); the weight makes the order strict
    m.minimize((len(ends) * horizon + 1) * sum(past) + sum(ends))
    return Neighbourhood(m, choices)


def whole(instance: Instance, horizon: int | None = None, symmetry: bool = True, sharing: bool = False) -> CpsatModel:
    """The restriction with every job free, as one CP-SAT model over ``horizon`` slots (at
    most T; default T) that minimises the makespan: each job's modes share one start a_j,
    exactly one is present, and its GPU counts are read back as the y_j row
    (:func:`~.cpsat.read_schedule`). With ``symmetry`` the rows of
    :mod:`~rar_opt.formulations.symmetry` keep one schedule per orbit of equal servers and
    jobs. Beside the servers' cumulatives, the cluster as one pool of GPUs (redundant, for
    the search). Its optimum is the restriction's (that of :mod:`.cfree` with ``restrict``),
    an upper bound on OPT; asked by a slot, a schedule it finds ends there (docs/exactness.md,
    "The mode restriction solved whole"). With ``sharing``, the wider restriction of the
    module docstring, still an upper bound."""
    horizon = resolve_horizon(horizon, instance)
    modes = table(instance, horizon, sharing)
    n_servers = len(modes.capacity)
    m = cp_model.CpModel()
    start: list[Any] = []
    end: list[Any] = []
    y: list[list[Any]] = []
    used: list[list[Any]] = []
    uses: Uses = [[] for _ in range(n_servers)]
    links: Uses = [[] for _ in range(n_servers)]
    pool = []
    for j, own in enumerate(modes.modes):
        release = modes.releases[j]
        fitting = [mode for mode in own if release + mode.duration <= horizon]
        if not fitting:
            raise InputError(f"job {j} has no mode within {horizon} slots", where="horizon")
        shortest, longest = min(mode.duration for mode in fitting), max(mode.duration for mode in fitting)
        a = m.new_int_var(release, horizon - shortest, f"a{j}")  # a_j >= r_j
        chosen = []
        for k, mode in enumerate(fitting):
            x = m.new_bool_var(f"x{j}_{k}")
            m.add(a <= horizon - mode.duration).only_enforce_if(x)
            _place(uses, links, m.new_optional_fixed_size_interval_var(a, mode.duration, x, f"i{j}_{k}"), mode)
            chosen.append((x, mode))
        m.add_exactly_one(x for x, _ in chosen)
        duration = m.new_int_var(shortest, longest, f"d{j}")
        m.add(duration == sum(mode.duration * x for x, mode in chosen))
        e = m.new_int_var(release + shortest, horizon, f"e{j}")
        pool.append(m.new_interval_var(a, duration, e, f"job{j}"))
        row, flags = [], []
        for s in range(n_servers):
            on = [(x, mode.placement[s]) for x, mode in chosen if mode.placement[s]]
            gpus_on = m.new_int_var(0, min(modes.gpus[j], modes.capacity[s]), f"y{j}_{s}")
            flag = m.new_bool_var(f"z{j}_{s}")
            m.add(gpus_on == sum(k * x for x, k in on))
            m.add(flag == sum(x for x, _ in on))  # the modes are exclusive: at most one is on s
            row.append(gpus_on)
            flags.append(flag)
        start.append(a)
        end.append(e)
        y.append(row)
        used.append(flags)
    _server_rows(m, uses, links, modes.capacity)
    m.add_cumulative(pool, list(modes.gpus), sum(modes.capacity))
    if symmetry:  # equal servers, equal jobs: one schedule per orbit
        symmetry_rows.add_rows(m, instance, start, used)
    makespan = m.new_int_var(0, horizon, "makespan")
    m.add_max_equality(makespan, end)
    m.minimize(makespan)
    name = "mode-restriction-sharing" if sharing else "mode-restriction"
    return CpsatModel(m, start, end, y, makespan, ModelData(name, instance.name, horizon, None, {}))


def read(hood: Neighbourhood, solver: cp_model.CpSolver, solution: Sequence[Assignment]) -> list[Assignment]:
    """``solution`` with the free jobs' modes and starts from the solver's answer."""
    out = list(solution)
    for (j, k), (chosen, start) in hood.choices.items():
        if solver.value(chosen):
            out[j] = (k, int(solver.value(start)))
    return out
