"""The ``bounds`` command: every lower bound on an instance's optimal makespan, by name,
with its value and its seconds (docs/exactness.md argues each one)."""

from __future__ import annotations

import argparse
import dataclasses
import math

from ..errors import InputError
from ..instance import Instance
from ..library import instance_path
from ..provenance import provenance, versions
from .output import EXIT_OK, emit_json, emit_table


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """Add ``bounds``."""
    p = sub.add_parser("bounds", parents=[common], help="every lower bound on the optimal makespan, with its seconds")
    p.add_argument("instance")
    p.add_argument(
        "--relaxation-time",
        type=float,
        default=10.0,
        help="seconds of CP-SAT for the contention-free relaxation's bound (default 10; 0: leave it out)",
    )
    p.add_argument(
        "--bins-time",
        type=float,
        default=10.0,
        help="seconds of CP-SAT for the GPU-bins relaxation, asked upward from the best bound (default 10; 0: none)",
    )
    p.add_argument("--seed", type=int, default=0, help="CP-SAT's seed for the relaxations (default 0)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_bounds)


def cmd_bounds(args: argparse.Namespace) -> int:
    """``rar-opt bounds``: each bound by name, the best of them, and what each took."""
    from ..bounds import every_bound

    seconds, bins = args.relaxation_time, args.bins_time
    for value, flag in ((seconds, "--relaxation-time"), (bins, "--bins-time")):
        if not (math.isfinite(value) and value >= 0):
            raise InputError(f"must be a finite number of seconds >= 0, got {value}", where=flag)
    instance = Instance.read(instance_path(args.instance))
    found = every_bound(instance, relaxation_time_limit=seconds or None, seed=args.seed, bins_time_limit=bins or None)
    best = max((b for b in found if b.value is not None), key=lambda b: b.value)
    if args.json:
        emit_json(
            {
                "instance": instance.name,
                "bounds": [dataclasses.asdict(b) for b in found],
                "best": best.value,
                "best_by": best.name,
                "relaxation_time": seconds,
                "bins_time": bins,
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
