"""The exact frontier: which method proves which size, ``python benchmarks/frontier.py``.

Sizes 8x4x60 to 20x8x120 (jobs x servers x slots), three instance seeds each, two families:

* ``tiny``: the tiny generator's physics with iterations scaled so SJF-BCO ends near 0.8 T
  (the recipe of ``benchmarks/exact.py``);
* ``heavy``: its communication-heavy twin: every multi-GPU job's gradient scaled up by the
  largest factor (a power of two, up to 1024) that the instance's validation still accepts,
  so contention costs as much as the model allows.

Methods, each with the same time limit on one thread: ``milp-cold`` (compact MILP, HiGHS),
``milp-warm`` (SJF-BCO's schedule as MIP start and horizon), ``milp-fed`` (the contention-free
relaxation's bound as a row and the restriction's schedule as MIP start and horizon, the two
phases given 20% of the time each), ``cpsat`` (warm-started from SJF-BCO), ``decompose``
and ``auto``. Every row records status, proven or not, makespan, bound, gap and seconds.
Results go to benchmarks/results/frontier.json (``--summary`` prints the table again;
``--sizes 8x4x60,12x4x80``, ``--methods auto,cpsat`` and ``--time-limit S`` narrow a run).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import statistics
import sys
import time

from common import RESULTS, save, table
from exact import scaled

from rar_opt import Instance, check
from rar_opt.errors import InputError
from rar_opt.formulations import cfree, cpsat
from rar_opt.solvers import Status, solve
from rar_opt.solvers.backend import SolveOptions
from rar_opt.solvers.cpsat import Cpsat

SIZES = [(8, 4, 60), (10, 4, 60), (12, 4, 80), (16, 8, 100), (20, 8, 120)]
SEEDS = (0, 1, 2)
FAMILIES = ("tiny", "heavy")
METHODS = ("milp-cold", "milp-warm", "milp-fed", "cpsat", "decompose", "auto")
TIME_LIMIT = 60.0


def instance(family: str, jobs: int, servers: int, horizon: int, seed: int) -> Instance:
    """The benchmark instance of a family, size and seed."""
    base = scaled(100 + jobs + 1000 * seed, jobs, servers, horizon)
    return base if family == "tiny" else heavy_twin(base)


def heavy_twin(inst: Instance) -> Instance:
    """``inst`` with every multi-GPU job's gradient scaled up as far as validation allows."""
    jobs = list(inst.jobs)
    for j, job in enumerate(jobs):
        if job.gpus < 2 or job.grad_size <= 0:
            continue
        for factor in (1024, 512, 256, 128, 64, 32, 16, 8, 4, 2):
            trial = [*jobs[:j], dataclasses.replace(job, grad_size=job.grad_size * factor), *jobs[j + 1 :]]
            try:
                Instance(inst.name, inst.horizon, inst.cluster, tuple(trial))
            except InputError:
                continue
            jobs = trial
            break
    return Instance(inst.name.replace("scaled", "heavy"), inst.horizon, inst.cluster, tuple(jobs))


def milp_fed(inst: Instance, time_limit: float, seed: int):
    """The compact MILP fed by the decomposition: the relaxation's bound as a row, the
    restriction's schedule as MIP start and horizon (each phase up to 20% of the time)."""
    began = time.perf_counter()
    engine = Cpsat()
    relaxed = engine.solve(cfree.build(inst, cfree.Options()), SolveOptions(time_limit=0.2 * time_limit, seed=seed))
    bound = relaxed.objective if relaxed.status == Status.OPTIMAL else relaxed.bound
    restriction = cfree.build(inst, cfree.Options(restrict=True))
    restricted = engine.solve(restriction, SolveOptions(time_limit=0.2 * time_limit, seed=seed))
    start = cpsat.read_schedule(restriction, inst) if restricted.has_solution else None
    options = {}
    if start is not None:
        options["horizon"] = check(inst, start).result.makespan
    left = max(time_limit - (time.perf_counter() - began), 0.1)
    return solve(inst, "compact", time_limit=left, seed=seed, start=start, lower_bound=bound, **options)


