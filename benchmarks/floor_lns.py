"""Large-neighbourhood search on the mode restriction against the full model, at the floor.

For each instance of benchmarks/frontier.py whose optimum L is on record (instances/
README.md) and that ``auto`` does not prove with every CP-SAT seed, both searches start
from ``pack``'s schedule and look for a schedule at L within the same seconds, one thread:

* ``full``: the full CP-SAT model over ``pack``'s makespan, hinted with its schedule and
  floored at L (``no-lp``, as ``auto`` runs it), so that it stops at the first optimal
  schedule;
* ``lns``: :func:`rar_opt.solvers.floor_lns.search` towards L with the same seed.

Per run: whether L was reached and when, the best makespan, and the search's work.

    python benchmarks/floor_lns.py [--seconds 25] [--cpsat-seeds 0,1,2,3,4] [--workers 2]

Rows go to benchmarks/results/floor-lns.json (docs/exactness-log.md, "Large-neighbourhood
search on the mode restriction").
"""

from __future__ import annotations

import argparse
import time

import frontier
from common import run_pool, save, table
from ortools.sat.python import cp_model

from rar_opt.algorithms import run_policy
from rar_opt.formulations import cpsat
from rar_opt.simulate import simulate
from rar_opt.solvers import floor_lns

OPTIMA = {
    "heavy-20x8x120-s0": 58,
    "heavy-24x8x150-s1": 84,
    "heavy-24x8x150-s2": 74,
    "heavy-24x8x150-s3": 56,
    "tiny-24x8x150-s3": 55,
    "tiny-24x8x150-s4": 66,
}
"""The instances whose proof in ``auto`` waits for a schedule at the optimum, with it."""


def run(name: str, method: str, seed: int, seconds: float) -> dict:
    """One search from ``pack``'s schedule: the seconds to the optimum (None: not reached)."""
    family, jobs, servers, horizon, instance_seed = frontier.parse_name(name)
    inst = frontier.instance(family, jobs, servers, horizon, instance_seed)
    start = run_policy(inst, "pack").schedule
    span = int(simulate(inst, start).makespan)
    target = OPTIMA[name]
    row = {"instance": name, "method": method, "cpsat_seed": seed, "start": span, "optimum": target}
    began = time.perf_counter()
    if method == "full":
        model = cpsat.build(inst, cpsat.Options(horizon=span))
        cpsat.set_start(model, inst, start)
        model.model.add(model.makespan >= target)
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = 1
        solver.parameters.random_seed = seed
        solver.parameters.linearization_level = 0
        solver.parameters.max_time_in_seconds = seconds
        code = solver.solve(model.model)
        best = int(solver.objective_value) if code in (cp_model.OPTIMAL, cp_model.FEASIBLE) else None
        work = {"branches": solver.num_branches}
    else:
        outcome = floor_lns.search(inst, start, target, seed=seed, time_limit=seconds)
        best = None if outcome.schedule is None else int(simulate(inst, outcome.schedule).makespan)
        work = {"steps": outcome.steps, "refused": outcome.refused}
    elapsed = time.perf_counter() - began
    found = best is not None and best <= target
    return {**row, "found": found, "seconds": round(elapsed, 2) if found else None, "best": best, **work}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=25.0)
    parser.add_argument("--cpsat-seeds", default="0,1,2,3,4")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    seeds = [int(s) for s in args.cpsat_seeds.split(",")]
    tasks = [(n, m, s) for n in OPTIMA for s in seeds for m in ("full", "lns")]
    rows: list[dict] = []
    with run_pool(args.workers, written="benchmarks/results/floor-lns.json") as pool:
        for future in [pool.submit(run, n, m, s, args.seconds) for n, m, s in tasks]:
            rows.append(future.result())
            print(table([rows[-1]]).splitlines()[-1], flush=True)
            save("floor-lns", rows, seconds=args.seconds, threads=1, workers=args.workers)
    for method in ("full", "lns"):
        hits = [r for r in rows if r["method"] == method and r["found"]]
        print(f"{method}: optimum reached in {len(hits)} of {sum(r['method'] == method for r in rows)} runs")


if __name__ == "__main__":
    main()
