"""How the schedule `auto` hands its first full model depends on the seconds its searches get.

From 24 jobs on, `auto` runs `pack`'s search (with its lanes search) and the backfill
searches for a share of the time before the full CP-SAT model, and that model starts from
the best schedule they found (docs/exactness.md, "Pack's search first, from 24 jobs on").
The searches stopped on wall-clock seconds until 2026-12-06 (they now stop on counts of
work: docs/exactness.md, "Searches that count their work"), so a slower or busier machine
handed the model another schedule. This script runs each search alone, as the phase runs it (the same
options, seed and makespan cap), for several second counts, and records the makespan each
ends with: the steps show how close to a threshold the phase's share falls.

``python benchmarks/hint_seconds.py --instances heavy-24x8x150-s2 --seconds 2,3,4,6``
(one process; results in benchmarks/results/hint-seconds.json).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from common import result_name, save, table
from frontier import heavy_twin, instance, parse_name

import rar_opt
from rar_opt.algorithms import run_policy
from rar_opt.check import check
from rar_opt.solvers.phases import IMPROVE_ITERATIONS, LONG
from rar_opt.solvers.plan import TIMED_IMPROVERS
from rar_opt.support.provenance import source_revision


def searches() -> list[tuple[str, dict]]:
    """The searches of `auto`'s first improvement phase from 24 jobs on as they ran before
    they counted their work (`TIMED_IMPROVERS`), with the options the phase gives them
    beside its seconds."""
    out = []
    for entry in TIMED_IMPROVERS:
        name, given = entry[0], dict(entry[2]) if len(entry) > 2 else {}
        out.append((name, {**LONG.get(name, {}), **given}))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--instances", default="heavy-24x8x150-s2", help="frontier names, e.g. heavy-24x8x150-s2")
    parser.add_argument("--seconds", default="2,3,4,6")
    parser.add_argument("--seed", type=int, default=0, help="the search seed (auto passes its CP-SAT seed)")
    parser.add_argument("--cap", type=int, help="the makespan cap of the backfill searches (auto: the floor)")
    parser.add_argument("--out", type=result_name, default="hint-seconds")
    parser.add_argument("--note", default="")
    args = parser.parse_args()
    rows = []
    for name in args.instances.split(","):
        family, jobs, servers, horizon, seed = parse_name(name)
        inst = instance("tiny", jobs, servers, horizon, seed)
        inst = heavy_twin(inst) if family == "heavy" else inst
        for search, options in searches():
            for seconds in (float(s) for s in args.seconds.split(",")):
                opts = dict(options)
                if search == "backfill" and args.cap is not None:
                    opts["makespan_cap"] = args.cap
                began = time.perf_counter()
                run = run_policy(
                    inst, search, seed=args.seed, iterations=IMPROVE_ITERATIONS, time_limit=seconds, **opts
                )
                rows.append(
                    {
                        "instance": name,
                        "search": search,
                        "options": {k: v for k, v in opts.items() if k != "lanes_patience"},
                        "seconds": seconds,
                        "wall_s": round(time.perf_counter() - began, 2),
                        "makespan": check(inst, run.schedule).result.makespan,
                        "load_1min": round(os.getloadavg()[0], 2),
                    }
                )
                print(table([{k: v for k, v in rows[-1].items() if k != "options"}]).splitlines()[-1], flush=True)
    code = {"rar_opt": str(Path(rar_opt.__file__).parent), "revision": source_revision()}
    path = save(args.out, rows, seed=args.seed, cap=args.cap, code=code, note=args.note)
    print(f"written: {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
