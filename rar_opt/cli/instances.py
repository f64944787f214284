"""Commands on instances and schedules: ``generate``, ``trace``, ``simulate``, ``schedule``, ``plot``."""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from typing import Any

from rar_opt.algorithms import PLACEMENTS, POLICIES
from rar_opt.algorithms.backfill import FITS
from rar_opt.algorithms.estimators import ESTIMATORS
from rar_opt.check import check
from rar_opt.cli.output import (
    EXIT_OK,
    JSON_HELP,
    add_schedule_output,
    emit_json,
    emit_simulation,
    emit_table,
    progress,
    require_matplotlib,
    show_progress,
    stamped,
    warn_if_made_for_other_data,
)
from rar_opt.errors import InputError
from rar_opt.instance import Instance
from rar_opt.instances.calibration import PRESETS
from rar_opt.instances.generate import GENERATORS, generate
from rar_opt.instances.library import instance_path
from rar_opt.instances.traces import parse_span, read_trace, trace_instance
from rar_opt.schedule import Schedule
from rar_opt.support.checks import GENERATOR_MAX_SEED, seed_problem
from rar_opt.support.provenance import full_version

MAX_SEED = GENERATOR_MAX_SEED  # rar_opt.support.checks
"""The largest seed ``schedule --seed`` takes (numpy's generators take any non-negative
integer; this keeps it within a signed 64-bit integer, as result files store it)."""


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add this module's subcommands to ``sub``."""
    p = sub.add_parser("generate", parents=[common], help="generate a seeded instance")
    p.add_argument("kind", choices=sorted(GENERATORS))
    p.add_argument("--seed", type=int, required=True, help="seed of the generator's draws, 0..2**63-1 (required)")
    p.add_argument("--jobs", type=int, help="number of jobs (default: 160 for the paper kinds; tiny: drawn)")
    p.add_argument("--servers", type=int, help="number of servers (default: 20 for the paper kinds; tiny: drawn)")
    p.add_argument(
        "--server-gpus", type=int, help="paper: every server with this many GPUs (default: drawn from 4, 8, 16, 32)"
    )
    p.add_argument("--preset", choices=list(PRESETS), help="paper: a reading of the 15%% (default paper-literal)")
    p.add_argument("--reference", help="paper knob: 'worst' or N,P (a split over N servers with P contenders)")
    p.add_argument("--contention-share", type=float, help="paper knob: contention's share at the reference, (0, 1]")
    p.add_argument("--overhead-share", type=float, help="paper knob: overhead's share at the reference, (0, 1]")
    p.add_argument("--size-link", choices=["none", "sorted"], help="paper knob: longest durations to the largest jobs")
    p.add_argument(
        "--budget",
        type=float,
        help="paper: worst-case contention + overhead share, in (0, 2] (default: the preset's; 0.15 for paper-literal)",
    )
    p.add_argument("--load", type=float, help="jobs arrive over time: Poisson arrivals at this offered load")
    p.add_argument("--burst", type=float, help="with --load: jobs arrive in batches of this mean size (>= 1)")
    p.add_argument("-o", "--output", help="instance file to write (default: print the JSON)")
    p.add_argument(
        "--json", action="store_true", help="with -o: print the summary as JSON (without -o the instance is JSON)"
    )
    p.set_defaults(func=cmd_generate)

    p = sub.add_parser("trace", parents=[common], help="an instance from a job trace (CSV; docs/arrivals.md)")
    p.add_argument("file", help="CSV: submit[UNIT], gpus, duration[UNIT] and/or iterations, name (docs/formats.md)")
    p.add_argument("--servers", type=int, required=True, help="number of servers")
    p.add_argument("--server-gpus", type=int, help="GPUs per server (default: drawn from 4, 8, 16, 32 by --seed)")
    p.add_argument("--seed", type=int, default=0, help="seed of the calibration's draws, 0..2**31-1 (default 0)")
    p.add_argument("--slot", default="1min", help="length of a slot with its unit: 30s, 1min, 0.5h (default 1min)")
    p.add_argument("--horizon", type=int, help="T in slots (default: last release + every job's worst time)")
    p.add_argument(
        "--preset", choices=list(PRESETS), default="paper-literal", help="calibration (default paper-literal)"
    )
    p.add_argument("--name", help="instance name (default STEM-JOBSxSERVERS-sSEED, STEM the file name)")
    p.add_argument("-o", "--output", help="instance file to write (default: print the JSON)")
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.set_defaults(func=cmd_trace)

    p = sub.add_parser("simulate", parents=[common], help="check and simulate a schedule")
    p.add_argument("instance")
    p.add_argument("schedule")
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.add_argument(
        "--trace",
        action="store_true",
        help="per slot: active jobs, c_s per server (c_e per switch link on a topology), phi per job",
    )
    p.set_defaults(func=cmd_simulate)

    p = sub.add_parser("schedule", parents=[common], help="schedule an instance with a heuristic policy")
    p.add_argument("instance")
    p.add_argument("--policy", default="sjf-bco", choices=list(POLICIES), help="default sjf-bco")
    p.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of randomised policies, 0..2**63-1; improve, pack and backfill: 0..2**31-1 (default 0)",
    )
    p.add_argument("--kappa", type=int, help="SJF-BCO: fixed kappa instead of the loop")
    p.add_argument("--lam", type=float, help="SJF-BCO: lambda_j for every job (>= 1)")
    p.add_argument("--small-rule", choices=["printed", "packing"], help="SJF-BCO: FA-FFP variant")
    p.add_argument("--estimator", choices=list(ESTIMATORS), help="rho_hat estimator (default best)")
    p.add_argument("--bisection", choices=["paper", "tightest"], help="sjf-bco, ff, ls: theta bisection rule")
    p.add_argument("--order", choices=["smallest-first", "input"], help="ff, ls, rand, consolidate: job order")
    p.add_argument("--placement", choices=list(PLACEMENTS), help="lpt, laf: GPUs per job (default consolidate)")
    p.add_argument(
        "--iterations",
        type=int,
        help="improve, pack, backfill: iterations (restarts, moves), the stopping rule (40, 20, 200)",
    )
    p.add_argument("--time-limit", type=float, help="improve, pack, backfill: wall-time cap in seconds (default 10)")
    p.add_argument("--jitter", type=float, help="pack: a restart's largest shift, a share of a job's length (0.3)")
    p.add_argument("--no-justify", action="store_true", help="pack: no forward-backward improvement")
    p.add_argument(
        "--split",
        choices=["both", "must", "may", "choose"],
        help="pack, backfill: which jobs may split: those no server holds (must), any (may), "
        "pack's better start (both, pack's default; backfill's: may), backfill's search decides per job (choose)",
    )
    p.add_argument(
        "--fit", choices=list(FITS), help="backfill: fewest free GPUs (best), smallest or largest server first"
    )
    p.add_argument("--no-reserve", action="store_true", help="backfill: no reservation for the first job that waits")
    p.add_argument("--lanes", type=float, help="pack: share of --time-limit for the buddy-lanes search (0.5; 0: none)")
    p.add_argument("--lanes-patience", type=int, help="pack: lanes search: failures in a row to stop (30)")
    p.add_argument("--moves", choices=["order+placement", "order"], help="improve: what a move changes")
    p.add_argument("--tie-break", choices=["index", "random"], help="ls: ties between equal loads (random: seeded)")
    p.add_argument("--mode", choices=["gpus", "servers"], help="rand: random GPUs, or random servers then GPUs")
    add_schedule_output(p, "schedule file to write (the per-job table is then not printed)")
    p.add_argument("--table", action="store_true", help="print the per-job table also with -o")
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.set_defaults(func=cmd_schedule)

    p = sub.add_parser("plot", parents=[common], help="Gantt chart per GPU and contention per server")
    p.add_argument("instance")
    p.add_argument("schedule")
    p.add_argument("-o", "--output", required=True, help="picture to write: .png, .pdf or .svg")
    p.add_argument(
        "--allow-infeasible", action="store_true", help="draw an infeasible schedule with its violations marked"
    )
    p.set_defaults(func=cmd_plot, beside_output=_plot_record)


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
        load=args.load,
        burst=args.burst,
        server_gpus=args.server_gpus,
    )
    _warn_if_nothing_fits(inst)
    # which rar-opt drew it (the generators change between versions); the data stand alone
    inst = dataclasses.replace(inst, meta={**inst.meta, "generated_with": full_version()})
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


