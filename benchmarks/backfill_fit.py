"""Which server rule should the backfill phase of ``auto`` (total completion time) use?
``auto`` within ``--seconds`` (60) with ``sums.BACKFILL_FITS`` set to ``--fit``, on the goal
rows of issue 31 that ``neighbourhood_steps.py`` runs:

    python benchmarks/backfill_fit.py --fit large [--seconds 60] [--only NAME,...]
    python benchmarks/backfill_fit.py --fit best,large   # each for half the phase

Run one process per rule, two at once on the 2-core machine, and compare the files
(``benchmarks/results/backfill-fit-<fit>.json``): per instance the best sum, its gap to the
flow LP's bound and the phase that found it. Seed 0 unless ``--seed`` says otherwise.
"""

from __future__ import annotations

import argparse

from common import save
from neighbourhood_steps import solved_rows

from rar_opt.algorithms.backfill import FITS, SPLITS
from rar_opt.solvers import sums


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--fit", required=True, help=f"comma-separated server rules, searched in turn ({', '.join(FITS)})"
    )
    parser.add_argument("--split", default=sums.BACKFILL_SPLIT, help=f"the split rule ({', '.join(SPLITS)})")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=0, help="auto's seed (its searches and CP-SAT's)")
    parser.add_argument("--only", default="", help="comma-separated instance names")
    parser.add_argument("--out", default="", help="results file name (default backfill-fit-<fit>)")
    args = parser.parse_args()
    sums.BACKFILL_FITS, sums.BACKFILL_SPLIT = tuple(args.fit.split(",")), args.split
    rows = []
    for _, res, row in solved_rows(args.only, args.seconds, args.seed):
        phases = {p.search: p.objective for p in res.record.phases if p.search in ("improve", "backfill")}
        rows.append(
            {**row, "fit": args.fit, "split": args.split, "seed": args.seed, "backfill_phase": phases.get("backfill")}
        )
        print(rows[-1], flush=True)
    save(
        args.out or f"backfill-fit-{args.fit}",
        rows,
        seconds=args.seconds,
        fit=args.fit,
        split=args.split,
        seed=args.seed,
    )


if __name__ == "__main__":
    main()
