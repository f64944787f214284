"""The exact frontier: which method proves which size, ``python benchmarks/frontier.py``.

Sizes 8x4x60 to 32x8x200 (jobs x servers x slots), three instance seeds each, two families:

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
Results go to benchmarks/results/frontier.json (``--summary`` prints the table again,
``--summary --by-size`` the table of docs/frontier.md;
``--sizes 8x4x60,12x4x80``, ``--methods auto,cpsat`` and ``--time-limit S`` narrow a run).

Seed spread: ``--cpsat-seeds 0,1,2,3,4`` runs every instance once per CP-SAT seed (the
instance seeds are ``--seeds``), ``--instances heavy-16x8x100-s1,...`` picks instances by
name, ``--workers 2`` runs that many at once (a loaded machine). Each row records its
CP-SAT seed and the load average when it began and ended; ``--summary --by-seed`` prints
per instance the worst and median seconds to a proof over the seeds (an unproven run
counts as infinite) and the proofs per seed.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from common import RESULTS, result_name, run_pool, save, table
from exact import scaled
from variants import VARIANTS

import rar_opt
from rar_opt import Instance, check
from rar_opt.errors import InputError
from rar_opt.formulations import cfree, cpsat
from rar_opt.solvers import Status, solve
from rar_opt.solvers.backend import SolveOptions
from rar_opt.solvers.cpsat import Cpsat
from rar_opt.solvers.decompose import decompose
from rar_opt.support.provenance import source_revision

SIZES = [(8, 4, 60), (10, 4, 60), (12, 4, 80), (16, 8, 100), (20, 8, 120), (24, 8, 150), (32, 8, 200)]
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


def run(method: str, inst: Instance, time_limit: float, seed: int = 0, work_limit: float | None = None):
    """One method on one instance; returns the SolveResult. With ``work_limit``, ``auto`` and
    its variants get that many units of work instead of ``time_limit`` seconds."""
    if work_limit is not None:
        if method in VARIANTS:
            return decompose(inst, seed=seed, plan=VARIANTS[method], work_limit=work_limit)
        if method != "auto":
            raise SystemExit(f"--work-limit: {method} takes seconds only (auto and its variants take work)")
        return solve(inst, method, seed=seed, work_limit=work_limit)
    if method == "milp-cold":
        return solve(inst, "compact", time_limit=time_limit, seed=seed)
    if method == "milp-warm":
        return solve(inst, "compact", time_limit=time_limit, seed=seed, warm_start="sjf-bco")
    if method == "milp-fed":
        return milp_fed(inst, time_limit, seed)
    if method == "cpsat":
        return solve(inst, "cpsat", time_limit=time_limit, seed=seed, warm_start="sjf-bco")
    if method in VARIANTS:  # a variant of auto's plan
        return decompose(inst, time_limit=time_limit, seed=seed, plan=VARIANTS[method])
    return solve(inst, method, time_limit=time_limit, seed=seed)


def name_of(family: str, jobs: int, servers: int, horizon: int, seed: int) -> str:
    """The instance's name in results and in instances/frontier/: ``heavy-16x8x100-s1``."""
    return f"{family}-{jobs}x{servers}x{horizon}-s{seed}"


def parse_name(name: str) -> tuple[str, int, int, int, int]:
    """The key of :func:`instance` from a name of :func:`name_of`."""
    family, size, seed = name.split("-")
    jobs, servers, horizon = (int(v) for v in size.split("x"))
    return family, jobs, servers, horizon, int(seed.removeprefix("s"))


