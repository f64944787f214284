"""Rebuild the instance library and prove its optima: ``python instances/make_library.py``.

Writes every instance to ``instances/NAME.json`` with ``meta.known_optimum`` (the proven
optimal makespan, or null when the solve hit its time limit; then ``meta.best_known``
holds the incumbent and the bound) and its optimal schedule to
``instances/optimal/NAME.schedule.json``. The solver, its version, the options and the
seconds it took are recorded in ``meta.proof``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from rar_opt.generate import paper, tiny

from rar_opt import Cluster, Instance, Job
from rar_opt.solvers import Status, solve

HERE = Path(__file__).resolve().parent
TIME_LIMIT = 300.0


def wait_beats_start() -> Instance:
    """Two 3-GPU jobs on three 2-GPU servers must share a server if they run together, and
    their rings then slow each other down by more than half: the second job should wait."""
    cluster = Cluster(servers=(2, 2, 2), b_inter=1.0, b_intra=10.0, reduce_speed=50.0, alpha=1.0, xi1=1.0, xi2=0.0)
    jobs = (Job("A", 3, 8, grad_size=0.15, bwd_time=0.05), Job("B", 3, 8, grad_size=0.15, bwd_time=0.05))
    return Instance("wait-beats-start", 20, cluster, jobs, meta={"generator": "hand", "known_optimum": None})


def wait_beats_start_plus() -> Instance:
    """The same pair with two single-GPU jobs that should fill the gaps."""
    base = wait_beats_start()
    extra = (Job("c", 1, 6, bwd_time=0.2), Job("d", 1, 9, bwd_time=0.2))
    return Instance(
        "wait-beats-start-plus", 24, base.cluster, base.jobs + extra, meta={"generator": "hand", "known_optimum": None}
    )


def library() -> list[Instance]:
    out = [wait_beats_start(), wait_beats_start_plus()]
    for jobs, servers, seed in [
        (2, 1, 11),
        (3, 2, 12),
        (4, 2, 13),
        (4, 3, 14),
        (5, 4, 15),
        (6, 3, 16),
        (6, 4, 17),
        (7, 4, 18),
        (8, 4, 19),
        (8, 2, 20),
    ]:
        inst = tiny(seed, jobs=jobs, servers=servers)
        out.append(Instance(f"tiny-{jobs}x{servers}-s{seed}", inst.horizon, inst.cluster, inst.jobs, dict(inst.meta)))
    return out


def main() -> None:
    (HERE / "optimal").mkdir(exist_ok=True)
    paper(0).write(HERE / "paper-160x20-s0.json")
    for inst in library():
        res = solve(inst, warm_start="sjf-bco", time_limit=TIME_LIMIT)
        meta = dict(inst.meta)
        meta["known_optimum"] = res.makespan if res.status == Status.OPTIMAL else None
        meta["best_known"] = {"makespan": res.makespan, "bound": res.bound}
        meta["proof"] = {
            "status": str(res.status),
            "solver": res.solver,
            "options": res.options,
            "seconds": round(res.wall_s, 3),
        }
        Instance(inst.name, inst.horizon, inst.cluster, inst.jobs, meta).write(HERE / f"{inst.name}.json")
        if res.schedule is not None:
            res.schedule.write(HERE / "optimal" / f"{inst.name}.schedule.json")
        print(
            f"{inst.name:24s} {res.status!s:10s} makespan={res.makespan} bound={res.bound} {res.wall_s:.1f}s",
            file=sys.stderr,
        )


if __name__ == "__main__":
    main()
