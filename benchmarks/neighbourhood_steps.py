"""How long should one exact-neighbourhood step be? ``auto`` for the total completion time
with each step's CP-SAT limit set to ``--step`` seconds (``neighbourhoods.STEP_SECONDS``,
its deterministic cap twice that), on the goal rows of issue 31:

    python benchmarks/neighbourhood_steps.py --step 0.1 [--unsplit 0.2] [--seconds 60] [--only NAME,...]

``--unsplit`` sets the share of steps that offer a split job to run unsplit
(``neighbourhoods.UNSPLIT_SHARE``; the file is then ``neighbourhood-steps-<step>-unsplit<share>``).

Run one process per value, two at once on the 2-core machine, and compare the files
(``benchmarks/results/neighbourhood-steps-<step>.json``): per instance the best sum, its
gap to the flow LP's bound, and the phase that found it. Seed 0 everywhere.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterator
from typing import Any

from common import save

from rar_opt import solvers
from rar_opt.instance import Instance
from rar_opt.instances.generate import generate
from rar_opt.solvers import SolveResult, neighbourhoods

ROWS = (
    [(160, 20, p, s) for p in ("paper-literal", "paper-split15", "contention-heavy") for s in range(3)]
    + [(160, 10, "contention-heavy", 0), (160, 10, "contention-heavy", 2)]
    + [(320, 20, "paper-split15", 1), (320, 20, "paper-literal", 2)]
)
"""Every 160 x 20 goal row, and the 160 x 10 and 320 x 20 rows with the largest gaps."""


def solved_rows(only: str, seconds: float, seed: int = 0) -> Iterator[tuple[Instance, SolveResult, dict[str, Any]]]:
    """``auto`` for the total completion time on each row of :data:`ROWS` (those named in
    ``only``, comma-separated, if given) within ``seconds``, with ``seed``: the instance, the result
    and the fields every script of this kind records (sum, bound, gap, the phase that found
    it, the CPU seconds)."""
    for jobs, servers, preset, drawn in ROWS:
        inst = generate("paper", drawn, jobs=jobs, servers=servers, preset=preset)
        if only and inst.name not in only.split(","):
            continue
        cpu = time.process_time()
        res = solvers.solve(inst, "auto", objective="total", time_limit=seconds, seed=seed)
        assert res.schedule is not None and res.bound is not None and res.objective is not None
        yield (
            inst,
            res,
            {
                "instance": inst.name,
                "seed": seed,  # auto's seed (not the instance's, which is in its name)
                "best": int(res.objective),
                "bound": int(res.bound),
                "gap": round((res.objective - res.bound) / res.bound, 5),
                "by": res.schedule.meta.get("method"),
                "cpu_s": round(time.process_time() - cpu, 1),
            },
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--step", type=float, required=True, help="seconds per step")
    parser.add_argument("--unsplit", type=float, default=None, help="the share of unsplit steps")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--only", default="", help="comma-separated instance names")
    args = parser.parse_args()
    neighbourhoods.STEP_SECONDS, neighbourhoods.STEP_WORK = args.step, 2 * args.step
    if args.unsplit is not None:
        neighbourhoods.UNSPLIT_SHARE = args.unsplit
    rows = []
    for _, res, row in solved_rows(args.only, args.seconds):
        phase = next((p for p in res.record.phases if p.search == "neighbourhoods"), None)
        rows.append(
            {
                **row,
                "step": args.step,
                "unsplit": neighbourhoods.UNSPLIT_SHARE,
                "neighbourhoods_s": None if phase is None else round(phase.seconds, 1),
            }
        )
        print(rows[-1], flush=True)
    name = f"neighbourhood-steps-{args.step:g}" + ("" if args.unsplit is None else f"-unsplit{args.unsplit:g}")
    save(name, rows, seconds=args.seconds, step=args.step, unsplit=neighbourhoods.UNSPLIT_SHARE)


if __name__ == "__main__":
    main()
