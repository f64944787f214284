"""The solver layer: a dispatcher over formulations x backends, our own statuses, one result.

* :mod:`.solve`: :func:`solve` (the dispatcher) and :func:`solve_model`;
* :mod:`.result`: :class:`SolveResult` and the shared finish (check, re-simulate, record);
* :mod:`.record`: :class:`SolveRecord`, the typed story of a run (:class:`PhaseRecord`,
  :class:`PhaseKind`, :class:`ProvedBy`);
* :mod:`.budget`: :class:`Budget`, one call's time (a deadline with its reserves, seed, threads);
* :mod:`.phases`: the phases of the methods over several models, one function each (:data:`PHASES`);
* :mod:`.context`: what those phases share (the run's :class:`~.context.Context`, the
  :class:`~.context.Incumbent`, what a phase yields, the CP-SAT solve and read-back);
* :mod:`.status`: :class:`Status` and one table per backend;
* :mod:`.backend`: the :class:`Backend` protocol, :class:`Capabilities`, :class:`SolveOptions`;
* :mod:`.decompose`: the decomposition and ``auto`` methods, :func:`relaxation_bound`,
  :func:`gpu_bins_bound`;
* :mod:`.appsi_highs`, :mod:`.scip`, :mod:`.cpsat`: the backends; :mod:`.registry`: :data:`BACKENDS`.
"""

from rar_opt.solvers.backend import Backend, Capabilities, RawOutcome, SolveOptions
from rar_opt.solvers.budget import Budget
from rar_opt.solvers.decompose import BinsBound, RelaxationBound, gpu_bins_bound, relaxation_bound
from rar_opt.solvers.record import PhaseKind, PhaseRecord, ProvedBy, SolveRecord
from rar_opt.solvers.registry import BACKENDS
from rar_opt.solvers.result import SolveResult, gap
from rar_opt.solvers.solve import solve, solve_model
from rar_opt.solvers.status import STATUS_TABLES, Status, map_status

__all__ = [
    "BACKENDS",
    "STATUS_TABLES",
    "Backend",
    "BinsBound",
    "Budget",
    "Capabilities",
    "PhaseKind",
    "PhaseRecord",
    "ProvedBy",
    "RawOutcome",
    "RelaxationBound",
    "SolveOptions",
    "SolveRecord",
    "SolveResult",
    "Status",
    "gap",
    "gpu_bins_bound",
    "map_status",
    "relaxation_bound",
    "solve",
    "solve_model",
]
