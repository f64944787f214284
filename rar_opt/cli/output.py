"""What the command line prints: tables, JSON, simulations, progress bars; exit codes."""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import sys
import time
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from rar_opt.algorithms import PolicyResult
from rar_opt.check import CheckReport, check
from rar_opt.errors import InputError
from rar_opt.instance import Instance
from rar_opt.schedule import Schedule
from rar_opt.support.jsonio import STDOUT, output_kind

EXIT_OK, EXIT_INTERNAL, EXIT_INPUT = 0, 1, 2

JSON_HELP = 'print the output as JSON (docs/formats.md, "JSON outputs")'
"""The help of every subcommand's ``--json``."""


def recorded_optimum(instance: Instance, below: int | None = None) -> str | None:
    """A sentence on the optimum that the instance file records (``meta.known_optimum``, or
    ``meta.topology_optimum`` on a topology), which this run has not verified: the commands
    judge with what they prove, and only mention it. None when there is none, or when it
    is not above ``below`` (a reference the run already has)."""
    key = "topology_optimum" if instance.cluster.topology is not None else "known_optimum"
    value = instance.meta.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or (below is not None and value <= below):
        return None
    return f"the file records an optimum of {value} (meta.{key}; not verified by this run)"


def emit_json(obj: Any) -> None:
    """Print ``obj`` as JSON (NaN and infinity refused)."""
    print(json.dumps(obj, indent=1, allow_nan=False))


def emit_table(rows: Sequence[Sequence[Any]], header: Sequence[str] | None = None) -> None:
    """Print rows as an aligned text table, with an optional header."""
    cells = [[fmt(c) for c in row] for row in ([header] if header else []) + list(rows)]
    widths = [max(len(r[i]) for r in cells) for i in range(len(cells[0]))]
    for i, row in enumerate(cells):
        print("  ".join(c.ljust(w) if k == 0 else c.rjust(w) for k, (c, w) in enumerate(zip(row, widths, strict=True))))
        if header and i == 0:
            print("  ".join("-" * w for w in widths))


def fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        if abs(value) >= 1e4:  # a sum of completion times: every digit, and no ".0" on an integer
            return str(int(value)) if value.is_integer() else f"{value:.1f}"
        return f"{value:.4g}"
    return str(value)


BASELINE_OF = {"makespan": "longest first, for the makespan", "avg_jct": "shortest first, for the average JCT"}
"""What each classical baseline is, by the metric it serves (:data:`rar_opt.algorithms.BASELINES`)."""


def baselines_line(baselines: Mapping[str, str], also: str | None = None) -> str:
    """The line that says which policies always run beside those asked: ``also`` (e.g.
    sjf-bco in ``compare``) and the classical baselines, each with what it is."""
    named = ", ".join(f"{name} ({BASELINE_OF.get(metric, metric)})" for metric, name in baselines.items())
    return f"always run, whatever --policies: {also + ' and ' if also else ''}the classical baselines {named}"


def bound_text(value: float | None, decimals: int = 3) -> str:
    """A lower bound held as a float (a mean of bounds over seeds), as text rounded *down*
    to ``decimals`` places; a float a hair below a decimal (2.4 stored as 2.3999...) counts
    as that decimal, the bounds being ratios of integers far coarser than the tolerance."""
    if value is None:
        return "-"
    return _units_text(math.floor(value * 10**decimals + 1e-6), decimals)


def bound_per_job(total: float, jobs: int, decimals: int = 3) -> str:
    """A lower bound on a sum, per job (the average JCT's bound), as text rounded *down* to
    ``decimals`` places, so that what is printed never claims more than was proven
    (20780 over 160 jobs: ``129.875``; 7887 over 40: ``197.175``; a third: ``0.333``)."""
    return _units_text((Fraction(total) * 10**decimals / jobs).__floor__(), decimals)


def _units_text(units: int, decimals: int) -> str:
    """An integer count of 10^-decimals units as a decimal number: 129875 at 3 places is
    ``129.875``, -5 is ``-0.005``."""
    scale = 10**decimals
    sign, units = ("-", -units) if units < 0 else ("", units)
    return f"{sign}{units // scale}.{units % scale:0{decimals}d}" if decimals else f"{sign}{units}"


