"""The frontier instances and what is proven about them: ``python instances/make_frontier.py``.

Instances of ``benchmarks/frontier.py`` that ``auto`` did not prove within its 60 s on one
thread, or only just, before its probes and its ``no-lp`` search (instances/README.md).
Each is solved by each route of ``METHODS`` for ``--solve-limit`` seconds (the best
schedule and the highest bound are kept), then probed
(:mod:`rar_opt.solvers.probe`) upward from the best bound, within ``--budget`` seconds in
all: a proven "no schedule ends by H" raises the bound to H + 1, a schedule ending by H
lowers the best known makespan. When the two meet the optimum is proven and recorded as
``meta.known_optimum``; otherwise that is null and ``meta.best_known`` holds the best
schedule's makespan and the best bound. Every answer (status, seconds, solver versions,
seed) and the limits go to ``meta.proof``; the best schedule to
``instances/frontier/schedules/NAME.schedule.json``.

``--only NAME`` (repeatable) remakes some of them; ``--probe-limit`` caps each probe.
``--search S`` instead runs the backfill search aimed at the makespan (``auto``'s rules,
``plan.BACKFILL_SEARCHERS``: each server rule, split rule ``choose``; seeds 0-2, S seconds
each) from each stored record, and keeps a shorter schedule it finds;
``--search-probe-limit P`` then probes upward from the stored bound for P seconds in all
(``--search 0``: the probes alone). ``--auto-seeds K,...`` instead runs ``auto`` with those
CP-SAT seeds (``--solve-limit`` seconds each) from each stored record, and keeps a shorter
schedule or a higher bound it finds. ``--restriction S`` instead asks the contention-free
restriction for a schedule that ends by the stored bound (S seconds per seed).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "benchmarks"))

from frontier import VARIANTS  # noqa: E402
from frontier import instance as frontier_instance  # noqa: E402

from rar_opt import Instance, check  # noqa: E402
from rar_opt.solvers import Status, solve  # noqa: E402
from rar_opt.solvers.decompose import decompose  # noqa: E402
from rar_opt.solvers.probe import probe  # noqa: E402

FRONTIER = [("heavy", 16, 8, 100, 1), ("heavy", 16, 8, 100, 2), ("tiny", 20, 8, 120, 0), ("heavy", 20, 8, 120, 0)]
# the next sizes' instances that auto did not prove in 60 s (benchmarks/results/frontier-2026-12-03-big.json),
# recorded with a short budget (instances/README.md): the best known schedule and bound, on record
NEXT = [
    ("tiny", 24, 8, 150, 1),
    ("tiny", 24, 8, 150, 2),
    ("heavy", 24, 8, 150, 0),
    ("heavy", 24, 8, 150, 1),
    ("heavy", 24, 8, 150, 2),
    ("tiny", 32, 8, 200, 0),
    ("tiny", 32, 8, 200, 2),
    ("heavy", 32, 8, 200, 0),
    ("heavy", 32, 8, 200, 2),
    # seeds 3-5 drawn on 2026-12-04: two whose optimum is the floor, which probes of 74 s proved
    # (docs/exactness.md, "Pack's search first, from 24 jobs on")
    ("tiny", 24, 8, 150, 3),
    ("heavy", 24, 8, 150, 5),
    # the family's seeds 3 and 4 of benchmarks/frontier.py that auto proves with some CP-SAT
    # seeds only, or with none (frontier-2026-12-05-sumpast-large.json), added 2026-12-05
    ("heavy", 24, 8, 150, 3),
    ("tiny", 24, 8, 150, 4),
    ("heavy", 24, 8, 150, 4),
    # 20 x 8 x 120 instances of seeds 3-6, never tuned on, that auto under 24 units of work
    # proves with no CP-SAT seed 0-4 or with one only (frontier-2026-12-07-work-24-fresh-20.json),
    # added 2026-12-07 (thirty-third session)
    ("tiny", 20, 8, 120, 3),
    ("heavy", 20, 8, 120, 3),
    ("heavy", 20, 8, 120, 5),
    # and of seeds 7-10, drawn to test a plan chosen on seeds 0-6: the two that auto proves with
    # no CP-SAT seed under 24 units (frontier-2026-12-07-work-24-heldout-20.json)
    ("tiny", 20, 8, 120, 9),
    ("heavy", 20, 8, 120, 10),
    # the 16 x 8 x 100 instance of seeds 3-6 that auto proves with no CP-SAT seed under 24 units
    # (frontier-2026-12-07-work-24-fresh-12-16.json); issue 33 names it (optimum 58)
    ("tiny", 16, 8, 100, 5),
    # and of seeds 11-20, held out while the plan was tuned on seeds 0-10: the two that auto
    # proves with no CP-SAT seed 0-4 under 24 units (frontier-2026-12-07-work-24-heldout-wide.json),
    # added 2026-12-07 (thirty-ninth session)
    ("heavy", 20, 8, 120, 16),
    ("heavy", 20, 8, 120, 20),
    # and of seeds 21-30, never run before: the three that auto proves with neither CP-SAT seed
    # 0 nor 1 under 24 units (frontier-2026-12-07-work-24-heldout-21-30.json), added 2026-12-07
    # (thirty-ninth session)
    ("heavy", 20, 8, 120, 24),
    ("heavy", 20, 8, 120, 25),
    ("heavy", 20, 8, 120, 27),
]
FOLDER = HERE / "frontier"
METHODS = ("auto", "decompose", "auto-full-first")
"""The routes to a schedule and a bound: ``auto`` (probes, then the no-lp search),
``decompose`` (CP-SAT's default search) and ``auto-full-first`` (the no-lp search from the
start: at 24 x 8 x 150 and 32 x 8 x 200 it finds better schedules, docs/exactness.md)."""


def run(method: str, inst: Instance, time_limit: float):
    """One route on ``inst``: a plan of ``solve``, or a variant of benchmarks/frontier.py."""
    if method in VARIANTS:
        return decompose(inst, time_limit=time_limit, plan=VARIANTS[method])
    return solve(inst, method, time_limit=time_limit)


def name_of(family: str, jobs: int, servers: int, horizon: int, seed: int) -> str:
    return f"{family}-{jobs}x{servers}x{horizon}-s{seed}"


def make(key: tuple[str, int, int, int, int], solve_limit: float, probe_limit: float, budget: float) -> None:
    name = name_of(*key)
    base = frontier_instance(*key)
    inst = Instance(name, base.horizon, base.cluster, base.jobs, {"source": f"benchmarks/frontier.py {key}"})
    began = time.perf_counter()
    # the routes of METHODS to a schedule and a bound (docs/exactness.md, "Searches"); the best of them
    solves = {method: run(method, inst, solve_limit) for method in METHODS}
    found = [r for r in solves.values() if r.schedule is not None]
    schedule, best = min(((r.schedule, r.makespan) for r in found), key=lambda pair: pair[1], default=(None, None))
    bounds = [math.ceil(r.bound - 1e-9) for r in solves.values() if r.bound is not None]
    bound = max(bounds, default=None)
    probes: list[dict] = []
    if best is not None and bound is not None:
        schedule, best, bound = probe_up(inst, schedule, best, bound, probes, probe_limit, budget + began)
    if schedule is None or check(inst, schedule).result.makespan != best:
        raise RuntimeError(f"{name}: no checked schedule of makespan {best}")
    meta = {
        **inst.meta,
        "known_optimum": best if bound == best else None,
        "best_known": {"makespan": best, "bound": bound},
        "proof": {
            "solves": {m: {**r.summary(), "time_limit": solve_limit} for m, r in solves.items()},
            "probes": probes,
            "limits": {"solve_s": solve_limit, "probe_s": probe_limit, "budget_s": budget},
        },
    }
    Instance(name, inst.horizon, inst.cluster, inst.jobs, meta).write(FOLDER / f"{name}.json")
    schedule.write(FOLDER / "schedules" / f"{name}.schedule.json")
    print(f"{name}: best {best}, bound {bound}, {time.perf_counter() - began:.0f} s", file=sys.stderr)


def probe_up(inst: Instance, schedule, best: int, bound: int, probes: list[dict], probe_limit: float, until: float):
    """Probes upward from ``bound`` while it is below ``best``, until ``until`` on the
    ``time.perf_counter()`` clock: a "no" raises the bound, a "yes" lowers the best (its
    schedule kept), an undecided probe ends it. Each answer is appended to ``probes``;
    returns the schedule, the best and the bound."""
    while bound < best:
        left = until - time.perf_counter()
        if left <= 1:
            break
        answer = probe(inst, bound, time_limit=min(probe_limit, left))
        probes.append(answer.summary())
        print(f"{inst.name}: probe {bound}: {answer.status} in {answer.seconds:.1f} s", file=sys.stderr)
        if answer.status == Status.INFEASIBLE:
            bound = answer.lower_bound
        elif answer.status == Status.FEASIBLE:
            schedule, best = answer.schedule, answer.schedule_makespan
        else:
            break
    return schedule, best, bound


def _store(inst: Instance, best: int, bound: int, proof: dict, schedule) -> None:
    """Write the record of ``inst`` with its best makespan, bound (the optimum where they
    meet) and ``proof``, and ``schedule`` (None: the stored schedule stays)."""
    meta = {
        **inst.meta,
        "known_optimum": best if bound == best else None,
        "best_known": {"makespan": best, "bound": bound},
        "proof": proof,
    }
    Instance(inst.name, inst.horizon, inst.cluster, inst.jobs, meta).write(FOLDER / f"{inst.name}.json")
    if schedule is not None:
        schedule.write(FOLDER / "schedules" / f"{inst.name}.schedule.json")
    print(f"{inst.name}: best {best}, bound {bound}", file=sys.stderr)


def search(name: str, seconds: float, seeds: range, probe_limit: float) -> None:
    """Improve the stored best schedule of ``name`` with the backfill search aimed at the
    makespan past the stored bound, under each server rule with the split rule ``choose``
    (each rule and seed for ``seconds``); a shorter schedule, checked, replaces the stored
    one and its makespan the best known (the optimum where it meets the bound). Every run
    is recorded in ``meta.proof.searches``."""
    from rar_opt import Schedule
    from rar_opt.algorithms import run_policy
    from rar_opt.solvers.plan import BACKFILL_SEARCHERS

    path = FOLDER / f"{name}.json"
    inst = Instance.read(path)
    best, bound = inst.meta["best_known"]["makespan"], inst.meta["best_known"]["bound"]
    schedule = Schedule.read(FOLDER / "schedules" / f"{name}.schedule.json")
    runs = []
    rules = [(entry[0], dict(entry[2]) if len(entry) > 2 else {}) for entry in BACKFILL_SEARCHERS]  # auto's
    for policy, rule in rules if seconds > 0 else ():
        for seed in seeds:
            began = time.perf_counter()
            options = {"makespan_cap": bound, "iterations": 10**9, "time_limit": seconds, "seed": seed, **rule}
            found = run_policy(inst, policy, **options).schedule
            span = check(inst, found).result.makespan
            runs.append({**rule, "seed": seed, "seconds": seconds, "makespan": span})
            took = time.perf_counter() - began
            print(f"{name}: {policy} {rule}, seed {seed}: {span} in {took:.1f} s", file=sys.stderr)
            if span is not None and span < best:
                schedule, best = found.with_meta({**found.meta, "method": policy}), span
    # then (when asked) probe upward from the bound, from the shortest schedule known
    probes = list(inst.meta.get("proof", {}).get("probes", []))
    if probe_limit > 0:
        schedule, best, bound = probe_up(
            inst, schedule, best, bound, probes, probe_limit, time.perf_counter() + probe_limit
        )
    searches = [*inst.meta.get("proof", {}).get("searches", []), *runs]
    proof = {**inst.meta.get("proof", {}), "searches": searches, "probes": probes}
    _store(inst, best, bound, proof, schedule)


def reseed(name: str, seeds: list[int], time_limit: float, work_limit: float | None = None) -> None:
    """Run ``auto`` on the stored record ``name`` with each CP-SAT seed of ``seeds`` for
    ``time_limit`` seconds (or ``work_limit`` units of work, which any machine repeats
    exactly: docs/exactness.md, "Budgets of work"); a shorter schedule (checked) replaces
    the stored one and a higher bound the stored bound. Every run's summary and seed is
    recorded in ``meta.proof.reseeded`` (the routes of :func:`make` run with seed 0 only)."""
    from rar_opt import Schedule

    path = FOLDER / f"{name}.json"
    inst = Instance.read(path)
    best, bound = inst.meta["best_known"]["makespan"], inst.meta["best_known"]["bound"]
    schedule = Schedule.read(FOLDER / "schedules" / f"{name}.schedule.json")
    runs = list(inst.meta.get("proof", {}).get("reseeded", []))
    for seed in seeds:
        if work_limit is None:
            result = solve(inst, "auto", time_limit=time_limit, seed=seed)
            runs.append({**result.summary(), "seed": seed, "time_limit": time_limit})
        else:
            result = solve(inst, "auto", work_limit=work_limit, seed=seed)
            spent = result.record.options.get("work_spent")
            runs.append({**result.summary(), "seed": seed, "work_limit": work_limit, "work_spent": spent})
        print(f"{name}: auto, seed {seed}: {result.makespan} / {result.bound}", file=sys.stderr)
        if result.bound is not None:
            bound = max(bound, math.ceil(result.bound - 1e-9))
        if result.schedule is not None and result.makespan is not None and result.makespan < best:
            if check(inst, result.schedule).result.makespan != result.makespan:
                raise RuntimeError(f"{name}: auto's schedule with seed {seed} does not end at {result.makespan}")
            schedule, best = result.schedule, result.makespan
    _store(inst, best, bound, {**inst.meta.get("proof", {}), "reseeded": runs}, schedule)


def restrict(name: str, seconds: float, seeds: range) -> None:
    """Ask the contention-free restriction (:mod:`rar_opt.formulations.cfree`, ``restrict``:
    split jobs that share a server never overlap) for a schedule that ends by the stored
    record's bound, with CP-SAT's ``no-lp`` search, ``seconds`` per seed, until one seed
    finds one. The restriction's schedules are schedules of the instance, so one that the
    simulator confirms to end by the bound is an optimum. Every ask is recorded in
    ``meta.proof.restricted``."""
    from rar_opt.solvers import Budget
    from rar_opt.solvers.phases import restriction_by

    path = FOLDER / f"{name}.json"
    inst = Instance.read(path)
    best, bound = inst.meta["best_known"]["makespan"], inst.meta["best_known"]["bound"]
    schedule = None
    runs = list(inst.meta.get("proof", {}).get("restricted", []))
    for seed in seeds if bound < best else ():
        raw, found, span, took = restriction_by(inst, bound, Budget.start(seconds, 1, seed))
        runs.append({"horizon": bound, "seed": seed, "seconds": seconds, "status": str(raw.status), "makespan": span})
        print(f"{name}: restriction by {bound}, seed {seed}: {raw.status}, {span} in {took:.1f} s", file=sys.stderr)
        if found is not None and span is not None and span <= bound:
            schedule, best = found.with_meta({**found.meta, "method": "cfree restriction"}), span
            break
    _store(inst, best, bound, {**inst.meta.get("proof", {}), "restricted": runs}, schedule)


def seeds_list(text: str) -> list[int]:
    """``--auto-seeds``: CP-SAT seeds separated by commas (``3,4``)."""
    return [int(v) for v in text.split(",")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", help="an instance name, e.g. heavy-16x8x100-s1")
    parser.add_argument("--solve-limit", type=float, default=60.0, help="seconds for each route of METHODS")
    parser.add_argument("--probe-limit", type=float, default=900.0, help="seconds per probe at the most")
    parser.add_argument("--budget", type=float, default=1800.0, help="seconds per instance, auto and probes")
    parser.add_argument(
        "--search",
        type=float,
        help="instead: the backfill search for this many seconds per rule and seed from each stored record",
    )
    parser.add_argument("--search-seeds", type=int, default=3, help="with --search: seeds 0 .. N-1 (3)")
    parser.add_argument(
        "--search-probe-limit",
        type=float,
        default=0.0,
        help="with --search: then probe upward from the bound for this many seconds in all (--search 0: probes only)",
    )
    parser.add_argument(
        "--auto-seeds",
        type=seeds_list,
        help="instead: auto (--solve-limit seconds) with these CP-SAT seeds from each stored record, e.g. 3,4",
    )
    parser.add_argument(
        "--work-limit",
        type=float,
        help="with --auto-seeds: units of work in place of --solve-limit seconds (the run repeats exactly)",
    )
    parser.add_argument(
        "--restriction",
        type=float,
        help="instead: the contention-free restriction by the stored bound, this many seconds per seed "
        "(seeds 0 .. --search-seeds - 1, until one finds a schedule)",
    )
    args = parser.parse_args()
    (FOLDER / "schedules").mkdir(parents=True, exist_ok=True)
    for key in FRONTIER + NEXT:
        if args.only and name_of(*key) not in args.only:
            continue
        if args.restriction is not None:
            restrict(name_of(*key), args.restriction, range(args.search_seeds))
        elif args.auto_seeds is not None:
            reseed(name_of(*key), args.auto_seeds, args.solve_limit, args.work_limit)
        elif args.search is not None:
            search(name_of(*key), args.search, range(args.search_seeds), args.search_probe_limit)
        else:
            make(key, args.solve_limit, args.probe_limit, args.budget)


if __name__ == "__main__":
    main()
