"""Does the 2% at 160 x 20 rest on one seed? `auto` (60 s, one thread) on the instances
the best-known table left open without the lanes search (seeds 2, 3, 6 and 8 of paper-literal),
with three search seeds each: the table's own (the instance seed) and two others. The
lanes search inside `pack` draws its random numbers from that seed.

    python benchmarks/lanes_seeds.py [--seconds 60] [--solver-seeds 0,100,200]

Rows go to benchmarks/results/lanes-seeds.json: per instance and solver seed, the best
makespan, auto's bound, the best floor, and the gap to the better bound.
"""

from __future__ import annotations

import argparse
import time

from common import save

from rar_opt.bounds.rounding import ceil_bound
from rar_opt.bounds.structural import structural_floor
from rar_opt.instances.generate import generate
from rar_opt.solvers import solve

OPEN = (2, 3, 6, 8)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--solver-seeds", default="0,100,200", help="offsets added to the instance seed")
    args = parser.parse_args()
    rows: list[dict] = []
    for seed in OPEN:
        inst = generate("paper", seed, jobs=160, servers=20, preset="paper-literal")
        floor = structural_floor(inst)
        for offset in (int(x) for x in args.solver_seeds.split(",")):
            began = time.perf_counter()
            res = solve(inst, "auto", time_limit=args.seconds, seed=seed + offset)
            bound = max(floor, ceil_bound(res.bound) if res.bound is not None else 0)
            rows.append(
                {
                    "instance": inst.name,
                    "solver_seed": seed + offset,
                    "makespan": res.makespan,
                    "method": res.schedule.meta.get("method") if res.schedule is not None else None,
                    "bound": bound,
                    "gap": round((res.makespan - bound) / bound, 4) if res.makespan is not None else None,
                    "seconds": round(time.perf_counter() - began, 2),
                }
            )
            r = rows[-1]
            print(f"{r['instance']} seed {r['solver_seed']}: {r['makespan']} / {bound}, gap {r['gap']:.2%}", flush=True)
            save("lanes-seeds", rows, seconds=args.seconds, threads=1)


if __name__ == "__main__":
    main()
