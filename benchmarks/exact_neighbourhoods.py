"""How much do exact neighbourhoods add to `auto`'s best average-JCT schedule at 160 x 20?

Issue 31 asks, where a row misses its gap goal, which side holds it back: the schedule or
the bound. This benchmark asks the schedule side. Per instance: `solve(..., "auto",
objective="total")` for ``--auto-seconds``, then the package's exact-neighbourhood search
(`rar_opt.solvers.neighbourhoods.search`: CP-SAT re-places the unsplit jobs of 2-4 servers
at a time, every other job held) from its schedule for ``--seconds`` more, seed 0. Every
schedule is re-simulated and checked; the gaps are to the flow LP's bound that `auto`
reports.

    python benchmarks/exact_neighbourhoods.py [--auto-seconds 60] [--seconds 120] [--only NAME,...]
        [--step-seconds 0.1] [--unsplit 0.1] [--rounds 1] [--first-seed 0] [--schedules DIR]
        [--start DIR]

``--step-seconds`` sets each step's CP-SAT limit (`neighbourhoods.STEP_SECONDS`, its
deterministic cap twice that) and ``--unsplit`` the share of unsplit steps
(`neighbourhoods.UNSPLIT_SHARE`) for the longer runs; ``--rounds K`` runs the search K
times in a row, each for ``--seconds`` from the last one's schedule with search seeds
S..S+K-1 for ``--first-seed S`` (the sum after each round is recorded); ``--schedules DIR`` writes each row's
final schedule there as ``NAME.schedule.json``, so that a best-known schedule can be kept;
``--start DIR`` starts each row's search from ``DIR/NAME-jct.schedule.json`` (a kept
schedule, checked first) instead of running `auto`, with the flow LP's bound computed alone.

Default instances: the three 160 x 20 rows above issue 31's 1% goal. Results:
benchmarks/results/exact-neighbourhoods.json (``--out`` names another file).
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

from common import result_name, save

from rar_opt import solvers
from rar_opt.instance import Instance
from rar_opt.instances.generate import generate
from rar_opt.schedule import Schedule
from rar_opt.solvers import neighbourhoods
from rar_opt.solvers.flowlp import flow_lp_bound
from rar_opt.solvers.sum_best import sum_of

MISSES = [("paper-split15", 2), ("contention-heavy", 1), ("contention-heavy", 2)]
"""The three 160 x 20 rows above issue 31's 1% goal (docs/bounds-table.md)."""


def _start(inst: Instance, auto_seconds: float, start: str | None) -> tuple[Schedule, float, str]:
    """The schedule to search from, the flow LP's bound and where the schedule came from."""
    if start is None:
        solved = solvers.solve(inst, "auto", objective="total", time_limit=auto_seconds)
        assert solved.schedule is not None and solved.bound is not None
        return solved.schedule, float(solved.bound), str(solved.schedule.meta.get("method"))
    path = os.path.join(start, f"{inst.name}-jct.schedule.json")
    kept = Schedule.read(path)
    assert sum_of(inst, kept, "total") is not None, f"{path} fails the checker"
    found = flow_lp_bound(inst, time_limit=None)
    assert found.method == "lp", "the flow LP did not reach its optimum"
    return kept, float(found.total), path


def run(
    inst: Instance,
    auto_seconds: float,
    seconds: float,
    schedules: str | None,
    rounds: int = 1,
    start: str | None = None,
    first_seed: int = 0,
) -> dict[str, Any]:
    cpu = time.process_time()
    schedule, bound, origin = _start(inst, auto_seconds, start)
    auto_cpu = time.process_time() - cpu
    cpu = time.process_time()
    found = neighbourhoods.search(inst, schedule, time_limit=seconds, seed=first_seed)
    first, steps, improving, totals = found.first, found.steps, found.kept, [found.total]
    for seed in range(first_seed + 1, first_seed + rounds):
        found = neighbourhoods.search(inst, found.schedule, time_limit=seconds, seed=seed)
        steps, improving = steps + found.steps, improving + found.kept
        totals.append(found.total)
    search_cpu = time.process_time() - cpu
    judged = sum_of(inst, found.schedule, "total")
    assert judged is not None and judged[0] == found.total, "the search's schedule fails the checker"
    if schedules:
        os.makedirs(schedules, exist_ok=True)
        found.schedule.write(os.path.join(schedules, f"{inst.name}.schedule.json"))
    return {
        "instance": inst.name,
        "flow_lp_total": bound,
        "auto_total": first,
        "auto_gap": round((first - bound) / bound, 5),
        "auto_by": origin,
        "auto_cpu_s": round(auto_cpu, 1),
        "search_total": found.total,
        "search_gap": round((found.total - bound) / bound, 5),
        "search_cpu_s": round(search_cpu, 1),
        "step_seconds": neighbourhoods.STEP_SECONDS,
        "unsplit_share": neighbourhoods.UNSPLIT_SHARE,
        "rounds": rounds,
        "first_seed": first_seed,
        "round_totals": totals,
        "steps": steps,
        "improving": improving,
        "load_1min": round(os.getloadavg()[0], 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--auto-seconds", type=float, default=60.0)
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--out", type=result_name, default="exact-neighbourhoods")
    parser.add_argument("--only", default="", help="comma-separated instance names (default: the three misses)")
    parser.add_argument("--step-seconds", type=float, default=neighbourhoods.STEP_SECONDS)
    parser.add_argument("--unsplit", type=float, default=neighbourhoods.UNSPLIT_SHARE, help="share of unsplit steps")
    parser.add_argument("--rounds", type=int, default=1, help="search rounds of --seconds each, seeds S..S+K-1")
    parser.add_argument("--first-seed", type=int, default=0, help="the first round's search seed S")
    parser.add_argument("--schedules", help="a directory for the final schedules")
    parser.add_argument("--start", help="a directory of kept schedules to start from instead of auto")
    args = parser.parse_args()
    neighbourhoods.STEP_SECONDS, neighbourhoods.STEP_WORK = args.step_seconds, 2 * args.step_seconds
    neighbourhoods.UNSPLIT_SHARE = args.unsplit
    rows = []
    for preset, seed in MISSES:
        inst = generate("paper", seed, jobs=160, servers=20, preset=preset)
        if args.only and inst.name not in args.only.split(","):
            continue
        rows.append(
            run(inst, args.auto_seconds, args.seconds, args.schedules, args.rounds, args.start, args.first_seed)
        )
        print(rows[-1], flush=True)
    origin = f"the kept schedules of {args.start}" if args.start else f"auto for total, {args.auto_seconds:g} s"
    how = (
        f"{origin}, then {args.rounds} x {args.seconds:g} s of "
        f"neighbourhoods.search (seeds {args.first_seed}..{args.first_seed + args.rounds - 1}), "
        f"{args.step_seconds:g} s per step, unsplit share {args.unsplit:g}"
    )
    print(save(args.out, rows, how=how))


if __name__ == "__main__":
    main()
