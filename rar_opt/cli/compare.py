"""The ``compare`` command: policies side by side, against OPT or the best lower bound."""

from __future__ import annotations

import argparse
import math
from typing import Any

from rar_opt.algorithms import BASELINES, POLICIES
from rar_opt.cli.output import (
    EXIT_OK,
    JSON_HELP,
    baselines_line,
    bound_per_job,
    emit_json,
    emit_table,
    recorded_optimum,
)
from rar_opt.errors import InputError
from rar_opt.instance import Instance
from rar_opt.instances.library import instance_path
from rar_opt.support.checks import SOLVER_MAX_SEED, seconds_problem, seed_problem

COMPARE_TIME_LIMIT = 60.0
"""The seconds of ``compare --exact``'s solve when ``--time-limit`` is not given."""


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """The ``compare`` subcommand and its flags."""
    p = sub.add_parser("compare", parents=[common], help="policies side by side, against OPT or a lower bound")
    p.add_argument("instance")
    p.add_argument(
        "--policies",
        nargs="+",
        choices=list(POLICIES),
        help="default: all registered policies; sjf-bco and the classical baselines "
        f"({', '.join(BASELINES.values())}) always run",
    )
    p.add_argument("--exact", action="store_true", help="solve for OPT (the auto method, warm-started)")
    p.add_argument(
        "--time-limit",
        type=float,
        help=f"seconds of the exact solve; only with --exact (default {COMPARE_TIME_LIMIT:g})",
    )
    p.add_argument(
        "--bound-time-limit",
        type=float,
        default=10.0,
        metavar="S",
        help="seconds for each lower bound that needs a solver: the contention-free relaxation's bound on the "
        "makespan and the flow LP's bound on the total completion time (the average JCT's ratio); default 10, "
        "0: the cheap bounds only; not part of --exact's solve, which has its own --time-limit",
    )
    p.add_argument(
        "--seed", type=int, default=0, help="seed of the seeded policies and the solvers, 0..2**31-1 (default 0)"
    )
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.set_defaults(func=cmd_compare)


def cmd_compare(args: argparse.Namespace) -> int:
    """``rar-opt compare``: policies side by side against OPT or a lower bound."""
    from rar_opt.studies.compare import compare

    if args.policies and len(set(args.policies)) < len(args.policies):
        repeated = sorted({p for p in args.policies if args.policies.count(p) > 1})
        raise InputError(f"names {', '.join(repeated)} more than once", where="--policies")
    if not (math.isfinite(args.bound_time_limit) and args.bound_time_limit >= 0):
        raise InputError(
            f"must be a finite number of seconds >= 0, got {args.bound_time_limit}", where="--bound-time-limit"
        )
    if args.time_limit is not None and not args.exact:
        raise InputError(
            "only --exact solves, so it alone takes a time limit; add --exact, or give the relaxation's "
            "bound its seconds with --bound-time-limit",
            where="--time-limit",
        )
    time_limit = COMPARE_TIME_LIMIT if args.time_limit is None else args.time_limit
    if problem := seconds_problem(time_limit):
        raise InputError(problem, where="--time-limit")
    # the seed reaches the seeded policies and the solvers: their range, whatever the policies
    if problem := seed_problem(args.seed, SOLVER_MAX_SEED):
        raise InputError(problem, where="--seed")
    instance = Instance.read(instance_path(args.instance))
    result = compare(
        instance,
        args.policies,
        exact=args.exact,
        time_limit=time_limit,
        seed=args.seed,
        bound_time_limit=args.bound_time_limit or None,
    )
    if args.json:
        emit_json(result.to_dict())
        return EXIT_OK
    solved = ""
    if result.solve is not None:  # what the exact solve ended with, also when it did not prove OPT
        s = result.solve
        span = "" if s.get("makespan") is None else f", makespan {s['makespan']}"  # its schedule, beside the policies'
        solved = f" (exact solve: {s['status']}{span}, bound {s['bound']})"
    print(
        f"{instance.name}: ratios to the {result.reference_kind} {result.reference}{solved}; "
        f"Theorem 5 bound n_g varphi u/l = {result.theorem5_bound:.4g}"
    )
    if result.reference > instance.horizon:  # the floors prove that nothing ends within T
        print(
            f"note: the {result.reference_kind} {result.reference} is past the horizon T = {instance.horizon}: "
            "no schedule ends within T, and the table compares schedules that run past it"
        )
    if result.reference_kind != "optimum" and (recorded := recorded_optimum(instance, below=result.reference)):
        if result.solve is None:
            how = "--exact may prove it, and the ratios are then taken to it"
        elif result.solve.get("status") == "interrupted":  # a signal, not the limit, stopped it
            how = "the exact solve was interrupted by a signal before it proved it"
        else:
            how = "the exact solve did not prove it within the time limit"
        print(f"note: {recorded}; {how}")
    if result.bounds is not None:
        print(_bounds_line(result.bounds, instance))
    if result.jct_total_bound is not None:
        known = "none within T" if result.jct_best is None else f"{result.jct_best:.4g}"
        lower = bound_per_job(result.jct_total_bound, instance.num_jobs)
        print(
            f"average JCT: best known {known}, best lower bound {lower} "
            f"(the total completion time's bound over {instance.num_jobs} jobs); jct_ratio = avg_jct / that bound"
        )
    emit_table(
        [
            (
                r.policy,
                r.makespan,
                r.avg_jct,
                r.ratio,
                "-" if r.jct_ratio is None else r.jct_ratio,
                "yes" if r.within_horizon else "NO",
                r.contention_share,
                r.wall_s,
            )
            for r in result.rows
        ],
        ("policy", "makespan", "avg_jct", "ratio", "jct_ratio", "within T", "contention", "wall_s"),
    )
    print(baselines_line(result.baselines, also="sjf-bco"))
    print()
    emit_table(
        [
            (c.claim, {True: "holds", False: "VIOLATED", None: "inconclusive"}[c.holds], c.margin, c.detail)
            for c in result.claims
        ],
        ("sjf-bco claim", "verdict", "margin", "detail"),
    )
    return EXIT_OK


def _bounds_line(found: dict[str, Any], instance: Instance) -> str:
    """The lower bounds of a comparison on one line, each registered bound by name."""
    from rar_opt.bounds.registry import entries

    parts = []
    for bound in entries("makespan"):
        value = found.get(bound.name)
        if value is not None:
            exact = found.get(f"{bound.name}_proven")
            parts.append(
                f"{bound.name} {value}" + (" (the solver's bound on it, not its optimum)" if exact is False else "")
            )
        elif bound.needs_solver and bound.flag:
            why = "does not apply to this instance" if bound.applies and not bound.applies(instance) else "not computed"
            parts.append(f"{bound.name} {found.get(f'{bound.name}_note') or why}")
    return "lower bounds (docs/exactness.md): " + ", ".join(parts)
