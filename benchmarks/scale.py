"""Heuristics at 1x, 10x and 100x the paper's size, and in the jobs alone: ``python benchmarks/scale.py``.

Every policy on paper-generator instances (seed 0):

* joint: 160 x k jobs on 20 x k servers, horizon 1200 x k, k = 1, 10, 100 (100x is
  16,000 jobs on 2,000 servers);
* jobs only: 1,600 to 16,000 jobs on a fixed 2,000 servers (horizon 1200 x jobs / 160).

Each run is its own process, so its peak memory (max RSS, the whole process with Python
and numpy) belongs to it alone; the time covers the policy only (not the instance
generation, nor the check that follows). The growth exponent between two sizes is
log(t2 / t1) / log(J2 / J1): 1 is linear in the jobs, 2 quadratic; J log J from 1,600 to
16,000 jobs is an exponent of 1 + log(log 16000 / log 1600) / log 10 = 1.12.
Results go to benchmarks/results/scale.json.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys

from common import save, table

from rar_opt.algorithms import POLICIES

SCALES = (1, 10, 100)
JOBS_ONLY = (1600, 4000, 16000)  # on 2,000 servers
SERVERS = 2000

CHILD = """
import json, resource, sys, time
from rar_opt import check
from rar_opt.algorithms import run_policy
from rar_opt.generate import paper
jobs, servers, policy = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
inst = paper(0, jobs=jobs, servers=servers, horizon=1200 * jobs // 160)
inst.bounds
began = time.perf_counter()
run = run_policy(inst, policy)
wall = time.perf_counter() - began
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
span = check(inst, run.schedule).result.makespan
print(json.dumps({"wall_s": wall, "peak_mb": rss, "makespan": span, "trials": run.trials}))
"""


def measure(jobs: int, servers: int, policy: str) -> dict:
    """One policy run in a fresh process: wall time, peak RSS (MB), makespan, trials."""
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(jobs), str(servers), policy], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)


def exponent(t1: float, t2: float, j1: int, j2: int) -> float:
    """log(t2 / t1) / log(j2 / j1)."""
    return math.log(t2 / t1) / math.log(j2 / j1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--policies", nargs="*", default=list(POLICIES))
    args = ap.parse_args()
    rows = []
    for policy in args.policies:
        for sweep, sizes in (
            ("joint", [(160 * k, 20 * k) for k in SCALES]),
            ("jobs", [(j, SERVERS) for j in JOBS_ONLY]),
        ):
            for jobs, servers in sizes:
                if sweep == "jobs" and jobs == 16000:  # the same run as the joint 100x
                    r = next(r for r in rows if r["policy"] == policy and r["jobs"] == jobs and r["servers"] == servers)
                    rows.append({**r, "sweep": "jobs"})
                    continue
                rows.append(
                    {
                        "policy": policy,
                        "sweep": sweep,
                        "jobs": jobs,
                        "servers": servers,
                        **measure(jobs, servers, policy),
                    }
                )
                print(table(rows[-1:]), flush=True)
    growth = []
    for policy in args.policies:
        t = {(r["sweep"], r["jobs"]): r["wall_s"] for r in rows if r["policy"] == policy}
        growth.append(
            {
                "policy": policy,
                "joint_10x_to_100x": exponent(t["joint", 1600], t["joint", 16000], 1600, 16000),
                "jobs_1600_to_16000": exponent(t["jobs", 1600], t["jobs", 16000], 1600, 16000),
                "wall_100x_s": t["joint", 16000],
                "peak_100x_mb": next(r["peak_mb"] for r in rows if r["policy"] == policy and r["jobs"] == 16000),
            }
        )
    print(table(growth))
    note = (
        "machine shared with other work during the run (2 cores, load average above 2): absolute times "
        "are pessimistic; each run in its own process under nice"
    )
    path = save(
        "scale", rows, growth=growth, scales=list(SCALES), jobs_only=list(JOBS_ONLY), note=note, cpus=os.cpu_count()
    )
    print(f"\nwritten: {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
