"""rar-opt's own solver status, and one explicit table per backend mapping to it.

Our statuses:

* ``optimal``     proven optimal (within the solver's gaps; our objectives are integral and
                  the absolute gap is set below 1, so "optimal" is exact);
* ``feasible``    a schedule was found, optimality not proven (time limit, interruption);
* ``no_solution`` a limit stopped the solve before any schedule was found;
* ``infeasible``  proven: no schedule completes within the modelled horizon;
* ``unverified``  a solver whose proofs we do not trust (SCIP on the non-convex model)
                  claimed ``optimal`` or ``infeasible`` and the claim could not be checked
                  independently; its schedule, if any, is still checked and re-simulated;
* ``interrupted`` a signal (Ctrl-C, SIGTERM) stopped it before a proof; the best schedule
                  (if any) and the best bound so far are kept. Never a time limit;
* ``error``       anything else; the raw termination is kept in the result.

Each table maps a backend's raw termination to (status with a solution, status without
one); anything a table does not list is an error, and the raw string is recorded beside
ours in every result (as linopy does).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from enum import StrEnum
from typing import Any

from pyomo.contrib.appsi.base import TerminationCondition as TC


class Status(StrEnum):
    """The outcome of a solve, whatever the backend."""

    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    NO_SOLUTION = "no_solution"
    INFEASIBLE = "infeasible"
    UNVERIFIED = "unverified"
    BOUND = "bound"  # a relaxation was solved: its value is a lower bound, there is no schedule
    INTERRUPTED = "interrupted"  # a signal stopped it; the best schedule and bound so far are kept
    ERROR = "error"

    def __str__(self) -> str:
        return self.value


StatusTable = Mapping[Any, tuple[Status, Status]]

HIGHS_TABLE: dict[TC, tuple[Status, Status]] = {
    # HiGHS' model statuses reach us through Pyomo's appsi interface, which maps each of them
    # to one of these termination conditions (pyomo/contrib/appsi/solvers/highs.py).
    # termination                  (with a solution,  without one)
    TC.optimal: (Status.OPTIMAL, Status.ERROR),
    TC.maxTimeLimit: (Status.FEASIBLE, Status.NO_SOLUTION),
    TC.maxIterations: (Status.FEASIBLE, Status.NO_SOLUTION),  # also HiGHS' solution limit
    TC.objectiveLimit: (Status.FEASIBLE, Status.NO_SOLUTION),
    TC.interrupted: (Status.FEASIBLE, Status.NO_SOLUTION),
    TC.minStepLength: (Status.FEASIBLE, Status.ERROR),
    TC.infeasible: (Status.ERROR, Status.INFEASIBLE),
    TC.infeasibleOrUnbounded: (Status.ERROR, Status.INFEASIBLE),  # our models are bounded
    TC.unbounded: (Status.ERROR, Status.ERROR),
    TC.error: (Status.ERROR, Status.ERROR),
    TC.licensingProblems: (Status.ERROR, Status.ERROR),
    TC.unknown: (Status.FEASIBLE, Status.ERROR),
}

SCIP_TABLE: dict[str, tuple[Status, Status]] = {
    # PySCIPOpt's Model.getStatus() strings
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

CPSAT_TABLE: dict[str, tuple[Status, Status]] = {
    # CpSolver.status_name(): CP-SAT's statuses
    "OPTIMAL": (Status.OPTIMAL, Status.ERROR),
    "FEASIBLE": (Status.FEASIBLE, Status.NO_SOLUTION),
    "INFEASIBLE": (Status.ERROR, Status.INFEASIBLE),
    "UNKNOWN": (Status.FEASIBLE, Status.NO_SOLUTION),  # a limit stopped it
    "MODEL_INVALID": (Status.ERROR, Status.ERROR),
}

STATUS_TABLES: dict[str, StatusTable] = {"highs": HIGHS_TABLE, "scip": SCIP_TABLE, "cpsat": CPSAT_TABLE}
"""Every backend's table, by backend name."""


def map_status(table: StatusTable, termination: Hashable, has_solution: bool) -> Status:
    """Our status for a backend's raw termination; what the table does not list is an error."""
    with_sol, without = table.get(termination, (Status.ERROR, Status.ERROR))
    return with_sol if has_solution else without
