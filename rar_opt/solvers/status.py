"""rar-opt's own solver status, and the explicit table from every Pyomo/HiGHS termination.

Our statuses:

* ``optimal``     proven optimal (within HiGHS' gaps; our objectives are integral and the
                  absolute gap is set below 1, so "optimal" is exact);
* ``feasible``    a schedule was found, optimality not proven (time limit, interruption);
* ``no_solution`` a limit stopped the solve before any schedule was found;
* ``infeasible``  proven: no schedule completes within the modelled horizon;
* ``error``       anything else; the raw termination is kept in the result.

The table maps each appsi termination condition to (status with a solution, status
without one). HiGHS' own model statuses reach us through Pyomo's appsi interface, which
maps each of them to one of these conditions (pyomo/contrib/appsi/solvers/highs.py); the
raw HiGHS status string is recorded beside ours in every result.
"""

from __future__ import annotations

from enum import StrEnum

from pyomo.contrib.appsi.base import TerminationCondition as TC


class Status(StrEnum):
    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    NO_SOLUTION = "no_solution"
    INFEASIBLE = "infeasible"
    ERROR = "error"

    def __str__(self) -> str:
        return self.value


STATUS_TABLE: dict[TC, tuple[Status, Status]] = {
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


def map_status(termination: TC, has_solution: bool) -> Status:
    """Our status for a termination condition; unmapped conditions are errors."""
    with_sol, without = STATUS_TABLE.get(termination, (Status.ERROR, Status.ERROR))
    return with_sol if has_solution else without
