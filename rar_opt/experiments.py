"""The paper's experiments (section 6), as sweeps over seeded instances.

Each experiment is a list of runs (instance generator arguments, policy, options); runs
are independent tasks for an executor (:mod:`rar_opt.executors`: serial, a local Dask
cluster of single-threaded worker processes, or an existing Dask scheduler). Every row
records the seed, the instance and what the policy chose, so a result file says exactly
how it was made.

* ``policies``: every policy on the paper setting (160 jobs, 20 servers, T = 1200).
* ``kappa``: SJF-BCO with kappa fixed to 1, 2, 4, 8, 10, 16, 32 (the paper: U-shaped).
* ``servers``: every policy on 10, 15 and 20 servers, T = 1500 (the paper: SJF-BCO's
  lead grows when GPUs are scarcer). The jobs are the same for every server count: one
  draw on 20 servers, and the 10- and 15-server clusters are its first servers (nested).
* ``lambda``: SJF-BCO with kappa = 1 and lambda in 1, 2, 4, 8 (the paper: makespan falls).

``jobs`` scales the number of jobs (the Philly mix is scaled proportionally); ``preset``
is the generator's reading of the paper's "within 15%" (:mod:`rar_opt.calibration`) and
``budget`` the total share of the literal reading. kappa = 8 and kappa = 10 split the
Philly sizes (1, 2, 4, 8, 16, 32) into the same two groups, so they give identical runs.
"""

from __future__ import annotations

import dataclasses
import logging
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .errors import InputError
from .executors import make_executor

log = logging.getLogger(__name__)

KAPPAS = (1, 2, 4, 8, 10, 16, 32)
SERVERS = (10, 15, 20)
LAMBDAS = (1.0, 2.0, 4.0, 8.0)


@dataclass(frozen=True)
class Run:
    """One run: a paper instance and a policy with options."""

    label: str
    seed: int
    jobs: int
    servers: int
    horizon: int
    policy: str
    options: dict[str, Any] = field(default_factory=dict, hash=False)
    budget: float | None = None
    preset: str = "paper-literal"
    nested_from: int | None = None  # draw on this many servers, keep the first ``servers``


def _policies(jobs: int, seeds: list[int]) -> list[Run]:
    from .algorithms import POLICIES

    return [Run(name, s, jobs, 20, 1200, name) for s in seeds for name in POLICIES]


def _kappa(jobs: int, seeds: list[int]) -> list[Run]:
    return [Run(f"kappa={k}", s, jobs, 20, 1200, "sjf-bco", {"kappa": k}) for s in seeds for k in KAPPAS]


def _servers(jobs: int, seeds: list[int]) -> list[Run]:
    from .algorithms import POLICIES

    top = max(SERVERS)
    return [
        Run(f"{n} servers {p}", s, jobs, n, 1500, p, nested_from=top) for s in seeds for n in SERVERS for p in POLICIES
    ]


def _lambda(jobs: int, seeds: list[int]) -> list[Run]:
    return [
        Run(f"lambda={lam:g}", s, jobs, 20, 1200, "sjf-bco", {"kappa": 1, "lam": lam}) for s in seeds for lam in LAMBDAS
    ]


EXPERIMENTS: dict[str, Callable[[int, list[int]], list[Run]]] = {
    "policies": _policies,
    "kappa": _kappa,
    "servers": _servers,
    "lambda": _lambda,
}


def execute(run: Run) -> dict[str, Any]:
    """Run one configuration; a schedule that ends after T is a row too (marked). The
    policy is judged as everywhere else (:func:`rar_opt.evaluation.judge`)."""
    from .evaluation import judge
    from .generate import nested_cluster, paper

    if run.nested_from is None:
        inst = paper(
            run.seed, jobs=run.jobs, servers=run.servers, horizon=run.horizon, budget=run.budget, preset=run.preset
        )
    else:
        drawn = paper(
            run.seed, jobs=run.jobs, servers=run.nested_from, horizon=run.horizon, budget=run.budget, preset=run.preset
        )
        inst = nested_cluster(drawn, run.servers)
    row: dict[str, Any] = {
        "label": run.label,
        "seed": run.seed,
        "instance": inst.name,
        "policy": run.policy,
        "preset": run.preset,
        "options": run.options,
    }
    judged = judge(inst, run.policy, seed=run.seed, **run.options)
    result = judged.result
    chosen = {
        "theta": result.theta,
        "kappa": result.kappa,
        "trials": result.trials,
        "exceeds_horizon": result.exceeds_horizon,
        "theta_binding": result.theta_binding,
        "max_load": result.max_load,
        **{f"{k}_share": v for k, v in judged.shares.to_dict().items()},
    }
    return {**row, "makespan": judged.makespan, "avg_jct": judged.avg_jct, "min_jct": judged.min_jct, **chosen}


def count_runs(name: str, seeds: list[int], jobs: int = 160) -> int:
    """How many runs experiment ``name`` has (for a progress bar)."""
    return len(EXPERIMENTS[name](jobs, seeds)) if name in EXPERIMENTS else 0


def run_experiment(
    name: str,
    seeds: list[int],
    jobs: int = 160,
    workers: int = 1,
    budget: float | None = None,
    preset: str = "paper-literal",
    on_row: Callable[[dict[str, Any]], None] | None = None,
    scheduler: str | None = None,
) -> list[dict[str, Any]]:
    """Every run of experiment ``name``, in a fixed order whatever the executor (``workers``
    local Dask workers when more than 1, or the Dask scheduler at ``scheduler``);
    ``on_row`` is called with each row as it arrives (progress)."""
    if name not in EXPERIMENTS:
        raise InputError(f"unknown experiment {name!r} (known: {', '.join(EXPERIMENTS)})", where="experiment")
    if not seeds or any(s < 0 for s in seeds):
        raise InputError("needs one or more non-negative seeds", where="seeds")
    if workers < 1 or jobs < 1:
        raise InputError("workers and jobs must be at least 1", where="experiment")
    from .calibration import preset as check_preset

    check_preset(preset)
    runs = [dataclasses.replace(r, budget=budget, preset=preset) for r in EXPERIMENTS[name](jobs, seeds)]
    found: dict[int, dict[str, Any]] = {}
    with make_executor(workers=workers, scheduler=scheduler) as executor:
        for i, row in executor.run(execute, runs):
            found[i] = row
            if on_row is not None:
                on_row(row)
            log.info(
                "%s: %d/%d %s seed %d: makespan %s",
                name,
                len(found),
                len(runs),
                row["label"],
                row["seed"],
                row["makespan"],
            )
    return [found[i] for i in range(len(runs))]  # in run order, whatever the order of arrival


def summarise(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Mean makespan and average JCT per label over the seeds; runs whose schedule ends after
    T are counted (``beyond_horizon``) and included in the means with their real makespan."""
    out: dict[str, dict[str, Any]] = {}
    for row in rows:
        agg = out.setdefault(row["label"], {"label": row["label"], "runs": 0, "beyond_horizon": 0, "_m": [], "_j": []})
        agg["runs"] += 1
        agg["beyond_horizon"] += int(bool(row.get("exceeds_horizon")))
        agg["_m"].append(row["makespan"])
        agg["_j"].append(row["avg_jct"])
    result = []
    for agg in out.values():
        m, j = agg.pop("_m"), agg.pop("_j")
        agg["mean_makespan"] = statistics.fmean(m) if m else None
        agg["mean_avg_jct"] = statistics.fmean(j) if j else None
        result.append(agg)
    return result
