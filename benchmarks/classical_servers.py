"""The servers sweep with longest first and the bound: ``python benchmarks/classical_servers.py``.

The instances of ``rar-opt experiment servers`` (160 jobs drawn on 20 servers, the first
10, 15 or 20 kept, T = 1500; seeds 0-4, every preset): sjf-bco, ff, consolidate and lpt,
each with its makespan, average JCT and ratio to max(longest job, work bound). Results:
benchmarks/results/classical-servers.json (rows and the means over the seeds).
"""

from __future__ import annotations

import statistics

from common import save, table

from rar_opt.algorithms import run_policy
from rar_opt.bounds import lower_bounds
from rar_opt.check import check
from rar_opt.instances.calibration import PRESETS
from rar_opt.instances.generate import nested_cluster, paper

POLICIES = ("sjf-bco", "ff", "consolidate", "lpt")


def main() -> None:
    rows = []
    for preset in PRESETS:
        for seed in range(5):
            drawn = paper(seed, jobs=160, servers=20, horizon=1500, preset=preset)
            for n in (10, 15, 20):
                inst = nested_cluster(drawn, n)
                lb = lower_bounds(inst)
                bound = max(lb.longest, lb.work)
                for name in POLICIES:
                    res = check(inst, run_policy(inst, name, seed=seed).schedule).result
                    rows.append(
                        {
                            "preset": preset,
                            "servers": n,
                            "seed": seed,
                            "policy": name,
                            "makespan": int(res.makespan),
                            "avg_jct": round(float(res.avg_jct), 3),
                            "bound": int(bound),
                            "ratio": round(res.makespan / bound, 4),
                        }
                    )
    summary = []
    for preset in PRESETS:
        for n in (10, 15, 20):
            for name in POLICIES:
                group = [r for r in rows if (r["preset"], r["servers"], r["policy"]) == (preset, n, name)]
                summary.append(
                    {
                        "preset": preset,
                        "servers": n,
                        "policy": name,
                        "makespan": round(statistics.mean(r["makespan"] for r in group), 1),
                        "avg_jct": round(statistics.mean(r["avg_jct"] for r in group), 1),
                        "bound": round(statistics.mean(r["bound"] for r in group), 1),
                        "ratio": round(statistics.mean(r["ratio"] for r in group), 3),
                    }
                )
    print(table(summary))
    save("classical-servers", rows, summary=summary, seeds=list(range(5)))


if __name__ == "__main__":
    main()
