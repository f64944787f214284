"""The ``variants`` command: every model spec on every instance, one row each (docs/variants.md)."""

from __future__ import annotations

import argparse
import dataclasses
import signal
import sys
from pathlib import Path
from typing import Any

from rar_opt.cli.output import EXIT_OK, JSON_HELP, emit_json, emit_table, fmt, progress
from rar_opt.errors import InputError
from rar_opt.instance import Instance
from rar_opt.instances.library import MODEL_FOLDERS, instance_path, model_path, names
from rar_opt.support.checks import repeated
from rar_opt.support.processes import TimeUp, alarm_at, stop_requested

INTERRUPTED = "interrupted"
"""The status of a run a signal reached, ``Status.INTERRUPTED``'s value (spelt out here: the
solvers' module loads Pyomo, which the parser of every command would then load too)."""

COLUMNS = (
    "instance",
    "spec",
    "kind",
    "bin/int/cont",
    "rows",
    "nonzeros",
    "build_s",
    "lp_bound",
    "root_bound",
    "bound",
    "objective",
    "status",
    "solve_s",
    "flag",
)


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add this module's subcommands to ``sub``."""
    p = sub.add_parser(
        "variants",
        parents=[common],
        help="every model spec on every instance: size, bounds (LP, root, final), objective, status, times",
    )
    p.add_argument("instances", nargs="+", metavar="INSTANCE", help="instance files or library names")
    p.add_argument("--models", metavar="DIR", help="a folder of model specs (default: the bundled models/)")
    p.add_argument("--time-limit", type=float, default=60.0, help="seconds per solve (LP, root, final; default 60)")
    p.add_argument("--seed", type=int, default=0, help="solver random seed, 0..2**31-1 (default 0)")
    p.add_argument("-o", "--output", help="write the table as JSON (with versions, seed and solver options)")
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.set_defaults(func=cmd_variants)


def _specs(folder: str | None) -> list[Any]:
    """The specs of ``folder`` (every *.json), or the bundled catalogue."""
    from rar_opt.formulations.specs import ModelSpec

    if folder is None:
        return [ModelSpec.read(model_path(name)) for name in names(MODEL_FOLDERS)]
    if not Path(folder).is_dir():
        raise InputError("is not a folder of model specs (*.json)", where="--models", file=folder)
    paths = sorted(Path(folder).glob("*.json"))
    if not paths:
        raise InputError("holds no model spec (no *.json file)", where="--models", file=folder)
    specs: list[Any] = []
    seen: dict[str, str] = {}
    for path in paths:
        spec = ModelSpec.read(path)
        if spec.name in seen:  # the table, the JSON and the plots are keyed by the spec's name
            raise InputError(
                f"= {spec.name!r}, the name of {seen[spec.name]} too: rename one (the table keys rows by name)",
                where="name",
                file=str(path),
            )
        seen[spec.name] = str(path)
        specs.append(spec)
    return specs


def cmd_variants(args: argparse.Namespace) -> int:
    """``rar-opt variants``: the variants table (flags exact variants that disagree)."""
    from rar_opt.solvers.backend import check_settings
    from rar_opt.studies.variants import disagreements, summary
    from rar_opt.support.jsonio import dump_json

    check_settings(args.time_limit, 1, args.seed)  # the same checks as solve's: finite, positive, seed >= 0
    instances = [Instance.read(instance_path(name)) for name in args.instances]
    names = [inst.name for inst in instances]
    if twice := repeated(names):  # the table and the JSON key rows by instance and spec
        raise InputError(f"instance(s) named {', '.join(twice)} given twice: each is measured once", where="instances")
    specs = _specs(args.models)
    planned = len(instances) * len(specs)
    rows: list[Any] = []
    with progress(args, planned, "variants") as bar:
        for inst, spec in ((inst, spec) for inst in instances for spec in specs):
            if stop_requested() is not None:  # a signal: no run is started after it
                break
            rows.append(_measure(spec, inst, args.time_limit, args.seed))
            bar.update(1)
    rows, messages = disagreements(rows)
    out = summary(rows, messages, specs, time_limit=args.time_limit, seed=args.seed)
    signum = stop_requested()
    finished = sum(r.status != INTERRUPTED for r in rows)
    if signum is not None:  # marked as experiment marks its runs: what finished, of how many
        out.update(interrupted=signal.Signals(signum).name, runs_planned=planned, runs_finished=finished)
    if args.output:
        dump_json(out, args.output)  # whole or not at all
    if args.json:
        emit_json(out)
    else:
        table = []
        for r in rows:
            v = r.variables
            size = "/".join(str(v.get(k, 0)) for k in ("binary", "integer", "continuous")) if v else None
            table.append(
                (
                    r.instance,
                    r.spec,
                    r.kind,
                    size,
                    r.rows,
                    r.nonzeros,
                    r.build_s,
                    r.lp_bound,
                    r.root_bound,
                    r.bound,
                    r.objective,
                    r.status,
                    r.solve_s,
                    r.flag,
                )
            )
        emit_table(table, COLUMNS)
        for r in rows:
            if r.status == "refused":
                print(f"note: {r.instance} / {r.spec}: refused: {fmt(r.message)}")
    for message in messages:
        print(f"WARNING: {message}", file=sys.stderr)
    if signum is not None:
        where = f"written to {args.output}" if args.output else "not written (no -o)"
        print(
            f"interrupted ({signal.Signals(signum).name}): {finished} of {planned} runs finished, {where}",
            file=sys.stderr if args.json else sys.stdout,
        )
    return EXIT_OK


def _measure(spec: Any, inst: Instance, time_limit: float, seed: int) -> Any:
    """The row of ``spec`` on ``inst`` (:func:`rar_opt.studies.variants.measure`); a run that
    a signal reached is labelled ``interrupted``. Its Python work (a model build) is abandoned
    at the signal, its solvers stop at their next safe point; what it measured before the
    signal stays in its row, beside the status it would have had."""
    from rar_opt.studies.variants import measure

    try:
        with alarm_at(None):  # no deadline: only a stop request cuts it short
            row = measure(spec, inst, time_limit=time_limit, seed=seed)
    except TimeUp:
        signum = stop_requested()
        if signum is None:  # not ours: a deadline inside the run
            raise
        return _cut_short(spec, inst, signum)
    signum = stop_requested()
    if signum is None:
        return row
    if row.status == INTERRUPTED:  # the run saw the signal itself, and says where it stopped
        said = f": {row.message}" if row.message else ""
    else:
        said = f"; it had ended {row.status}" + (f": {row.message}" if row.message else "")
    return dataclasses.replace(row, status=INTERRUPTED, message=f"stopped by {signal.Signals(signum).name}{said}")


def _cut_short(spec: Any, inst: Instance, signum: int) -> Any:
    """The row of a run abandoned at a signal before it returned: its names, nothing measured."""
    from rar_opt.studies.variants import EXACT, RELAXATION, VariantRow

    options = spec.make_options()
    objective = getattr(options, "objective", "makespan")
    if getattr(options, "horizon", None) is not None:
        objective += f" (horizon {options.horizon})"
    kind = RELAXATION if spec.relaxation != "none" else EXACT
    message = f"stopped by {signal.Signals(signum).name} before it ended: nothing of it is kept"
    return VariantRow(inst.name, spec.name, spec.formulation, kind, objective, status=INTERRUPTED, message=message)