def emit_simulation(
    instance: Instance,
    schedule: Schedule,
    as_json: bool,
    extra: dict[str, Any] | None = None,
    run: PolicyResult | None = None,
    trace: bool = False,
    report: CheckReport | None = None,
    table: bool = True,
    file: str | None = None,
    source: str | None = None,
    record: dict[str, Any] | None = None,
) -> int:
    """Check + simulate ``schedule`` (unless ``report`` is its check already) and print it;
    exit 2 when it is infeasible. ``table``: the per-job table (job, GPUs, start,
    placement, completion); without it one line says where the jobs are (``file``, the
    schedule just written) and how to print them. ``source``: the file the schedule was
    read from, named by the error line of an infeasible one. ``record``: more keys for the
    JSON only (``schedule --json``: the schedule's ``meta`` and its jobs).

    With ``run`` (an SJF-BCO run) the paper's Lemma 2, Lemma 3 and Theorem 5 are
    checked on it, Theorem 5 against the best lower bound."""
    if report is None:
        report = check(instance, schedule)
    res = report.result
    out: dict[str, Any] = {"instance": instance.name, **(extra or {}), "feasible": report.feasible, **res.summary()}
    if instance.releases.any():  # jobs that arrive: the time each spent in the system, too
        out["avg_flow"] = res.avg_flow(instance.releases)
    out["violations"] = [str(v) for v in report.violations]
    if trace and res.segments:
        tr = res.trace()
        out["trace"] = [
            {
                "slot": tr.origin + i,
                "active": [int(j) for j in np.flatnonzero(tr.active[i])],
                "contention": [int(c) for c in tr.contention[i]],
                "iterations": [int(v) for v in tr.iterations[i]],
                # on a topology: split rings on each switch-to-switch link (docs/model.md 3.8)
                **({"links": [int(v) for v in tr.links[i]]} if tr.links is not None and tr.links.size else {}),
            }
            for i in range(len(tr.active))
        ]
    checks = []
    if run is not None and run.policy == "sjf-bco" and res.makespan is not None:
        from dataclasses import asdict

        from rar_opt.bounds import check_sjf_bco_claims, lower_bounds

        checks = check_sjf_bco_claims(instance, res.makespan, run, lower_bound=lower_bounds(instance).best)
        out["claims"] = [asdict(c) for c in checks]
    if as_json:  # a result record, so it names the code that computed it, as every JSON output does
        from rar_opt.support.provenance import provenance

        emit_json({**out, **(record or {}), "provenance": provenance()})
    else:
        shown = ("instance", *(extra or {}), "feasible", "makespan", "avg_jct", "avg_flow", "min_jct", "max_jct")
        emit_table([(k, out[k]) for k in shown if k in out])
        print()
        if table:
            rows = [
                (j, instance.jobs[j].gpus, schedule.starts[j], _placement_text(schedule, j), int(c))
                for j, c in enumerate(res.completion)
            ]
            emit_table(rows, ("job", "gpus", "start", "placement", "completion"))
        elif file is not None and output_kind(file) == "file":  # a file to read again
            print(
                f"jobs: {instance.num_jobs}, each with its start and placement in {file}; the per-job table: "
                f"--table, or rar-opt simulate INSTANCE {file}"
            )
        else:  # the standard output or a stream (/dev/null, a pipe): nothing to read back
            where = "the standard output" if file in (None, STDOUT) else file
            print(f"jobs: {instance.num_jobs}, written to {where}; the per-job table: --table")
        for v in report.violations:
            print(f"violation {v}")
        for row in out.get("trace", []):
            links = f" c_e {row['links']}" if "links" in row else ""
            print(f"slot {row['slot']}: active {row['active']} c_s {row['contention']}{links} phi {row['iterations']}")
        for c in checks:
            verdict = {True: "holds", False: "VIOLATED", None: "inconclusive"}[c.holds]
            print(f"claim {c.claim}: {verdict} (margin {c.margin:.4g}; {c.detail})")
        recorded = recorded_optimum(instance)
        if recorded is not None and any(c.claim == "theorem5" and c.holds is None for c in checks):
            judge = f"`rar-opt compare {instance.name}` judges Theorem 5 with the other policies' schedules"
            print(f"note: {recorded}; {judge}")
        if any(c.claim == "lemma2" and c.holds is False for c in checks) and run is not None:
            print(
                "note: lemma2 fails under the paper's bisection rule, which moves theta down only on an "
                "improvement; --bisection tightest is the other reading (docs/algorithms.md section 2.1)"
            )
    # a policy that says no trial fitted in T may end after it, and start after it too
    beyond = {"completion_in_horizon", "start_in_horizon"}
    if run is not None and run.exceeds_horizon and report.names() and report.names() <= beyond:
        print(
            f"note: no {run.policy} trial ends within T = {instance.horizon}; this schedule (no load limit) "
            f"ends at {res.makespan}, after the horizon",
            file=sys.stderr,
        )
        return EXIT_OK
    if not report.feasible:
        names = sorted(report.names())
        where = f"{source}: " if source else ""
        print(
            f"error: {where}the schedule is infeasible: {len(report.violations)} violation(s) of "
            f"{len(names)} constraint(s): {', '.join(names)}",
            file=sys.stderr,
        )
        return EXIT_INPUT
    return EXIT_OK


