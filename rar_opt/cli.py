"""The ``rar-opt`` command line; the only module that prints.

Exit status: 0 success, 2 bad input (one line on stderr naming the file and field, never a
traceback), 1 internal failure. Set ``RAR_OPT_DEBUG=1`` to see tracebacks of internal
failures.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import math
import os
import signal
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ._version import __version__
from .algorithms import POLICIES, PolicyResult
from .algorithms.estimators import ESTIMATORS
from .calibration import PRESETS
from .check import check
from .errors import InputError
from .experiments import EXPERIMENTS
from .formulations import FORMULATIONS
from .formulations.base import OBJECTIVES
from .generate import GENERATORS, generate
from .instance import Instance
from .library import instance_path, model_path
from .models import EXPORT_FORMATS
from .processes import seconds_since_start
from .provenance import versions
from .schedule import Schedule
from .solvers.registry import BACKENDS

EXIT_OK, EXIT_INTERNAL, EXIT_INPUT = 0, 1, 2

Command = Callable[[argparse.Namespace], int]
COMMANDS: dict[str, Command] = {}


def command(name: str) -> Callable[[Command], Command]:
    """Register the decorated function as the subcommand ``name``."""

    def register(fn: Command) -> Command:
        COMMANDS[name] = fn
        return fn

    return register


# -- output helpers -------------------------------------------------------------------
def emit_json(obj: Any) -> None:
    """Print ``obj`` as JSON (NaN and infinity refused)."""
    print(json.dumps(obj, indent=1, allow_nan=False))


def emit_table(rows: Sequence[Sequence[Any]], header: Sequence[str] | None = None) -> None:
    """Print rows as an aligned text table, with an optional header."""
    cells = [[_fmt(c) for c in row] for row in ([header] if header else []) + list(rows)]
    widths = [max(len(r[i]) for r in cells) for i in range(len(cells[0]))]
    for i, row in enumerate(cells):
        print("  ".join(c.ljust(w) if k == 0 else c.rjust(w) for k, (c, w) in enumerate(zip(row, widths, strict=True))))
        if header and i == 0:
            print("  ".join("-" * w for w in widths))


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}" if abs(value) < 1e4 else f"{value:.1f}"
    return str(value)


def emit_simulation(
    instance: Instance,
    schedule: Schedule,
    as_json: bool,
    extra: dict[str, Any] | None = None,
    run: PolicyResult | None = None,
    trace: bool = False,
) -> int:
    """Check + simulate ``schedule`` and print it; exit 2 when it is infeasible.

    With ``run`` (an SJF-BCO run) the paper's Lemma 2, Lemma 3 and Theorem 5 are
    checked on it, Theorem 5 against the best lower bound."""
    report = check(instance, schedule)
    res = report.result
    out: dict[str, Any] = {"instance": instance.name, **(extra or {}), "feasible": report.feasible, **res.summary()}
    out["violations"] = [str(v) for v in report.violations]
    if trace and res.segments:
        tr = res.trace()
        out["trace"] = [
            {
                "slot": tr.origin + i,
                "active": [int(j) for j in np.flatnonzero(tr.active[i])],
                "contention": [int(c) for c in tr.contention[i]],
                "iterations": [int(v) for v in tr.iterations[i]],
            }
            for i in range(len(tr.active))
        ]
    checks = []
    if run is not None and run.policy == "sjf-bco" and res.makespan is not None:
        from dataclasses import asdict

        from .bounds import check_sjf_bco_claims, lower_bounds

        checks = check_sjf_bco_claims(instance, res.makespan, run, lower_bound=lower_bounds(instance).best)
        out["claims"] = [asdict(c) for c in checks]
    if as_json:
        emit_json(out)
    else:
        emit_table(
            [(k, out[k]) for k in ("instance", *(extra or {}), "feasible", "makespan", "avg_jct", "min_jct", "max_jct")]
        )
        print()
        rows = [
            (j, instance.jobs[j].gpus, schedule.starts[j], ",".join(map(str, schedule.placements[j])), int(c))
            for j, c in enumerate(res.completion)
        ]
        emit_table(rows, ("job", "gpus", "start", "placement", "completion"))
        for v in report.violations:
            print(f"violation {v}")
        for row in out.get("trace", []):
            print(f"slot {row['slot']}: active {row['active']} c_s {row['contention']} phi {row['iterations']}")
        for c in checks:
            verdict = {True: "holds", False: "VIOLATED", None: "inconclusive"}[c.holds]
            print(f"claim {c.claim}: {verdict} (margin {c.margin:.4g}; {c.detail})")
        if any(c.claim == "lemma2" and c.holds is False for c in checks) and run is not None:
            print(
                "note: lemma2 fails under the paper's bisection rule, which moves theta down only on an "
                "improvement; --bisection tightest is the other reading (docs/algorithms.md section 2.1)"
            )
    if run is not None and run.exceeds_horizon and report.names() == {"completion_in_horizon"}:
        print(
            f"note: no {run.policy} trial ends within T = {instance.horizon}; this schedule (no load limit) "
            f"ends at {res.makespan}, after the horizon",
            file=sys.stderr,
        )
        return EXIT_OK
    if not report.feasible:
        names = sorted(report.names())
        print(
            f"error: the schedule violates {len(report.violations)} constraint(s): {', '.join(names)}",
            file=sys.stderr,
        )
        return EXIT_INPUT
    return EXIT_OK


# -- commands -------------------------------------------------------------------------
@command("generate")
def cmd_generate(args: argparse.Namespace) -> int:
    """``rar-opt generate``: a seeded instance, printed or written."""
    inst = generate(
        args.kind,
        args.seed,
        jobs=args.jobs,
        servers=args.servers,
        budget=args.budget,
        preset=args.preset,
        reference=_reference(args.reference),
        contention_share=args.contention_share,
        overhead_share=args.overhead_share,
        size_link=args.size_link,
    )
    if args.output is None:
        emit_json(inst.to_dict())
        return EXIT_OK
    inst.write(args.output)
    summary = {
        "name": inst.name,
        "jobs": inst.num_jobs,
        "servers": inst.num_servers,
        "gpus": inst.cluster.num_gpus,
        "horizon": inst.horizon,
        "file": str(args.output),
    }
    emit_json(summary) if args.json else emit_table(list(summary.items()))
    return EXIT_OK


@command("simulate")
def cmd_simulate(args: argparse.Namespace) -> int:
    """``rar-opt simulate``: check and simulate a schedule file."""
    instance = Instance.read(instance_path(args.instance))
    schedule = Schedule.read(args.schedule)
    try:
        schedule.require_matches(instance)
    except InputError as exc:
        raise exc.in_file(args.schedule) from None
    return emit_simulation(instance, schedule, args.json, trace=args.trace)


@command("schedule")
def cmd_schedule(args: argparse.Namespace) -> int:
    """``rar-opt schedule``: run a policy and report its schedule."""
    from .algorithms import run_policy

    instance = Instance.read(instance_path(args.instance))
    options = {
        k: v
        for k, v in (
            ("kappa", args.kappa),
            ("lam", args.lam),
            ("small_rule", args.small_rule),
            ("estimator", args.estimator),
            ("bisection", args.bisection),
            ("order", args.order),
            ("tie_break", args.tie_break),
            ("mode", args.mode),
        )
        if v is not None
    }
    began = time.perf_counter()
    result = run_policy(instance, args.policy, seed=args.seed, **options)
    schedule = result.schedule
    wall = time.perf_counter() - began
    extra = {"policy": args.policy, "wall_s": round(wall, 4)}
    from .analysis import realized_shares

    shares = realized_shares(instance, schedule)
    if args.output:  # the schedule's record carries the realized shares too
        schedule.with_meta({**schedule.meta, "shares": shares.to_dict()}).write(args.output)
    extra.update({"theta": result.theta, "kappa": result.kappa, "trials": result.trials})
    extra.update({"theta_binding": result.theta_binding, "max_load": round(result.max_load, 3)})
    extra.update({f"{k}_share": round(v, 5) for k, v in shares.to_dict().items()})
    return emit_simulation(instance, schedule, args.json, extra, run=result)


@command("solve")
def cmd_solve(args: argparse.Namespace) -> int:
    """``rar-opt solve``: solve exactly with a formulation, its options and a backend."""
    from .solvers import Status, solve

    instance = Instance.read(instance_path(args.instance))
    formulation = args.formulation or "compact"
    options: dict[str, Any] = {}
    if args.model:
        from .models import ModelSpec

        spec = ModelSpec.read(model_path(args.model))
        if args.formulation and args.formulation != spec.formulation:
            raise InputError(
                f"--formulation {args.formulation} contradicts the spec's {spec.formulation!r}", where="formulation"
            )
        formulation, options = spec.formulation, dict(spec.options)
    options.update(_parse_options(args.option))
    if args.objective is not None:
        options["objective"] = args.objective
    if args.symmetry is not None:
        options["symmetry"] = args.symmetry
    time_limit = args.time_limit
    if time_limit is not None and math.isfinite(time_limit) and time_limit > 0:
        # the limit is the wall clock of the whole command: what the start-up used is gone
        time_limit = max(time_limit - seconds_since_start(), 0.05)
    try:
        with _clock_bar(args, time_limit):
            res = solve(
                instance,
                formulation,
                backend=args.backend,
                time_limit=time_limit,
                warm_start=args.warm_start,
                threads=args.threads,
                seed=args.seed,
                **options,
            )
    except InputError as exc:
        raise (exc if exc.file else exc.in_file(args.model or args.instance)) from None
    if args.output and res.schedule is not None:
        res.schedule.write(args.output)
    out = {"instance": instance.name, **res.summary()}
    if args.json:
        emit_json(out)
    else:
        keys = ("instance", "status", "objective", "bound", "gap", "makespan", "avg_jct", "runtime_s", "solver_s")
        emit_table([(k, out[k]) for k in keys] + [("horizon", res.options["horizon"]), ("model", res.model_size)])
        if res.message:
            print(f"message  {res.message}")
    if res.status == Status.INFEASIBLE:
        print(
            f"error: {args.instance}: no schedule completes within the horizon {res.options['horizon']} "
            "(proven infeasible)",
            file=sys.stderr,
        )
        return EXIT_INPUT
    if res.status == Status.ERROR:
        print(f"error: the solve failed: {res.message or res.termination}", file=sys.stderr)
        return EXIT_INTERNAL
    if res.status == Status.UNVERIFIED:
        print(f"note: {res.message} (the answer is unverified, not proven)", file=sys.stderr)
    return EXIT_OK


def _parse_options(items: Sequence[str] | None) -> dict[str, Any]:
    """``KEY=VALUE`` pairs of formulation options; VALUE is JSON (true, 40, "total") or a word."""
    out: dict[str, Any] = {}
    for item in items or ():
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise InputError(f"expected KEY=VALUE, got {item!r}", where="--option")
        try:
            out[key] = json.loads(text)
        except json.JSONDecodeError:
            out[key] = text
    return out


@command("export")
def cmd_export(args: argparse.Namespace) -> int:
    """``rar-opt export``: write a model spec's model as LP, MPS or NL."""
    from .models import ModelSpec, export_model

    instance = Instance.read(instance_path(args.instance))
    spec = ModelSpec.read(model_path(args.model))
    size = export_model(spec, instance, args.output, args.format)
    summary = {"instance": instance.name, "model": spec.name, "format": args.format, "file": args.output, **size}
    emit_json(summary) if args.json else emit_table(list(summary.items()))
    return EXIT_OK


