"""The ``bounds`` command: every lower bound on an instance's optimal makespan, by name,
with its value and its seconds (docs/exactness.md argues each one)."""

from __future__ import annotations

import argparse
import dataclasses
import math
import signal

from rar_opt.bounds.registry import Bound, NamedBound, Objective, entries
from rar_opt.cli.output import EXIT_OK, JSON_HELP, bound_per_job, emit_json, emit_table
from rar_opt.errors import InputError
from rar_opt.instance import Instance
from rar_opt.instances.library import instance_path
from rar_opt.support.processes import stop_requested
from rar_opt.support.provenance import provenance, versions


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """Add ``bounds``."""
    p = sub.add_parser(
        "bounds",
        parents=[common],
        help="every lower bound on the optimal makespan and total completion time, with its seconds",
    )
    p.add_argument("instance")
    for bound in _flagged():
        p.add_argument(
            bound.flag,
            type=float,
            default=bound.default_seconds,
            dest=_dest(bound),
            help=f"seconds for {bound.name}: {bound.summary} (default {bound.default_seconds:g}; 0: leave it out)",
        )
    p.add_argument("--seed", type=int, default=0, help="CP-SAT's seed for the relaxations, 0..2**31-1 (default 0)")
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.set_defaults(func=cmd_bounds)


OBJECTIVES: tuple[Objective, ...] = ("makespan", "total")


def _flagged() -> list[Bound]:
    """The solver bounds that ``rar-opt bounds`` offers, each with its seconds flag."""
    return [b for objective in OBJECTIVES for b in entries(objective, families=("solver",)) if b.flag]


def _json(bound: NamedBound) -> dict[str, object]:
    """A bound as JSON (the order a relaxation suggests is left out: it is for the solvers)."""
    return {k: v for k, v in dataclasses.asdict(bound).items() if k != "order"}


def _best(found: list[NamedBound]) -> NamedBound:
    """The largest bound found (the first of equals)."""
    return max((b for b in found if b.value is not None), key=lambda b: b.value or 0)


def _dest(bound: Bound) -> str:
    return bound.flag.removeprefix("--").replace("-", "_")


def _asked(bound: Bound, instance: Instance, limits: dict[str, float]) -> bool:
    """Whether this run would have computed ``bound``: it applies to the instance and, if it
    solves a model, its time limit is positive (what a signal leaves unrun is among these)."""
    if bound.applies is not None and not bound.applies(instance):
        return False
    return not bound.needs_solver or limits.get(bound.name, 0.0) > 0


def cmd_bounds(args: argparse.Namespace) -> int:
    """``rar-opt bounds``: each bound by name, the best of them, and what each took."""
    from rar_opt.bounds import every_bound

    limits = {b.name: getattr(args, _dest(b)) for b in _flagged()}
    for bound in _flagged():
        value = limits[bound.name]
        if not (math.isfinite(value) and value >= 0):
            raise InputError(f"must be a finite number of seconds >= 0, got {value}", where=bound.flag)
    instance = Instance.read(instance_path(args.instance))
    report: dict[str, list[NamedBound]] = {}
    for objective in OBJECTIVES:
        mine = {b.name for b in entries(objective, families=("solver",))}
        asked = {name: seconds for name, seconds in limits.items() if name in mine}
        report[objective] = every_bound(instance, objective=objective, time_limits=asked, seed=args.seed)
    makespan, total = report["makespan"], report["total"]
    best, best_total = _best(makespan), _best(total)
    signum = stop_requested()  # a stop cut the list short: say so, and which bounds never ran
    stopped = None if signum is None else signal.Signals(signum).name
    ran = {o: {x.name for x in report[o]} for o in OBJECTIVES} if stopped is not None else {}
    not_run = {
        o: [b.name for b in entries(o) if b.name not in names and _asked(b, instance, limits)]
        for o, names in ran.items()
    }
    if args.json:
        emit_json(
            {
                "instance": instance.name,
                "bounds": [_json(b) for b in makespan],
                "best": best.value,
                "best_by": best.name,
                "total_bounds": [_json(b) for b in total],
                "best_total": best_total.value,
                "best_total_by": best_total.name,
                "best_avg_jct": best_total.value / instance.num_jobs if best_total.value is not None else None,
                **{_dest(b): limits[b.name] for b in _flagged()},
                "seed": args.seed,
                **({} if stopped is None else {"interrupted": stopped, "not_run": not_run}),
                "versions": versions(),
                "provenance": provenance(),
            }
        )
        return EXIT_OK
    rows: list[tuple[object, ...]] = [
        (b.name, "-" if b.value is None else b.value, f"{b.seconds:.3f}", b.note) for b in makespan
    ]
    emit_table(rows, header=("bound", "value", "seconds", "note"))
    print(f"best lower bound: {best.value} ({best.name})")
    print()
    jobs = instance.num_jobs
    rows = [
        (
            b.name,
            "-" if b.value is None else b.value,
            "-" if b.value is None else bound_per_job(b.value, jobs),
            f"{b.seconds:.3f}",
            b.note,
        )
        for b in total
    ]
    emit_table(rows, header=("total completion bound", "value", "avg JCT", "seconds", "note"))
    avg = "-" if best_total.value is None else bound_per_job(best_total.value, jobs)  # rounded down
    print(
        f"best lower bound on the total completion time: {best_total.value} ({best_total.name}); average JCT >= {avg}"
    )
    if stopped is not None:
        skipped = ", ".join(name for names in not_run.values() for name in names) or "none"
        print(f"interrupted ({stopped}): the bounds above are proven; not run: {skipped}")
    return EXIT_OK
