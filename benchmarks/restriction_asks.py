"""Seconds to a schedule at the optimum: each restriction ask of the race (rar_opt.solvers.race) alone.

Asks the contention-free restriction (``cfree``), the mode restriction (``modes``) or the mode
restriction with links shared by the modes that lose no slot at contention 2 (``shared``) by the
stored optimum of frontier instances in ``instances/frontier/``, under a CP-SAT search, with
CP-SAT's presolve probing as it is or off (``cp_model_probing_level`` 0: on the mode
restriction at 24 x 8 x 150 the probing alone takes 6-7 s before any search), for each seed.

    PYTHONPATH=. python benchmarks/restriction_asks.py --seeds 0,1,2 --time-limit 20 --out NAME

``--asks`` and ``--instances`` narrow the run (comma lists); ``--probing as-is`` asks only
with the search's own presolve probing (the ``no-probing`` search sets it off itself).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from common import result_name, run_pool, save, table

from rar_opt import Instance
from rar_opt.solvers import cpsat
from rar_opt.solvers.budget import Budget
from rar_opt.solvers.phases import restriction_by
from rar_opt.solvers.plan import RESTRICT_FORMULATIONS

FRONTIER = Path(__file__).resolve().parent.parent / "instances" / "frontier"
OPTIMA = {
    "heavy-24x8x150-s1": 84,
    "heavy-24x8x150-s2": 74,
    "heavy-24x8x150-s3": 56,
    "heavy-20x8x120-s0": 58,
    "tiny-24x8x150-s3": 55,
    "tiny-24x8x150-s4": 66,
    "tiny-24x8x150-s1": 77,  # since 2026-12-07 (thirty-second session), at its floor
}
FLOORS = {
    "tiny-24x8x150-s2": 71,
    "heavy-24x8x150-s4": 71,
    "tiny-20x8x120-s9": 49,  # since 2026-12-07 (thirty-third session)
    "heavy-20x8x120-s10": 61,
}
"""Open records asked by their proven floor (instances/README.md): a schedule found there is optimal."""
ASKED = {**OPTIMA, **FLOORS}
"""The instances asked and their proven optima (instances/README.md)."""
ASKS = ("modes:default", "modes:no-lp", "cfree:no-lp")


def ask(name: str, entry: str, probing: int | None, seed: int, limit: float) -> dict:
    """One ask of ``entry`` (formulation:search) by the optimum of ``name``."""
    formulation, _, search = entry.partition(":")
    key = search
    if probing is not None:  # a search of our own: the named one with the probing level set
        key = f"{search}+probing{probing}"
        cpsat.SEARCHES[key] = (*cpsat.SEARCHES[search], ("cp_model_probing_level", probing))
    inst = Instance.read(FRONTIER / f"{name}.json")
    slot = ASKED[name]
    raw, _, span, seconds = restriction_by(inst, slot, Budget.start(limit, seed=seed), True, formulation, key)
    return {
        "instance": name,
        "asked": slot,
        "optimum_known": name in OPTIMA,
        "entry": entry,
        "probing_level": "cp-sat default" if probing is None else probing,
        "seed": seed,
        "status": str(raw.status),
        "makespan": span,
        "seconds": round(seconds, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--time-limit", type=float, default=20.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=result_name, default="restriction-asks")
    parser.add_argument("--asks", default=",".join(ASKS), help="entries formulation:search (default: %(default)s)")
    parser.add_argument("--instances", default=",".join(n for n in OPTIMA if n.startswith("heavy-24")))
    parser.add_argument("--probing", choices=("both", "as-is"), default="both")
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    names, asks = args.instances.split(","), args.asks.split(",")
    unknown = sorted(set(names) - set(ASKED))
    if unknown:
        parser.error(f"--instances: no stored optimum or floor for {', '.join(unknown)} (known: {', '.join(ASKED)})")
    for entry in asks:
        formulation, _, search = entry.partition(":")
        if formulation not in RESTRICT_FORMULATIONS or search not in cpsat.SEARCHES:
            choices = ", ".join(f"{f}:SEARCH" for f in RESTRICT_FORMULATIONS)
            parser.error(f"--asks: {entry!r} is not one of {choices} (SEARCH: {', '.join(cpsat.SEARCHES)})")
    levels = (None, 0) if args.probing == "both" else (None,)
    tasks = [(n, e, p, s, args.time_limit) for n in names for e in asks for p in levels for s in seeds]
    rows = []
    with run_pool(args.workers) as pool:
        for row in pool.map(ask, *zip(*tasks, strict=True)):
            rows.append(row)
            print(table([row]).splitlines()[-1], flush=True)
    path = save(
        args.out,
        rows,
        time_limit_s=args.time_limit,
        seeds=seeds,
        threads=1,
        workers=args.workers,
        optima=OPTIMA,
        floors=FLOORS,
    )
    print(f"written: {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
