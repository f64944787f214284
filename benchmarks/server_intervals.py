"""The full CP-SAT model with the two forms of the server rows, at the optimum's floor.

For each instance (24 x 8 x 150 of benchmarks/frontier.py whose optimum is on record in
instances/frontier/ or instances/README.md), the full model over ``pack``'s makespan,
hinted with ``pack``'s schedule and floored at the optimum (so the search stops as soon as
it finds an optimal schedule), ``no-lp``, one thread, with server capacity (2) in the plain
form (demands y_js) and over optional intervals (``server_intervals``). Per run: when the
optimum was found, if it was, and the search's counters.

    python benchmarks/server_intervals.py [--seconds 30] [--cpsat-seeds 0,1,2,3,4,5] [--workers 2]

Rows go to benchmarks/results/server-intervals.json (docs/exactness-log.md, "Optional intervals
for the servers").
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

OPTIMA = {"heavy-24x8x150-s1": 84, "tiny-24x8x150-s3": 55, "heavy-24x8x150-s3": 56}
"""The instances that ``auto`` proves with some CP-SAT seeds only, and their optima."""


def run(name: str, form: str, cpsat_seed: int, seconds: float) -> dict:
    """One search: the seconds to the optimum (None: not within ``seconds``)."""
    family, jobs, servers, horizon, seed = frontier.parse_name(name)
    inst = frontier.instance(family, jobs, servers, horizon, seed)
    start = run_policy(inst, "pack").schedule
    span = int(simulate(inst, start).makespan)
    model = cpsat.build(inst, cpsat.Options(horizon=span, server_intervals=form == "intervals"))
    cpsat.set_start(model, inst, start)
    model.model.add(model.makespan >= OPTIMA[name])
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = cpsat_seed
    solver.parameters.linearization_level = 0  # the no-lp search of auto's full model
    solver.parameters.max_time_in_seconds = seconds
    began = time.perf_counter()
    code = solver.solve(model.model)
    found = code == cp_model.OPTIMAL
    return {
        "instance": name,
        "form": form,
        "cpsat_seed": cpsat_seed,
        "start": span,
        "optimum": OPTIMA[name],
        "found": found,
        "seconds": round(time.perf_counter() - began, 2) if found else None,
        "best": int(solver.objective_value) if code in (cp_model.OPTIMAL, cp_model.FEASIBLE) else None,
        "conflicts": solver.num_conflicts,
        "branches": solver.num_branches,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--cpsat-seeds", default="0,1,2,3,4,5")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    seeds = [int(s) for s in args.cpsat_seeds.split(",")]
    tasks = [(n, f, s) for n in OPTIMA for s in seeds for f in ("plain", "intervals")]
    rows: list[dict] = []
    with run_pool(args.workers) as pool:
        for future in [pool.submit(run, n, f, s, args.seconds) for n, f, s in tasks]:
            rows.append(future.result())
            print(table([rows[-1]]).splitlines()[-1], flush=True)
            save("server-intervals", rows, seconds=args.seconds, threads=1, workers=args.workers)
    for form in ("plain", "intervals"):
        hits = [r for r in rows if r["form"] == form and r["found"]]
        print(f"{form}: optimum found in {len(hits)} of {sum(r['form'] == form for r in rows)} runs")


if __name__ == "__main__":
    main()