def _placement_text(schedule: Schedule, j: int) -> str:
    """Job j's placement for the table: every server's entry (``1,3``) on up to 16 servers,
    else its nonzero entries as ``server:GPUs`` (``17:2,940:1``)."""
    if schedule.num_servers <= 16:
        return ",".join(map(str, schedule.placements[j]))
    servers, counts = schedule.sparse.row_entries(j)
    return ",".join(f"{s}:{c}" for s, c in zip(servers.tolist(), counts.tolist(), strict=True))


def add_schedule_output(p: argparse.ArgumentParser, help: str) -> None:
    """``-o FILE`` for a schedule, and ``--dense`` for the form it is written in."""
    p.add_argument("-o", "--output", help=help)
    p.add_argument(
        "--dense",
        action="store_true",
        help="write -o in the dense form, version 1 ('placement' per job, an entry per server), "
        "which readers of the first format expect; default: the sparse form, version 2",
    )


def show_progress(args: argparse.Namespace) -> bool:
    """A progress bar goes to stderr when it is a terminal, unless --quiet."""
    return sys.stderr.isatty() and not getattr(args, "quiet", False)


def progress(args: argparse.Namespace, total: int, unit: str) -> Any:
    """A progress bar over ``total`` items (tqdm), or a silent stand-in."""
    from tqdm import tqdm

    return tqdm(total=total, unit=unit, disable=not show_progress(args), file=sys.stderr, leave=False)


@contextlib.contextmanager
def clock_bar(args: argparse.Namespace, seconds: float | None) -> Any:
    """A bar over a solve's time limit, ticking every half second while the block runs."""
    if seconds is None or not show_progress(args):
        yield
        return
    import threading

    from tqdm import tqdm

    from rar_opt.support.progress import SEARCH

    done = threading.Event()
    # the bar writes to its own copy of the terminal's descriptor: solver interfaces redirect
    # descriptors 1 and 2 while they run (Pyomo captures HiGHS' output), which would swallow it
    terminal = os.fdopen(os.dup(sys.stderr.fileno()), "w", buffering=1)
    with (
        terminal,
        tqdm(
            total=round(seconds, 1),
            unit="s",
            file=terminal,
            leave=False,
            bar_format="{l_bar}{bar}| {n:.1f}/{total} s {postfix}",
        ) as bar,
    ):

        def tick() -> None:
            began = time.perf_counter()
            while not done.wait(0.5):
                bar.n = min(round(time.perf_counter() - began, 1), bar.total)
                bar.refresh()

        def heard(best: int | None, bound: int | None, phase: str) -> None:  # auto's best and bound so far
            bar.set_postfix_str(
                f"best {best if best is not None else '-'}, bound {bound if bound is not None else '-'}"
            )

        ticker = threading.Thread(target=tick, daemon=True)
        ticker.start()
        try:
            with SEARCH.listening(heard):
                yield
        finally:
            done.set()
            ticker.join()


def require_matplotlib(where: str) -> None:
    """Pictures need matplotlib, which only the ``plot`` extra installs: refused before any
    work (exit 2, naming ``where``, the flag or command that asks for pictures)."""
    import importlib.util

    if importlib.util.find_spec("matplotlib") is None:
        why = "pictures need matplotlib, which rar-opt installs only with: pip install 'rar-opt[plot]'"
        raise InputError(why, where=where)


def stamped(schedule: Schedule, instance: Instance) -> Schedule:
    """``schedule`` with the code that wrote it in its meta (``provenance``: rar-opt's version
    and revision, Python's and the key packages') and the digest of the instance it was made
    for (``instance_sha256``), as every schedule file the command line writes records them."""
    from rar_opt.support.provenance import provenance

    return schedule.with_meta({**schedule.meta, "provenance": provenance(), "instance_sha256": instance.data_digest()})


def warn_if_made_for_other_data(instance: Instance, schedule: Schedule, file: str) -> None:
    """A warning on stderr when the schedule file ``file`` records the digest of an instance
    whose numbers differ from ``instance``'s (same name and shape, other data): it is judged
    on the instance as it is now. Files without the digest (older, or written by hand) pass."""
    recorded = schedule.meta.get("instance_sha256")
    if isinstance(recorded, str) and recorded != instance.data_digest():
        print(
            f"warning: {file}: made for other data of instance {instance.name!r} (meta.instance_sha256 "
            "differs): it is judged on the instance as given",
            file=sys.stderr,
        )


