"""SJF-BCO's speed and the policies side by side: ``python benchmarks/sjf_bco.py``.

1. Every policy on the paper instance (seed 0): makespan, average JCT, wall time.
2. SJF-BCO's wall time, trials run, trials per second, for jobs x servers growing from
   the paper's 160 x 20 to 10x (1600 x 200), horizon scaled alike.
Results go to benchmarks/results/sjf_bco.json.
"""

from __future__ import annotations

import time

from common import save, table

from rar_opt import check
from rar_opt.algorithms import POLICIES, run_policy
from rar_opt.bounds import lower_bounds
from rar_opt.instances.generate import paper


def main() -> None:
    inst = paper(0)
    inst.bounds  # noqa: B018 - build the time model outside the timings
    policy_rows = []
    lb = lower_bounds(inst).best
    for name in POLICIES:
        began = time.perf_counter()
        sched = run_policy(inst, name, seed=0).schedule
        wall = time.perf_counter() - began
        res = check(inst, sched).result
        policy_rows.append(
            {
                "policy": name,
                "makespan": res.makespan,
                "avg_jct": res.avg_jct,
                "min_jct": res.min_jct,
                "ratio_to_lb": res.makespan / lb,
                "wall_s": wall,
            }
        )
    print(f"paper-160x20-s0, lower bound {lb}")
    print(table(policy_rows), flush=True)

    scale_rows = []
    for scale in (0.25, 0.5, 1, 2, 5, 10):
        jobs, servers = int(160 * scale), max(1, int(20 * scale))
        big = paper(0, jobs=jobs, servers=servers, horizon=int(1200 * max(scale, 1)))
        big.bounds  # noqa: B018
        began = time.perf_counter()
        run = run_policy(big, "sjf-bco")
        sched = run.schedule
        wall = time.perf_counter() - began
        scale_rows.append(
            {
                "jobs": jobs,
                "servers": servers,
                "wall_s": wall,
                "trials": run.trials,
                "trials_per_s": run.trials / wall,
                "ms_per_trial": 1000 * wall / run.trials,
                "makespan": check(big, sched).result.makespan,
            }
        )
        print(table(scale_rows[-1:]) if len(scale_rows) == 1 else table(scale_rows[-1:]).splitlines()[1], flush=True)
    print(f"written: {save('sjf_bco', scale_rows, policies=policy_rows, seed=0)}")


if __name__ == "__main__":
    main()
