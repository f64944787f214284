"""The protocol every solver backend follows, and what goes in and out of it.

A backend takes a built Pyomo model and :class:`SolveOptions`, runs its solver, loads the
incumbent's values into the model's variables (when there is one) and returns a
:class:`RawOutcome` with our status already mapped through its table in
:mod:`.status`. It never raises on a time limit, an infeasible model or a missing solver:
those are statuses. Reading the schedule back and judging it is the dispatcher's job
(:mod:`.result`), the same for every backend.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

import pyomo.environ as pyo

from rar_opt.errors import ParameterError
from rar_opt.solvers.status import Status
from rar_opt.support.checks import SOLVER_MAX_SEED, is_int, seconds_problem, seed_problem


@dataclass(frozen=True)
class Capabilities:
    """What a backend can do (the dispatcher checks them before solving)."""

    mip_start: bool  # takes the model's current values as a start
    nonconvex: bool  # solves models with products of variables (MINLP)
    time_limit: bool  # honours a wall-clock limit
    threads: bool  # takes a thread count
    certified: bool = True  # its "optimal" and "infeasible" are trusted as proofs


MIN_SOLVER_SECONDS = 0.05
"""The least time a solver is given, even when the work before it used up the limit."""

FINISH_RESERVE = 0.03
"""Share of a call's time limit kept for reading the schedule back and checking it."""


UNITS_PER_SECOND = 0.4
"""About how many units of CP-SAT's deterministic time one wall-clock second of one thread
holds: 0.35-0.45 on the 2-core machine of 2026-12-07 (8-unit probes at 45 on
``heavy-16x8x100-s1``, 55 on ``tiny-24x8x150-s3`` and 57 on ``heavy-20x8x120-s0`` took
18-24 s, their builds included). Under a budget of work, the plan's constants given in
seconds (a slice of the race, the GPU bins' cap, a restart) are this many units per second,
so that a plan keeps its proportions (docs/exactness.md, "Budgets of work")."""


class WorkMeter:
    """The clock of a budget given in units of work rather than seconds (``work_limit``):
    the sum of CP-SAT's deterministic time over its solves and of the counted searches'
    work (docs/exactness.md, "Budgets of work"). Shared by every share of one budget; only
    the solves and searches that spend it add to it, so a run under a work limit takes the
    same decisions however loaded the machine is."""

    def __init__(self) -> None:
        self.spent = 0.0

    def charge(self, units: float) -> None:
        """Add ``units`` of work done (never less than nothing)."""
        self.spent += max(float(units), 0.0)

    def __repr__(self) -> str:
        return f"WorkMeter(spent={self.spent:.3f})"


@dataclass(frozen=True)
class SolveOptions:
    """Solver settings, the same for every backend (each uses what it understands)."""

    time_limit: float | None = None  # seconds for the solver itself
    threads: int = 1
    seed: int = 0
    warm_start: bool = False  # the model's current values are a start
    abs_gap: float = 0.0  # absolute optimality gap (0.99 proves integral objectives exactly)
    deadline: float | None = None  # time.perf_counter() by which the backend must have returned
    params: tuple[tuple[str, Any], ...] = ()  # the backend's own parameters (CP-SAT: its search)
    stop_at: float | None = None  # stop once a solution's objective is at most this (CP-SAT only)
    # with a meter, time_limit is in units of work (CP-SAT's deterministic time), charged to it
    meter: WorkMeter | None = field(default=None, compare=False)

    def seconds(self) -> float | None:
        """The seconds the solver may run: its time limit, cut to what is left before the
        deadline, never below :data:`MIN_SOLVER_SECONDS`; None without either."""
        limit = self.time_limit
        if self.deadline is not None:
            left = self.deadline - time.perf_counter()
            limit = left if limit is None else min(limit, left)
        return None if limit is None else max(float(limit), MIN_SOLVER_SECONDS)

    def to_dict(self) -> dict[str, Any]:
        """The settings as recorded in a result."""
        return {
            "time_limit": self.time_limit,
            "threads": self.threads,
            "seed": self.seed,
            "abs_gap": self.abs_gap,
            **({"params": dict(self.params)} if self.params else {}),
            **({"stop_at": self.stop_at} if self.stop_at is not None else {}),
            **({"clock": "work"} if self.meter is not None else {}),
        }


@dataclass(frozen=True)
class RawOutcome:
    """What a backend reports; the model's variables hold the incumbent if ``has_solution``."""

    status: Status
    has_solution: bool = False
    objective: float | None = None
    bound: float | None = None
    solver_s: float | None = None  # the solver's own run time
    handoff_s: float | None = None  # translating the model for the solver
    model_size: dict[str, int] = field(default_factory=dict)
    termination: str = ""  # the raw termination, as the solver says it
    message: str = ""
    solver: dict[str, Any] = field(default_factory=dict)  # name, interface, version


class Backend(Protocol):
    """A solver behind rar-opt's solver layer. Adding one: a module with a class that
    follows this protocol, plus one line in :data:`rar_opt.solvers.registry.BACKENDS`."""

    name: str
    capabilities: Capabilities

    def unavailable(self) -> str | None:
        """None when the solver can run here, else how to install it."""
        ...

    def solve(self, model: pyo.ConcreteModel, options: SolveOptions) -> RawOutcome:
        """Solve ``model``; load the incumbent into its variables; never raise on a limit."""
        ...


MAX_SEED = SOLVER_MAX_SEED  # HiGHS and CP-SAT take a 32-bit seed (rar_opt.support.checks)


def check_settings(time_limit: float | None, threads: int, seed: int) -> None:
    """Refuse solver settings that no backend can run: a time limit that is not a finite
    positive number of seconds, threads beyond the machine's CPUs, a seed outside 0..2^31-1.
    The :class:`~rar_opt.errors.ParameterError` names the parameter."""
    if time_limit is not None and (problem := seconds_problem(time_limit)):
        raise ParameterError(problem, where="time_limit")
    if not is_int(threads):
        raise ParameterError(f"must be an integer, got {threads!r}", where="threads")
    if threads < 0:
        raise ParameterError(f"= {threads} must be >= 0 (0: the solver decides)", where="threads")
    if problem := seed_problem(seed, MAX_SEED):  # HiGHS and CP-SAT take a 32-bit seed
        raise ParameterError(problem, where="seed")
    cpus = os.cpu_count() or 1
    if threads > cpus:
        raise ParameterError(f"must be at most {cpus}, the CPUs of this machine; got {threads}", where="threads")