def task(
    method: str,
    key: tuple[str, int, int, int, int],
    cpsat_seed: int,
    time_limit: float,
    work_limit: float | None = None,
) -> dict:
    """One run: ``method`` on the instance ``key`` with CP-SAT (and HiGHS) seed ``cpsat_seed``."""
    family, jobs, servers, horizon, seed = key
    inst = instance(*key)
    load_before = os.getloadavg()[0]
    began, cpu_began = time.perf_counter(), time.process_time()
    res = run(method, inst, time_limit, cpsat_seed, work_limit)
    cpu_s = time.process_time() - cpu_began
    return {
        "size": f"{jobs}x{servers}x{horizon}",
        "family": family,
        "seed": seed,
        "cpsat_seed": cpsat_seed,
        "method": method,
        "status": str(res.status),
        "proven": res.status == Status.OPTIMAL,
        "makespan": res.makespan,
        "bound": None if res.bound is None else round(res.bound, 3),
        "gap": None if res.gap is None else round(res.gap, 4),
        "wall_s": round(time.perf_counter() - began, 2),
        "cpu_s": round(cpu_s, 2),  # this process's CPU seconds: below wall_s when the machine is loaded
        **({"work": res.options.get("work_spent")} if work_limit is not None else {}),  # units of work spent
        "proved_by": res.options.get("proved_by"),
        "load_1min": [round(load_before, 2), round(os.getloadavg()[0], 2)],  # when it began, when it ended
        # decompose/auto: each phase's status, objective, bound and seconds
        "phases": [p.to_dict() for p in res.record.phases],
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--summary", action="store_true")
    parser.add_argument("--markdown", action="store_true", help="with --summary: methods side by side")
    parser.add_argument("--by-seed", action="store_true", help="with --summary: worst and median per instance")
    parser.add_argument("--by-size", action="store_true", help="with --summary: docs/frontier.md's table per size")
    parser.add_argument("--sizes", help="e.g. 8x4x60,12x4x80")
    parser.add_argument("--methods", help="e.g. auto,cpsat")
    parser.add_argument("--families", help="tiny,heavy")
    parser.add_argument("--seeds", help="instance seeds, e.g. 0,1,2")
    parser.add_argument("--instances", help="instance names instead of sizes, e.g. heavy-16x8x100-s1")
    parser.add_argument("--cpsat-seeds", default="0", help="CP-SAT (and HiGHS) seeds, e.g. 0,1,2,3,4")
    parser.add_argument("--workers", type=int, default=1, help="runs at once (processes)")
    parser.add_argument("--note", default="", help="recorded in the result file")
    parser.add_argument("--time-limit", type=float, default=TIME_LIMIT)
    parser.add_argument(
        "--work-limit", type=float, help="units of work instead of seconds for auto and its variants (reproducible)"
    )
    parser.add_argument("--out", type=result_name, default="frontier")
    parser.add_argument("--update", action="store_true", help="keep the rows of --out that this run does not recompute")
    args = parser.parse_args()
    if args.summary:
        data = json.loads((RESULTS / f"{args.out}.json").read_text())
        if args.by_seed:
            print(table(by_seed(data["rows"])))
        elif args.by_size:
            print(by_size(data["rows"]))
        else:
            print(markdown(data["rows"]) if args.markdown else table(summarise(data["rows"])))
        return
    sizes = [tuple(int(v) for v in s.split("x")) for s in args.sizes.split(",")] if args.sizes else SIZES
    methods = args.methods.split(",") if args.methods else list(METHODS)
    families = args.families.split(",") if args.families else list(FAMILIES)
    seeds = [int(s) for s in args.seeds.split(",")] if args.seeds else list(SEEDS)
    cpsat_seeds = [int(s) for s in args.cpsat_seeds.split(",")]
    if args.instances:
        keys = [parse_name(n) for n in args.instances.split(",")]
    else:
        keys = [(f, j, s, h, seed) for j, s, h in sizes for f in families for seed in seeds]
    jobs_to_run = [(m, key, cs) for key in keys for cs in cpsat_seeds for m in methods]
    rows, kept = [], []
    if args.update and (RESULTS / f"{args.out}.json").exists():
        redo = {(f"{j}x{s}x{h}", f, seed, cs, m) for m, (f, j, s, h, seed), cs in jobs_to_run}
        old = json.loads((RESULTS / f"{args.out}.json").read_text())["rows"]
        kept = [r for r in old if (r["size"], r["family"], r["seed"], r.get("cpsat_seed", 0), r["method"]) not in redo]
    header = {
        "time_limit_s": None if args.work_limit is not None else args.time_limit,
        **({"work_limit": args.work_limit} if args.work_limit is not None else {}),
        "threads": 1,
        "seeds": sorted({key[4] for key in keys}),  # the instance seeds and methods of this run
        "methods": methods,
        "cpsat_seeds": cpsat_seeds,
        "workers": args.workers,
        "code": {"rar_opt": str(Path(rar_opt.__file__).parent), "revision": source_revision()},
        "note": args.note,
        "load_1min_at_start": round(os.getloadavg()[0], 2),
    }
    with run_pool(args.workers, written=str(RESULTS / f"{args.out}.json")) as pool:
        futures = [pool.submit(task, m, key, cs, args.time_limit, args.work_limit) for m, key, cs in jobs_to_run]
        for future in futures:
            rows.append(future.result())
            lines = table([{k: v for k, v in rows[-1].items() if k != "phases"}]).splitlines()
            print("\n".join(lines if len(rows) == 1 else lines[1:]), flush=True)
            save(args.out, ordered(kept + rows), **header, load_1min_at_end=round(os.getloadavg()[0], 2))
    print(table(summarise(rows)))
    if len(cpsat_seeds) > 1:
        print(table(by_seed(rows)))
    print(f"\nwritten: {RESULTS / args.out}.json", file=sys.stderr)


def ordered(rows: list[dict]) -> list[dict]:
    """Rows by size, family, seed and method, in the order of this module's lists."""
    sizes = [f"{j}x{s}x{h}" for j, s, h in SIZES]

    def key(r: dict) -> tuple:
        size = sizes.index(r["size"]) if r["size"] in sizes else len(sizes)
        family = FAMILIES.index(r["family"]) if r["family"] in FAMILIES else len(FAMILIES)
        method = METHODS.index(r["method"]) if r["method"] in METHODS else len(METHODS)
        return size, r["size"], family, r["seed"], method, r.get("cpsat_seed", 0)

    return sorted(rows, key=key)


def by_seed(rows: list[dict]) -> list[dict]:
    """Per instance and method, over its CP-SAT seeds: proofs, worst and median seconds to a
    proof (an unproven run counts as infinite) and each seed's seconds (or makespan/bound);
    for runs under a budget of work (``--work-limit``), the units of work to a proof as well,
    and each proven seed's cell is its units (``u``), which do not depend on the load."""
    groups: dict[tuple, list[dict]] = {}
    for r in ordered(rows):
        groups.setdefault((name_of(r["family"], *map(int, r["size"].split("x")), r["seed"]), r["method"]), []).append(r)
    out = []
    for (name, method), rs in groups.items():
        times = [r["wall_s"] if r["proven"] else math.inf for r in rs]
        metered = all(r.get("work") is not None for r in rs)
        works = [r["work"] if r["proven"] else math.inf for r in rs] if metered else []
        cells = [
            (f"{r['work']:.1f}u" if metered else f"{r['wall_s']:.1f}")
            if r["proven"]
            else f"{r['makespan']}/{math.ceil(r['bound'] or 0)}"
            for r in rs
        ]
        row: dict[str, Any] = {
            "instance": name,
            "method": method,
            "proven": f"{sum(r['proven'] for r in rs)}/{len(rs)}",
            "worst_s": max(times),
            "median_s": statistics.median(times),
        }
        if metered:
            row |= {"worst_work": max(works), "median_work": statistics.median(works)}
        row["per_seed"] = " ".join(f"{r.get('cpsat_seed', 0)}:{c}" for r, c in zip(rs, cells, strict=True))
        out.append(row)
    return out


def by_size(rows: list[dict]) -> str:
    """A markdown line per size and method over every instance and CP-SAT seed of ``rows``:
    proven runs, proofs per CP-SAT seed, instances proven with every seed, and the worst and
    median seconds of the proven runs (docs/frontier.md, "Where it stands")."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for r in ordered(rows):
        groups.setdefault((r["size"], r["method"]), []).append(r)
    lines = [
        "| size | method | instances | proven runs | proofs per CP-SAT seed | proven with every seed "
        "| worst / median s (proven runs) |",
        "|---|---|---|---|---|---|---|",
    ]
    for (size, method), rs in groups.items():
        seeds = sorted({r.get("cpsat_seed", 0) for r in rs})
        names: dict[str, list[dict]] = {}
        for r in rs:
            names.setdefault(f"{r['family']}-s{r['seed']}", []).append(r)
        per_seed = " / ".join(str(sum(r["proven"] for r in rs if r.get("cpsat_seed", 0) == c)) for c in seeds)
        every = sum(all(r["proven"] for r in group) for group in names.values())
        times = [r["wall_s"] for r in rs if r["proven"]]
        spread = f"{max(times):.1f} / {statistics.median(times):.1f}" if times else "-"
        lines.append(
            f"| {size} | {method} | {len(names)} | {sum(r['proven'] for r in rs)} / {len(rs)} "
            f"| {per_seed} (seeds {seeds[0]}-{seeds[-1]}) | {every} of {len(names)} | {spread} |"
        )
    return "\n".join(lines)


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
