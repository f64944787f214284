"""The backfilling builder's free choices side by side: every combination of its rules
(``fit`` best/small, ``reserve`` off, on, or on with ``spare`` (a later job may also
take GPUs of the held server that the reserved job will not need), ``split`` may/must),
each driven by the same
search for the same number of moves (deterministic: the move budget stops it, not the
clock), from the same starts (the sum orders and the flow LP's order), seed 0.

    python benchmarks/backfill_variants.py [--moves 1500] [--only NAME,...]

Results: benchmarks/results/backfill-variants.json (rows saved as they finish).
"""

from __future__ import annotations

import argparse
import itertools
import os
import time
from typing import Any

from backfill_shares import lp_order
from common import result_name, save

from rar_opt.algorithms import run_policy
from rar_opt.algorithms.backfill import FITS, SPLITS
from rar_opt.instances.generate import generate
from rar_opt.solvers.sum_best import sum_of

CASES = [
    ("paper-literal", 160, 20, 0),
    ("paper-split15", 160, 20, 1),
    ("contention-heavy", 160, 20, 2),
    ("contention-heavy", 160, 10, 0),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--moves", type=int, default=1500)
    ap.add_argument("--only", help="instance names, comma-separated")
    ap.add_argument("--name", type=result_name, default="backfill-variants")
    args = ap.parse_args()
    rows: list[dict[str, Any]] = []
    for preset, jobs, servers, seed in CASES:
        inst = generate("paper", seed, jobs=jobs, servers=servers, preset=preset)
        if args.only and inst.name not in args.only.split(","):
            continue
        order, bound = lp_order(inst)
        for fit, (reserve, spare), split in itertools.product(
            FITS, ((True, False), (True, True), (False, False)), SPLITS
        ):
            load = os.getloadavg()[0]
            cpu = time.process_time()
            run = run_policy(
                inst,
                "backfill",
                fit=fit,
                reserve=reserve,
                split=split,
                spare=spare,
                start_order=order,
                iterations=args.moves,
                time_limit=3600.0,
                seed=0,
            )
            cpu = time.process_time() - cpu
            value = sum_of(inst, run.schedule, "total")
            assert value is not None and run.search is not None and not run.search["capped"]
            rows.append(
                {
                    "instance": inst.name,
                    "rules": run.search["rules"],
                    "moves": run.search["iterations"],
                    "start": run.search["start"],
                    "start_gap": round((run.search["start_total_completion"] - bound) / bound, 5),
                    "total": value[0],
                    "bound": bound,
                    "gap": round((value[0] - bound) / bound, 5),
                    "split_jobs": run.search["split"],
                    "cpu_s": round(cpu, 2),
                    "load_avg": [round(load, 2), round(os.getloadavg()[0], 2)],
                }
            )
            save(args.name, rows, moves=args.moves, seed=0, starts="the sum orders and the flow LP's order")
            r = rows[-1]
            print(f"{r['instance']} {r['rules']}: gap {r['gap']:.2%} (start {r['start_gap']:.2%}, {r['cpu_s']} s CPU)")


if __name__ == "__main__":
    main()
