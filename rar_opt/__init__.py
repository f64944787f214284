"""rar-opt: exact and approximate scheduling of ring-all-reduce jobs under contention.

Nouns at the top (Instance, Schedule, SimResult), verbs beside them (generate,
run_policy, simulate, check); exact solving is in :mod:`rar_opt.solvers` (it imports
Pyomo, so it is not loaded with the package).

Model and algorithms: M. Yu, B. Ji, H. Rajan, J. Liu, "On Scheduling Ring-All-Reduce
Learning Jobs in Multi-Tenant GPU Clusters with Communication Contention", ACM MobiHoc 2022.
"""

# Ctrl-C while the command line starts (the imports below and the command's own take a
# moment) ends it with one line and exit 130, not a KeyboardInterrupt traceback: only when
# this process is the ``rar-opt`` command or ``python -m rar_opt``, never in a program that
# imports rar_opt. ``rar_opt.cli.run`` hands SIGINT back to Python once it runs.
import os as _os
import signal as _signal
import sys as _sys

_COMMAND_NAMES = ("rar-opt", "rar-opt.exe", "rar-opt-script.py")
"""The names of the console script (``[project.scripts]``) on POSIX and Windows."""


def _started_as_command(argv: list[str]) -> bool:
    """Whether the interpreter's own command line (``sys.orig_argv``, which a worker process
    spawned by multiprocessing does not inherit) runs the console script or ``-m rar_opt``."""
    for i, arg in enumerate(argv[1:], 1):
        if arg == "-m":
            return argv[i + 1 : i + 2] == ["rar_opt"]
        if arg.startswith("-m"):
            return arg[2:] == "rar_opt"
        if arg in ("-c", "-"):
            return False
        if not arg.startswith("-"):  # the script
            return _os.path.basename(arg) in _COMMAND_NAMES
    return False


def _interrupted_while_starting(signum: int, frame: object) -> None:
    _os.write(2, b"interrupted (SIGINT) while starting; nothing was done\n")
    _os._exit(128 + _signal.SIGINT)


if _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler and _started_as_command(
    list(getattr(_sys, "orig_argv", ()))
):
    _signal.signal(_signal.SIGINT, _interrupted_while_starting)

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
