"""How should ``auto`` for the sums share a 60 s limit between its searches, now that the
exact-neighbourhood phase takes 0.1 s steps? ``auto`` for the total completion time with
``improve``'s and the backfill search's shares of the time left set by the flags
(``sums.IMPROVE_SHARE_BEFORE_BACKFILL``, ``sums.BACKFILL_SHARE_BEFORE_NEIGHBOURHOODS``); the
neighbourhoods get the rest as always. On the rows of ``neighbourhood_steps.py``:

    python benchmarks/sum_shares.py --improve 0.15 --backfill 0.3 [--server-orders 0.15] [--seconds 60] [--only ...]

``--server-orders`` sets the server-orders search's share of the time left before the
neighbourhoods (``sums.SERVER_ORDERS_SHARE``; 0 leaves it out), ``--backfill-focus`` the
share of the backfill search's moves drawn by GPU-slots (``sums.BACKFILL_FOCUS``), and
``--backfill-restarts`` its runs per server rule in the race (``sums.BACKFILL_RESTARTS``),
``--backfill-race`` the race's share of the phase (``sums.BACKFILL_RACE_SHARE``; 1 for no
continuation) and ``--start-splits`` how its starts split (``sums.BACKFILL_START_SPLITS``).

Run one process per variant, two at once on the 2-core machine, and compare the files
(``benchmarks/results/sum-shares-<improve>-<backfill>.json``): per instance the best sum,
its gap to the flow LP's bound, the phase that found it and each search's seconds. Seed 0
unless ``--seed`` says otherwise.
"""

from __future__ import annotations

import argparse

from common import save
from neighbourhood_steps import solved_rows

from rar_opt.solvers import sums


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--improve", type=float, required=True, help="improve's share of the time left")
    parser.add_argument("--backfill", type=float, required=True, help="the backfill search's share")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--only", default="", help="comma-separated instance names")
    parser.add_argument("--seed", type=int, default=0, help="auto's seed (its searches and CP-SAT's)")
    parser.add_argument("--server-orders", type=float, default=None, help="the server-orders search's share")
    parser.add_argument(
        "--backfill-focus", type=float, default=None, help="the share of the backfill search's moves drawn by GPU-slots"
    )
    parser.add_argument("--backfill-restarts", type=int, default=None, help="the backfill search's runs per rule")
    parser.add_argument("--backfill-race", type=float, default=None, help="the race's share of the backfill phase")
    parser.add_argument("--start-splits", default=None, help="the start kinds raced, comma-separated (none,both)")
    parser.add_argument(
        "--improve-probe", type=float, default=None, help="improve's share of its time before the race (1: no probe)"
    )
    parser.add_argument("--out", default="", help="results file name (default sum-shares-<improve>-<backfill>)")
    args = parser.parse_args()
    sums.IMPROVE_SHARE_BEFORE_BACKFILL = args.improve
    sums.BACKFILL_SHARE_BEFORE_NEIGHBOURHOODS = args.backfill
    if args.server_orders is not None:
        sums.SERVER_ORDERS_SHARE = args.server_orders
    if args.backfill_focus is not None:
        sums.BACKFILL_FOCUS = args.backfill_focus
    if args.backfill_restarts is not None:
        sums.BACKFILL_RESTARTS = args.backfill_restarts
    if args.backfill_race is not None:
        sums.BACKFILL_RACE_SHARE = args.backfill_race
    if args.start_splits is not None:
        sums.BACKFILL_START_SPLITS = tuple(args.start_splits.split(","))
    if args.improve_probe is not None:
        sums.IMPROVE_PROBE_SHARE = args.improve_probe
    rows = []
    for _, res, row in solved_rows(args.only, args.seconds, args.seed):
        phases = [(p.name, p.objective, round(p.seconds, 1)) for p in res.record.phases]
        rows.append({**row, "seconds": {p.name: round(p.seconds, 1) for p in res.record.phases}, "phases": phases})
        print(rows[-1], flush=True)
    name = args.out or f"sum-shares-{args.improve:g}-{args.backfill:g}"
    save(
        name,
        rows,
        seconds=args.seconds,
        improve=args.improve,
        backfill=args.backfill,
        server_orders=sums.SERVER_ORDERS_SHARE,
        backfill_focus=sums.BACKFILL_FOCUS,
        backfill_restarts=sums.BACKFILL_RESTARTS,
        backfill_race=sums.BACKFILL_RACE_SHARE,
        start_splits=sums.BACKFILL_START_SPLITS,
        improve_probe=sums.IMPROVE_PROBE_SHARE,
        seed=args.seed,
    )


if __name__ == "__main__":
    main()
