"""How `auto` spends its time where the full model cannot be built (paper scale):
``python benchmarks/improvers.py``.

The plans below differ only in the improvement searches (``Plan.improvers``) that get
all of the time after the heuristics and the floors. Every other setting is `auto`'s.
Instances: the paper generator, paper-literal, the 160 x 20 seeds that `auto` does not
close within 2% (``benchmarks/bounds_table.py``) and two seeds each at 160 x 10 and
320 x 20; 60 s each on one thread, two runs at a time on a 2-core machine
(``--workers``). Results: ``benchmarks/results/improvers.json``; ``--summary`` prints
the table again.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import time

from common import RESULTS, run_pool, save

from rar_opt.instances.generate import generate
from rar_opt.solvers.decompose import AUTO, Plan, decompose

INSTANCES = [(160, 20, s) for s in (2, 3, 6, 8)] + [(160, 10, s) for s in (0, 1)] + [(320, 20, s) for s in (0, 1)]
PLANS: dict[str, Plan] = {
    "pack": AUTO,
    "pack-then-improve": dataclasses.replace(AUTO, improvers=(("pack", 0.75), ("improve", 1.0))),
}
"""``pack`` is `auto` now; ``pack-then-improve`` gives the iterated greedy ``improve`` (list
schedules that may split) the last quarter, as `auto` did before."""


def task(plan_name: str, key: tuple[int, int, int], time_limit: float) -> dict:
    jobs, servers, seed = key
    inst = generate("paper", seed, jobs=jobs, servers=servers, preset="paper-literal")
    began = time.perf_counter()
    res = decompose(inst, time_limit=time_limit, seed=0, plan=PLANS[plan_name])
    return {
        "instance": inst.name,
        "plan": plan_name,
        "status": str(res.status),
        "makespan": res.makespan,
        "bound": res.bound,
        "gap": None if res.makespan is None else round(res.makespan / res.bound - 1, 4),
        "wall_s": round(time.perf_counter() - began, 2),
        "phases": [p.to_dict() for p in res.record.phases],
    }


def summary(rows: list[dict]) -> str:
    """Instances down, plans across: makespan / bound; then the mean gap per plan."""
    plans = list(dict.fromkeys(r["plan"] for r in rows))
    by = {(r["instance"], r["plan"]): r for r in rows}
    lines = ["| instance | " + " | ".join(plans) + " |", "|---|" + "---|" * len(plans)]
    for name in dict.fromkeys(r["instance"] for r in rows):
        cells = [
            f"{by[name, p]['makespan']} / {by[name, p]['bound']:g}" if (name, p) in by else "not run" for p in plans
        ]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    gaps = [f"{100 * statistics.mean(r['gap'] for r in rows if r['plan'] == p):.2f}%" for p in plans]
    lines.append("| mean gap | " + " | ".join(gaps) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--summary", action="store_true")
    parser.add_argument("--plans", help="comma-separated names of PLANS (default: all)")
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    path = RESULTS / "improvers.json"
    if args.summary:
        print(summary(json.loads(path.read_text())["rows"]))
        return
    plans = args.plans.split(",") if args.plans else list(PLANS)
    jobs = [(p, key) for key in INSTANCES for p in plans]
    with run_pool(args.workers) as pool:
        futures = [pool.submit(task, p, key, args.time_limit) for p, key in jobs]
        rows = []
        for future in futures:
            rows.append(future.result())
            r = rows[-1]
            print(f"{r['instance']:>24} {r['plan']:>18}: {r['makespan']} / {r['bound']:g}", flush=True)
    save(
        "improvers",
        rows,
        time_limit_s=args.time_limit,
        threads=1,
        workers=args.workers,
        plans={p: dataclasses.asdict(PLANS[p]) for p in plans},
    )
    print(summary(rows))


if __name__ == "__main__":
    main()
