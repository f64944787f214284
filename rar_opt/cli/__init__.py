"""The ``rar-opt`` command line; the only package that prints.

Exit status: 0 success, 2 bad input (one line on stderr naming the file and field, never a
traceback), 1 internal failure. Set ``RAR_OPT_DEBUG=1`` to see tracebacks of internal
failures. Each module of this package registers its own subcommands (``register``); the
parser lists them in the order of :data:`COMMAND_MODULES`. To run a command only its own
module is imported (:data:`COMMANDS`): ``schedule`` never loads Pyomo or OR-Tools.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import os
import signal
import stat
import sys
import time
from collections.abc import Sequence
from types import ModuleType
from typing import NoReturn

from rar_opt._startup import is_command_process
from rar_opt.cli.output import (
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_OK,
    StdoutFailed,
    check_not_an_input,
    check_output,
    guarded_stdout,
    stdout_failure,
    writes_to_stdout,
)
from rar_opt.errors import InputError, ParameterError
from rar_opt.support.processes import SecondSignal, command_began, graceful_stops, stop_requested
from rar_opt.support.provenance import full_version

COMMAND_MODULES = ("instances", "exact", "compare", "bounds", "sweeps", "study", "variants")
"""The modules of this package that register commands, in the order ``--help`` lists them."""

COMMANDS = {
    "generate": "instances",
    "simulate": "instances",
    "schedule": "instances",
    "trace": "instances",
    "plot": "instances",
    "solve": "exact",
    "probe": "exact",
    "export": "exact",
    "compare": "compare",
    "bounds": "bounds",
    "experiment": "sweeps",
    "study": "study",
    "variants": "variants",
}
"""Each command and the module that registers it (tests/cli check it against the modules)."""

GRACEFUL = ("solve", "probe", "compare", "bounds", "study", "experiment", "variants")
"""Commands whose first Ctrl-C (or SIGTERM) stops every phase and solver at its next safe
point, keeps the best schedule and bound, writes ``-o``, and ends with 128 + the signal
(130 for SIGINT, 143 for SIGTERM); a second signal ends them at once. Every other command
ends at the first signal."""

KEPT = "what was finished is kept"
KEPT_STUDY = "what was finished is kept (a study resumes from its last stored row)"
AT_ONCE = "a second signal ended it at once; nothing more was written"
AT_ONCE_STUDY = "a second signal ended it at once; nothing more was written (a study resumes from its last stored row)"
NOT_FINISHED = "the command did not finish; nothing was written"
"""What a command outside :data:`GRACEFUL` leaves at a signal: it keeps nothing of its work."""
EXIT_TERMINATED = 128 + signal.SIGTERM


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread like Ctrl-C: every ``finally`` runs (temporary
    files removed, worker pools shut down, the store closed) before the command ends."""


def _terminate(signum: int, frame: object) -> None:
    raise Terminated


class Parser(argparse.ArgumentParser):
    """argparse's parser, whose usage errors (an invalid choice, a missing argument, a value
    of the wrong type) are one line on stderr, as every other bad input is, with exit 2:
    ``error: argument --split: invalid choice: ...; see rar-opt schedule --help``. The
    subcommands' parsers are of this class too (``add_subparsers`` makes its own kind)."""

    command: str | None = None  # on the top parser: the command named on the line, if any

    def error(self, message: str) -> NoReturn:
        # arguments that no parser took are reported by the top parser, after the command's
        # parser has run: the help that lists the command's arguments is the command's
        prog = self.prog if self.command is None else f"{self.prog} {self.command}"
        self.exit(EXIT_INPUT, f"error: {message}; see {prog} --help\n")


