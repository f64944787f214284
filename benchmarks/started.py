"""The "started" rows of the compact MILP, two ways side by side: ``python benchmarks/started.py``.

``started="sum"`` writes "job j has started by slot t" as the sum of its start binaries
up to t (rows grow quadratically in T); ``started="cumulative"`` adds a variable
S[j,t] = S[j,t-1] + x[j,t] (rows grow linearly). Same instances as benchmarks/exact.py,
cold (the instance's horizon) and warm (SJF-BCO's schedule as MIP start and horizon),
HiGHS seeds 0-2, 60 s, 1 thread; the two variants alternate run by run so that both see
the same machine load. Results go to benchmarks/results/started.json.
"""

from __future__ import annotations

import sys

from common import save, table
from exact import SEEDS, TIME_LIMIT, scaled

from rar_opt.solvers import Status, solve

SIZES = [(8, 4, 40), (8, 4, 60), (10, 4, 60)]


def main() -> None:
    rows = []
    for jobs, servers, horizon in SIZES:
        inst = scaled(100 + jobs, jobs, servers, horizon)
        for mode in ("cold", "warm"):
            for seed in SEEDS:
                for started in ("sum", "cumulative"):
                    res = solve(
                        inst,
                        time_limit=TIME_LIMIT,
                        seed=seed,
                        warm_start="sjf-bco" if mode == "warm" else None,
                        started=started,
                    )
                    rows.append(
                        {
                            "size": f"{jobs}x{servers}x{horizon}",
                            "mode": mode,
                            "seed": seed,
                            "started": started,
                            "nonzeros": res.model_size.get("nonzeros"),
                            "build_s": round(res.build_s, 3),
                            "highs_s": res.solver_s,
                            "proven": res.status == Status.OPTIMAL,
                            "makespan": res.makespan,
                            "bound": res.bound,
                        }
                    )
                    print(table(rows[-1:]), flush=True)
    path = save("started", rows, time_limit_s=TIME_LIMIT, threads=1, seeds=list(SEEDS), formulation="compact")
    print(f"\nwritten: {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
