"""rar-opt: exact and approximate scheduling of ring-all-reduce jobs under contention.

Nouns at the top (Instance, Schedule, SimResult), verbs beside them (generate,
run_policy, simulate, check); exact solving is in :mod:`rar_opt.solvers` (it imports
Pyomo, so it is not loaded with the package).

Model and algorithms: M. Yu, B. Ji, H. Rajan, J. Liu, "On Scheduling Ring-All-Reduce
Learning Jobs in Multi-Tenant GPU Clusters with Communication Contention", ACM MobiHoc 2022.
"""

# Ctrl-C while the command line starts is the command line's concern (rar_opt/_startup.py);
# it acts only when this process is the ``rar-opt`` command or ``python -m rar_opt``, and
# must run before the imports below, which the command's start-up waits for.
from rar_opt._startup import guard_command_start as _guard

_guard()

from rar_opt._version import __version__  # noqa: E402
from rar_opt.algorithms import POLICIES, run_policy  # noqa: E402
from rar_opt.check import CheckReport, Violation, check  # noqa: E402
from rar_opt.cluster.timemodel import TimeModel  # noqa: E402
from rar_opt.errors import InputError, ScheduleMismatchError  # noqa: E402
from rar_opt.instance import Cluster, Instance, Job  # noqa: E402
from rar_opt.instances.generate import generate  # noqa: E402
from rar_opt.schedule import Schedule  # noqa: E402
from rar_opt.simulate import SimResult, simulate  # noqa: E402

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