@command("compare")
def cmd_compare(args: argparse.Namespace) -> int:
    """``rar-opt compare``: policies side by side against OPT or a lower bound."""
    from .compare import compare

    if args.policies and len(set(args.policies)) < len(args.policies):
        repeated = sorted({p for p in args.policies if args.policies.count(p) > 1})
        raise InputError(f"names {', '.join(repeated)} more than once", where="--policies")
    instance = Instance.read(instance_path(args.instance))
    result = compare(instance, args.policies, exact=args.exact, time_limit=args.time_limit, seed=args.seed)
    if args.json:
        emit_json(result.to_dict())
        return EXIT_OK
    solved = ""
    if result.solve is not None:  # what the exact solve ended with, also when it did not prove OPT
        solved = f" (exact solve: {result.solve['status']}, bound {result.solve['bound']})"
    print(
        f"{instance.name}: ratios to the {result.reference_kind} {result.reference}{solved}; "
        f"Theorem 5 bound n_g varphi u/l = {result.theorem5_bound:.4g}"
    )
    emit_table(
        [
            (
                r.policy,
                r.makespan,
                r.avg_jct,
                r.ratio,
                "yes" if r.within_horizon else "NO",
                r.contention_share,
                r.wall_s,
            )
            for r in result.rows
        ],
        ("policy", "makespan", "avg_jct", "ratio", "within T", "contention", "wall_s"),
    )
    print()
    emit_table(
        [
            (c.claim, {True: "holds", False: "VIOLATED", None: "inconclusive"}[c.holds], c.margin, c.detail)
            for c in result.claims
        ],
        ("sjf-bco claim", "verdict", "margin", "detail"),
    )
    return EXIT_OK


