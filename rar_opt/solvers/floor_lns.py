"""Large-neighbourhood search towards the floor on the mode restriction (:mod:`..formulations.modes`).

From a schedule that the contention-free restriction holds (no two split jobs on a server
at once), each step frees a few jobs, keeps the others where they are, and asks CP-SAT for
the free jobs' modes and starts that put the fewest GPU-slots past the target (the proven
floor): sum_j G_j max(0, e_j - target). A step's answer is kept when it is no worse (moves
along a plateau are kept too), so the makespan never rises. The search ends when nothing is
past the target (a schedule at the floor, hence optimal), after ``steps`` steps, or at the
time limit. Each step's CP-SAT search is bounded by deterministic time, not seconds, so the
same seed gives the same steps on any machine until the time limit cuts the search short.

The neighbourhoods, drawn at random with the seed: a late job with jobs that end near or
after its start; a random set of jobs; the jobs around a random slot; the jobs on two random
servers. A late job (one that ends past the target) is added to every neighbourhood. The
neighbourhoods grow by one job per ``grow_every`` steps without progress, up to ``max_extra``.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from ortools.sat.python import cp_model

from rar_opt.check import check
from rar_opt.errors import InputError, ParameterError
from rar_opt.formulations import modes as modes_model
from rar_opt.instance import Instance
from rar_opt.schedule import Schedule
from rar_opt.solvers.context import Context, Found, Incumbent
from rar_opt.solvers.record import PhaseKind, PhaseRecord
from rar_opt.solvers.status import Status
from rar_opt.support.checks import SOLVER_MAX_SEED, is_int, is_real, seconds_problem, seed_problem
from rar_opt.support.processes import stop_requested

METHOD = "floor-lns"
"""The ``method`` of the schedules this search hands on."""


@dataclass(frozen=True)
class Params:
    """Settings of the search; validated on construction.

    ``steps``: the most neighbourhoods asked; ``step_work``: CP-SAT's deterministic time per
    step; ``free_min``/``free_max``: the jobs freed per neighbourhood (before growth);
    ``grow_every``/``max_extra``: growth without progress; ``sharing``: search the mode
    restriction widened by the split modes that lose no slot at contention 2
    (:func:`~rar_opt.formulations.modes.table`, ``sharing``)."""

    steps: int = 2_000
    step_work: float = 0.3
    free_min: int = 4
    free_max: int = 8
    grow_every: int = 40
    max_extra: int = 8
    sharing: bool = False

    def __post_init__(self) -> None:
        for name in ("steps", "free_min", "free_max", "grow_every"):
            value = getattr(self, name)
            if not is_int(value) or value < 1:
                raise ParameterError(f"must be an integer >= 1, got {value!r}", where=name)
        if not is_int(self.max_extra) or self.max_extra < 0:
            raise ParameterError(f"must be an integer >= 0, got {self.max_extra!r}", where="max_extra")
        if self.free_max < self.free_min:
            raise ParameterError(f"must be at least free_min ({self.free_min}), got {self.free_max}", where="free_max")
        if not is_real(self.step_work) or not 0 < self.step_work < float("inf"):
            raise ParameterError(f"must be a positive number, got {self.step_work!r}", where="step_work")
        if not isinstance(self.sharing, bool):
            raise ParameterError(f"must be true or false, got {self.sharing!r}", where="sharing")


@dataclass
class Outcome:
    """What the search did: its best schedule (None if it could not start), that schedule's
    makespan in the model, the GPU-slots past the target, the steps and seconds, and why it
    did not start (``refused``)."""

    schedule: Schedule | None
    makespan: int | None
    past: int | None
    steps: int = 0
    seconds: float = 0.0
    refused: str | None = None
    progress: list[tuple[int, int, int]] = field(default_factory=list)  # (step, makespan, past)


def _solver(seed: int, work: float, wall: float) -> cp_model.CpSolver:
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = seed
    solver.parameters.linearization_level = 0  # propagation only, as auto's full model
    solver.parameters.max_deterministic_time = work
    solver.parameters.max_time_in_seconds = max(wall, 0.01)
    return solver


def _neighbourhood(
    table: modes_model.ModeTable, solution: Sequence[modes_model.Assignment], target: int, size: int, rng: random.Random
) -> set[int]:
    jobs = len(solution)
    ends = [table.end(j, a) for j, a in enumerate(solution)]
    late = [j for j in range(jobs) if ends[j] > target]
    size = min(size, jobs)
    draw = rng.random()
    if late and draw < 0.35:  # a late job and jobs that end after (a random part of) its span
        first = rng.choice(late)
        span = table.modes[first][solution[first][0]].duration
        since = target - span - rng.randint(0, span)
        near = [j for j in range(jobs) if j != first and ends[j] > since]
        free = set(rng.sample(near, min(size, len(near)))) | {first}
    elif draw < 0.55:
        free = set(rng.sample(range(jobs), size))
    elif draw < 0.8:  # the jobs whose midpoints are nearest a random slot
        slot = rng.randint(0, max(ends))
        order = sorted(range(jobs), key=lambda j: (abs(solution[j][1] + ends[j] - 2 * slot), j))
        free = set(order[:size])
    else:  # jobs on two random servers
        servers = rng.sample(range(len(table.capacity)), min(2, len(table.capacity)))
        on = [j for j, a in enumerate(solution) if any(table.modes[j][a[0]].placement[s] for s in servers)]
        free = set(rng.sample(on, min(size, len(on))))
    if late:
        free |= set(rng.sample(late, min(2, len(late))))
    return free


def search(
    instance: Instance,
    start: Schedule,
    target: int,
    *,
    seed: int = 0,
    time_limit: float | None = None,
    params: Params | None = None,
) -> Outcome:
    """The search from ``start`` towards ``target`` (a proven floor, or any slot)."""
    params = params or Params()
    if problem := seed_problem(seed, SOLVER_MAX_SEED):
        raise ParameterError(problem, where="seed")
    if time_limit is not None and (problem := seconds_problem(time_limit)):
        raise ParameterError(problem, where="time_limit")
    began = time.perf_counter()
    until = None if time_limit is None else began + time_limit
    try:
        table = modes_model.table(instance, sharing=params.sharing)
    except InputError as error:
        return Outcome(None, None, None, refused=error.message)
    solution = table.solution_of(start)
    if solution is None:
        return Outcome(None, None, None, refused="a placement of the start is no mode")
    span = table.makespan(solution)
    fixed = _solver(seed, params.step_work, 10.0 if until is None else until - time.perf_counter())
    if fixed.solve(modes_model.build(table, solution, (), span, target).model) not in (
        cp_model.OPTIMAL,
        cp_model.FEASIBLE,
    ):
        return Outcome(None, None, None, refused="the start has split jobs that share a server")
    rng = random.Random(seed)
    past = table.past(solution, target)
    outcome = Outcome(None, span, past, progress=[(0, span, past)])
    stall = 0
    while past > 0 and outcome.steps < params.steps:
        left = None if until is None else until - time.perf_counter()
        if (left is not None and left <= 0.01) or stop_requested() is not None:
            break
        outcome.steps += 1
        stall += 1
        size = rng.randint(params.free_min, params.free_max) + min(params.max_extra, stall // params.grow_every)
        free = _neighbourhood(table, solution, target, size, rng)
        hood = modes_model.build(table, solution, free, table.makespan(solution), target)
        solver = _solver(rng.randrange(1 << 30), params.step_work, 10.0 if left is None else left)
        if solver.solve(hood.model) not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            continue
        candidate = modes_model.read(hood, solver, solution)
        value = table.past(candidate, target)
        if value <= past:
            if value < past:
                stall = 0
                outcome.progress.append((outcome.steps, table.makespan(candidate), value))
            solution, past = candidate, value
    outcome.makespan, outcome.past = table.makespan(solution), past
    outcome.schedule = table.schedule(instance.name, solution, METHOD)
    outcome.seconds = time.perf_counter() - began
    return outcome


def stage(ctx: Context, best: Incumbent) -> Iterator[Found]:
    """The stage ``"lns"`` of a plan: the search from the best schedule (or, with the plan's
    ``lns_start`` "search", from the best schedule an improvement search handed on) towards
    the floor within the plan's ``lns_share`` of the time left, seeded with the run's seed. Its
    schedule is checked by the simulator before it is offered; it proves nothing by itself
    (the floor closes the gap when the schedule meets it). A start that the restriction does
    not hold is recorded as refused (``work`` has no steps)."""
    share, left = ctx.plan.lns_share, ctx.budget.left()
    if share is None or left is None or stop_requested() is not None:
        return
    if best.schedule is None or best.span is None or best.floor is None or best.floor >= best.span:
        return
    start = best.searched if ctx.plan.lns_start == "search" and best.searched is not None else best.schedule
    outcome = search(ctx.instance, start, best.floor, seed=ctx.budget.seed, time_limit=left * share)
    label = METHOD if outcome.refused is None else f"{METHOD} (refused: {outcome.refused})"
    span = None if outcome.schedule is None else check(ctx.instance, outcome.schedule).result.makespan
    fits = span is not None and span <= ctx.horizon
    status = Status.FEASIBLE if fits else Status.NO_SOLUTION
    record = PhaseRecord(
        PhaseKind.IMPROVE, status, span, seconds=outcome.seconds, search=label, work={"steps": outcome.steps}
    )
    yield Found(record, outcome.schedule if fits else None, span if fits else None, source=METHOD)
