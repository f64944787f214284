"""Lower bounds on the total completion time at paper scale: ``python benchmarks/flow_bounds.py``.

For each instance: the per-rank bound (``rar_opt.bounds.completion_bounds``), the flow LP
on the GPU pool (``classes=False``) and with the server classes and split times
(``classes=True``), each with its seconds and how it was proven (docs/exactness.md, "The flow LP"), and
the best average JCT among the policies of ``rar-opt compare`` (each schedule re-simulated
by it). To tell which side holds a gap back, one more schedule: the jobs in the order of
their mean start in the LP's optimum, placed by consolidate's rule (``lp_order``, a
diagnostic here, judged by the checker). The gap is (best - bound) / bound on the average
completion time. Instances: the bundled paper-160x20-s0 and generated ones (paper-literal
at 160 x 10 and 320 x 20, paper-split15 and contention-heavy at 160 x 20 and 160 x 10,
Poisson arrivals at load 0.9).

Results: ``benchmarks/results/flow-bounds-<date>.json``; ``--summary FILE`` prints a table again.
"""

from __future__ import annotations

import argparse
import datetime
import json
import time
from pathlib import Path

import numpy as np
from common import RESULTS, save, table

from rar_opt import Instance, Schedule, check
from rar_opt.algorithms.baselines import consolidate_rule
from rar_opt.algorithms.engine import as_trial, run_list
from rar_opt.bounds import completion_bounds
from rar_opt.instances.generate import generate
from rar_opt.instances.library import instance_path
from rar_opt.solvers.flowlp import flow_lp_bound
from rar_opt.studies.compare import compare

CASES: tuple[tuple[str, dict], ...] = (
    ("paper-160x20-s0", {}),
    ("160x10 literal s1", {"jobs": 160, "servers": 10, "seed": 1}),
    ("320x20 literal s2", {"jobs": 320, "servers": 20, "seed": 2}),
    ("160x20 split15 s6", {"jobs": 160, "servers": 20, "seed": 6, "preset": "paper-split15"}),
    ("160x20 heavy s3", {"jobs": 160, "servers": 20, "seed": 3, "preset": "contention-heavy"}),
    ("160x10 heavy s4", {"jobs": 160, "servers": 10, "seed": 4, "preset": "contention-heavy"}),
    ("160x20 load0.9 s5", {"jobs": 160, "servers": 20, "seed": 5, "load": 0.9}),
)


def load(label: str, spec: dict) -> Instance:
    if not spec:
        return Instance.read(instance_path(label))
    spec = dict(spec)
    return generate("paper", spec.pop("seed"), **spec)


def lp_order(instance: Instance, mean_starts: tuple[float, ...] | None) -> float | None:
    """A diagnostic, not a policy: the jobs listed by their mean start in the LP's optimum
    (ties: shorter first), placed by consolidate's rule on the list-scheduling engine, the
    schedule judged by the checker; its average completion time (None: no LP solution)."""
    if mean_starts is None:
        return None
    n = instance.num_jobs
    order = np.lexsort((instance.bounds.rho_min, np.array(mean_starts)))
    trial = as_trial(run_list(instance, order, consolidate_rule, 10.0 * instance.horizon, np.zeros(n), False))
    if trial is None:
        return None
    ys = np.zeros((n, instance.num_servers), dtype=np.int64)
    for j, ids in enumerate(trial.gpu_ids):
        for server, _ in ids:
            ys[j, server] += 1
    report = check(instance, Schedule.from_arrays(instance.name, trial.starts, ys))
    if not report.feasible:
        return None
    return float(report.result.completion.sum()) / n


def run(time_limit: float) -> list[dict]:
    rows = []
    for label, spec in CASES:
        inst = load(label, spec)
        began = time.perf_counter()
        per_rank = completion_bounds(inst).total
        rank_s = time.perf_counter() - began
        plain = flow_lp_bound(inst, time_limit=time_limit, classes=False)
        strong = flow_lp_bound(inst, time_limit=time_limit, classes=True)
        began = time.perf_counter()
        policies = [p for p in compare(inst).rows if p.within_horizon]
        best = min(policies, key=lambda p: p.avg_jct)
        compare_s = time.perf_counter() - began
        ordered = lp_order(inst, strong.mean_starts)
        n = inst.num_jobs
        bound = max(per_rank, plain.total, strong.total)
        rows.append(
            {
                "instance": inst.name,
                "jobs": n,
                "gpus": inst.cluster.num_gpus,
                "per_rank": per_rank / n,
                "per_rank_s": rank_s,
                "lp_pool": plain.total / n,
                "lp_pool_s": plain.seconds,
                "lp_pool_method": plain.method,
                "lp_classes": strong.total / n,
                "lp_classes_s": strong.seconds,
                "lp_classes_method": strong.method,
                "best_avg_jct": best.avg_jct,
                "best_policy": best.policy,
                "gap": (best.avg_jct - bound / n) / (bound / n),
                "lp_order_avg_jct": ordered,
                "gap_with_lp_order": (min(best.avg_jct, ordered or np.inf) - bound / n) / (bound / n),
                "compare_s": compare_s,
                "iterations": [plain.iterations, strong.iterations],
            }
        )
        print(table(rows[-1:]), flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--time-limit", type=float, default=60.0, help="seconds per flow LP (default 60)")
    parser.add_argument("--summary", type=Path, help="print the table of a results file and stop")
    args = parser.parse_args()
    if args.summary:
        rows = json.loads(args.summary.read_text())["rows"]
        print(table([{k: v for k, v in r.items() if k != "iterations"} for r in rows]))
        return
    rows = run(args.time_limit)
    path = save(f"flow-bounds-{datetime.date.today().isoformat()}", rows, time_limit=args.time_limit, threads=1)
    print(table([{k: v for k, v in r.items() if k != "iterations"} for r in rows]))
    print(f"written: {path.relative_to(RESULTS.parent.parent)}")


if __name__ == "__main__":
    main()
