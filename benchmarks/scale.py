"""Heuristics at 1x, 10x and 100x the paper's size: ``python benchmarks/scale.py``.

Every policy on paper-generator instances of 160 x k jobs on 20 x k servers (horizon
1200 x k slots), k = 1, 10, 100: 100x is 16,000 jobs on 2,000 servers. Each run is its
own process, so the peak memory (max RSS, the process's whole footprint including Python
and numpy) belongs to that run alone; the time covers the policy only, not the instance
generation. The growth exponent between 10x and 100x is log(t100 / t10) / log(10): 1 is
linear in the jobs, 2 quadratic. Results go to benchmarks/results/scale.json.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

from common import save, table

from rar_opt.algorithms import POLICIES

SCALES = (1, 10, 100)

CHILD = """
import json, resource, sys, time
from rar_opt import check
from rar_opt.algorithms import run_policy
from rar_opt.generate import paper
k, policy = int(sys.argv[1]), sys.argv[2]
inst = paper(0, jobs=160 * k, servers=20 * k, horizon=1200 * k)
inst.bounds
began = time.perf_counter()
run = run_policy(inst, policy)
wall = time.perf_counter() - began
span = check(inst, run.schedule).result.makespan
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"wall_s": wall, "peak_mb": rss, "makespan": span, "trials": run.trials}))
"""


def main() -> None:
    rows = []
    for policy in POLICIES:
        for k in SCALES:
            out = subprocess.run(
                [sys.executable, "-c", CHILD, str(k), policy], capture_output=True, text=True, check=True
            )
            rows.append({"policy": policy, "scale": k, "jobs": 160 * k, "servers": 20 * k, **json.loads(out.stdout)})
            print(table(rows[-1:]), flush=True)
    growth = []
    for policy in POLICIES:
        t = {r["scale"]: r["wall_s"] for r in rows if r["policy"] == policy}
        growth.append({"policy": policy, "exponent_10x_to_100x": math.log(t[100] / t[10]) / math.log(10)})
    print(table(growth))
    path = save("scale", rows, growth=growth, scales=list(SCALES))
    print(f"\nwritten: {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
