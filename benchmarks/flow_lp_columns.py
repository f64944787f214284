"""How many columns the flow LP's column generation should add per kind and round:
``python benchmarks/flow_lp_columns.py [--per-kind 1,2,3,5,10] [--limit 200]``.

The master is re-solved by primal simplex after every round (docs/exactness.md, "The flow
LP", section 3); more columns per round mean fewer rounds but longer re-solves. Per
instance (the paper generator, paper-literal: the LP hardly moves between presets) and per
value of ``per_kind``, the seconds ``flow_lp_bound`` takes to prove the LP's optimum, its
rounds and its columns; the value it proves is the same for every ``per_kind`` (checked).
One process, one thread; run it alone on the machine.

Results: ``benchmarks/results/flow-lp-columns.json``.
"""

from __future__ import annotations

import argparse
import time

from common import save, table

from rar_opt.instances.generate import generate
from rar_opt.solvers.flowlp import flow_lp_bound

SIZES = ((160, 20, 0), (160, 20, 1), (160, 20, 2), (160, 10, 0), (160, 10, 1), (160, 10, 2),
         (320, 20, 0), (320, 20, 1), (320, 20, 2), (640, 20, 0), (640, 20, 1))  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-kind", default="1,2,3,5,10", help="the values to compare (comma-separated)")
    parser.add_argument("--limit", type=float, default=200.0, help="the LP's time limit, seconds")
    args = parser.parse_args()
    values = [int(v) for v in args.per_kind.split(",")]
    rows = []
    for jobs, servers, seed in SIZES:
        inst = generate("paper", seed, jobs=jobs, servers=servers)
        proved = set()
        for per_kind in values:
            began = time.perf_counter()
            found = flow_lp_bound(inst, time_limit=args.limit, per_kind=per_kind)
            seconds = time.perf_counter() - began
            proved.add((found.total, found.method))
            rows.append(dict(instance=inst.name, per_kind=per_kind, total=found.total, method=found.method,
                             rounds=found.iterations, columns=found.columns, seconds=round(seconds, 2)))  # fmt: skip
        if len(proved) != 1:
            raise AssertionError(f"{inst.name}: the values differ between per_kind values: {proved}")
    print(table(rows))
    sums = {v: round(sum(r["seconds"] for r in rows if r["per_kind"] == v), 1) for v in values}
    print("seconds over all instances, per per_kind:", sums)
    save("flow-lp-columns", rows, per_kind=values, limit=args.limit, seconds_per_value=sums)


if __name__ == "__main__":
    main()
