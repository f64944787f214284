"""Sweeps: ``experiment``, the paper's experiments."""

from __future__ import annotations

import argparse
import signal
import sys
import time
from typing import Any

from rar_opt.cli.output import EXIT_OK, JSON_HELP, bound_text, emit_json, emit_table, progress
from rar_opt.instances.calibration import PRESETS
from rar_opt.instances.generate import GENERATORS, takes_paper_knobs
from rar_opt.studies.experiments import BOUND_TIME_LIMIT, EXPERIMENTS
from rar_opt.support.provenance import provenance, versions


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add this module's subcommands to ``sub``."""
    p = sub.add_parser(
        "experiment", parents=[common], help="the paper's sweeps: policies, kappa, servers, lambda; and load (arrivals)"
    )
    p.add_argument(
        "name", metavar="experiment", choices=list(EXPERIMENTS), help="the sweep to run: " + ", ".join(EXPERIMENTS)
    )
    p.add_argument(
        "--seeds",
        type=int,
        nargs="+",
        default=[0],
        metavar="K",
        help="the seeds of the generated instances (and of the seeded policies and the bounds' solvers), each "
        "once, 0..2**31-1: the sweep runs on one instance per seed and the summary averages over them (default 0)",
    )
    where = p.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, default=1, help="local Dask worker processes (default 1: serial)")
    where.add_argument("--scheduler", metavar="ADDR", help="an existing Dask scheduler, tcp://HOST:PORT")
    p.add_argument("--jobs", type=int, default=160, help="jobs per instance (Philly mix scaled; default 160)")
    p.add_argument(
        "--preset",
        choices=list(PRESETS),
        nargs="+",
        default=["paper-literal"],
        help="the generator's reading of 15%% (several: the runs under each, in turn)",
    )
    p.add_argument(
        "--family",
        choices=[k for k in GENERATORS if takes_paper_knobs(k)],
        default="paper",
        help="the paper generator, or its jobs on homogeneous 8- or 4-GPU servers (default paper)",
    )
    p.add_argument(
        "--budget",
        type=float,
        help="worst-case contention + overhead share (default: the preset's own, 0.15 for paper-literal)",
    )
    p.add_argument(
        "--bound-time-limit",
        type=float,
        default=BOUND_TIME_LIMIT,
        help=f"seconds of the flow LP's lower bound on the average JCT, once per instance (default "
        f"{BOUND_TIME_LIMIT:g}; 0: the cheap bound only)",
    )
    p.add_argument("-o", "--output", help="result file (every run, seeds, versions)")
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.set_defaults(func=cmd_experiment)


