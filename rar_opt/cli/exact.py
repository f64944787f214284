"""Exact commands: ``solve``, ``probe`` and ``export`` (``compare`` is in :mod:`.compare`)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rar_opt.algorithms import POLICIES
from rar_opt.cli.output import (
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_OK,
    JSON_HELP,
    add_schedule_output,
    clock_bar,
    emit_json,
    emit_table,
    fmt,
    stamped,
)
from rar_opt.errors import InputError
from rar_opt.formulations import FORMULATIONS
from rar_opt.formulations.base import RICH_OBJECTIVES
from rar_opt.formulations.specs import EXPORT_FORMATS
from rar_opt.instance import Instance
from rar_opt.instances.library import instance_path, model_path
from rar_opt.solvers.budget import after_startup
from rar_opt.solvers.cpsat import SEARCHES
from rar_opt.solvers.decompose import PLANS
from rar_opt.solvers.registry import BACKENDS
from rar_opt.support.processes import seconds_since_start
from rar_opt.support.provenance import provenance

log = logging.getLogger(__name__)


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add this module's subcommands to ``sub``."""
    p = sub.add_parser("solve", parents=[common], help="solve an instance exactly (default: the auto method on CP-SAT)")
    p.add_argument("instance")
    p.add_argument(
        "--formulation",
        choices=[*PLANS, *FORMULATIONS],
        help="auto (default): heuristics, the structural floors, pack where the full model is too large, "
        "probes at the floor, the GPU bins, the backfill search aimed at the makespan, then the full cpsat model "
        "(from 24 jobs on pack's and the backfill searches, then the full model first); "
        "the compact MILP for what only it answers; decompose: "
        "the contention-free relaxation and restriction, then the full cpsat model; "
        + "; ".join(f"{f.name}: {f.summary}" for f in FORMULATIONS.values()),
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
        "--work-limit",
        type=float,
        metavar="UNITS",
        help="instead of --time-limit, for the makespan under auto and the other plans on one thread: "
        "units of work (CP-SAT's deterministic time and counted search steps), so that one seed gives "
        "one result on any machine, however loaded (docs/exactness.md, 'Budgets of work')",
    )
    p.add_argument(
        "--warm-start",
        metavar="POLICY",
        choices=list(POLICIES),
        help="MIP start (and horizon) from a heuristic: " + ", ".join(POLICIES),
    )
    p.add_argument("--objective", choices=list(RICH_OBJECTIVES), help="shortcut for --option objective=...")
    p.add_argument(
        "--makespan-within",
        type=float,
        metavar="F",
        help="with --objective total or flow: the best sum among schedules whose makespan is at most "
        "F (>= 1) times the shortest the heuristics find (the trade-off; docs/exactness.md)",
    )
    p.add_argument(
        "--jct-within",
        type=float,
        metavar="F",
        help="with --objective makespan (the default): the shortest schedule whose flow time sum_j (C_j - r_j) "
        "(J times the average JCT counted from each job's arrival) is at most F (>= 1) times the least the "
        "heuristics find (the trade-off the other way round)",
    )
    p.add_argument(
        "--symmetry",
        action=argparse.BooleanOptionalAction,
        help="symmetry-breaking rows (compact, gdp, cpsat, auto, decompose; default on)",
    )
    p.add_argument(
        "--threads", type=int, default=1, help="solver threads (default 1; 0: the solver decides; at most the CPUs)"
    )
    p.add_argument("--seed", type=int, default=0, help="solver random seed, 0..2**31-1 (default 0)")
    add_schedule_output(p, "schedule file to write (when one was found)")
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.set_defaults(func=cmd_solve)

    p = sub.add_parser(
        "probe",
        parents=[common],
        help="does a schedule end by slot H? a proven no raises the lower bound to H + 1 (CP-SAT, no objective)",
    )
    p.add_argument("instance")
    p.add_argument("--makespan", type=int, required=True, metavar="H", help="the slot every job must end by")
    p.add_argument(
        "--time-limit",
        type=float,
        help="seconds for the whole command; the answer is 'undecided' when they run out "
        "(no limit by default: a hard question can take hours)",
    )
    p.add_argument("--symmetry", action=argparse.BooleanOptionalAction, default=True, help="symmetry rows (default on)")
    p.add_argument(
        "--reversal",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="the time-reversal row, with the symmetry rows (default on; docs/exactness.md, Probes)",
    )
    p.add_argument(
        "--pricing",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="the redundant rows that price contention on intervals (default on; docs/exactness.md, "
        "Pricing contention on intervals)",
    )
    p.add_argument(
        "--search",
        choices=list(SEARCHES),
        default="no-lp",
        help="CP-SAT's search: no-lp (the default: no linear relaxation), default (CP-SAT's own), core, "
        "no-probing (CP-SAT's own with no probing in its presolve), no-lp-dff (no-lp with energies scaled "
        "by dual-feasible functions: often quicker to a no, sometimes slower to a yes); docs/exactness.md, Searches",
    )
    p.add_argument(
        "--threads", type=int, default=1, help="solver threads (default 1; 0: the solver decides; at most the CPUs)"
    )
    p.add_argument("--seed", type=int, default=0, help="solver random seed, 0..2**31-1 (default 0)")
    add_schedule_output(p, "schedule file to write (when one ends by H)")
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.set_defaults(func=cmd_probe)

    p = sub.add_parser("export", parents=[common], help="write a formulation of an instance as LP, MPS, GAMS or NL")
    p.add_argument("instance")
    p.add_argument(
        "--model",
        required=True,
        help="a model spec: a bundled name (compact-makespan; docs/formats.md lists them) or a spec file",
    )
    p.add_argument(
        "--format",
        required=True,
        choices=list(EXPORT_FORMATS),
        help="lp or mps (linear models only), gms (GAMS) or nl (AMPL); the nonconvex model: gms or nl",
    )
    p.add_argument("-o", "--output", required=True, help="the model file to write")
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.set_defaults(func=cmd_export)


