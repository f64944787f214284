"""Time per simulated schedule: the paper instance and 10x the jobs and servers.

    python benchmarks/simulator.py

The schedule simulated is List-Scheduling's single trial at theta = T (many jobs run at
once, so contention changes at every event). Results go to benchmarks/results/simulator.json.
"""

from __future__ import annotations

import sys

from common import save, table, timed

from rar_opt import simulate
from rar_opt.algorithms.engine import as_trial, eligible_rule, least_loaded, run_list, sjf_order
from rar_opt.algorithms.estimators import estimate
from rar_opt.instances.generate import paper


def main() -> None:
    rows = []
    for scale in (1, 2, 5, 10):
        jobs, servers = 160 * scale, 20 * scale
        inst = paper(0, jobs=jobs, servers=servers, horizon=1200 * scale)
        trial = as_trial(
            run_list(inst, sjf_order(inst), eligible_rule(least_loaded), inst.horizon, estimate(inst).weight)
        )
        assert trial is not None
        sched = trial.to_schedule(inst, {})
        seconds, res = timed(lambda inst=inst, sched=sched: simulate(inst, sched), repeat=5)
        rows.append(
            {
                "jobs": jobs,
                "servers": servers,
                "events": len(res.segments),
                "makespan": res.makespan,
                "ms_per_schedule": 1000 * seconds,
                "us_per_event": 1e6 * seconds / len(res.segments),
            }
        )
        print(table(rows[-1:]) if scale == 1 else table(rows[-1:]).splitlines()[1], file=sys.stdout, flush=True)
    path = save("simulator", rows, schedule="ls single trial, theta = T", seed=0)
    print(f"\nwritten: {path}")


if __name__ == "__main__":
    main()
