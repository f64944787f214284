"""The compact MILP against the CP-SAT model on the total flow time:
``python benchmarks/flow_models.py`` (about 4 minutes on the shared 2-core machine).

The measurement behind ``auto``'s choice of CP-SAT for the ``total`` and ``flow``
objectives (rar_opt.solvers.solve.CPSAT_OBJECTIVES; docs/arrivals.md, "Objectives"):
tiny instances (seeds 0-19, and 8 x 3 seeds 0-7) with Poisson arrivals at load 1, and
library and frontier instances with and without arrivals (load 1, seed 0; warm start
sjf-bco). Time limit 30 s, one thread. Results: benchmarks/results/flow-models.json.
"""

from __future__ import annotations

import time

from common import save, table

from rar_opt import Instance
from rar_opt.instances.generate import tiny, with_arrivals
from rar_opt.instances.library import instance_path
from rar_opt.solvers import solve

LIMIT = 30.0


def instances() -> list[tuple[str, Instance, str | None]]:
    out: list[tuple[str, Instance, str | None]] = []
    out += [("tiny, load 1", with_arrivals(tiny(s), 1.0, s), None) for s in range(20)]
    out += [("tiny 8x3, load 1", with_arrivals(tiny(s, jobs=8, servers=3), 1.0, s), None) for s in range(8)]
    for name in ("tiny-7x4-s18", "tiny-8x4-s19", "heavy-16x8x100-s1"):
        inst = Instance.read(instance_path(name))
        out += [(name, inst, "sjf-bco"), (f"{name}, load 1", with_arrivals(inst, 1.0, 0), "sjf-bco")]
    return out


def main() -> None:
    rows = []
    for group, inst, warm in instances():
        for formulation in ("compact", "cpsat"):
            began = time.perf_counter()
            res = solve(inst, formulation, objective="flow", time_limit=LIMIT, warm_start=warm)
            rows.append(
                {
                    "group": group,
                    "instance": inst.name,
                    "formulation": formulation,
                    "status": str(res.status),
                    "flow": res.objective,
                    "bound": res.bound,
                    "seconds": round(time.perf_counter() - began, 3),
                }
            )
            print(table(rows[-1:]), flush=True)
    save("flow-models", rows, time_limit=LIMIT, threads=1)


if __name__ == "__main__":
    main()