def cmd_solve(args: argparse.Namespace) -> int:
    """``rar-opt solve``: solve exactly with a formulation, its options and a backend."""
    from rar_opt.solvers import Status, solve
    from rar_opt.solvers.result import restamp

    instance = Instance.read(instance_path(args.instance))
    formulation = args.formulation or "auto"
    options: dict[str, Any] = {}
    model_spec: dict[str, str] | None = None  # which spec the options came from, for the JSON
    if args.model:
        from rar_opt.formulations.specs import ModelSpec

        spec = ModelSpec.read(model_path(args.model))
        model_spec = {"name": spec.name, "file": str(model_path(args.model))}
        if args.formulation and args.formulation != spec.formulation:
            raise InputError(
                f"{args.formulation} contradicts the spec's formulation {spec.formulation!r} ({args.model})",
                where="--formulation",
            )
        formulation, options = spec.formulation, dict(spec.options)
    flags = {key: ("--option", value) for key, value in _parse_options(args.option).items()}
    shortcuts = {"objective": ("--objective", args.objective)}
    if args.symmetry is not None:
        shortcuts["symmetry"] = ("--symmetry" if args.symmetry else "--no-symmetry", args.symmetry)
    for key, (flag, value) in shortcuts.items():
        if value is None:
            continue
        given = flags.get(key)
        if given is not None and given[1] != value:  # the dedicated flag wins, said as a spec's is
            log.warning("%s: %s=%s replaces --option %s=%s", flag, key, json.dumps(value), key, json.dumps(given[1]))
        flags[key] = (flag, value)
    for key, (flag, value) in flags.items():
        if model_spec is not None and key in options and options[key] != value:  # said, not silent
            log.warning(
                "%s: %s=%s replaces the spec's %s=%s (%s)",
                flag,
                key,
                json.dumps(value),
                key,
                json.dumps(options[key]),
                args.model,
            )
        options[key] = value
    from rar_opt.solvers.solve import missing_backend

    if (missing := missing_backend(formulation, args.backend)) is not None:  # before any work
        raise InputError(f"{formulation} cannot be solved on this install: {missing}", where=_backend_flag(args))
    # the limit is the wall clock of the whole command: what the start-up used is gone
    startup = seconds_since_start()
    time_limit = after_startup(args.time_limit, startup)
    try:
        with clock_bar(args, time_limit):
            res = solve(
                instance,
                formulation,
                backend=args.backend,
                time_limit=time_limit,
                warm_start=args.warm_start,
                threads=args.threads,
                seed=args.seed,
                makespan_within=args.makespan_within,
                jct_within=args.jct_within,
                work_limit=args.work_limit,
                **options,
            )
    except InputError as exc:
        key = (exc.where or "").removeprefix("options.")
        flag = flags.get(key, ("",))[0]  # the flag that set this option, if the command line did
        if exc.where and flag and not exc.file:  # told by that flag, not by the instance or spec
            raise InputError(exc.message, where=f"--option {key}" if flag == "--option" else flag) from None
        raise (exc if exc.file else exc.in_file(args.model or args.instance)) from None
    # the record keeps the limit as the user gave it, not what was left of it after start-up;
    # the restamp carries it into the schedule's meta as well (solver_time_limit, where the
    # method records one, is the solver's share)
    options = {**res.record.options, "time_limit": args.time_limit}
    res = restamp(res, record=dataclasses.replace(res.record, options=options))
    _write_schedule(args, instance, res.schedule, f"the solve ended {res.status} without a schedule")
    out = {"instance": instance.name, **res.summary(), "time_limit": args.time_limit}
    if args.work_limit is not None:  # a budget of work in place of the time limit
        out["work_limit"] = args.work_limit
    out |= {"startup_s": round(startup, 3), "provenance": provenance()}  # the limit counts the start-up too
    if model_spec is not None:  # the options themselves are in the record
        out["model_spec"] = model_spec
    if args.json:
        emit_json(out)
    else:
        keys: tuple[str, ...] = ("instance", "status", "objective", "bound", "gap", "makespan", "avg_jct")
        keys += ("runtime_s", "solver_s", *(("startup_s",) if args.time_limit is not None else ()))
        record = res.record
        rows = [(k, out[k]) for k in keys] + [("horizon", record.options.get("horizon"))]
        multiplier, scale = record.options.get("lexicographic_multiplier"), record.options.get("objective_scale")
        if multiplier is not None:  # the objective is one number for two: say how to read it
            rows.append(("objective_reads", f"M x makespan + total, M = {multiplier}"))
        if scale is not None and scale != 1:
            rows.append(("objective_reads", f"K x sum_j w_j C_j, K = {scale}"))
        rows += _cap_rows(record.options)
        if record.options.get("work_limit") is not None:  # a budget of work: what it spent of it
            rows.append(("work", f"{record.options.get('work_spent')} of {record.options['work_limit']:g} units"))
        if res.model_size:  # auto builds one model per phase, or none: its phases follow
            rows.append(("model", ", ".join(f"{k} {v}" for k, v in res.model_size.items())))
        if record.proved_by is not None:
            rows.append(("proved_by", record.proof))
        elif res.status in (Status.FEASIBLE, Status.NO_SOLUTION, Status.INTERRUPTED):  # not proven: say why
            source = _bound_source(record.phases, res.bound)
            if source is not None:
                rows.append(("bound_from", source))
            rows.append(("stopped", res.termination))
        if record.auto_choice is not None:
            rows.append(("auto", record.auto_choice))
        if record.solver_bound not in (None, res.bound):  # an uncertified backend's own bound: never a proof
            rows.append(("solver_bound", f"{fmt(record.solver_bound)} (unverified: not used as a bound)"))
        emit_table(rows)
        planned = (record.options.get("plan") or {}).get("heuristics") or ()
        for phase in record.phases:
            print(
                f"phase {phase.name}: {phase.status}{_gloss(phase, planned)}, objective {fmt(phase.objective)}, "
                f"bound {fmt(phase.bound)}, {round(phase.seconds, 3)} s"
            )
        if res.message:
            print(f"message  {res.message}")
    if res.status == Status.INFEASIBLE:
        print(
            f"error: {args.instance}: no schedule completes within the horizon "
            f"{res.record.options.get('horizon', instance.horizon)} "
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


def _backend_flag(args: argparse.Namespace) -> str:
    """The flag that chose the backend: ``--backend``, else the one that chose the method."""
    return "--backend" if args.backend else "--model" if args.model and not args.formulation else "--formulation"


def _cap_rows(options: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The trade-off's cap as the text table shows it: the factor asked and what it allows
    (the makespan cap, or the flow-time cap against the heuristics' best flow time)."""
    rows = []
    if options.get("makespan_within") is not None:
        rows.append(("makespan_within", f"{options['makespan_within']} (makespan <= {options.get('makespan_cap')})"))
    if options.get("jct_within") is not None:
        cap, reference = options.get("jct_cap"), options.get("jct_reference")
        rows.append(("jct_within", f"{options['jct_within']} (flow time <= {cap}, best heuristic {reference})"))
    return rows


def _write_schedule(args: argparse.Namespace, instance: Instance, schedule: Any, why_not: str) -> None:
    """Write ``schedule`` to ``-o`` (in the form ``--dense`` asks) when there is one; else say
    why nothing was written."""
    output = args.output
    if output and schedule is not None:
        stamped(schedule, instance).write(output, dense=args.dense)
    elif output:
        print(f"note: {why_not}; {output} was not written", file=sys.stderr)


def cmd_probe(args: argparse.Namespace) -> int:
    """``rar-opt probe``: is there a schedule that ends by slot H?"""
    from rar_opt.solvers.probe import probe

    instance = Instance.read(instance_path(args.instance))
    # the limit is the wall clock of the whole command (a bad one is refused by probe)
    startup = seconds_since_start()
    time_limit = after_startup(args.time_limit, startup)
    try:
        with clock_bar(args, time_limit):
            answer = probe(
                instance,
                args.makespan,
                time_limit=time_limit,
                seed=args.seed,
                threads=args.threads,
                symmetry=args.symmetry,
                search=args.search,
                reversal=args.reversal,
                pricing=args.pricing,
            )
    except InputError as exc:
        raise (exc if exc.file else exc.in_file(args.instance)) from None
    # as for solve: the limit as given, in the record and in the schedule's meta
    answer = dataclasses.replace(answer, record=dataclasses.replace(answer.record, time_limit=args.time_limit))
    answer = answer.stamped()
    _write_schedule(args, instance, answer.schedule, f"no schedule was found ({answer.status})")
    out = {"instance": instance.name, **answer.summary(), "time_limit": args.time_limit}
    out |= {"startup_s": round(startup, 3), "provenance": provenance()}  # the limit counts the start-up too
    if args.json:
        emit_json(out)
        return EXIT_OK
    verdict = {
        "feasible": f"yes: a schedule ends at slot {answer.schedule_makespan}, so OPT <= {answer.schedule_makespan}",
        "infeasible": f"no (proven): OPT >= {answer.lower_bound}",
        "no_solution": "undecided: the time ran out",
        "interrupted": "undecided: stopped by a signal",
    }[str(answer.status)]
    keys = ("instance", "makespan_asked", "status", "seconds", "termination")
    emit_table([(k, out[k]) for k in keys] + [("answer", verdict)])
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


def cmd_export(args: argparse.Namespace) -> int:
    """``rar-opt export``: write a model spec's model as LP, MPS or NL."""
    from rar_opt.formulations.specs import EXPORT_FORMATS, ModelSpec, export_model

    suffix = Path(args.output).suffix.lower().lstrip(".")
    if suffix in EXPORT_FORMATS and suffix != args.format:  # an LP file named .mps reads back wrong elsewhere
        raise InputError(f"{args.output} names the format {suffix!r}, but --format is {args.format!r}", where="-o")
    instance = Instance.read(instance_path(args.instance))
    spec = ModelSpec.read(model_path(args.model))
    try:
        size = export_model(spec, instance, args.output, args.format)
    except InputError as exc:  # the format is the command line's, the size the instance's, the rest the spec's
        if exc.where == "format" and not exc.file:
            raise InputError(exc.message, where="--format") from None
        if exc.where == "instance" and not exc.file:  # too large for this model (its cell or enumeration guard)
            raise InputError(exc.message, file=args.instance) from None
        raise (exc if exc.file else exc.in_file(str(model_path(args.model)))) from None
    summary = {"instance": instance.name, "model": spec.name, "format": args.format, "file": args.output, **size}
    emit_json(summary) if args.json else emit_table(list(summary.items()))
    return EXIT_OK


def _gloss(phase: Any, planned: Sequence[str] = ()) -> str:
    """What a probe's, the GPU bins' or a restriction's status means, in words
    (docs/formats.md): a probe or the bins with no answer in their time are undecided, not
    a proof of anything, and a restriction asked by a slot with no schedule there bounds
    nothing (the race's asks also name their model, search and seed); the heuristics phase
    names the ``planned`` policies that the clock or a signal left unrun."""
    from rar_opt.solvers import PhaseKind, Status

    if phase.kind == PhaseKind.HEURISTICS and phase.tried is not None:
        unrun = [name for name in planned if name not in phase.tried]
        return f" (stopped by the clock or a signal before {', '.join(unrun)})" if unrun else ""
    asks = phase.kind == PhaseKind.RESTRICTION and phase.asked is not None  # a restriction by a slot
    if phase.kind not in (PhaseKind.PROBE, PhaseKind.BINS) and not asks:
        return ""
    by = f"; {phase.search}" if asks and phase.search else ""  # the race's model, search and seed
    if phase.status == Status.NO_SOLUTION:
        return f" (undecided in its time{by})"
    if asks and phase.status == Status.INFEASIBLE:  # the restriction's no is not the instance's
        return f" (the restriction has no schedule by {phase.asked}, which bounds nothing{by})"
    if asks:
        return f" ({phase.search})" if phase.search else ""
    if phase.status == Status.INFEASIBLE:
        return f" (refuted: no schedule ends by {phase.asked})"
    if phase.status == Status.FEASIBLE and phase.kind == PhaseKind.BINS:
        return " (a relaxed solution: the floor stands)"
    return ""


def _bound_source(phases: Any, bound: float | None) -> str | None:
    """The first phase whose proven bound is the run's best bound (rounded up alike), or None."""
    from rar_opt.bounds.rounding import ceil_bound_or_none

    if bound is None:
        return None
    best = ceil_bound_or_none(bound)
    return next((p.name for p in phases if ceil_bound_or_none(p.lower_bound()) == best), None)