def check_output(path: str) -> None:
    """Refuse an output path that cannot be written, before any work is done
    (what ``-o`` does with each kind of path: :func:`rar_opt.support.jsonio.atomic_target`)."""
    from rar_opt.support.jsonio import writable_problem

    if not path.strip():
        raise InputError("is empty", where="--output")
    problem = writable_problem(path)
    if problem == "is a directory":
        problem = "is a directory; give a file name"
    if problem is not None:
        raise InputError(problem, file=path)


def check_directory(path: str, flag: str) -> None:
    """Refuse an output directory (``--plots DIR``, ``--tables DIR``) that cannot be made or
    written into, before any work is done, naming the flag and the path."""
    from rar_opt.support.jsonio import directory_problem

    problem = directory_problem(path)
    if problem is not None:
        raise InputError(problem, where=flag, file=path)


INPUTS = (
    ("instance", "instance"),
    ("instances", "instance"),
    ("schedule", "schedule"),
    ("file", "trace"),
    ("model", "model spec"),
    ("store", "store"),
)
"""The arguments that name a file a command reads (their ``dest``), and what each file is."""


def check_not_an_input(args: argparse.Namespace, written: str | None = None, what_written: str = "the output") -> None:
    """Refuse an ``-o`` path that is one of the command's own input files (the same file
    by identity, :func:`os.path.samefile`: another spelling or a link to it counts), before
    any work is done: writing it would replace what the command reads. ``written``: another
    file the command writes beside ``-o`` (``plot``'s provenance file), named ``what_written``."""
    output = written if written is not None else getattr(args, "output", None)
    if not output or output == "-":
        return
    from rar_opt.support.jsonio import output_target

    target = output_target(output)
    if target is None:
        return  # no file can be written there: the output checks refuse it before any work
    folder = getattr(args, "models", None)  # variants: every *.json of the folder is a spec it reads
    real = str(target)
    if isinstance(folder, str) and real.endswith(".json") and _same_file(os.path.dirname(real), folder):
        # a new file too: the next run of the folder would read it as a spec, and refuse it
        raise InputError(
            f"the output would overwrite or add a model spec in --models {folder}; give -o another path", file=output
        )
    if not target.exists():
        return  # a file that does not exist yet cannot be an input
    for dest, what in INPUTS:
        given = getattr(args, dest, None)
        for name in given if isinstance(given, list) else [given] if isinstance(given, str) else []:
            path = _input_file(name, dest)
            if path is None or not _same_file(real, path):
                continue
            named = "" if os.path.abspath(name) == os.path.abspath(output) else f" {name}"
            raise InputError(
                f"{what_written} would overwrite the input {what}{named}; give -o another path", file=output
            )


def _input_file(name: str, dest: str) -> str | None:
    """The file an input argument names: a bundled instance or model spec by its file, any
    other argument as given; None when it names nothing (the command says so itself)."""
    from rar_opt.instances.library import instance_path, model_path

    try:
        if dest in ("instance", "instances"):
            return str(instance_path(name))
        if dest == "model":
            return str(model_path(name))
    except InputError:
        return None
    return name


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def writes_to_stdout(path: str | None) -> bool:
    """Whether ``-o path`` is the standard output itself (``-``, /dev/stdout, the same pipe
    or terminal); the command then prints its own report on stderr."""
    if path is None:
        return False
    if path == "-":
        return True
    try:
        here, there = os.fstat(1), os.stat(path)
    except (OSError, ValueError):
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


class StdoutFailed(Exception):
    """A write to the standard output failed (a full disk behind ``> file``): like an ``-o``
    that cannot be written, one line and exit 2. A closed pipe is not this: it stays a
    :class:`BrokenPipeError`, which ends the command quietly."""

    def __init__(self, error: OSError) -> None:
        self.error = error
        super().__init__(stdout_failure(error))


def stdout_failure(error: OSError) -> str:
    """The one line said when the standard output cannot be written."""
    return f"error: standard output: cannot write ({error.strerror or error})"


class _GuardedStdout:
    """The standard output while a command runs: its writes and flushes as they are, except
    that a failure other than a closed pipe is raised as :class:`StdoutFailed`; everything
    else is the stream's own."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return int(self._stream.write(text))
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise StdoutFailed(exc) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise StdoutFailed(exc) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextlib.contextmanager
def guarded_stdout() -> Any:
    """Within the block a failed write to the standard output raises :class:`StdoutFailed`;
    what is still buffered when the block ends is flushed then, so that its failure is told
    the same way rather than lost at the process's exit."""
    real = sys.stdout
    if real is None:  # no standard output at all (pythonw): nothing to guard
        yield
        return
    sys.stdout = _GuardedStdout(real)
    try:
        yield
        sys.stdout.flush()
    finally:
        sys.stdout = real