def cmd_experiment(args: argparse.Namespace) -> int:
    """``rar-opt experiment``: one of the paper's sweeps."""
    from rar_opt.studies.experiments import complete_seeds, count_runs, run_experiment, summarise
    from rar_opt.support.jsonio import dump_json
    from rar_opt.support.processes import stop_requested

    began = time.perf_counter()
    planned = count_runs(args.name, args.seeds, args.jobs, len(args.preset))
    with progress(args, planned, "runs") as bar:
        rows = run_experiment(
            args.name,
            args.seeds,
            jobs=args.jobs,
            workers=args.workers,
            budget=args.budget,
            preset=args.preset,
            on_row=lambda _: bar.update(),
            scheduler=args.scheduler,
            family=args.family,
            bound_time_limit=args.bound_time_limit,
        )
    signum = stop_requested()  # a signal stopped it: the runs finished before it, marked so
    stopped: dict[str, Any] = {}
    summarised = rows
    if signum is not None:
        complete = complete_seeds(args.name, rows, args.jobs)
        summarised = [r for r in rows if r["seed"] in complete.get(r["preset"], [])]  # like with like
        stopped = {
            "interrupted": signal.Signals(signum).name,
            "runs_planned": planned,
            "runs_finished": len(rows),
            "complete_seeds": complete,
        }
    summary = summarise(summarised)
    record = {
        "experiment": args.name,
        "seeds": args.seeds,
        "jobs": args.jobs,
        "budget": budget_in_effect(args.budget, args.preset),
        "bound_time_limit": args.bound_time_limit,
        **({"preset": args.preset[0]} if len(args.preset) == 1 else {}),
        "presets": args.preset,
        **({"family": args.family} if args.family != "paper" else {}),
        "workers": args.workers,
        "scheduler": args.scheduler,
        "wall_s": round(time.perf_counter() - began, 3),
        "versions": versions(),
        "provenance": provenance(),
        **stopped,
        "summary": summary,
        "runs": rows,
    }
    if args.output:
        dump_json(record, args.output)  # atomic: the whole file or none
    if args.json:
        emit_json(record)
    else:
        head: tuple[str, ...] = ("configuration", "runs", "beyond T", "mean makespan", "mean avg JCT")
        keys = ["label", "runs", "beyond_horizon", "mean_makespan", "mean_avg_jct"]
        extra = {  # the proven bounds on both metrics, and the load experiment's flow
            "mean_avg_flow": "mean avg flow",
            "mean_lower_bound_makespan": "makespan bound",
            "mean_lower_bound_avg_jct": "avg JCT bound",
            "mean_lower_bound_avg_flow": "avg flow bound",
        }
        keys += [k for k in extra if summary and k in summary[0]]
        head += tuple(extra[k] for k in keys[5:])
        if len(args.preset) > 1:
            keys, head = ["preset", *keys], ("preset", *head)
        bounds = {k for k in keys if k.startswith("mean_lower_bound")}  # rounded down: never more than proven
        if summary:
            emit_table([tuple(bound_text(r.get(k)) if k in bounds else r.get(k) for k in keys) for r in summary], head)
            print(_bounds_note(summarised))
            capped = [f"{r['label']} ({r['time_capped']} of {r['runs']})" for r in summary if r.get("time_capped")]
            if capped:
                print(
                    f"note: the wall-time cap stopped these searches before their iterations ran out: "
                    f"{', '.join(capped)}; their schedules depend on the machine's speed and load"
                )
    if stopped:
        seeds = "; ".join(f"{p}: {', '.join(map(str, s))}" for p, s in stopped["complete_seeds"].items() if s)
        where = f"written to {args.output}" if args.output else "not written (no -o)"
        table = f"the table is over the seeds all of whose runs finished ({seeds})" if summary else "no table"
        print(
            f"interrupted ({stopped['interrupted']}): {len(rows)} of {planned} runs finished, {where}; "
            f"{table if seeds else 'no seed finished all its runs: no table'}",
            file=sys.stderr if args.json else sys.stdout,
        )
    return EXIT_OK


def budget_in_effect(budget: float | None, presets: list[str]) -> float | dict[str, float]:
    """The worst-case contention + overhead share the instances were drawn with: ``--budget``
    when given, else each preset's own (0.15 for ``paper-literal``, 0.3 for
    ``contention-heavy``). One number when every preset has the same, else one per preset:
    a record saying ``null`` would leave the reader to know the generator's defaults."""
    if budget is not None:
        return budget
    shares = {name: PRESETS[name].contention + PRESETS[name].overhead for name in presets}
    return shares[presets[0]] if len(set(shares.values())) == 1 else shares


def _bounds_note(rows: list[dict[str, Any]]) -> str:
    """Which registered bounds gave the bound columns (docs/formats.md, "JSON outputs")."""

    def names(field: str) -> str:
        seen: list[str] = []
        for row in rows:
            if row.get(field) is not None and row[field] not in seen:
                seen.append(row[field])
        return ", ".join(seen) or "-"

    return (
        f"bounds (proven, rounded down to three decimals; per instance, averaged over the seeds): makespan by "
        f"{names('lower_bound_makespan_by')}, average JCT by {names('lower_bound_avg_jct_by')} "
        "(rar-opt bounds INSTANCE lists them all)"
    )
