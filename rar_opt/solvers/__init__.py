"""The solver layer: a dispatcher over formulations x backends, our own statuses, one result.

* :mod:`.solve`: :func:`solve` (the dispatcher) and :func:`solve_model`;
* :mod:`.result`: :class:`SolveResult` and the shared finish (check, re-simulate, record);
* :mod:`.record`: :class:`SolveRecord`, the typed story of a run (:class:`PhaseRecord`,
  :class:`PhaseKind`, :class:`ProvedBy`);
* :mod:`.budget`: :class:`Budget`, one call's time (a deadline with its reserves, seed, threads);
* :mod:`.phases`: the phases of the methods over several models, one function each (:data:`PHASES`);
* :mod:`.status`: :class:`Status` and one table per backend;
* :mod:`.backend`: the :class:`Backend` protocol, :class:`Capabilities`, :class:`SolveOptions`;
* :mod:`.decompose`: the decomposition and ``auto`` methods, :func:`relaxation_bound`,
  :func:`gpu_bins_bound`;
* :mod:`.appsi_highs`, :mod:`.scip`, :mod:`.cpsat`: the backends; :mod:`.registry`: :data:`BACKENDS`.
"""

from .backend import Backend, Capabilities, RawOutcome, SolveOptions
from .budget import Budget
from .decompose import BinsBound, RelaxationBound, gpu_bins_bound, relaxation_bound
from .record import PhaseKind, PhaseRecord, ProvedBy, SolveRecord
from .registry import BACKENDS
from .result import SolveResult, gap
from .solve import solve, solve_model
from .status import STATUS_TABLES, Status, map_status

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