@command("experiment")
def cmd_experiment(args: argparse.Namespace) -> int:
    """``rar-opt experiment``: one of the paper's sweeps."""
    from .experiments import count_runs, run_experiment, summarise
    from .jsonio import dump_json

    began = time.perf_counter()
    with _progress(args, count_runs(args.name, args.seeds, args.jobs), "runs") as bar:
        rows = run_experiment(
            args.name,
            args.seeds,
            jobs=args.jobs,
            workers=args.workers,
            budget=args.budget,
            preset=args.preset,
            on_row=lambda _: bar.update(),
        )
    summary = summarise(rows)
    record = {
        "experiment": args.name,
        "seeds": args.seeds,
        "jobs": args.jobs,
        "budget": args.budget,
        "preset": args.preset,
        "workers": args.workers,
        "wall_s": round(time.perf_counter() - began, 3),
        "versions": versions(),
        "summary": summary,
        "runs": rows,
    }
    if args.output:
        dump_json(record, args.output)
    if args.json:
        emit_json(record)
    else:
        emit_table(
            [(r["label"], r["runs"], r["beyond_horizon"], r["mean_makespan"], r["mean_avg_jct"]) for r in summary],
            ("configuration", "runs", "beyond T", "mean makespan", "mean avg JCT"),
        )
    return EXIT_OK


