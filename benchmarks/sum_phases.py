"""`auto` for the total completion time with and without the neighbourhood phase, side by side.

Variants (``--variant``):

* ``before``: `auto` as it was before the phase (2026-12-03): `improve` on 45% of the
  time left, the backfill search on 90% of the rest, no caps, no neighbourhoods;
* ``shipped``: `auto` as it is (`rar_opt.solvers.sums`: 30% / 50% / 90%, `improve` and
  the backfill search each at most `SEARCH_PLATEAU_SECONDS`).

Per instance of the paper generator (every preset, seeds 0-2, the sizes of ``--sizes``):
the sum, the gap to the bound `auto` reports, which phase found the best schedule, the
phases' sums and seconds, CPU seconds and the load. Run two variants at once to compare
them under the same load.

    python benchmarks/sum_phases.py --variant before|shipped [--seconds 60] [--sizes 160x20]

Results: benchmarks/results/sum-phases-<variant>-<seconds>s.json (``--out`` names another).
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

from common import result_name, save

from rar_opt import solvers
from rar_opt.instances.calibration import PRESETS
from rar_opt.instances.generate import generate
from rar_opt.solvers import sums


def before() -> None:
    """Put `auto` for sums back as it was before the neighbourhood phase (and the
    server-orders search, which came later and runs just before it)."""
    sums._on_schedule = lambda *args, **kwargs: None  # type: ignore[assignment]
    sums.SEARCH_PLATEAU_SECONDS = float("inf")
    sums.IMPROVE_SHARE_BEFORE_BACKFILL = 0.45
    sums.BACKFILL_SHARE_BEFORE_NEIGHBOURHOODS = sums.ALONE_SHARE


def row(inst: Any, seconds: float, variant: str) -> dict[str, Any]:
    cpu, wall = time.process_time(), time.perf_counter()
    res = solvers.solve(inst, "auto", objective="total", time_limit=seconds)
    assert res.objective is not None and res.bound is not None and res.schedule is not None
    return {
        "variant": variant,
        "seconds": seconds,
        "instance": inst.name,
        "total": res.objective,
        "bound": res.bound,
        "gap": round((res.objective - res.bound) / res.bound, 5),
        "by": res.schedule.meta.get("method"),
        "wall_s": round(time.perf_counter() - wall, 1),
        "cpu_s": round(time.process_time() - cpu, 1),
        "load_1min": round(os.getloadavg()[0], 2),
        "phases": [(p.name, p.objective, round(p.seconds, 1)) for p in res.record.phases],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--variant", choices=("before", "shipped"), required=True)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--sizes", default="160x20", help="comma-separated JOBSxSERVERS")
    parser.add_argument("--only", default="", help="comma-separated instance names")
    parser.add_argument("--out", type=result_name)
    args = parser.parse_args()
    if args.variant == "before":
        before()
    rows = []
    for size in args.sizes.split(","):
        jobs, servers = (int(x) for x in size.split("x"))
        for preset in PRESETS:
            for seed in range(3):
                inst = generate("paper", seed, jobs=jobs, servers=servers, preset=preset)
                if args.only and inst.name not in args.only.split(","):
                    continue
                rows.append(row(inst, args.seconds, args.variant))
                print(rows[-1], flush=True)
                save(args.out or f"sum-phases-{args.variant}-{args.seconds:g}s", rows, sizes=args.sizes)


if __name__ == "__main__":
    main()
