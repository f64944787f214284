"""How ``auto`` for the sums should share its search time between ``improve`` and ``backfill``.

Per instance: the flow LP's order (as ``auto`` computes it), then ``improve`` aimed at the
sum and ``backfill`` each from that order, seed 0, for each of ``--seconds`` (default 25
and 50: half and all of what the two searches get together in a 60 s ``auto`` at 160
jobs); every schedule re-simulated. Rows: the sum of completion times, the gap to the
LP's bound, the CPU seconds and the moves/iterations run, and the load average.

    python benchmarks/backfill_shares.py [--seconds 25,50] [--only NAME,...]

Results: benchmarks/results/backfill-shares.json (rows appended as they finish).
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

from common import result_name, save

from rar_opt.algorithms import run_policy
from rar_opt.bounds import registry
from rar_opt.instances.generate import generate
from rar_opt.solvers.sums import sum_of

CASES = [
    ("paper-literal", 160, 20),
    ("paper-split15", 160, 20),
    ("contention-heavy", 160, 20),
    ("paper-literal", 160, 10),
    ("contention-heavy", 160, 10),
    ("contention-heavy", 320, 20),
]


def lp_order(inst: Any) -> tuple[tuple[int, ...] | None, int]:
    flow = registry.entries("total", families=("solver",))
    found = [b.compute(inst, registry.Ask(30.0, 0, 0, {})) for b in flow if b.applies is None or b.applies(inst)]
    best = max(found, key=lambda f: f.value or 0)
    return best.order, int(best.value or 0)


def one(inst: Any, policy: str, seconds: float, order: tuple[int, ...] | None, bound: int) -> dict[str, Any]:
    options: dict[str, Any] = {"start_order": order, "time_limit": seconds, "seed": 0}
    options["iterations"] = 10**7
    if policy == "improve":
        options["objective"] = "total"
    load = os.getloadavg()[0]
    wall, cpu = time.perf_counter(), time.process_time()
    run = run_policy(inst, policy, **options)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    value = sum_of(inst, run.schedule, "total")
    assert value is not None
    search = run.search or {}
    return {
        "instance": inst.name,
        "policy": policy,
        "seconds": seconds,
        "total": value[0],
        "gap": round((value[0] - bound) / bound, 5),
        "makespan": value[1],
        "moves": search.get("iterations"),
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "load_avg": [round(load, 2), round(os.getloadavg()[0], 2)],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", default="25,50")
    ap.add_argument("--only", help="instance names, comma-separated")
    ap.add_argument("--name", type=result_name, default="backfill-shares")
    args = ap.parse_args()
    rows: list[dict[str, Any]] = []
    for preset, jobs, servers in CASES:
        inst = generate("paper", 0, jobs=jobs, servers=servers, preset=preset)
        if args.only and inst.name not in args.only.split(","):
            continue
        order, bound = lp_order(inst)
        for seconds in (float(s) for s in args.seconds.split(",")):
            for policy in ("improve", "backfill"):
                r = one(inst, policy, seconds, order, bound)
                r["bound"] = bound
                rows.append(r)
                save(args.name, rows, seconds=args.seconds, seed=0, start="the flow LP's order")
                print(
                    f"{r['instance']} {policy} {seconds:g} s: gap {r['gap']:.2%} ({r['moves']} moves, "
                    f"{r['cpu_s']} s CPU, load {r['load_avg']})",
                    flush=True,
                )


if __name__ == "__main__":
    main()
