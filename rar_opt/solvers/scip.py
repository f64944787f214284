"""Solve the non-convex RAR-DDLS model with SCIP (optional extra ``rar-opt[minlp]``).

SCIP is a MINLP solver that installs from PyPI with PySCIPOpt (its wheels carry SCIP).
The Pyomo model is written as an AMPL ``.nl`` file with symbolic names, which SCIP reads
natively; the solution is mapped back by those names. Meant for tiny instances: it
checks that the paper's own non-convex program, solved as it stands, reaches the
optimum the compact MILP proves.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

import pyomo.environ as pyo
from pyomo.version import version as PYOMO_VERSION

from ..check import check
from ..instance import Instance
from ..schedule import Schedule
from .highs import SolveResult, _gap
from .status import Status

# SCIP's status strings (PySCIPOpt Model.getStatus()) -> (with a solution, without one)
SCIP_STATUS_TABLE: dict[str, tuple[Status, Status]] = {
    "optimal": (Status.OPTIMAL, Status.ERROR),
    "timelimit": (Status.FEASIBLE, Status.NO_SOLUTION),
    "gaplimit": (Status.FEASIBLE, Status.NO_SOLUTION),
    "nodelimit": (Status.FEASIBLE, Status.NO_SOLUTION),
    "totalnodelimit": (Status.FEASIBLE, Status.NO_SOLUTION),
    "stallnodelimit": (Status.FEASIBLE, Status.NO_SOLUTION),
    "memlimit": (Status.FEASIBLE, Status.NO_SOLUTION),
    "sollimit": (Status.FEASIBLE, Status.NO_SOLUTION),
    "bestsollimit": (Status.FEASIBLE, Status.NO_SOLUTION),
    "restartlimit": (Status.FEASIBLE, Status.NO_SOLUTION),
    "primallimit": (Status.FEASIBLE, Status.NO_SOLUTION),
    "duallimit": (Status.FEASIBLE, Status.NO_SOLUTION),
    "userinterrupt": (Status.FEASIBLE, Status.NO_SOLUTION),
    "terminate": (Status.FEASIBLE, Status.NO_SOLUTION),
    "infeasible": (Status.ERROR, Status.INFEASIBLE),
    "inforunbd": (Status.ERROR, Status.INFEASIBLE),
    "unbounded": (Status.ERROR, Status.ERROR),
    "unknown": (Status.FEASIBLE, Status.ERROR),
}


def scip_available() -> bool:
    try:
        import pyscipopt  # noqa: F401
    except ImportError:
        return False
    return True


def solve_nonconvex(
    instance: Instance, *, horizon: int | None = None, time_limit: float | None = None, seed: int = 0
) -> SolveResult:
    """Solve RAR-DDLS (:mod:`rar_opt.formulations.nonconvex`) with SCIP, in a child process.

    ``horizon`` defaults to SJF-BCO's makespan (every optimal schedule fits in it).
    Without PySCIPOpt the result has status ``error`` and says how to install it. SCIP
    runs in a separate process because it has crashed on some of our models (``free():
    invalid size`` on the library instance tiny-8x2-s20); a crash becomes status ``error``.
    SCIP's claims on this non-convex model are not certified: cross-check with the
    compact MILP (``solve(instance)``), which is what the tests do.
    """
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    began = time.perf_counter()
    try:
        with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
            return pool.submit(_solve_here, instance, horizon, time_limit, seed).result()
    except BrokenProcessPool:
        return SolveResult(
            status=Status.ERROR,
            schedule=None,
            objective=None,
            bound=None,
            gap=None,
            makespan=None,
            avg_jct=None,
            completion=None,
            build_s=0.0,
            solver_s=None,
            wall_s=time.perf_counter() - began,
            formulation="nonconvex",
            solver={"name": "scip"},
            options={"horizon": horizon, "time_limit": time_limit, "seed": seed},
            message="SCIP crashed (its process died); no result",
        )


def _solve_here(instance: Instance, horizon: int | None, time_limit: float | None, seed: int) -> SolveResult:
    from ..algorithms import run_policy
    from ..formulations import nonconvex

    wall0 = time.perf_counter()
    if horizon is None:
        horizon = check(instance, run_policy(instance, "sjf-bco")).result.makespan
    options = {
        "formulation": "nonconvex",
        "horizon": horizon,
        "time_limit": time_limit,
        "seed": seed,
        "scip_params": {"presolving/maxrounds": 0},
    }
    solver: dict[str, Any] = {"name": "scip", "interface": "pyscipopt via .nl", "pyomo": PYOMO_VERSION}
    base: dict[str, Any] = {
        "objective": None,
        "bound": None,
        "gap": None,
        "makespan": None,
        "avg_jct": None,
        "completion": None,
        "formulation": "nonconvex",
        "options": options,
    }
    if not scip_available():
        return SolveResult(
            status=Status.ERROR,
            schedule=None,
            build_s=0.0,
            solver_s=None,
            wall_s=time.perf_counter() - wall0,
            solver=solver,
            **base,
            message="SCIP is not installed: pip install 'rar-opt[minlp]' (PySCIPOpt)",
        )
    import pyscipopt

    build0 = time.perf_counter()
    model = nonconvex.build(instance, horizon=horizon)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.nl"
        # symbolic labels make the .col file carry Pyomo's names, which SCIP gives its columns;
        # linear presolve off, so that every variable reaches SCIP and comes back
        model.write(str(path), io_options={"symbolic_solver_labels": True, "linear_presolve": False})
        by_name = {v.name: v for v in model.component_data_objects(pyo.Var)}
        build_s = time.perf_counter() - build0
        scip = pyscipopt.Model()
        scip.hideOutput()
        scip.readProblem(str(path))
    scip.setParam("randomization/randomseedshift", int(seed))
    # SCIP 10's presolve wrongly claimed optimality on this model: on the library instance
    # wait-beats-start-plus (optimum 6, proven by the compact MILP and accepted by SCIP's
    # own checkSol) it reported "optimal 8" with horizon 8 and "infeasible" with horizon 6.
    # With presolve off, and with other random seeds, it finds 6. Presolve stays off.
    scip.setParam("presolving/maxrounds", 0)
    if time_limit is not None:
        scip.setParam("limits/time", float(time_limit))
    solve0 = time.perf_counter()
    scip.optimize()
    solver_s = time.perf_counter() - solve0
    solver["version"] = str(scip.version())
    raw = scip.getStatus()
    has_solution = scip.getNSols() > 0
    status = SCIP_STATUS_TABLE.get(raw, (Status.ERROR, Status.ERROR))[0 if has_solution else 1]
    schedule = None
    if has_solution:
        best = scip.getBestSol()
        for var in scip.getVars():
            target = by_name.get(var.name)
            if target is not None:
                target.set_value(scip.getSolVal(best, var), skip_validation=True)
        read = nonconvex.read_schedule(model, instance)
        schedule = Schedule.from_arrays(
            instance.name,
            read.start_array,
            read.placement_array,
            meta={"method": "nonconvex-minlp", "status": str(status), "options": options, "solver": solver},
        )
        report = check(instance, schedule)
        base.update(
            makespan=report.result.makespan,
            avg_jct=report.result.avg_jct,
            completion=[int(c) for c in report.result.completion],
            objective=scip.getObjVal(),
        )
        if not report.feasible:
            status = Status.ERROR
    bound = scip.getDualbound() if status != Status.INFEASIBLE else None
    base.update(bound=bound, gap=_gap(base["objective"], bound))
    return SolveResult(
        status=status,
        schedule=schedule,
        build_s=build_s,
        solver_s=solver_s,
        wall_s=time.perf_counter() - wall0,
        solver=solver,
        termination=raw,
        model_size={"cols": scip.getNVars(), "rows": scip.getNConss()},
        **base,
    )


__all__ = ["SCIP_STATUS_TABLE", "scip_available", "solve_nonconvex"]