def command_module(name: str) -> ModuleType:
    """The module of this package named ``name`` (one of :data:`COMMAND_MODULES`), imported now."""
    return importlib.import_module(f"{__name__}.{name}")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser; choices come from the registries. With ``command`` (a name of
    :data:`COMMANDS`) only the module of that command is imported and registered: the
    parser then knows that command alone, which is all its arguments need."""
    parser = Parser(prog="rar-opt", description="Schedule ring-all-reduce jobs under contention.")
    parser.add_argument("--version", action="version", version=f"rar-opt {full_version()}")
    # -v/--quiet work before and after the subcommand (the subcommand's copy never resets them)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS, help="log progress")
    common.add_argument("--quiet", action="store_true", default=argparse.SUPPRESS, help="no progress output")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")
    parser.add_argument("--quiet", action="store_true", help="no progress output on stderr")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in (COMMANDS[command],) if command in COMMANDS else COMMAND_MODULES:
        command_module(name).register(sub, common)
    return parser


def _command(argv: Sequence[str]) -> str | None:
    """The command named in ``argv``: its first word that is not an option (the options
    before a command, ``-v``, ``--quiet``, ``--version`` and ``-h``, take no value)."""
    return next((arg for arg in argv if not arg.startswith("-")), None)


def _command_words(parser: argparse.ArgumentParser, argv: Sequence[str]) -> str | None:
    """The command named in ``argv`` with its verb when it has verbs (``study run``): the
    words whose ``--help`` lists the arguments given."""
    command = _command(argv)
    if command is None:
        return None
    verb = _command(list(argv)[list(argv).index(command) + 1 :])
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and command in action.choices:
            for inner in action.choices[command]._actions:
                if isinstance(inner, argparse._SubParsersAction) and verb in inner.choices:
                    return f"{command} {verb}"
    return command


class _Said(logging.Formatter):
    """A log line as the command line says it: warnings and errors with their level first
    (``warning: ...``, as ``error: ...`` lines are), ``-v``'s progress lines as they are."""

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        return text if record.levelno < logging.WARNING else f"{record.levelname.lower()}: {text}"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 2 bad input, 1 internal failure).
    Its time limits count from the start of the process when this process is the command
    line, and from this call when a program (a test, a notebook) calls it."""
    command_began(None if is_command_process() else time.perf_counter())
    argv = sys.argv[1:] if argv is None else list(argv)
    if _command(argv) is None and "--version" in argv and not {"-h", "--help"} & set(argv):
        # what argparse would print, without importing every command's module to build the parser
        try:
            with guarded_stdout():
                print(f"rar-opt {full_version()}")
        except StdoutFailed as exc:
            print(exc, file=sys.stderr)
            return EXIT_INPUT
        return EXIT_OK
    parser = build_parser(_command(argv))
    if _command(argv) is None and set(argv) <= {"-v", "--verbose", "--quiet"}:
        # no command at all: the help lists them; still a usage error, so exit 2
        parser.print_help()
        print("error: no command given; the commands are listed above", file=sys.stderr)
        return EXIT_INPUT
    if isinstance(parser, Parser) and _command(argv) in COMMANDS:
        parser.command = _command_words(parser, argv)
    try:
        with guarded_stdout():  # --help writes to the standard output too: a failed write is told
            try:
                args = parser.parse_args(argv)
            except SystemExit as done:
                if done.code in (0, None):  # the help was printed: it must reach its file
                    sys.stdout.flush()
                raise
    except StdoutFailed as exc:
        print(exc, file=sys.stderr)
        return EXIT_INPUT
    # a closed pipe (``rar-opt ... | head``) ends the command quietly, as for any Unix tool,
    # even when a solver is writing from its own thread
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # kept after main returns: the exit's flush too
    root = logging.getLogger()
    if not root.handlers:  # a process of its own (a caller's logging, such as pytest's, is left as it is)
        handler = logging.StreamHandler()
        handler.setFormatter(_Said())
        root.addHandler(handler)
        root.setLevel(logging.WARNING)
    # -v is about rar-opt's own progress; solvers' logs stay at warnings
    ours = logging.getLogger("rar_opt")
    level_before = ours.level
    ours.setLevel(logging.INFO if args.verbose and not args.quiet else logging.WARNING)
    previous = signal.signal(signal.SIGTERM, _terminate)
    output = getattr(args, "output", None)
    graceful = args.command in GRACEFUL
    kept = KEPT_STUDY if args.command == "study" else KEPT  # only a study has stored rows to resume from
    output_was = _file_state(output)  # a command that ends at the first signal says whether it wrote -o
    _sigint_to_python()  # the start-up's handler gives way: from here the handlers below decide
    try:
        if output is not None:
            check_output(output)
            check_not_an_input(args)
            for beside in getattr(args, "beside_output", lambda _: [])(output):  # files written beside -o
                check_output(beside)
                check_not_an_input(args, beside, "the figure's provenance file")
        # with -o - (or /dev/stdout) the file is the standard output: the report goes to stderr
        redirected = contextlib.redirect_stdout(sys.stderr) if writes_to_stdout(output) else contextlib.nullcontext()
        with guarded_stdout(), redirected:
            with graceful_stops() if graceful else contextlib.nullcontext():
                code = args.func(args)
                signum = stop_requested() if graceful else None
            if signum is not None:  # the command kept what it had and ended at a safe point
                print(f"interrupted ({signal.Signals(signum).name}): stopped at a safe point; {kept}", file=sys.stderr)
                return 128 + signum
            return code
    except Terminated:
        print("terminated", file=sys.stderr)
        return EXIT_TERMINATED
    except InputError as exc:
        print(f"error: {_as_flags(exc, parser)}", file=sys.stderr)
        return EXIT_INPUT
    except BrokenPipeError:  # output piped into `head` and the like
        sys.stderr.close()
        return EXIT_OK
    except StdoutFailed as exc:  # `> file` on a full disk: an output that cannot be written
        print(exc, file=sys.stderr)
        return EXIT_INPUT
    except KeyboardInterrupt as exc:  # a second signal, a loop's safe point, or a command that does not stop gently
        signum = getattr(exc, "signum", signal.SIGINT)
        if isinstance(exc, SecondSignal):  # the first signal asked for a safe stop that did not come in time
            kept = AT_ONCE_STUDY if args.command == "study" else AT_ONCE
        elif not graceful:
            kept = _left_behind(output, output_was)
        print(f"interrupted ({signal.Signals(signum).name}); {kept}", file=sys.stderr)
        return 128 + signum
    except Exception as exc:  # an internal failure: say so in one line
        if _caused_by_ctrl_c(exc):  # e.g. an extension module's import cut short: "initialization failed"
            kept = kept if graceful else _left_behind(output, output_was)
            print(f"interrupted (SIGINT): {type(exc).__name__}; {kept}", file=sys.stderr)
            return 128 + signal.SIGINT
        signum = stop_requested()
        if graceful and signum is not None:  # a worker or solver stopped by the same signal
            print(f"interrupted ({signal.Signals(signum).name}): {type(exc).__name__}; {kept}", file=sys.stderr)
            return 128 + signum
        if os.environ.get("RAR_OPT_DEBUG"):
            raise
        print(f"internal error: {type(exc).__name__}: {exc} (set RAR_OPT_DEBUG=1 for a traceback)", file=sys.stderr)
        return EXIT_INTERNAL
    finally:  # a caller in the same process (a test, a notebook) gets its handler and level back
        signal.signal(signal.SIGTERM, previous)
        ours.setLevel(level_before)


def _sigint_to_python() -> None:
    """Hand SIGINT back to Python's handler (KeyboardInterrupt) if the start-up's handler of
    ``rar_opt/_startup.py`` (one line, exit 130) is still in place."""
    from rar_opt._startup import _interrupted_while_starting

    if signal.getsignal(signal.SIGINT) is _interrupted_while_starting:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _file_state(path: str | None) -> tuple[int, int, int] | None:
    """What identifies the contents of the regular file ``path`` now (device, inode, change
    time: a whole write replaces the file, so they change), or None (no such file, no path,
    a stream)."""
    if path is None:
        return None
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino, st.st_mtime_ns) if stat.S_ISREG(st.st_mode) else None


def _left_behind(output: str | None, before: tuple[int, int, int] | None) -> str:
    """What a command outside :data:`GRACEFUL` leaves when a signal ends it: nothing, unless
    it had written its ``-o`` (whole: files are written whole or not at all) by then."""
    now = _file_state(output)
    if output is not None and now is not None and now != before:
        return f"{output} was written before the signal; nothing else was"
    return NOT_FINISHED


def _caused_by_ctrl_c(exc: BaseException) -> bool:
    """Whether ``exc`` was raised while handling a KeyboardInterrupt, or because of one."""
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        if isinstance(link, KeyboardInterrupt):
            return True
        seen.add(id(link))
        link = link.__cause__ or link.__context__
    return False


def _as_flags(exc: InputError, parser: argparse.ArgumentParser) -> InputError:
    """A library error about a parameter, told by the flag that set it (``time_limit`` ->
    ``--time-limit``); a parameter set by a positional argument keeps its name."""
    if not isinstance(exc, ParameterError):
        return exc
    flag = _flags(parser).get(exc.where, exc.where)
    return InputError(exc.message, where=flag)


def _flags(parser: argparse.ArgumentParser) -> dict[str, str]:
    """Every option's destination and its long flag, over the parser and its subcommands."""
    found: dict[str, str] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                for dest, flag in _flags(child).items():
                    found.setdefault(dest, flag)
        elif action.option_strings:
            found.setdefault(action.dest, max(action.option_strings, key=len))
    return found


def run() -> None:
    """The ``rar-opt`` console entry point: :func:`main`, then a fast exit.

    Tearing down the interpreter after a large solve takes a noticeable part of a second
    (Pyomo's and HiGHS' objects), which would push the command past its time limit; every
    file is already closed and every pool shut down when ``main`` returns, so the process
    flushes its output and ends at once.

    Ctrl-C at any moment ends with one line and 130: during the imports and the reading of
    the command line (the command's module: Pyomo and OR-Tools for ``solve``) through the
    start-up's handler of ``rar_opt/_startup.py``, then through :func:`main`'s own; this is
    the last net for one that escapes them."""
    try:
        code = main()
    except KeyboardInterrupt:
        print("interrupted (SIGINT)", file=sys.stderr)
        code = 128 + signal.SIGINT
    logging.shutdown()
    try:  # main flushed its output; what a failed write left behind is already told
        sys.stdout.flush()
    except (BrokenPipeError, ValueError):
        pass
    except OSError as exc:
        if code == EXIT_OK:  # never a success whose output was lost
            print(stdout_failure(exc), file=sys.stderr)
            code = EXIT_INPUT
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.flush()
    os._exit(code)