@command("plot")
def cmd_plot(args: argparse.Namespace) -> int:
    """``rar-opt plot``: a Gantt chart of a schedule."""
    try:
        import matplotlib  # noqa: F401

        from .plot import plot_schedule
    except ImportError:
        print("error: plotting needs matplotlib: pip install 'rar-opt[plot]'", file=sys.stderr)
        return EXIT_INTERNAL
    instance = Instance.read(instance_path(args.instance))
    schedule = Schedule.read(args.schedule)
    try:
        plot_schedule(instance, schedule, args.output, allow_infeasible=args.allow_infeasible)
    except InputError as exc:
        raise (exc if exc.file else exc.in_file(args.schedule)) from None
    print(f"written: {args.output}")
    return EXIT_OK


def _show_progress(args: argparse.Namespace) -> bool:
    """A progress bar goes to stderr when it is a terminal, unless --quiet."""
    return sys.stderr.isatty() and not getattr(args, "quiet", False)


def _progress(args: argparse.Namespace, total: int, unit: str) -> Any:
    """A progress bar over ``total`` items (tqdm), or a silent stand-in."""
    from tqdm import tqdm

    return tqdm(total=total, unit=unit, disable=not _show_progress(args), file=sys.stderr, leave=False)


@contextlib.contextmanager
def _clock_bar(args: argparse.Namespace, seconds: float | None) -> Any:
    """A bar over a solve's time limit, ticking every half second while the block runs."""
    if seconds is None or not _show_progress(args):
        yield
        return
    import threading

    from tqdm import tqdm

    done = threading.Event()
    with tqdm(
        total=round(seconds, 1), unit="s", file=sys.stderr, leave=False, bar_format="{l_bar}{bar}| {n:.1f}/{total} s"
    ) as bar:

        def tick() -> None:
            began = time.perf_counter()
            while not done.wait(0.5):
                bar.n = min(round(time.perf_counter() - began, 1), bar.total)
                bar.refresh()

        ticker = threading.Thread(target=tick, daemon=True)
        ticker.start()
        try:
            yield
        finally:
            done.set()
            ticker.join()