def _warn_if_nothing_fits(inst: Instance) -> None:
    """Notes on stderr when no schedule is known to fit the instance's own horizon. A note
    when a cheap lower bound (the longest job, or the cluster's GPU-slots over its GPUs) is
    past T: every solve of it will end infeasible. Else a warning when the default schedule
    (SJF-BCO) ends after T: the bound leaves room, but nothing shows that a schedule fits,
    and a solve may find none. The instance is still written (exit 0): it is valid, and it
    is what the parameters ask for."""
    from rar_opt.algorithms import run_policy
    from rar_opt.bounds import lower_bounds
    from rar_opt.simulate import simulate

    floor = lower_bounds(inst, structural=False).best
    if floor > inst.horizon:
        print(
            f"note: no schedule of {inst.name} fits its horizon: it needs at least {floor} slots, "
            f"T = {inst.horizon} (more servers or fewer jobs would fit)",
            file=sys.stderr,
        )
        return
    # SJF-BCO takes about a tenth of a second on the paper's 160 jobs (0.4 s on 2,000), so a
    # default schedule is cheap enough to run on every generated instance
    end = simulate(inst, run_policy(inst, "sjf-bco").schedule).makespan
    if end is not None and end > inst.horizon:
        print(
            f"warning: no schedule of {inst.name} is known to fit its horizon T = {inst.horizon}: "
            f"SJF-BCO's (the default schedule) ends at slot {end}, although the best lower bound, "
            f"{floor}, is within T; solve may find no schedule (more servers or fewer jobs would help)",
            file=sys.stderr,
        )