def run(method: str, inst: Instance, time_limit: float, seed: int = 0):
    """One method on one instance; returns the SolveResult."""
    if method == "milp-cold":
        return solve(inst, "compact", time_limit=time_limit, seed=seed)
    if method == "milp-warm":
        return solve(inst, "compact", time_limit=time_limit, seed=seed, warm_start="sjf-bco")
    if method == "milp-fed":
        return milp_fed(inst, time_limit, seed)
    if method == "cpsat":
        return solve(inst, "cpsat", time_limit=time_limit, seed=seed, warm_start="sjf-bco")
    return solve(inst, method, time_limit=time_limit, seed=seed)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--summary", action="store_true")
    parser.add_argument("--markdown", action="store_true", help="with --summary: the README's pivot table")
    parser.add_argument("--sizes", help="e.g. 8x4x60,12x4x80")
    parser.add_argument("--methods", help="e.g. auto,cpsat")
    parser.add_argument("--families", help="tiny,heavy")
    parser.add_argument("--seeds", help="e.g. 0,1,2")
    parser.add_argument("--time-limit", type=float, default=TIME_LIMIT)
    parser.add_argument("--out", default="frontier")
    parser.add_argument("--update", action="store_true", help="keep the rows of --out that this run does not recompute")
    args = parser.parse_args()
    if args.summary:
        data = json.loads((RESULTS / f"{args.out}.json").read_text())
        print(markdown(data["rows"]) if args.markdown else table(summarise(data["rows"])))
        return
    sizes = [tuple(int(v) for v in s.split("x")) for s in args.sizes.split(",")] if args.sizes else SIZES
    methods = args.methods.split(",") if args.methods else list(METHODS)
    families = args.families.split(",") if args.families else list(FAMILIES)
    seeds = [int(s) for s in args.seeds.split(",")] if args.seeds else list(SEEDS)
    rows, kept = [], []
    if args.update and (RESULTS / f"{args.out}.json").exists():
        redo = {(f"{j}x{s}x{h}", f, seed, m) for j, s, h in sizes for f in families for seed in seeds for m in methods}
        old = json.loads((RESULTS / f"{args.out}.json").read_text())["rows"]
        kept = [r for r in old if (r["size"], r["family"], r["seed"], r["method"]) not in redo]
    for jobs, servers, horizon in sizes:
        for family in families:
            for seed in seeds:
                inst = instance(family, jobs, servers, horizon, seed)
                for method in methods:
                    began = time.perf_counter()
                    res = run(method, inst, args.time_limit)
                    rows.append(
                        {
                            "size": f"{jobs}x{servers}x{horizon}",
                            "family": family,
                            "seed": seed,
                            "method": method,
                            "status": str(res.status),
                            "proven": res.status == Status.OPTIMAL,
                            "makespan": res.makespan,
                            "bound": None if res.bound is None else round(res.bound, 3),
                            "gap": None if res.gap is None else round(res.gap, 4),
                            "wall_s": round(time.perf_counter() - began, 2),
                            "proved_by": res.options.get("proved_by"),
                            # decompose/auto: each phase's status, objective, bound and seconds
                            "phases": [p.to_dict() for p in res.record.phases],
                        }
                    )
                    lines = table(rows[-1:]).splitlines()
                    print("\n".join(lines if len(rows) == 1 else lines[1:]), flush=True)
                    save(
                        args.out,
                        ordered(kept + rows),
                        time_limit_s=args.time_limit,
                        threads=1,
                        seeds=SEEDS,
                        methods=METHODS,
                    )
    print(table(summarise(rows)))
    print(f"\nwritten: {RESULTS / args.out}.json", file=sys.stderr)


def ordered(rows: list[dict]) -> list[dict]:
    """Rows by size, family, seed and method, in the order of this module's lists."""
    sizes = [f"{j}x{s}x{h}" for j, s, h in SIZES]

    def key(r: dict) -> tuple:
        size = sizes.index(r["size"]) if r["size"] in sizes else len(sizes)
        family = FAMILIES.index(r["family"]) if r["family"] in FAMILIES else len(FAMILIES)
        method = METHODS.index(r["method"]) if r["method"] in METHODS else len(METHODS)
        return size, r["size"], family, r["seed"], method

    return sorted(rows, key=key)


def summarise(rows: list[dict]) -> list[dict]:
    """Per size, family and method: proven count, median seconds (unproven runs count as
    infinite) and the median final gap."""
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault((r["size"], r["family"], r["method"]), []).append(r)
    out = []
    for (size, family, method), rs in groups.items():
        times = [r["wall_s"] if r["proven"] else math.inf for r in rs]
        gaps = [r["gap"] if r["gap"] is not None else math.inf for r in rs]
        out.append(
            {
                "size": size,
                "family": family,
                "method": method,
                "proven": f"{sum(r['proven'] for r in rs)}/{len(rs)}",
                "median_s": statistics.median(times),
                "median_gap": statistics.median(gaps),
            }
        )
    return out


def markdown(rows: list[dict]) -> str:
    """One line per size and family, one column per method: proven/runs and median seconds."""
    cells = {(r["size"], r["family"], r["method"]): r for r in summarise(rows)}
    methods = list(dict.fromkeys(r["method"] for r in rows))
    lines = ["| size | family | " + " | ".join(methods) + " |", "|---|---|" + "---|" * len(methods)]
    for size, family in dict.fromkeys((r["size"], r["family"]) for r in rows):
        out = []
        for m in methods:
            c = cells.get((size, family, m))
            if c is None:
                out.append("not run")
                continue
            t = "-" if math.isinf(c["median_s"]) else f"{c['median_s']:.1f} s"
            g = "" if math.isinf(c["median_gap"]) or c["median_gap"] == 0 else f", gap {100 * c['median_gap']:.0f}%"
            out.append(f"{c['proven']} ({t}{g})")
        lines.append(f"| {size} | {family} | " + " | ".join(out) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
