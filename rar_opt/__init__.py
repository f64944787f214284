"""rar-opt: exact and approximate scheduling of ring-all-reduce jobs under contention.

Nouns at the top (Instance, Schedule, SimResult), verbs beside them (generate,
run_policy, simulate, check); exact solving is in :mod:`rar_opt.solvers` (it imports
Pyomo, so it is not loaded with the package).

Model and algorithms: M. Yu, B. Ji, H. Rajan, J. Liu, "On Scheduling Ring-All-Reduce
Learning Jobs in Multi-Tenant GPU Clusters with Communication Contention", ACM MobiHoc 2022.
"""

from ._version import __version__
from .algorithms import POLICIES, run_policy
from .check import CheckReport, Violation, check
from .errors import InputError, ScheduleMismatchError
from .generate import generate
from .instance import Cluster, Instance, Job
from .schedule import Schedule
from .simulate import SimResult, simulate
from .timemodel import TimeModel

__all__ = [
    "POLICIES",
    "CheckReport",
    "Cluster",
    "InputError",
    "Instance",
    "Job",
    "Schedule",
    "ScheduleMismatchError",
    "SimResult",
    "TimeModel",
    "Violation",
    "__version__",
    "check",
    "generate",
    "run_policy",
    "simulate",
]
