"""Solve a formulation with HiGHS through Pyomo's ``appsi_highs`` interface.

Why appsi_highs: warm starts. The newer ``pyomo.contrib.solver`` HiGHS interface is about
10% faster to hand a model over, but has no MIP-start option in pyomo 6.10.1; a complete
MIP start from a heuristic is part of what users ask for (see the notes in
``../shared/notes/pyomo-highs.md``, and ``benchmarks/exact.py`` for our measurements).

The solve never raises on a time limit, an infeasible model or a missing solver: each is
a status in the returned :class:`SolveResult`. Threads default to 1 (HiGHS' branch and
bound is essentially serial; run several solves in separate processes instead), and the
HiGHS random seed is set and recorded.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass, field
from typing import Any

import pyomo.environ as pyo
from pyomo.contrib.appsi.solvers import Highs
from pyomo.version import version as PYOMO_VERSION

from ..check import check
from ..errors import InputError
from ..instance import Instance
from ..schedule import Schedule
from .status import Status, map_status

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SolveResult:
    """One solve: our status, the schedule read back (re-simulated), and the numbers."""

    status: Status
    schedule: Schedule | None
    objective: float | None  # the model's objective at the incumbent
    bound: float | None  # best proven bound
    gap: float | None  # (objective - bound) / |objective|
    makespan: int | None  # of the schedule, from the simulator
    avg_jct: float | None
    completion: list[int] | None
    build_s: float
    solver_s: float | None
    wall_s: float
    formulation: str
    solver: dict[str, Any]
    options: dict[str, Any]
    model_size: dict[str, int] = field(default_factory=dict)
    handoff_s: float | None = None  # Pyomo's translation into HiGHS (solve call minus HiGHS' run time)
    termination: str = ""
    message: str = ""

    @property
    def has_schedule(self) -> bool:
        return self.schedule is not None

    def summary(self) -> dict[str, Any]:
        return {
            "status": str(self.status),
            "objective": self.objective,
            "bound": self.bound,
            "gap": self.gap,
            "makespan": self.makespan,
            "avg_jct": self.avg_jct,
            "completion": self.completion,
            "runtime_s": self.wall_s,
            "build_s": self.build_s,
            "solver_s": self.solver_s,
            "handoff_s": self.handoff_s,
            "formulation": self.formulation,
            "solver": self.solver,
            "options": self.options,
            "model_size": self.model_size,
            "termination": self.termination,
            "message": self.message,
        }


def highs_version() -> str:
    try:
        return ".".join(str(v) for v in Highs().version())
    except Exception:
        return "unavailable"


def _gap(objective: float | None, bound: float | None) -> float | None:
    if objective is None or bound is None or not math.isfinite(bound):
        return None
    return abs(objective - bound) / max(abs(objective), 1e-9)


def solve_model(
    model: pyo.ConcreteModel,
    *,
    time_limit: float | None = None,
    threads: int = 1,
    seed: int = 0,
    warm_start: bool = False,
    abs_gap: float = 0.99,
    highs_options: dict[str, Any] | None = None,
) -> tuple[Status, Any, dict[str, Any]]:
    """Hand ``model`` to HiGHS and map the outcome; values are loaded only when a solution
    exists. Returns (status, appsi results or None, facts: times, size, raw status)."""
    opt = Highs()
    facts: dict[str, Any] = {"solver_s": None, "model_size": {}, "termination": "", "message": ""}
    if not opt.available():
        facts["message"] = "HiGHS (highspy) is not available: pip install 'highspy>=1.16,<1.17'"
        return Status.ERROR, None, facts
    opt.config.load_solution = False
    opt.config.warmstart = warm_start
    if time_limit is not None:
        opt.config.time_limit = float(time_limit)
    opt.highs_options = {
        "threads": int(threads),
        "random_seed": int(seed),
        "mip_abs_gap": float(abs_gap),
        **(highs_options or {}),
    }
    began = time.perf_counter()
    try:
        res = opt.solve(model)
    except Exception as exc:
        facts["message"] = f"{type(exc).__name__}: {exc}"
        facts["solver_s"] = time.perf_counter() - began
        return Status.ERROR, None, facts
    facts["handoff_and_solve_s"] = time.perf_counter() - began
    h: Any = getattr(opt, "_solver_model", None)
    try:  # reported defensively: a missing metric never fails a good solve
        facts["solver_s"] = float(h.getRunTime())
        facts["model_size"] = {"rows": int(h.getNumRow()), "cols": int(h.getNumCol()), "nonzeros": int(h.getNumNz())}
        facts["termination"] = h.modelStatusToString(h.getModelStatus())
    except Exception:
        pass
    has_solution = res.best_feasible_objective is not None
    status = map_status(res.termination_condition, has_solution)
    if not facts["termination"]:
        facts["termination"] = str(res.termination_condition)
    if has_solution:
        opt.load_vars()
    return status, res, facts


def solve(
    instance: Instance,
    *,
    formulation: str = "compact",
    time_limit: float | None = None,
    warm_start: str | None = None,
    threads: int = 1,
    seed: int = 0,
    objective: str = "makespan",
    symmetry: bool = True,
    cuts: bool = False,
    heuristic_horizon: bool = True,
    mip_start: bool = True,
) -> SolveResult:
    """Solve ``instance`` exactly with a MILP formulation and HiGHS.

    ``warm_start`` names a policy (``sjf-bco``, ``ls``, ...) whose schedule is handed to
    HiGHS as a complete MIP start (unless ``mip_start`` is False); with
    ``heuristic_horizon`` (default) the model then only has as many slots as that
    schedule's makespan (every optimal schedule fits).
    """
    from ..algorithms import run_policy
    from ..formulations import FORMULATIONS

    wall0 = time.perf_counter()
    if formulation not in FORMULATIONS:
        raise InputError(f"unknown formulation {formulation!r} (known: {', '.join(FORMULATIONS)})", where="formulation")
    form = FORMULATIONS[formulation]
    if time_limit is not None and not time_limit > 0:
        raise InputError(f"must be positive, got {time_limit!r}", where="time_limit")
    if threads < 0 or seed < 0:
        raise InputError(
            f"threads ({threads}) and seed ({seed}) must be >= 0 (threads 0: HiGHS decides)", where="solver options"
        )
    start_schedule = run_policy(instance, warm_start) if warm_start else None
    horizon = None
    if start_schedule is not None and heuristic_horizon and objective == "makespan":
        horizon = check(instance, start_schedule).result.makespan
    options = {
        "formulation": formulation,
        "objective": objective,
        "symmetry": symmetry,
        "cuts": cuts,
        "horizon": horizon or instance.horizon,
        "warm_start": warm_start,
        "mip_start": bool(warm_start) and mip_start,
        "time_limit": time_limit,
        "threads": threads,
        "seed": seed,
        "mip_abs_gap": 0.99,
    }
    build0 = time.perf_counter()
    model = form.build(instance, objective=objective, symmetry=symmetry, cuts=cuts, horizon=horizon)
    if start_schedule is not None and mip_start:
        form.set_start(model, instance, start_schedule)
    build_s = time.perf_counter() - build0
    status, res, facts = solve_model(
        model, time_limit=time_limit, threads=threads, seed=seed, warm_start=start_schedule is not None and mip_start
    )
    schedule = makespan = avg = completion = None
    if res is not None and res.best_feasible_objective is not None:
        schedule = form.read_schedule(model, instance)
        schedule = Schedule.from_arrays(
            instance.name,
            schedule.start_array,
            schedule.placement_array,
            meta={
                "method": f"{formulation}-milp",
                "status": str(status),
                "options": options,
                "solver": {"name": "highs", "version": highs_version()},
                "rar_opt": _rar_opt_version(),
            },
        )
        report = check(instance, schedule)
        if not report.feasible:  # never hand out a schedule the checker rejects
            log.error("solver schedule violates %s", sorted(report.names()))
            status, facts["message"] = (
                Status.ERROR,
                "read-back schedule failed the checker: " + "; ".join(str(v) for v in report.violations[:3]),
            )
        makespan, avg = report.result.makespan, report.result.avg_jct
        completion = [int(c) for c in report.result.completion]
    objective_value = None if res is None else res.best_feasible_objective
    bound = None if res is None else res.best_objective_bound
    if bound is not None and not math.isfinite(bound):  # HiGHS reports -inf before any bound
        bound = None
    return SolveResult(
        status=status,
        schedule=schedule,
        objective=objective_value,
        bound=bound,
        gap=_gap(objective_value, bound),
        makespan=makespan,
        avg_jct=avg,
        completion=completion,
        build_s=build_s,
        solver_s=facts["solver_s"],
        wall_s=time.perf_counter() - wall0,
        formulation=formulation,
        solver={"name": "highs", "interface": "appsi_highs", "version": highs_version(), "pyomo": PYOMO_VERSION},
        options=options,
        model_size=facts["model_size"],
        handoff_s=(
            facts["handoff_and_solve_s"] - facts["solver_s"]
            if facts.get("handoff_and_solve_s") is not None and facts["solver_s"] is not None
            else None
        ),
        termination=facts["termination"],
        message=facts["message"],
    )


def _rar_opt_version() -> str:
    from .. import __version__

    return __version__
