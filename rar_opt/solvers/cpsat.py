"""OR-Tools CP-SAT, for the constraint-programming formulation (:mod:`rar_opt.formulations.cpsat`).

CP-SAT proves optimality itself (certified): its "optimal" and "infeasible" are exact on
our integer model. It runs with one worker unless told otherwise and a fixed random seed,
both recorded. A time limit is honoured by CP-SAT's own clock.
"""

from __future__ import annotations

import time
from importlib import metadata
from typing import Any

from ortools.sat.python import cp_model

from rar_opt.solvers.backend import Capabilities, RawOutcome, SolveOptions
from rar_opt.solvers.status import CPSAT_TABLE, Status, map_status
from rar_opt.support.processes import native_sigint, on_stop, stop_requested

SEARCHES: dict[str, tuple[tuple[str, Any], ...]] = {
    "default": (),
    "no-lp": (("linearization_level", 0),),
    "core": (("optimize_with_core", True),),
    "no-probing": (("cp_model_probing_level", 0),),
    "no-lp-dff": (("linearization_level", 0), ("use_conservative_scale_overload_checker", True)),
}
"""CP-SAT searches by name, as parameter settings (docs/exactness.md, "Searches"):

* ``default``: CP-SAT's own defaults, which keep a linear relaxation of the model
  (linearization level 1) and re-solve it during the search;
* ``no-lp``: the same search with no linear relaxation (level 0): propagation only. On
  our full model a node costs much less, and in our measurements at 16 x 8 x 100 it
  proved more within a minute than the other two;
* ``core``: the core-based search (``optimize_with_core``), which raises the objective's
  lower bound by unsatisfiable cores; it needs an objective;
* ``no-probing``: CP-SAT's own search with no probing in its presolve (probing level 0).
  On the mode restriction at 24 x 8 x 150 the probing alone takes 6-7 s before any
  search, which is most of a slice of the race (:mod:`rar_opt.solvers.race`);
* ``no-lp-dff``: ``no-lp`` with one more check in every cumulative: CP-SAT's overload
  checker on energies scaled by a dual-feasible function (its "conservative scale"), a
  bin-packing bound applied to the GPUs over time. On the probes at 53 and 54 of
  ``heavy-20x8x120-s5`` it cut the time to a refutation by half or more (docs/exactness.md,
  "Energy scaled by dual-feasible functions").

All of them search the same model, so each is as exact as the model: only the route to a
proof differs."""


class _StopAt(cp_model.CpSolverSolutionCallback):
    """Stops the search at the first solution whose objective is at most ``target``."""

    def __init__(self, target: float) -> None:
        super().__init__()
        self.target = target

    def on_solution_callback(self) -> None:
        if self.objective_value <= self.target:
            self.stop_search()


class Cpsat:
    """The CP-SAT backend (its own models; hints as a start; time limit; workers)."""

    name = "cpsat"
    capabilities = Capabilities(mip_start=True, nonconvex=False, time_limit=True, threads=True, certified=True)

    def unavailable(self) -> str | None:
        """None: ortools is a dependency of rar-opt."""
        return None

    def solve(self, model: Any, options: SolveOptions) -> RawOutcome:
        """Solve a :class:`~rar_opt.formulations.cpsat.CpsatModel`; it loads the incumbent (``values``)."""
        solver_info = {"name": self.name, "interface": "ortools.sat.python", "version": metadata.version("ortools")}
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = max(int(options.threads), 1)
        solver.parameters.random_seed = int(options.seed)
        for name, value in options.params:  # e.g. a search of SEARCHES
            setattr(solver.parameters, name, value)
        limit = options.seconds()
        if limit is not None and options.meter is not None:  # a budget of work: deterministic time
            solver.parameters.max_deterministic_time = limit
        elif limit is not None:
            solver.parameters.max_time_in_seconds = limit
        # Ctrl-C: CP-SAT's own handler only where Python's default one is in place (a script or
        # notebook); in rar-opt's commands and in workers, a stop request stops the search
        solver.parameters.catch_sigint_signal = native_sigint()
        if stop_requested() is not None:  # stop_search before the solve starts is not heard: no time at all
            solver.parameters.max_time_in_seconds = 0.0
        began = time.perf_counter()
        with on_stop(solver.stop_search):
            code = solver.solve(model.model, None if options.stop_at is None else _StopAt(options.stop_at))
        solver_s = time.perf_counter() - began
        if options.meter is not None:
            options.meter.charge(solver.response_proto.deterministic_time)
        name = solver.status_name(code)
        has_solution = code in (cp_model.OPTIMAL, cp_model.FEASIBLE)
        if has_solution:
            model.load(solver.value)
        proto = model.model.proto
        status = map_status(CPSAT_TABLE, name, has_solution)
        if stop_requested() is not None and status in (Status.FEASIBLE, Status.NO_SOLUTION):
            status, name = Status.INTERRUPTED, f"{name} (interrupted by signal {stop_requested()})"
        return RawOutcome(
            status=status,
            has_solution=has_solution,
            objective=float(solver.objective_value) if has_solution else None,
            bound=float(solver.best_objective_bound) if has_solution or name == "UNKNOWN" else None,
            solver_s=solver_s,
            handoff_s=0.0,
            model_size={"variables": len(proto.variables), "constraints": len(proto.constraints)},
            termination=name,
            solver=solver_info,
        )