def cmd_trace(args: argparse.Namespace) -> int:
    """``rar-opt trace``: an instance from a CSV trace, printed or written."""
    slot = parse_span(args.slot, "slot")
    inst = trace_instance(
        read_trace(args.file),
        servers=args.servers,
        server_gpus=args.server_gpus,
        seed=args.seed,
        slot=slot,
        horizon=args.horizon,
        preset=args.preset,
        name=args.name,
    )
    if args.output is None:
        emit_json(inst.to_dict())
        return EXIT_OK
    inst.write(args.output)
    bounds = inst.bounds
    summary = {
        "name": inst.name,
        "jobs": inst.num_jobs,
        "servers": inst.num_servers,
        "gpus": inst.cluster.num_gpus,
        "slot_s": slot,
        "last_release": int(inst.releases.max()),
        "fastest_times": f"{int(bounds.rho_min.min())}..{int(bounds.rho_min.max())}",
        "horizon": inst.horizon,
        "file": str(args.output),
    }
    emit_json(summary) if args.json else emit_table(list(summary.items()))
    return EXIT_OK


def cmd_simulate(args: argparse.Namespace) -> int:
    """``rar-opt simulate``: check and simulate a schedule file."""
    instance = Instance.read(instance_path(args.instance))
    schedule = Schedule.read(args.schedule)
    try:
        schedule.require_matches(instance)
    except InputError as exc:
        raise exc.in_file(args.schedule) from None
    warn_if_made_for_other_data(instance, schedule, args.schedule)
    return emit_simulation(instance, schedule, args.json, trace=args.trace, source=args.schedule)


