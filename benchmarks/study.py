"""Studies at scale: executor speedup and overhead, the store's write rate, and the
worst-case search against random sampling at the same number of exact solves.

    python benchmarks/study.py            # speedup, overhead, write rate -> results/study.json
    python benchmarks/study.py --search   # search vs random             -> results/study-search.json
    python benchmarks/study.py --search --policies lpt   # one policy   -> results/study-search-lpt.json
    python benchmarks/study.py --theorem5 # the same, hunting Theorem 5  -> results/study-search-theorem5.json

* speedup: a 40-instance tiny study (6 jobs, 4 servers each) serially and on a local Dask
  cluster of 2 workers, timed without the cluster's start-up (reported apart) and with
  workers warmed up (rar-opt imported); the goal on a 2-core machine is >= 1.7x.
* overhead: the time per trivial task through Dask (1 worker) minus serially, batched as
  sweeps run them, and with every task its own Dask future (all submitted at once).
* write rate: rows per second written into a fresh store (one transaction per row, as a
  study writes them).
* search: for every policy, the worst ALG/OPT found by ``study worst --strategy evolve``
  and by ``--strategy random`` at the same number of evaluations, over several seeds.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from common import save, table

from rar_opt.algorithms import POLICIES
from rar_opt.studies.executors import DaskExecutor, SerialExecutor
from rar_opt.studies.run import StudyConfig, run_study
from rar_opt.studies.store import open_store
from rar_opt.studies.worst import WorstConfig, open_search, search

COUNT = 40


def _warm(seed: int = 0) -> int:
    """One real task (a seed outside the study): the worker imports the solver stack and
    loads CP-SAT once, as the first task of any study does."""
    from rar_opt.studies.tasks import check_policies, exact_method, generated_inputs, run_task

    x = generated_inputs(
        "tiny", 10**6 + seed, jobs=6, servers=4, preset=None, policies=check_policies(None), method=exact_method(),
        time_limit=30.0,
    )  # fmt: skip
    run_task(x)
    return 0


def _noop(x: int) -> int:
    return x


def speedup(config: StudyConfig, count: int = COUNT, repeat: int = 3) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for r in range(repeat):
        with tempfile.TemporaryDirectory() as tmp:
            list(SerialExecutor().run(_warm, [0]))  # the same warm-up for the serial run
            began = time.perf_counter()
            run_study(Path(tmp) / "serial.db", config, count, SerialExecutor())
            serial = time.perf_counter() - began
            began = time.perf_counter()
            with DaskExecutor(workers=2) as dask:
                start = time.perf_counter() - began
                dask.on_every_worker(_warm)
                began = time.perf_counter()
                run_study(Path(tmp) / "dask.db", config, count, dask)
                parallel = time.perf_counter() - began
            task_s = {name: _task_seconds(Path(tmp) / f"{name}.db") for name in ("serial", "dask")}
        rows.append(
            {
                "study": f"{config.family} {config.jobs}x{config.servers} {config.method}",
                "instances": count,
                "round": r,
                "serial_s": serial,
                "dask2_s": parallel,
                "speedup": serial / parallel,
                "cluster_start_s": start,
                "speedup_with_start": serial / (parallel + start),
                # the tasks' own wall time summed: when it grows under Dask, the cores were busy elsewhere
                "tasks_serial_s": task_s["serial"],
                "tasks_dask_s": task_s["dask"],
                "load_1min": os.getloadavg()[0],
            }
        )
    return rows


def _task_seconds(path: Path) -> float:
    with open_store(path) as store:
        return sum(r.wall_s for r in store.rows())


def overhead(tasks: int = 400) -> dict[str, float]:
    serial = SerialExecutor()
    began = time.perf_counter()
    list(serial.run(_noop, list(range(tasks))))
    t_serial = (time.perf_counter() - began) / tasks
    per_task = {}
    with DaskExecutor(workers=1) as dask:
        list(dask.run(_warm, [0]))
        began = time.perf_counter()
        list(dask.run(_noop, list(range(tasks))))  # batched, as sweeps run
        per_task["batched"] = (time.perf_counter() - began) / tasks
        from distributed import as_completed

        client = dask._client  # Dask alone: every task its own future, all submitted at once
        began = time.perf_counter()
        futures = client.map(_noop, list(range(tasks)), pure=False)
        for _ in as_completed(futures, loop=client.loop):
            pass
        per_task["one_call_per_task"] = (time.perf_counter() - began) / tasks
    return {
        "tasks": tasks,
        "serial_ms": 1e3 * t_serial,
        "dask_ms": 1e3 * per_task["batched"],
        "overhead_ms": 1e3 * (per_task["batched"] - t_serial),
        "unbatched_dask_ms": 1e3 * per_task["one_call_per_task"],
        "unbatched_overhead_ms": 1e3 * (per_task["one_call_per_task"] - t_serial),
    }


def write_rate(rows: int = 2000) -> dict[str, float]:
    outputs = {"instance": "x", "policies": {p: {"makespan": 10, "ratio": 1.0} for p in POLICIES}, "proven": True}
    with tempfile.TemporaryDirectory() as tmp, open_store(Path(tmp) / "w.db", "bench", {"n": rows}) as store:
        began = time.perf_counter()
        for i in range(rows):
            store.add(f"k{i}", i, {"seed": i}, outputs, 0.0)
        seconds = time.perf_counter() - began
    return {"rows": rows, "rows_per_s": rows / seconds, "us_per_row": 1e6 * seconds / rows}


def search_vs_random(
    evaluations: int = 200,
    seeds: tuple[int, ...] = (0, 10_000, 20_000, 30_000, 40_000),
    policies: tuple[str, ...] = tuple(POLICIES),
    objective: str = "ratio",
) -> list[dict[str, object]]:
    """Seeds far apart: the random strategy's samples (seed, seed + 1, ...) do not overlap."""
    rows = []
    for policy in policies:
        for seed in seeds:
            found = {}
            for strategy in ("random", "evolve"):
                study = StudyConfig(family="tiny", seed=seed, policies=(policy,), time_limit=10.0)
                config = WorstConfig(study, strategy, objective=objective)
                with tempfile.TemporaryDirectory() as tmp, open_search(Path(tmp) / "s.db", config) as store:
                    result = search(store, config, evaluations, SerialExecutor())
                worst = result.worst
                found[strategy] = (worst.fitness, worst.proven, worst.index, result.evaluations)
                above = [e.index for e in result.evaluations if e.fitness > 1.0 + 1e-9]
                found[strategy + "_above"] = (len(above), above[0] if above else None)
            unproven = sum(not e.proven for k in ("random", "evolve") for e in found[k][3])
            rows.append(
                {
                    "policy": policy,
                    "seed": seed,
                    "evaluations": evaluations,
                    "random_worst": found["random"][0],
                    "evolve_worst": found["evolve"][0],
                    "evolve_found_at": found["evolve"][2],
                    "unproven": unproven,
                    **(
                        {
                            "random_violations": found["random_above"][0],
                            "evolve_violations": found["evolve_above"][0],
                            "evolve_first_violation": found["evolve_above"][1],
                        }
                        if objective == "theorem5"
                        else {}
                    ),
                }
            )
            print(table(rows[-1:]), flush=True)
    return rows


