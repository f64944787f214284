"""How `auto` spends its full-model time: ``python benchmarks/searches.py``.

The plans below differ only in what comes after the contention-free phases: which CP-SAT
searches (``rar_opt.solvers.cpsat.SEARCHES``) the full model runs, with which share of the
time left, and whether probes at the floor come first and with which share of the time
left (``probes-25``, ``probes-50``), with or without the contention-free phases
(``no-cf-...``). Every other setting is `auto`'s.
They run on the instances of ``benchmarks/frontier.py`` where the contention-free phases
do not close (``HARD``), 60 s each on one thread, two runs at a time on a 2-core machine
(``--workers``). `auto` itself also runs with CP-SAT seeds 1 and 2, to show how much the
seed moves the times. Results: ``benchmarks/results/searches.json``; ``--summary`` prints
the table of docs/exactness.md ("Searches") again; ``--output NAME`` writes NAME.json
instead (a comparison that should not replace the stored one).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time

from common import RESULTS, run_pool, save
from frontier import instance

from rar_opt.solvers.decompose import AUTO, Plan, decompose

HARD = [
    ("heavy", 12, 4, 80, 1),
    *[(family, 16, 8, 100, seed) for family in ("tiny", "heavy") for seed in (0, 1, 2)],
    ("tiny", 20, 8, 120, 0),
    ("heavy", 20, 8, 120, 0),
]
BEFORE = dataclasses.replace(AUTO, bins_share=None, probe_share=0.5, probe_reversal="all")
"""`auto` without the GPU-bins phase (probes with half the time left, no contention-free
phases), with the time-reversal row in every probe (``auto-s28-no-reversal``: without it).
CHANGELOG.md says when `auto` was this plan."""
PLANS: dict[str, Plan] = {
    "default-then-core": dataclasses.replace(
        BEFORE, full_searches=(("default", 0.1), ("core", 1.0)), probe_share=None, contention_free=True
    ),
    "default-then-no-lp": dataclasses.replace(
        BEFORE, full_searches=(("default", 0.1), ("no-lp", 1.0)), probe_share=None, contention_free=True
    ),
    "no-lp": dataclasses.replace(BEFORE, probe_share=None, contention_free=True),
    "auto": AUTO,  # probes (50%), GPU bins (25% of the rest), then no-lp
    "auto-s28": BEFORE,
    "auto-reversal-all": dataclasses.replace(AUTO, probe_reversal="all"),
    "auto-no-reversal": dataclasses.replace(AUTO, probe_reversal="none"),
    "auto-s28-no-reversal": dataclasses.replace(BEFORE, probe_reversal="none"),
    "bins-10": dataclasses.replace(AUTO, bins_share=0.1),
    "probes-10": dataclasses.replace(BEFORE, probe_share=0.1, contention_free=True),  # an earlier auto
    "probes-25": dataclasses.replace(BEFORE, probe_share=0.25, contention_free=True),
    "probes-50": dataclasses.replace(BEFORE, probe_share=0.5, contention_free=True),
    "no-cf-probes-25": dataclasses.replace(BEFORE, probe_share=0.25, contention_free=False),
    "no-cf-probes-35": dataclasses.replace(BEFORE, probe_share=0.35, contention_free=False),
    "no-cf-probes-50": dataclasses.replace(BEFORE, probe_share=0.5, contention_free=False),
    "no-cf-probes-75": dataclasses.replace(BEFORE, probe_share=0.75, contention_free=False),
    "no-cf-probes-90": dataclasses.replace(BEFORE, probe_share=0.9, contention_free=False),
}
"""``auto`` is `auto`; the others are earlier plans of `auto` and their neighbours:
``default-then-core`` the plan before the no-lp search, ``probes-10`` the plan with the
contention-free phases and probes, ``no-cf-probes-50`` (= ``auto-s28``) the plan without
the contention-free phases or the GPU-bins phase (CHANGELOG.md has when each was `auto`).
Each plan says where its probes carry the time-reversal row (``probe_reversal``;
docs/exactness.md, "Probes"); rows of result files older than that row are not the same
code. Each result file records the plans it ran (``plans``), so a row always says what it
measured."""


def task(plan_name: str, key: tuple, seed: int, time_limit: float) -> dict:
    inst = instance(*key)
    began = time.perf_counter()
    res = decompose(inst, time_limit=time_limit, seed=seed, plan=PLANS[plan_name])
    family, jobs, servers, horizon, inst_seed = key
    return {
        "instance": f"{family}-{jobs}x{servers}x{horizon}-s{inst_seed}",
        "plan": plan_name,
        "cpsat_seed": seed,
        "status": str(res.status),
        "makespan": res.makespan,
        "bound": res.bound,
        "wall_s": round(time.perf_counter() - began, 2),
        "proved_by": res.options.get("proved_by"),
        "phases": [p.to_dict() for p in res.record.phases],
    }


def cell(row: dict) -> str:
    if row["status"] == "optimal":
        return f"{row['wall_s']:.1f} s"
    return f"{row['makespan']} / {row['bound']:g}" if row["makespan"] is not None else f"- / {row['bound']}"


def summary(rows: list[dict]) -> str:
    """Instances down, plans (seed 0) across, then auto with seeds 1 and 2."""
    seeds = sorted({r["cpsat_seed"] for r in rows if r["cpsat_seed"]})
    columns = [(p, 0) for p in dict.fromkeys(r["plan"] for r in rows)] + [("auto", s) for s in seeds]
    by = {(r["instance"], r["plan"], r["cpsat_seed"]): r for r in rows}
    head = [f"{p}" if s == 0 else f"{p} (seed {s})" for p, s in columns]
    lines = ["| instance | " + " | ".join(head) + " |", "|---|" + "---|" * len(columns)]
    for name in dict.fromkeys(r["instance"] for r in rows):
        cells = [cell(by[name, p, s]) if (name, p, s) in by else "not run" for p, s in columns]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--summary", action="store_true")
    parser.add_argument("--plans", help="comma-separated names of PLANS (default: all)")
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seeds", default="1,2", help="more CP-SAT seeds for auto (default 1,2; '' for none)")
    parser.add_argument("--output", default="searches", help="result file name (default searches)")
    args = parser.parse_args()
    path = RESULTS / f"{args.output}.json"
    if args.summary:
        print(summary(json.loads(path.read_text())["rows"]))
        return
    plans = args.plans.split(",") if args.plans else list(PLANS)
    jobs = [(p, key, 0) for p in plans for key in HARD]
    if "auto" in plans:
        jobs += [("auto", key, int(seed)) for seed in args.seeds.split(",") if seed for key in HARD]
    with run_pool(args.workers) as pool:
        futures = [pool.submit(task, p, key, seed, args.time_limit) for p, key, seed in jobs]
        rows = []
        for future in futures:
            rows.append(future.result())
            r = rows[-1]
            print(f"{r['instance']:>20} {r['plan']:>18} seed {r['cpsat_seed']}: {cell(r)}", flush=True)
    save(
        args.output,
        rows,
        time_limit_s=args.time_limit,
        threads=1,
        workers=args.workers,
        plans={p: dataclasses.asdict(PLANS[p]) for p in plans},
    )
    print(summary(rows))


if __name__ == "__main__":
    main()