def cmd_schedule(args: argparse.Namespace) -> int:
    """``rar-opt schedule``: run a policy and report its schedule."""
    from rar_opt.algorithms import run_policy

    # one range for every policy, seeded or not: a bad seed is refused even where it is unused
    if problem := seed_problem(args.seed, MAX_SEED):
        raise InputError(problem, where="--seed")
    given = {  # each policy option set on the command line, with its flag
        key: (flag, value)
        for key, flag, value in (
            ("kappa", "--kappa", args.kappa),
            ("lam", "--lam", args.lam),
            ("small_rule", "--small-rule", args.small_rule),
            ("estimator", "--estimator", args.estimator),
            ("bisection", "--bisection", args.bisection),
            ("order", "--order", args.order),
            ("tie_break", "--tie-break", args.tie_break),
            ("mode", "--mode", args.mode),
            ("placement", "--placement", args.placement),
            ("iterations", "--iterations", args.iterations),
            ("time_limit", "--time-limit", args.time_limit),
            ("moves", "--moves", args.moves),
            ("jitter", "--jitter", args.jitter),
            ("justify", "--no-justify", False if args.no_justify else None),
            ("split", "--split", args.split),
            ("lanes", "--lanes", args.lanes),
            ("lanes_patience", "--lanes-patience", args.lanes_patience),
            ("fit", "--fit", args.fit),
            ("reserve", "--no-reserve", False if args.no_reserve else None),
        )
        if value is not None
    }
    _policy_takes(args.policy, {key: flag for key, (flag, _) in given.items()})
    options = {key: value for key, (_, value) in given.items()}
    instance = Instance.read(instance_path(args.instance))
    began = time.perf_counter()
    with progress(args, instance.num_jobs, "job") as bar:
        current = [0]  # the trial the bar shows: each trial restarts it

        def report(trial: int, placed: int, jobs: int) -> None:
            if trial != current[0]:
                current[0] = trial
                bar.reset(total=jobs)
                bar.set_description(f"{args.policy} trial {trial}")
            bar.n = placed
            bar.refresh()

        hook = report if show_progress(args) else None
        result = run_policy(instance, args.policy, seed=args.seed, progress=hook, **options)
    schedule = result.schedule
    wall = time.perf_counter() - began
    extra = {"policy": args.policy, "wall_s": round(wall, 4)}
    from rar_opt.shares import realized_shares

    judged = check(instance, schedule)  # judged once: the shares and the report use its simulation
    shares = realized_shares(instance, schedule, sim=judged.result if judged.feasible else None)
    # the schedule's record carries the realized shares too
    recorded = stamped(schedule.with_meta({**schedule.meta, "shares": shares.to_dict()}), instance)
    if args.output:
        recorded.write(args.output, dense=args.dense)
    extra.update({"theta": result.theta, "kappa": result.kappa, "trials": result.trials})
    extra.update({"theta_binding": result.theta_binding, "max_load": round(result.max_load, 3)})
    extra.update({f"{k}_share": round(v, 5) for k, v in shares.to_dict().items()})
    # the file holds every job's placement and start: the table only on request
    table = args.table or not args.output
    # --json: what the -o file holds too, the meta (seed, params, exceeds_horizon, version) and each
    # job's start and placement
    written = recorded.to_dict(args.dense)
    record: dict[str, Any] | None = None
    if args.json:
        record = {key: written[key] for key in ("meta", "servers", "jobs") if key in written}
    return emit_simulation(
        instance, schedule, args.json, extra, run=result, report=judged, table=table, file=args.output, record=record
    )


def _policy_takes(policy: str, flags: dict[str, str]) -> None:
    """Refuse a flag the policy does not take, by the flag (``--time-limit``), before the
    instance is read; ``flags`` maps each option given to its flag."""
    from rar_opt.algorithms import POLICIES

    known = POLICIES[policy].option_names()
    for key, flag in flags.items():
        if key not in known:
            why = f"{policy} does not take it (rar-opt schedule --help lists each flag's policies)"
            raise InputError(why, where=flag)


def cmd_plot(args: argparse.Namespace) -> int:
    """``rar-opt plot``: a Gantt chart of a schedule."""
    require_matplotlib("plot")
    from rar_opt.plotting.schedule import plot_schedule

    instance = Instance.read(instance_path(args.instance))
    schedule = Schedule.read(args.schedule)
    try:
        written = plot_schedule(instance, schedule, args.output, allow_infeasible=args.allow_infeasible)
    except InputError as exc:
        raise (exc if exc.file else exc.in_file(args.schedule)) from None
    warn_if_made_for_other_data(instance, schedule, args.schedule)
    figure, record = written
    print(f"written: {figure} and, beside it, {record} (what the figure was drawn from)")
    return EXIT_OK


def _plot_record(figure: str) -> list[str]:
    """The file ``plot`` writes beside its figure (checked with ``-o`` before any work)."""
    from rar_opt.plotting.schedule import provenance_path

    return [str(provenance_path(figure))]


def _reference(text: str | None) -> str | tuple[int, int] | None:
    """``--reference``: ``worst`` or ``N,P``."""
    if text is None or text == "worst":
        return text
    try:
        n, p = (int(v) for v in text.split(","))
    except ValueError:
        raise InputError(f"must be 'worst' or N,P (two integers), got {text!r}", where="--reference") from None
    return (n, p)
