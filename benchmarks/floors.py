"""How far the structural floors raise the lower bound: ``python benchmarks/floors.py``.

For each instance: the old floor max(longest job, work), every bound of
``rar_opt.bounds.structural.BOUNDS`` with its seconds, the new floor, and the optimum (or the best
known makespan and bound) where one is known. Instances:

* the frontier set of ``benchmarks/frontier.py`` (every size, family and seed), with the
  optimum any method proved in ``benchmarks/results/frontier.json``;
* ``instances/frontier/`` with their recorded optima;
* paper-scale instances of the generator (presets paper-literal, paper-split15 and
  contention-heavy, seeds 0-4) at 160 x 20, 160 x 10, 320 x 20 and 640 x 20.

Results: ``benchmarks/results/floors.json``; ``--summary`` prints the tables again.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Iterator
from pathlib import Path

from common import RESULTS, save, table
from frontier import SIZES, instance

from rar_opt import Instance
from rar_opt.bounds.structural import structural_bounds, trivial_floor
from rar_opt.instances.generate import generate

ROOT = Path(__file__).resolve().parent.parent
PRESETS = ("paper-literal", "paper-split15", "contention-heavy")
PAPER_SIZES = ((160, 20), (160, 10), (320, 20), (640, 20))


def frontier_optima() -> dict[str, tuple[int | None, int | None, float | None]]:
    """instance name -> (optimum, best makespan, best bound) from benchmarks/results/frontier.json."""
    rows = json.loads((RESULTS / "frontier.json").read_text())["rows"]
    out: dict[str, tuple[int | None, int | None, float | None]] = {}
    for r in rows:
        name = f"{r['family']}-{r['size']}-s{r['seed']}"
        opt, best, bound = out.get(name, (None, None, None))
        if r["status"] == "optimal":
            opt = r["makespan"]
        if r["makespan"] is not None:
            best = r["makespan"] if best is None else min(best, r["makespan"])
        if r["bound"] is not None:
            bound = r["bound"] if bound is None else max(bound, r["bound"])
        out[name] = (opt, best, bound)
    return out


def instances() -> Iterator[tuple[str, str, Instance, int | None, int | None]]:
    """(group, name, instance, optimum, best known makespan)."""
    known = frontier_optima()
    for jobs, servers, horizon in SIZES:
        for family in ("tiny", "heavy"):
            for seed in (0, 1, 2):
                name = f"{family}-{jobs}x{servers}x{horizon}-s{seed}"
                opt, best, _ = known.get(name, (None, None, None))
                yield "frontier-set", name, instance(family, jobs, servers, horizon, seed), opt, best
    for path in sorted((ROOT / "instances" / "frontier").glob("*.json")):
        inst = Instance.read(path)
        best = inst.meta.get("best_known", {})
        yield "instances/frontier", path.stem, inst, inst.meta.get("known_optimum"), best.get("makespan")
    for jobs, servers in PAPER_SIZES:
        for preset in PRESETS:
            for seed in range(5):
                inst = generate("paper", seed, jobs=jobs, servers=servers, preset=preset)
                yield "paper-scale", f"{preset}-{jobs}x{servers}-s{seed}", inst, None, None


def measure() -> list[dict]:
    rows = []
    for group, name, inst, opt, best in instances():
        began = time.perf_counter()
        found = structural_bounds(inst)
        seconds = time.perf_counter() - began
        old = trivial_floor(inst)
        new = max(old, *(v for v, _ in found.values()))
        rows.append(
            {
                "group": group,
                "instance": name,
                "jobs": inst.num_jobs,
                "servers": inst.num_servers,
                "optimum": opt,
                "best_known": best,
                "old": old,
                "new": new,
                "raised": new - old,
                **{k: v for k, (v, _) in found.items()},
                "seconds": round(seconds, 4),
                "seconds_by_bound": {k: round(t, 4) for k, (_, t) in found.items()},
            }
        )
    return rows


def summary(rows: list[dict]) -> str:
    keys = ("group", "instance", "optimum", "old", "new", "energetic", "classes", "halves", "split_pairs", "seconds")
    out = [table([{k: r[k] for k in keys} for r in rows])]
    raised = [r for r in rows if r["raised"] > 0]
    out.append(
        f"\nraised on {len(raised)} of {len(rows)} instances: "
        + ", ".join(f"{r['instance']} {r['old']} -> {r['new']}" for r in raised)
    )
    out.append(f"slowest: {max(r['seconds'] for r in rows):.4f} s")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--summary", action="store_true", help="print the tables of the stored results")
    args = parser.parse_args()
    if args.summary:
        rows = json.loads((RESULTS / "floors.json").read_text())["rows"]
    else:
        rows = measure()
        save("floors", rows, note="old = max(longest, work); new = max(old, every structural floor)")
    print(summary(rows))


if __name__ == "__main__":
    main()
