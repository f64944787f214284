"""HiGHS through Pyomo's ``appsi_highs`` interface.

Why appsi_highs: warm starts. The newer ``pyomo.contrib.solver`` HiGHS interface is about
10% faster to hand a model over, but has no MIP-start option in pyomo 6.10.1, and a
complete MIP start from a heuristic is part of what users ask for (``benchmarks/exact.py``
holds our measurements). Threads default to 1 (HiGHS' branch and bound is essentially
serial; run several solves in separate processes instead), and the random seed is set and
recorded: HiGHS' run time swings with it.
"""

from __future__ import annotations

import functools
import logging
import math
import time
from typing import Any

import pyomo.environ as pyo
from pyomo.contrib.appsi.solvers import Highs
from pyomo.version import version as PYOMO_VERSION

from ..processes import TimeUp, alarm_at, stop_requested
from .backend import MIN_SOLVER_SECONDS, Capabilities, RawOutcome, SolveOptions
from .status import HIGHS_TABLE, Status, map_status

_UPDATE_FLAGS = (
    "check_for_new_or_removed_constraints",
    "check_for_new_or_removed_vars",
    "check_for_new_or_removed_params",
    "check_for_new_objective",
    "update_constraints",
    "update_vars",
    "update_params",
    "update_named_expressions",
    "update_objective",
)


@functools.cache
def highs_version() -> str:
    """The HiGHS version behind highspy (asked once per process)."""
    try:
        return ".".join(str(v) for v in Highs().version())
    except Exception:
        return "unavailable"


class AppsiHighs:
    """The HiGHS backend (MILP; MIP starts; time limit; threads)."""

    name = "highs"
    capabilities = Capabilities(mip_start=True, nonconvex=False, time_limit=True, threads=True, certified=True)

    def unavailable(self) -> str | None:
        """None when highspy can run, else how to install it."""
        try:
            ok = Highs().available()
        except Exception:
            ok = False
        return None if ok else "HiGHS (highspy) is not available: pip install 'highspy>=1.16,<1.17'"

    def solve(self, model: pyo.ConcreteModel, options: SolveOptions) -> RawOutcome:
        """Hand ``model`` to HiGHS; values are loaded only when a solution exists."""
        solver = {"name": self.name, "interface": "appsi_highs", "version": highs_version(), "pyomo": PYOMO_VERSION}
        missing = self.unavailable()
        if missing:
            return RawOutcome(Status.ERROR, message=missing, solver=solver)
        opt = Highs()
        opt.config.load_solution = False
        opt.config.warmstart = options.warm_start
        opt.highs_options = {
            "threads": int(options.threads),
            "random_seed": int(options.seed),
            "mip_abs_gap": float(options.abs_gap),
        }
        began = time.perf_counter()
        try:
            # the hand-off first, on its own clock, so that HiGHS gets exactly what is left; it
            # is Python code, so the deadline can stop it (the half-built solver is dropped)
            try:
                with alarm_at(options.deadline):
                    opt.set_instance(model)
            except TimeUp:
                pass  # reported below as a time limit during the hand-off
            for flag in _UPDATE_FLAGS:  # nothing changes between the hand-off and the solve
                setattr(opt.update_config, flag, False)
            limit = options.time_limit
            if stop_requested() is not None or options.deadline is not None:
                left = 0.0 if stop_requested() is not None else options.deadline - time.perf_counter()
                if left <= 0:  # the hand-off used up the time (or a signal came); a warm start is still an incumbent
                    start = pyo.value(model.obj) if options.warm_start else None
                    return RawOutcome(
                        Status.FEASIBLE if options.warm_start else Status.NO_SOLUTION,
                        has_solution=options.warm_start,
                        objective=None if start is None else float(start),
                        handoff_s=time.perf_counter() - began,
                        termination=("a signal" if stop_requested() is not None else "time limit")
                        + " during the hand-off",
                        message="the model was being handed to HiGHS when "
                        + ("a signal asked to stop" if stop_requested() is not None else "the time limit ran out"),
                        solver=solver,
                    )
                limit = left if limit is None else min(limit, left)
            if limit is not None:
                opt.config.time_limit = max(float(limit), MIN_SOLVER_SECONDS)
            watch = _watch(getattr(opt, "_solver_model", None), options.deadline)
            appsi_log = logging.getLogger("pyomo.contrib.appsi.solvers.highs")
            appsi_log.addFilter(_not_our_interrupt)  # our deadline stop is a time limit, not news
            try:
                res = opt.solve(model)
            finally:
                appsi_log.removeFilter(_not_our_interrupt)
        except Exception as exc:
            return RawOutcome(
                Status.ERROR,
                solver_s=time.perf_counter() - began,
                message=f"{type(exc).__name__}: {exc}",
                solver=solver,
            )
        total = time.perf_counter() - began
        h: Any = getattr(opt, "_solver_model", None)
        solver_s: float | None = None
        size: dict[str, int] = {}
        termination = ""
        try:  # read defensively: a missing metric never fails a good solve
            solver_s = float(h.getRunTime())
            size = {"rows": int(h.getNumRow()), "cols": int(h.getNumCol()), "nonzeros": int(h.getNumNz())}
            termination = h.modelStatusToString(h.getModelStatus())
        except Exception:
            pass
        objective = res.best_feasible_objective
        bound = res.best_objective_bound
        # our callback stopped it only if HiGHS ended interrupted (it may have finished first)
        interrupted = watch["stopped"] and "interrupt" in termination.lower()
        if interrupted and objective is None:  # appsi does not read an interrupted solve back
            objective, bound = _incumbent(h, bound)
        has_solution = objective is not None
        if has_solution:
            opt.load_vars()
        if bound is not None and not math.isfinite(bound):  # HiGHS reports -inf before any bound
            bound = None
        status = map_status(HIGHS_TABLE, res.termination_condition, has_solution)
        if interrupted and stop_requested() is not None:  # a signal asked us to stop
            status = Status.INTERRUPTED
            termination = f"interrupted by signal {stop_requested()} (stopped by the interrupt callback)"
        elif interrupted:  # stopped by us at the deadline: a time limit
            status = Status.FEASIBLE if has_solution else Status.NO_SOLUTION
            termination = "time limit (stopped at the deadline by the interrupt callback)"
        return RawOutcome(
            status=status,
            has_solution=has_solution,
            objective=objective,
            bound=bound,
            solver_s=solver_s,
            handoff_s=None if solver_s is None else total - solver_s,
            model_size=size,
            termination=termination or str(res.termination_condition),
            solver=solver,
        )


