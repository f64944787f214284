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
import math
import time
from typing import Any

import pyomo.environ as pyo
from pyomo.contrib.appsi.solvers import Highs
from pyomo.version import version as PYOMO_VERSION

from .backend import Capabilities, RawOutcome, SolveOptions
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
            # the hand-off first, on its own clock, so that HiGHS gets exactly what is left
            opt.set_instance(model)
            for flag in _UPDATE_FLAGS:  # nothing changes between the hand-off and the solve
                setattr(opt.update_config, flag, False)
            limit = options.time_limit
            if options.deadline is not None:
                left = options.deadline - time.perf_counter()
                if left <= 0:  # the hand-off used up the time; a warm start is still an incumbent
                    start = pyo.value(model.obj) if options.warm_start else None
                    return RawOutcome(
                        Status.FEASIBLE if options.warm_start else Status.NO_SOLUTION,
                        has_solution=options.warm_start,
                        objective=None if start is None else float(start),
                        handoff_s=time.perf_counter() - began,
                        termination="time limit during the hand-off",
                        message="the time limit ran out while the model was handed to HiGHS",
                        solver=solver,
                    )
                limit = left if limit is None else min(limit, left)
            if limit is not None:
                opt.config.time_limit = max(float(limit), 0.01)
            res = opt.solve(model)
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
        has_solution = res.best_feasible_objective is not None
        if has_solution:
            opt.load_vars()
        bound = res.best_objective_bound
        if bound is not None and not math.isfinite(bound):  # HiGHS reports -inf before any bound
            bound = None
        return RawOutcome(
            status=map_status(HIGHS_TABLE, res.termination_condition, has_solution),
            has_solution=has_solution,
            objective=res.best_feasible_objective,
            bound=bound,
            solver_s=solver_s,
            handoff_s=None if solver_s is None else total - solver_s,
            model_size=size,
            termination=termination or str(res.termination_condition),
            solver=solver,
        )
