"""The ``bounds`` command: every lower bound on an instance's optimal makespan, by name,
with its value and its seconds (docs/exactness.md argues each one)."""

from __future__ import annotations

import argparse
import dataclasses
import math

from rar_opt.bounds.registry import Bound, entries
from rar_opt.cli.output import EXIT_OK, emit_json, emit_table
from rar_opt.errors import InputError
from rar_opt.instance import Instance
from rar_opt.instances.library import instance_path
from rar_opt.support.provenance import provenance, versions


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """Add ``bounds``."""
    p = sub.add_parser("bounds", parents=[common], help="every lower bound on the optimal makespan, with its seconds")
    p.add_argument("instance")
    for bound in _flagged():
        p.add_argument(
            bound.flag,
            type=float,
            default=bound.default_seconds,
            dest=_dest(bound),
            help=f"seconds for {bound.name}: {bound.summary} (default {bound.default_seconds:g}; 0: leave it out)",
        )
    p.add_argument("--seed", type=int, default=0, help="CP-SAT's seed for the relaxations (default 0)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_bounds)


def _flagged() -> list[Bound]:
    """The solver bounds that ``rar-opt bounds`` offers, each with its seconds flag."""
    return [b for b in entries("makespan", families=("solver",)) if b.flag]


def _dest(bound: Bound) -> str:
    return bound.flag.removeprefix("--").replace("-", "_")


def cmd_bounds(args: argparse.Namespace) -> int:
    """``rar-opt bounds``: each bound by name, the best of them, and what each took."""
    from rar_opt.bounds import every_bound

    limits = {b.name: getattr(args, _dest(b)) for b in _flagged()}
    for bound in _flagged():
        value = limits[bound.name]
        if not (math.isfinite(value) and value >= 0):
            raise InputError(f"must be a finite number of seconds >= 0, got {value}", where=bound.flag)
    instance = Instance.read(instance_path(args.instance))
    found = every_bound(instance, time_limits=limits, seed=args.seed)
    best = max((b for b in found if b.value is not None), key=lambda b: b.value)
    if args.json:
        emit_json(
            {
                "instance": instance.name,
                "bounds": [dataclasses.asdict(b) for b in found],
                "best": best.value,
                "best_by": best.name,
                **{_dest(b): limits[b.name] for b in _flagged()},
                "seed": args.seed,
                "versions": versions(),
                "provenance": provenance(),
            }
        )
        return EXIT_OK
    rows = [(b.name, "-" if b.value is None else b.value, f"{b.seconds:.3f}", b.note) for b in found]
    emit_table(rows, header=("bound", "value", "seconds", "note"))
    print(f"best lower bound: {best.value} ({best.name})")
    return EXIT_OK