def _incumbent(highs: Any, bound: float | None) -> tuple[float | None, float | None]:
    """HiGHS' incumbent objective (the MIP start at least, when it was taken) and dual bound
    after an interrupt, read from its info; (None, bound) when it has no feasible point."""
    try:
        info = highs.getInfo()
        if int(info.primal_solution_status) != 2:  # 2: kSolutionStatusFeasible
            return None, bound
        return float(info.objective_function_value), float(info.mip_dual_bound)
    except Exception:
        return None, bound


GIL_YIELD_S = 0.05
"""How often (seconds) a running HiGHS lets other Python threads run (see :func:`_watch`)."""


def _not_our_interrupt(record: logging.LogRecord) -> bool:
    """Drop appsi's warning about HiGHS' interrupt status, which our deadline causes."""
    return "kInterrupt" not in record.getMessage()


def _watch(highs: Any, deadline: float | None) -> dict[str, bool]:
    """Subscribe to HiGHS' interrupt callbacks (MIP and simplex): stop at ``deadline`` (a
    ``time.perf_counter()`` value) even inside MIP routines that check their own clock
    rarely, and every :data:`GIL_YIELD_S` give other Python threads a moment (HiGHS holds
    the interpreter lock while it runs, so a progress bar or a Dask heartbeat would stall)."""
    state = {"stopped": False}
    if highs is None or not hasattr(highs, "cbMipInterrupt"):
        return state
    last = [time.perf_counter()]

    def interrupt(event: Any) -> None:
        now = time.perf_counter()
        if (deadline is not None and now >= deadline) or stop_requested() is not None:
            state["stopped"] = True
            event.interrupt()
        if now - last[0] >= GIL_YIELD_S:
            last[0] = now
            time.sleep(0)  # releases the interpreter lock for a moment

    try:
        highs.cbMipInterrupt.subscribe(interrupt)
        highs.cbSimplexInterrupt.subscribe(interrupt)
    except Exception:  # an older highspy without these events: its own time limit still holds
        pass
    return state