def _reference(text: str | None) -> str | tuple[int, int] | None:
    """``--reference``: ``worst`` or ``N,P``."""
    if text is None or text == "worst":
        return text
    try:
        n, p = (int(v) for v in text.split(","))
    except ValueError:
        raise InputError(f"must be 'worst' or N,P (two integers), got {text!r}", where="--reference") from None
    return (n, p)


def _check_output(path: str) -> None:
    """Refuse an output path that cannot be written, before any work is done."""
    if not path.strip():
        raise InputError("is empty", where="--output")
    target = Path(path)
    if target.is_dir():
        raise InputError("is a directory; give a file name", file=path)
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise InputError(f"the directory {str(parent)!r} does not exist", file=path)
    if not os.access(parent, os.W_OK):
        raise InputError(f"the directory {str(parent)!r} is not writable", file=path)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser; choices come from the registries."""
    parser = argparse.ArgumentParser(prog="rar-opt", description="Schedule ring-all-reduce jobs under contention.")
    parser.add_argument("--version", action="version", version=f"rar-opt {__version__}")
    # -v/--quiet work before and after the subcommand (the subcommand's copy never resets them)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS, help="log progress")
    common.add_argument("--quiet", action="store_true", default=argparse.SUPPRESS, help="no progress output")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")
    parser.add_argument("--quiet", action="store_true", help="no progress output on stderr")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("generate", parents=[common], help="generate a seeded instance")
    p.add_argument("kind", choices=sorted(GENERATORS))
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--jobs", type=int)
    p.add_argument("--servers", type=int)
    p.add_argument("--preset", choices=list(PRESETS), help="paper: a reading of the 15%% (default paper-literal)")
    p.add_argument("--reference", help="paper knob: 'worst' or N,P (a split over N servers with P contenders)")
    p.add_argument("--contention-share", type=float, help="paper knob: contention's share at the reference, (0, 1]")
    p.add_argument("--overhead-share", type=float, help="paper knob: overhead's share at the reference, (0, 1]")
    p.add_argument("--size-link", choices=["none", "sorted"], help="paper knob: longest durations to the largest jobs")
    p.add_argument("--budget", type=float, help="paper: worst-case contention + overhead share (default 0.15)")
    p.add_argument("-o", "--output", help="instance file to write (default: print the JSON)")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("simulate", parents=[common], help="check and simulate a schedule")
    p.add_argument("instance")
    p.add_argument("schedule")
    p.add_argument("--json", action="store_true")
    p.add_argument("--trace", action="store_true", help="per slot: active jobs, c_s per server, phi per job")

    p = sub.add_parser("schedule", parents=[common], help="schedule an instance with a heuristic policy")
    p.add_argument("instance")
    p.add_argument("--policy", default="sjf-bco", choices=list(POLICIES), help="default sjf-bco")
    p.add_argument("--seed", type=int, default=0, help="seed of randomised policies (default 0)")
    p.add_argument("--kappa", type=int, help="SJF-BCO: fixed kappa instead of the loop")
    p.add_argument("--lam", type=float, help="SJF-BCO: lambda_j for every job (>= 1)")
    p.add_argument("--small-rule", choices=["printed", "packing"], help="SJF-BCO: FA-FFP variant")
    p.add_argument("--estimator", choices=list(ESTIMATORS), help="rho_hat estimator (default best)")
    p.add_argument("--bisection", choices=["paper", "tightest"], help="sjf-bco, ff, ls: theta bisection rule")
    p.add_argument("--order", choices=["smallest-first", "input"], help="ff, ls, rand, consolidate: job order")
    p.add_argument("--tie-break", choices=["index", "random"], help="ls: ties between equal loads (random: seeded)")
    p.add_argument("--mode", choices=["gpus", "servers"], help="rand: random GPUs, or random servers then GPUs")
    p.add_argument("-o", "--output", help="schedule file to write")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("solve", parents=[common], help="solve an instance exactly (default: compact MILP, HiGHS)")
    p.add_argument("instance")
    p.add_argument(
        "--formulation",
        choices=[*FORMULATIONS, "decompose"],
        help="; ".join(f"{f.name}: {f.summary}" for f in FORMULATIONS.values())
        + "; decompose: the contention-free relaxation and restriction, then cpsat if they do not meet",
    )
    p.add_argument("--backend", choices=list(BACKENDS), help="solver (default: highs for MILPs, scip for nonconvex)")
    p.add_argument("--model", help="a model spec from models/: its formulation and every option")
    p.add_argument(
        "--option",
        action="append",
        metavar="KEY=VALUE",
        help="a formulation option (repeatable), e.g. horizon=40, cuts=true; overrides the spec",
    )
    p.add_argument("--time-limit", type=float, help="seconds; the best schedule found so far is kept")
    p.add_argument(
        "--warm-start",
        metavar="POLICY",
        choices=list(POLICIES),
        help="MIP start (and horizon) from a heuristic: " + ", ".join(POLICIES),
    )
    p.add_argument("--objective", choices=list(OBJECTIVES), help="shortcut for --option objective=...")
    p.add_argument(
        "--symmetry", action=argparse.BooleanOptionalAction, help="symmetry-breaking rows (compact; default on)"
    )
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seed", type=int, default=0, help="solver random seed (default 0)")
    p.add_argument("-o", "--output", help="schedule file to write (when one was found)")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("export", parents=[common], help="write a formulation of an instance as LP, MPS or NL")
    p.add_argument("instance")
    p.add_argument("--model", required=True, help="a model spec, e.g. models/compact-makespan.json")
    p.add_argument("--format", required=True, choices=list(EXPORT_FORMATS))
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("experiment", parents=[common], help="the paper's sweeps: policies, kappa, servers, lambda")
    p.add_argument("name", choices=list(EXPERIMENTS))
    p.add_argument("--seeds", type=int, nargs="+", default=[0])
    p.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    p.add_argument("--jobs", type=int, default=160, help="jobs per instance (Philly mix scaled; default 160)")
    p.add_argument("--preset", choices=list(PRESETS), default="paper-literal", help="the generator's reading of 15%%")
    p.add_argument("--budget", type=float, help="literal reading: contention + overhead share (default 0.15)")
    p.add_argument("-o", "--output", help="result file (every run, seeds, versions)")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("plot", parents=[common], help="Gantt chart per GPU and contention per server")
    p.add_argument("instance")
    p.add_argument("schedule")
    p.add_argument("-o", "--output", required=True, help="picture to write: .png, .pdf or .svg")
    p.add_argument(
        "--allow-infeasible", action="store_true", help="draw an infeasible schedule with its violations marked"
    )

    p = sub.add_parser("compare", parents=[common], help="policies side by side, against OPT or a lower bound")
    p.add_argument("instance")
    p.add_argument("--policies", nargs="+", choices=list(POLICIES), help="default: all registered policies")
    p.add_argument("--exact", action="store_true", help="solve for OPT (compact MILP, warm-started)")
    p.add_argument("--time-limit", type=float, default=60.0, help="seconds for --exact (default 60)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true")

    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 2 bad input, 1 internal failure)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    # a closed pipe (``rar-opt ... | head``) ends the command quietly, as for any Unix tool,
    # even when a solver is writing from its own thread
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    # -v is about rar-opt's own progress; solvers' logs stay at warnings
    logging.getLogger("rar_opt").setLevel(logging.INFO if args.verbose and not args.quiet else logging.WARNING)
    try:
        if getattr(args, "output", None) is not None:
            _check_output(args.output)
        return COMMANDS[args.command](args)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    except BrokenPipeError:  # output piped into `head` and the like
        sys.stderr.close()
        return EXIT_OK
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERNAL
    except Exception as exc:  # an internal failure: say so in one line
        if os.environ.get("RAR_OPT_DEBUG"):
            raise
        print(f"internal error: {type(exc).__name__}: {exc} (set RAR_OPT_DEBUG=1 for a traceback)", file=sys.stderr)
        return EXIT_INTERNAL


def run() -> None:
    """The ``rar-opt`` console entry point: :func:`main`, then a fast exit.

    Tearing down the interpreter after a large solve takes a noticeable part of a second
    (Pyomo's and HiGHS' objects), which would push the command past its time limit; every
    file is already closed and every pool shut down when ``main`` returns, so the process
    flushes its output and ends at once."""
    code = main()
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(BrokenPipeError, ValueError):
            stream.flush()
    os._exit(code)


if __name__ == "__main__":
    run()
