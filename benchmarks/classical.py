"""The classical list orders and the improvement search at paper scale:
``python benchmarks/classical.py [--quick]``.

For every preset of the paper generator, seeds 0-4 and the sizes 160x20 (the paper's),
160x10 and 320x20, each policy's schedule is checked and re-simulated, and set beside
two proven lower bounds:

* makespan: ``max(longest job, work bound)`` of :func:`rar_opt.bounds.lower_bounds`
  (the fast bounds; the LP relaxation is not run);
* average JCT: number the jobs in the order they complete. The k-th to complete ends no
  earlier than each of the first k, and each of those runs at least its rho_min from
  slot 0 on, so no earlier than the k-th smallest rho_min. By then the first k have done
  at least the k smallest areas G_j rho_min_j of work, at most N GPUs a slot, so it ends
  no earlier than that sum over N (rounded up). The mean over k of the larger of the two
  is a lower bound on the average JCT (``jct_bound``); it is at least both the mean
  rho_min and the squashed-area bound, which are recorded too.

Policies: sjf-bco, ff, consolidate, lpt with each placement, laf with each placement,
improve at its default budget (40 iterations) and at 200 iterations, and (on 160x20 only)
improve with order moves only (the choice of neighbourhood, measured). Results go to
benchmarks/results/classical.json: one row per (size, preset, seed, policy) and a summary
of the means over the seeds.
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np
from common import save, table

from rar_opt.algorithms import run_policy
from rar_opt.bounds import lower_bounds
from rar_opt.check import check
from rar_opt.instance import Instance
from rar_opt.instances.calibration import PRESETS
from rar_opt.instances.generate import generate

SIZES = ((160, 20), (160, 10), (320, 20))
SEEDS = range(5)
POLICIES: tuple[tuple[str, str, dict], ...] = (
    ("sjf-bco", "sjf-bco", {}),
    ("ff", "ff", {}),
    ("consolidate", "consolidate", {}),
    ("lpt", "lpt", {}),  # placement consolidate
    ("lpt/first-fit", "lpt", {"placement": "first-fit"}),
    ("lpt/least-loaded", "lpt", {"placement": "least-loaded"}),
    ("laf", "laf", {}),
    ("laf/first-fit", "laf", {"placement": "first-fit"}),
    ("laf/least-loaded", "laf", {"placement": "least-loaded"}),
    ("improve", "improve", {}),
    ("improve-200", "improve", {"iterations": 200, "time_limit": 600.0}),
    ("improve-200/order", "improve", {"iterations": 200, "time_limit": 600.0, "moves": "order"}),
)
ONLY_PAPER_SIZE = {"improve-200/order"}


def jct_bound(instance: Instance) -> tuple[float, float, float]:
    """(mean rho_min, squashed-area bound, their per-rank combination), lower bounds on the
    average JCT; the third is the largest (module docstring)."""
    rho = np.sort(instance.bounds.rho_min.astype(float))
    area = np.sort(instance.arrays.gpus * instance.bounds.rho_min.astype(float))
    squashed = np.ceil(np.cumsum(area) / instance.cluster.num_gpus - 1e-9)
    return float(rho.mean()), float(squashed.mean()), float(np.maximum(rho, squashed).mean())


def main() -> None:
    quick = "--quick" in sys.argv
    sizes = SIZES[:1] if quick else SIZES
    seeds = range(2) if quick else SEEDS
    rows = []
    for jobs, servers in sizes:
        for preset in PRESETS:
            for seed in seeds:
                inst = generate("paper", seed, jobs=jobs, servers=servers, preset=preset)
                lb = lower_bounds(inst)
                span_bound = max(lb.longest, lb.work)
                mean_rho, squashed, combined = jct_bound(inst)
                for label, name, options in POLICIES:
                    if label in ONLY_PAPER_SIZE and (jobs, servers) != (160, 20):
                        continue
                    began = time.perf_counter()
                    result = run_policy(inst, name, seed=seed, **options)
                    wall = time.perf_counter() - began
                    report = check(inst, result.schedule)
                    assert report.feasible or result.exceeds_horizon, (inst.name, label, report.names())
                    res = report.result
                    rows.append(
                        {
                            "size": f"{jobs}x{servers}",
                            "preset": preset,
                            "seed": seed,
                            "policy": label,
                            "makespan": int(res.makespan),
                            "avg_jct": round(float(res.avg_jct), 3),
                            "longest": int(lb.longest),
                            "work": int(lb.work),
                            "ratio": round(res.makespan / span_bound, 4),
                            "jct_bound": round(combined, 3),
                            "mean_rho_min": round(mean_rho, 3),
                            "squashed_area": round(squashed, 3),
                            "jct_ratio": round(float(res.avg_jct) / combined, 4),
                            "within_horizon": not result.exceeds_horizon,
                            "wall_s": round(wall, 3),
                        }
                    )
                print(f"{jobs}x{servers} {preset} s{seed} done", flush=True)
    summary = summarise(rows)
    print(table(summary))
    save("classical", rows, summary=summary, seeds=list(seeds), sizes=[f"{j}x{s}" for j, s in sizes])


def summarise(rows: list[dict]) -> list[dict]:
    """Means over the seeds per (size, preset, policy), with the range of the ratio."""
    out = []
    keys = dict.fromkeys((r["size"], r["preset"], r["policy"]) for r in rows)
    for size, preset, policy in keys:
        group = [r for r in rows if (r["size"], r["preset"], r["policy"]) == (size, preset, policy)]
        ratios = [r["ratio"] for r in group]
        out.append(
            {
                "size": size,
                "preset": preset,
                "policy": policy,
                "ratio": round(statistics.mean(ratios), 3),
                "ratio_min": min(ratios),
                "ratio_max": max(ratios),
                "optimal_runs": sum(r["makespan"] == max(r["longest"], r["work"]) for r in group),
                "avg_jct": round(statistics.mean(r["avg_jct"] for r in group), 1),
                "jct_ratio": round(statistics.mean(r["jct_ratio"] for r in group), 3),
                "jct_bound": round(statistics.mean(r["jct_bound"] for r in group), 1),
                "wall_s": round(statistics.mean(r["wall_s"] for r in group), 2),
            }
        )
    return out


if __name__ == "__main__":
    main()