def main() -> None:
    if "--theorem5" in sys.argv:  # fitness ALG/OPT over Theorem 5's bound: above 1 breaks the theorem
        rows = search_vs_random(policies=("sjf-bco",), objective="theorem5")
        print(table(rows))
        path = save("study-search-theorem5", rows, evaluations=200, family="tiny", time_limit_s=10.0)
    elif "--search" in sys.argv:
        # --policies a,b: only those policies, into results/study-search-a-b.json
        chosen = sys.argv[sys.argv.index("--policies") + 1].split(",") if "--policies" in sys.argv else None
        rows = search_vs_random(policies=tuple(chosen)) if chosen else search_vs_random()
        print(table(rows))
        wins = sum(r["evolve_worst"] > r["random_worst"] + 1e-9 for r in rows)
        losses = sum(r["evolve_worst"] < r["random_worst"] - 1e-9 for r in rows)
        print(f"evolve beats random on {wins} of {len(rows)} (policy, seed) pairs, loses on {losses}")
        name = "study-search" + ("-" + "-".join(chosen) if chosen else "")
        path = save(name, rows, evaluations=200, family="tiny", time_limit_s=10.0)
    else:
        rows = speedup(StudyConfig(family="tiny", seed=0, jobs=6, servers=4, time_limit=30.0), repeat=5)
        print(table(rows))
        # the same study with the compact MILP (HiGHS) as the exact method: about a second per task
        milp = StudyConfig(family="tiny", seed=0, jobs=6, servers=4, time_limit=30.0, method="compact")
        rows += speedup(milp, repeat=2)
        print(table(rows[-2:]))
        over, rate = overhead(), write_rate()
        print(table([over]))
        print(table([rate]))
        load = os.getloadavg()
        path = save("study", rows, overhead=over, write_rate=rate, load=load, cpus=os.cpu_count())
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
