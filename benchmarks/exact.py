"""How the compact MILP grows, and what a warm start buys: ``python benchmarks/exact.py``.

For growing instances (tiny-generator physics, iterations scaled so the horizon is used)
it reports the model's rows, columns and nonzeros, the Pyomo build time, the hand-off to
HiGHS, HiGHS' own time and whether the optimum was proven within the time limit (60 s),
in four modes: cold (the instance's horizon, no start), cold+cuts (the same with the
valid inequalities of docs/exactness.md), horizon (SJF-BCO's makespan as the horizon, no start) and warm
(SJF-BCO's schedule as MIP start and as horizon).
Results go to benchmarks/results/exact.json.
"""

from __future__ import annotations

import dataclasses
import json
import sys

from common import RESULTS, save, table

from rar_opt import Instance, check
from rar_opt.algorithms import run_policy
from rar_opt.instances.generate import tiny
from rar_opt.solvers import Status, solve

TIME_LIMIT = 60.0
SEEDS = (0, 1, 2)  # HiGHS' run time varies a lot with its random seed: one run is no verdict
SIZES = [(4, 2, 20), (6, 3, 30), (8, 4, 40), (8, 4, 60), (10, 4, 60), (12, 4, 80)]


def scaled(seed: int, jobs: int, servers: int, horizon: int) -> Instance:
    """A tiny-generator instance whose iterations are scaled so SJF-BCO ends near 0.8 T."""
    base = tiny(seed, jobs=jobs, servers=servers)
    span = check(base, run_policy(base, "sjf-bco").schedule).result.makespan
    factor = max(1, int(0.8 * horizon / span))
    job_list = tuple(dataclasses.replace(j, iterations=j.iterations * factor) for j in base.jobs)
    return Instance(f"scaled-{jobs}x{servers}x{horizon}-s{seed}", horizon, base.cluster, job_list)


def main() -> None:
    rows = []
    for jobs, servers, horizon in SIZES:
        inst = scaled(100 + jobs, jobs, servers, horizon)
        for mode in ("cold", "cold+cuts", "horizon", "warm"):
            for seed in SEEDS:
                res = solve(
                    inst,
                    time_limit=TIME_LIMIT,
                    seed=seed,
                    warm_start=None if mode.startswith("cold") else "sjf-bco",
                    mip_start=mode == "warm",
                    cuts=mode == "cold+cuts",
                )
                rows.append(
                    {
                        "jobs": jobs,
                        "servers": servers,
                        "T": horizon,
                        "mode": mode,
                        "seed": seed,
                        "slots": res.options["horizon"],
                        "rows": res.model_size.get("rows"),
                        "cols": res.model_size.get("cols"),
                        "nonzeros": res.model_size.get("nonzeros"),
                        "build_s": res.build_s,
                        "handoff_s": res.handoff_s,
                        "highs_s": res.solver_s,
                        "status": str(res.status),
                        "proven": res.status == Status.OPTIMAL,
                        "makespan": res.makespan,
                        "bound": res.bound,
                    }
                )
                print(table(rows[-1:]) if len(rows) == 1 else table(rows[-1:]).splitlines()[1], flush=True)
    path = save("exact", rows, time_limit_s=TIME_LIMIT, threads=1, seeds=list(SEEDS), formulation="compact")
    print(f"\nwritten: {path}", file=sys.stderr)


def summarise(rows: list[dict]) -> list[dict]:
    """Per size and mode: median HiGHS seconds over the seeds and how many were proven."""
    out: dict[tuple, dict] = {}
    for r in rows:
        key = (r["jobs"], r["servers"], r["T"], r["mode"])
        agg = out.setdefault(
            key,
            {
                "size": f"{r['jobs']}x{r['servers']}x{r['T']}",
                "mode": r["mode"],
                "slots": r["slots"],
                "rows": r["rows"],
                "nonzeros": r["nonzeros"],
                "_t": [],
                "proven": 0,
                "runs": 0,
            },
        )
        agg["_t"].append(r["highs_s"] if r["proven"] else float("inf"))
        agg["proven"] += int(r["proven"])
        agg["runs"] += 1
    result = []
    for agg in out.values():
        times = sorted(agg.pop("_t"))
        agg["median_highs_s"] = times[len(times) // 2]
        result.append(agg)
    return result


if __name__ == "__main__":
    if "--summary" in sys.argv:  # summarise the saved result file
        data = json.loads((RESULTS / "exact.json").read_text())
        print(table(summarise(data["rows"])))
    else:
        main()
