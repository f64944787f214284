"""Ctrl-C while the command line starts: one line and exit 130, not a traceback.

Importing the package and the command's own modules takes a moment (Pyomo and OR-Tools
for ``solve``). A Ctrl-C then would end in a KeyboardInterrupt traceback; this module's
handler ends the process with one line and 130 instead. It is installed only when this
process is the ``rar-opt`` console script or ``python -m rar_opt`` (read from the
interpreter's own command line), never in a program or notebook that imports rar_opt,
and :func:`rar_opt.cli.main` hands SIGINT back to Python once the command runs. The
package's ``__init__`` calls :func:`guard_command_start` first: the console script
imports the package before the command line module.
"""

from __future__ import annotations

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


def is_command_process() -> bool:
    """Whether this process is the command line (the console script or ``-m rar_opt``)."""
    return _started_as_command(list(getattr(_sys, "orig_argv", ())))


def _interrupted_while_starting(signum: int, frame: object) -> None:
    _os.write(2, b"interrupted (SIGINT) while starting; nothing was done\n")
    _os._exit(128 + _signal.SIGINT)


def guard_command_start() -> None:
    """Install the start-up's SIGINT handler, if this process is the command line."""
    if _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler and is_command_process():
        _signal.signal(_signal.SIGINT, _interrupted_while_starting)
