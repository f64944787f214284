"""Which server rule should the backfill phase of ``auto`` (total completion time) use?
``auto`` within ``--seconds`` (60) with ``sums.BACKFILL_FITS`` set to ``--fit``, on the goal
rows of issue 31 that ``neighbourhood_steps.py`` runs:

    python benchmarks/backfill_fit.py --fit large [--seconds 60] [--only NAME,...]
    python benchmarks/backfill_fit.py --fit best,large   # each for half the phase

Run one process per rule, two at once on the 2-core machine, and compare the files
(``benchmarks/results/backfill-fit-<fit>.json``): per instance the best sum, its gap to the
flow LP's bound and the phase that found it. Seed 0 everywhere.
"""

from __future__ import annotations

import argparse
import time

from common import save
from neighbourhood_steps import ROWS

from rar_opt import solvers
from rar_opt.algorithms.backfill import FITS
from rar_opt.instances.generate import generate
from rar_opt.solvers import sums


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--fit", required=True, help=f"comma-separated server rules, searched in turn ({', '.join(FITS)})"
    )
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--only", default="", help="comma-separated instance names")
    parser.add_argument("--out", default="", help="results file name (default backfill-fit-<fit>)")
    args = parser.parse_args()
    sums.BACKFILL_FITS = tuple(args.fit.split(","))
    rows = []
    for jobs, servers, preset, seed in ROWS:
        inst = generate("paper", seed, jobs=jobs, servers=servers, preset=preset)
        if args.only and inst.name not in args.only.split(","):
            continue
        cpu = time.process_time()
        res = solvers.solve(inst, "auto", objective="total", time_limit=args.seconds, seed=0)
        assert res.schedule is not None and res.bound is not None and res.objective is not None
        phases = {p.search: p.objective for p in res.record.phases if p.search in ("improve", "backfill")}
        rows.append(
            {
                "instance": inst.name,
                "fit": args.fit,
                "best": int(res.objective),
                "bound": int(res.bound),
                "gap": round((res.objective - res.bound) / res.bound, 5),
                "by": res.schedule.meta.get("method"),
                "backfill_phase": phases.get("backfill"),
                "cpu_s": round(time.process_time() - cpu, 1),
            }
        )
        print(rows[-1], flush=True)
    save(args.out or f"backfill-fit-{args.fit}", rows, seconds=args.seconds, fit=args.fit)


if __name__ == "__main__":
    main()
