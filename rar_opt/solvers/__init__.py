"""The solver layer: HiGHS through Pyomo, our own status table, one result object."""

from .highs import SolveResult, solve, solve_model
from .status import STATUS_TABLE, Status, map_status

__all__ = ["STATUS_TABLE", "SolveResult", "Status", "map_status", "solve", "solve_model"]
