"""Homogeneous clusters (issue 31, item 5): ``python benchmarks/homogeneous.py``.

Six instances of the paper's jobs on servers of 8 or 4 GPUs (``rar-opt generate paper
--server-gpus G``, seed 0, the paper-literal preset, T = 1200):

* 160 jobs on 20 servers (the paper's server count): 160 GPUs of 8-GPU servers, 80 of 4-GPU;
* 160 and 320 jobs on the paper's GPU count: 40 x 8 and 80 x 4 = 320 GPUs (the paper's
  drawn clusters hold 15 GPUs a server on average, 300 on 20 servers).

(320 jobs on 20 servers of 4 GPUs is left out: its work bound alone, about 1970 slots, is
beyond T = 1200.) Per instance, exactly as a user would ask: ``rar-opt compare INSTANCE
--policies sjf-bco pack sjf-oblivious --json`` (the simulator's makespan and average JCT per
policy; ``sjf-oblivious`` is the shortest-first baseline) and ``rar-opt bounds INSTANCE
--json`` (the best makespan lower bound). Written: benchmarks/results/homogeneous-DATE.json
and .md.
"""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import RESULTS

from rar_opt.support.provenance import provenance

CASES = [(160, 20, 8), (160, 20, 4), (160, 40, 8), (160, 80, 4), (320, 40, 8), (320, 80, 4)]
"""(jobs, servers, GPUs per server)."""
POLICIES = ("sjf-bco", "pack", "sjf-oblivious")


def cli(*args: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "rar_opt", *args, "--quiet"], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"rar-opt {' '.join(args)}: {done.stderr.strip()}")
    return json.loads(done.stdout)


def row(folder: Path, jobs: int, servers: int, gpus: int, seed: int) -> dict[str, Any]:
    path = folder / f"paper-{jobs}x{servers}-s{seed}-g{gpus}.json"
    made = ["generate", "paper", "--seed", str(seed), "--jobs", str(jobs), "--servers", str(servers)]
    cli(*made, "--server-gpus", str(gpus), "-o", str(path), "--json")
    began = time.perf_counter()
    compared = cli("compare", str(path), "--policies", *POLICIES, "--json")
    compare_s = time.perf_counter() - began
    began = time.perf_counter()
    bounds = cli("bounds", str(path), "--json")
    bounds_s = time.perf_counter() - began
    best = bounds["best"]
    out: dict[str, Any] = {
        "instance": compared["instance"],
        "jobs": jobs,
        "servers": servers,
        "server_gpus": gpus,
        "gpus": servers * gpus,
        "seed": seed,
        "lower_bound": best,
        "bound_by": bounds["best_by"],
        "work_bound": next(b["value"] for b in bounds["bounds"] if b["name"] == "work"),
        "compare_s": round(compare_s, 1),
        "bounds_s": round(bounds_s, 1),
    }
    for p in compared["policies"]:
        name = p["policy"]
        out[f"{name}_makespan"] = p["makespan"]
        out[f"{name}_avg_jct"] = p["avg_jct"]
        out[f"{name}_gap"] = p["makespan"] / best - 1.0
        out[f"{name}_contention_share"] = p["contention_share"]
        out[f"{name}_within_horizon"] = p["within_horizon"]
    return out


def markdown(rows: list[dict[str, Any]], date: str) -> str:
    lines = [
        f"# Homogeneous clusters, {date}",
        "",
        "The paper's jobs (seed 0, paper-literal, T = 1200) on servers of 8 or 4 GPUs",
        "(`rar-opt generate paper --server-gpus G`); per policy the simulator's makespan and",
        "average JCT (`rar-opt compare --json`), and the makespan's gap to the best lower bound",
        "(`rar-opt bounds --json`). `sjf-oblivious` is the shortest-first baseline.",
        "Made by `python benchmarks/homogeneous.py`.",
        "",
        "| instance | GPUs | bound (by) | " + " | ".join(f"{p} makespan (gap) | {p} avg JCT" for p in POLICIES) + " |",
        "|---|---|---|" + "---|---|" * len(POLICIES),
    ]
    for r in rows:
        cells = [f"{r['instance']}", f"{r['servers']} x {r['server_gpus']} = {r['gpus']}"]
        cells.append(f"{r['lower_bound']} ({r['bound_by']})")
        for p in POLICIES:
            cells.append(f"{r[f'{p}_makespan']} ({r[f'{p}_gap']:.1%})")
            cells.append(f"{r[f'{p}_avg_jct']:.1f}")
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        "Seconds per instance (on a shared 2-core machine): compare "
        + ", ".join(f"{r['compare_s']:g}" for r in rows)
        + "; bounds "
        + ", ".join(f"{r['bounds_s']:g}" for r in rows)
        + ".",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--date", default=datetime.date.today().isoformat())
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for jobs, servers, gpus in CASES:
            rows.append(row(Path(folder), jobs, servers, gpus, args.seed))
            r = rows[-1]
            print(
                f"{r['instance']}: bound {r['lower_bound']}, "
                + ", ".join(f"{p} {r[f'{p}_makespan']} / {r[f'{p}_avg_jct']:.1f}" for p in POLICIES),
                flush=True,
            )
    name = f"homogeneous-{args.date}"
    RESULTS.mkdir(exist_ok=True)
    record = {
        "benchmark": "homogeneous",
        "cases": CASES,
        "policies": POLICIES,
        "provenance": provenance(),
        "rows": rows,
    }
    (RESULTS / f"{name}.json").write_text(json.dumps(record, indent=1) + "\n")
    (RESULTS / f"{name}.md").write_text(markdown(rows, args.date))
    print(f"written: {RESULTS / name}.json and .md")


if __name__ == "__main__":
    main()
