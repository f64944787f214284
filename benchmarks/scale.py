"""Heuristics at 1x, 10x and 100x the paper's size, and in the jobs alone: ``python benchmarks/scale.py``.

Every policy on paper-generator instances (seed 0):

* joint: 160 x k jobs on 20 x k servers, horizon 1200 x k, k = 1, 10, 100 (100x is
  16,000 jobs on 2,000 servers);
* jobs only: 1,600 to 16,000 jobs on a fixed 2,000 servers (horizon 1200 x jobs / 160).

Each run is its own process, so its peak memory (max RSS, the whole process with Python
and numpy: after the run, and again after the checker has judged the schedule, which
builds its dense J x S placement matrix) belongs to it alone; the
times (wall clock and the process's CPU time, which a busy machine disturbs less) cover
the policy only (not the instance generation, nor the check). The growth exponent
between two sizes, from CPU times, is log(t2 / t1) / log(J2 / J1): 1 is linear in the
jobs, 2 quadratic; from 1,600 to 16,000 jobs J log J is an exponent of
1 + log(log 16000 / log 1600) / log 10 = 1.12.

``--reference DIR`` also measures sjf-bco and ff from an older source tree (for example
``git archive 577e3e4 rar_opt | tar -x -C DIR``, the engine that scanned every GPU per
decision) at 10x, 100x and 1,600 jobs on 2,000 servers, the same way.
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
from rar_opt.instances.generate import paper
jobs, servers, policy = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
inst = paper(0, jobs=jobs, servers=servers, horizon=1200 * jobs // 160)
inst.bounds
began, cpu = time.perf_counter(), time.process_time()
run = run_policy(inst, policy)
wall, cpu = time.perf_counter() - began, time.process_time() - cpu
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
span = check(inst, run.schedule).result.makespan
checked = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
row = {"wall_s": wall, "cpu_s": cpu, "peak_mb": rss, "peak_with_check_mb": checked}
print(json.dumps({**row, "makespan": span, "trials": run.trials}))
"""


def measure(jobs: int, servers: int, policy: str, tree: str | None = None) -> dict:
    """One policy run in a fresh process (from the source ``tree`` if given): times, peak RSS
    (MB), makespan, trials."""
    env = None if tree is None else {**os.environ, "PYTHONPATH": tree}
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(jobs), str(servers), policy],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    return json.loads(out.stdout)


def exponent(t1: float, t2: float, j1: int, j2: int) -> float:
    """log(t2 / t1) / log(j2 / j1)."""
    return math.log(t2 / t1) / math.log(j2 / j1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--policies", nargs="*", default=list(POLICIES))
    ap.add_argument("--reference", help="an older rar_opt source tree to measure as well (sjf-bco, ff)")
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
        t = {(r["sweep"], r["jobs"]): r["cpu_s"] for r in rows if r["policy"] == policy}
        growth.append(
            {
                "policy": policy,
                "joint_10x_to_100x": exponent(t["joint", 1600], t["joint", 16000], 1600, 16000),
                "jobs_1600_to_16000": exponent(t["jobs", 1600], t["jobs", 16000], 1600, 16000),
                "cpu_100x_s": t["joint", 16000],
                "wall_100x_s": next(r["wall_s"] for r in rows if r["policy"] == policy and r["jobs"] == 16000),
                "peak_100x_mb": next(r["peak_mb"] for r in rows if r["policy"] == policy and r["jobs"] == 16000),
            }
        )
    print(table(growth))
    reference = []
    for policy in ("sjf-bco", "ff") if args.reference else ():
        for jobs, servers in ((1600, 200), (1600, SERVERS), (16000, SERVERS)):
            r = measure(jobs, servers, policy, args.reference)
            reference.append({"policy": policy, "jobs": jobs, "servers": servers, **r})
            print(table(reference[-1:]), flush=True)
    for policy in ("sjf-bco", "ff") if args.reference else ():
        t = {(r["jobs"], r["servers"]): r["cpu_s"] for r in reference if r["policy"] == policy}
        growth.append(
            {
                "policy": policy + " (reference tree)",
                "joint_10x_to_100x": exponent(t[1600, 200], t[16000, SERVERS], 1600, 16000),
                "jobs_1600_to_16000": exponent(t[1600, SERVERS], t[16000, SERVERS], 1600, 16000),
                "cpu_100x_s": t[16000, SERVERS],
                "wall_100x_s": next(r["wall_s"] for r in reference if r["policy"] == policy and r["jobs"] == 16000),
                "peak_100x_mb": next(r["peak_mb"] for r in reference if r["policy"] == policy and r["jobs"] == 16000),
            }
        )
    note = (
        "machine shared with other work during the run (2 cores, load average 4-7): wall times are "
        "pessimistic; exponents from CPU time; each run in its own process under nice"
    )
    path = save(
        "scale",
        rows,
        growth=growth,
        scales=list(SCALES),
        jobs_only=list(JOBS_ONLY),
        reference=reference,
        reference_tree="577e3e4 (git archive)" if args.reference else None,
        note=note,
        cpus=os.cpu_count(),
    )
    print(f"\nwritten: {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
