"""Best bound and best schedule at paper scale: ``python benchmarks/paper_scale.py [SECONDS]``.

For the paper's instance (160 jobs, 20 servers, T = 1200, seed 0) under each generator
preset, ``auto`` runs for SECONDS (default 600) on one worker: the best of SJF-BCO, LS and
FF, then the contention-free relaxation (its bound) and restriction (its schedule) on
CP-SAT; the full CP-SAT model is far beyond its size guard at this scale, so those two
phases share the whole budget. Each row: the best schedule's makespan (re-simulated), the
best proven lower bound, the gap, and where each came from. Results go to
benchmarks/results/paper-scale.json.
"""

from __future__ import annotations

import sys

from common import save, table

from rar_opt.algorithms import run_policy
from rar_opt.check import check
from rar_opt.instances.calibration import PRESETS
from rar_opt.instances.generate import generate
from rar_opt.solvers import PhaseKind, solve


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 600.0
    rows = []
    for preset in PRESETS:
        inst = generate("paper", 0, preset=preset)
        sjf = check(inst, run_policy(inst, "sjf-bco").schedule).result.makespan
        res = solve(inst, time_limit=seconds, seed=0)
        relaxed, restricted = (res.record.phase(kind) for kind in (PhaseKind.RELAXATION, PhaseKind.RESTRICTION))
        rows.append(
            {
                "instance": inst.name,
                "preset": preset,
                "sjf_bco": sjf,
                "best_known": res.makespan,
                "from": res.schedule.meta.get("method") if res.schedule is not None else None,
                "best_bound": res.bound,
                "gap": None if res.gap is None else round(res.gap, 4),
                "status": str(res.status),
                "relaxation": None if relaxed is None else str(relaxed.status),
                "restriction_makespan": None if restricted is None else restricted.objective,
                "wall_s": round(res.wall_s, 1),
            }
        )
        print(table(rows[-1:]), flush=True)
        save("paper-scale", rows, time_limit_s=seconds, threads=1, seed=0, method="auto")
    print(table(rows))


if __name__ == "__main__":
    main()
