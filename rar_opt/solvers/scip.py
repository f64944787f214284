"""SCIP through PySCIPOpt (optional extra ``rar-opt[minlp]``), for the non-convex model.

SCIP is a MINLP solver whose PyPI wheels carry it. The Pyomo model is written as an AMPL
``.nl`` file with symbolic names, which SCIP reads natively; the incumbent's values come
back by those names. SCIP runs in a child process because it has crashed on some of our
models (``free(): invalid size`` on the library instance tiny-8x2-s20): a crash becomes
status ``error``, never a dead caller. The child is ``python -m rar_opt.solvers.scip``, a
fresh interpreter that reads the .nl file and writes its answer as JSON: unlike a spawned
multiprocessing worker it never imports the caller's main script again, so a plain script
needs no ``if __name__ == "__main__":`` guard. SCIP's claims on the non-convex model are not
certified (docs/exactness.md); presolve is off because SCIP 10's presolve claimed wrong
optima on it (wait-beats-start-plus: "optimal 8" where 6 is proven and accepted by SCIP's
own solution check).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pyomo.environ as pyo
from pyomo.version import version as PYOMO_VERSION

from rar_opt.solvers.backend import Capabilities, RawOutcome, SolveOptions
from rar_opt.solvers.status import SCIP_TABLE, Status, map_status
from rar_opt.support.processes import die_with_parent

SCIP_PARAMS: dict[str, Any] = {"presolving/maxrounds": 0}
"""Parameters set on every SCIP solve (recorded in results)."""


def scip_available() -> bool:
    """Whether PySCIPOpt imports here."""
    try:
        import pyscipopt  # noqa: F401
    except ImportError:
        return False
    return True


class Scip:
    """The SCIP backend (MINLP; time limit; no MIP start, one thread)."""

    name = "scip"
    # not certified: SCIP 10 has called feasible instances of the non-convex model infeasible
    # (tiny-8x2-s20 at its optimal horizon); the dispatcher checks its claims
    capabilities = Capabilities(mip_start=False, nonconvex=True, time_limit=True, threads=False, certified=False)

    def unavailable(self) -> str | None:
        """None when PySCIPOpt imports, else how to install it."""
        return None if scip_available() else "SCIP is not installed: pip install 'rar-opt[minlp]' (PySCIPOpt)"

    def solve(self, model: pyo.ConcreteModel, options: SolveOptions) -> RawOutcome:
        """Write ``model`` as .nl, solve it in a child process, load the incumbent back."""
        solver: dict[str, Any] = {"name": self.name, "interface": "pyscipopt via .nl", "pyomo": PYOMO_VERSION}
        missing = self.unavailable()
        if missing:
            return RawOutcome(Status.ERROR, message=missing, solver=solver)
        began = time.perf_counter()
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "model.nl"
            # symbolic labels give SCIP's columns Pyomo's names; linear presolve off, so that
            # every variable reaches SCIP and comes back
            model.write(str(path), io_options={"symbolic_solver_labels": True, "linear_presolve": False})
            handoff = time.perf_counter() - began
            answer = Path(tmp) / "answer.json"
            limit = "none" if options.time_limit is None else repr(float(options.time_limit))
            command = [sys.executable, "-m", "rar_opt.solvers.scip", str(path), limit, str(options.seed), str(answer)]
            command.append(str(os.getpid()))  # the child dies with this process
            child = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True)
            if child.returncode != 0 or not answer.is_file():
                why = child.stderr.strip().splitlines()[-1:] or [f"exit status {child.returncode}"]
                message = f"SCIP crashed (its process died: {why[0]}); no result"
                return RawOutcome(Status.ERROR, message=message, solver=solver)
            out = json.loads(answer.read_text())
        solver["version"] = out["version"]
        has_solution = bool(out["values"])
        if has_solution:
            by_name = {v.name: v for v in model.component_data_objects(pyo.Var)}
            for name, value in out["values"].items():
                if name in by_name:
                    by_name[name].set_value(value, skip_validation=True)
        status = map_status(SCIP_TABLE, out["status"], has_solution)
        return RawOutcome(
            status=status,
            has_solution=has_solution,
            objective=out["objective"],
            bound=out["bound"] if status != Status.INFEASIBLE else None,
            solver_s=out["solver_s"],
            handoff_s=handoff,
            model_size=out["size"],
            termination=out["status"],
            solver=solver,
        )


def _solve_nl(path: str, time_limit: float | None, seed: int) -> dict[str, Any]:
    """Run in the child process: read the .nl file, solve, return plain values."""
    import pyscipopt

    scip = pyscipopt.Model()
    scip.hideOutput()
    scip.readProblem(path)
    scip.setParam("randomization/randomseedshift", int(seed))
    for key, value in SCIP_PARAMS.items():
        scip.setParam(key, value)
    if time_limit is not None:
        scip.setParam("limits/time", float(time_limit))
    began = time.perf_counter()
    scip.optimize()
    solver_s = time.perf_counter() - began
    values: dict[str, float] = {}
    objective = None
    if scip.getNSols() > 0:
        best = scip.getBestSol()
        values = {var.name: scip.getSolVal(best, var) for var in scip.getVars()}
        objective = scip.getObjVal()
    return {
        "status": scip.getStatus(),
        "values": values,
        "objective": objective,
        "bound": scip.getDualbound(),
        "solver_s": solver_s,
        "version": str(scip.version()),
        "size": {"cols": scip.getNVars(), "rows": scip.getNConss()},
    }


if __name__ == "__main__":  # the child: model.nl, time limit ("none" or seconds), seed, answer.json, parent
    nl_path, limit_text, seed_text, answer_path, parent_text = sys.argv[1:6]
    die_with_parent(int(parent_text))
    found = _solve_nl(nl_path, None if limit_text == "none" else float(limit_text), int(seed_text))
    Path(answer_path).write_text(json.dumps(found))
