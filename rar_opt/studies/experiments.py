"""The paper's experiments (section 6), as sweeps over seeded instances.

Each experiment is a list of runs (instance generator arguments, policy, options); runs
are independent tasks for an executor (:mod:`rar_opt.studies.executors`: serial, a local Dask
cluster of single-threaded worker processes, or an existing Dask scheduler). Every row
records the seed, the instance and what the policy chose, so a result file says exactly
how it was made.

* ``policies``: every policy on the paper setting (160 jobs, 20 servers, T = 1200).
* ``kappa``: SJF-BCO with kappa fixed to 1, 2, 4, 8, 10, 16, 32 (the paper: U-shaped),
  and the classical baselines beside it (``lpt`` and ``sjf-oblivious``,
  :data:`rar_opt.algorithms.BASELINES`; the other experiments run every policy, them too).
* ``servers``: every policy on 10, 15 and 20 servers, T = 1500 (the paper: SJF-BCO's
  lead grows when GPUs are scarcer). The jobs are the same for every server count: one
  draw on 20 servers, and the 10- and 15-server clusters are its first servers (nested).
* ``lambda``: SJF-BCO with kappa = 1 and lambda in 1, 2, 4, 8 (the paper: makespan falls),
  and the classical baselines beside it.
* ``load`` (not the paper's; docs/arrivals.md): every policy, offline and online, on the
  paper's jobs arriving as a Poisson stream at each offered load of :data:`LOADS`
  (:func:`rar_opt.instances.generate.with_arrivals`, seeded by the instance seed), T = max(1200,
  7.5 x jobs) before the arrivals. Its rows add the average flow time and, beside each
  metric, a proven lower bound (below; the release floors included).

Every row carries the best lower bound rar-opt proves at this scale on both of the
paper's metrics, and the name of the bound that gave it (docs/formats.md, "JSON
outputs"): on the makespan the best of the registry's cheap bounds (its solver bounds, the
contention-free relaxation and the GPU bins with servers, prove nothing more on these
instances within 10 s each, measured at 10, 15 and 20 servers); on the average JCT the
best bound on the total completion time over J, with the registry's solver bounds on the
total (the flow LP) given ``bound_time_limit`` seconds each, and the cheap
``completion_rank`` where the LP is not run, is over its size guard or proves less. The
bounds are computed once per instance in a process and shared by its runs.

An experiment runs under one preset or several (``preset`` a name or a sequence of
names): the run list once per preset, in the order given. ``family`` names the paper
generator it draws from (a paper-based name of :data:`rar_opt.instances.generate.GENERATORS`):
``paper`` (the default), or ``paper-8gpu`` / ``paper-4gpu``, the same jobs on homogeneous
servers of 8 or 4 GPUs.

``jobs`` scales the number of jobs (the Philly mix is scaled proportionally); ``preset``
is the generator's reading of the paper's "within 15%" (:mod:`rar_opt.instances.calibration`) and
``budget`` the total share of the literal reading. kappa = 8 and kappa = 10 split the
Philly sizes (1, 2, 4, 8, 16, 32) into the same two groups, so they give identical runs.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rar_opt.errors import InputError, ParameterError
from rar_opt.studies.executors import make_executor
from rar_opt.support.checks import SOLVER_MAX_SEED, is_real, repeated, seed_problem
from rar_opt.support.processes import Interrupted, check_stop

log = logging.getLogger(__name__)

KAPPAS = (1, 2, 4, 8, 10, 16, 32)
SERVERS = (10, 15, 20)
LAMBDAS = (1.0, 2.0, 4.0, 8.0)
LOADS = (0.5, 0.7, 0.9, 1.1, 1.5)
"""Offered loads of the ``load`` experiment: GPU-time offered per GPU per slot."""
BOUND_TIME_LIMIT = 10.0
"""Seconds for each solver bound on the total completion time (the flow LP), per instance."""


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
    load: float | None = None  # Poisson arrivals at this offered load (None: every job at slot 0)
    family: str = "paper"  # the paper-based generator that draws the instance
    bound_time_limit: float = BOUND_TIME_LIMIT  # seconds of each solver bound on the total (0: the cheap ones)

    def draw(self) -> tuple[Any, ...]:
        """What decides the run's instance (every run of one draw shares its bounds)."""
        instance = (self.seed, self.jobs, self.servers, self.horizon, self.budget, self.preset, self.nested_from)
        return (self.family, *instance, self.load)


def _policies(jobs: int, seeds: list[int]) -> list[Run]:
    from rar_opt.algorithms import POLICIES

    return [Run(name, s, jobs, 20, 1200, name) for s in seeds for name in POLICIES]


def _baselines(seed: int, jobs: int) -> list[Run]:
    """The classical baselines on the paper setting (:data:`rar_opt.algorithms.BASELINES`),
    beside the sweeps that vary SJF-BCO alone, labelled by their names."""
    from rar_opt.algorithms import BASELINES

    return [Run(name, seed, jobs, 20, 1200, name) for name in dict.fromkeys(BASELINES.values())]


def _kappa(jobs: int, seeds: list[int]) -> list[Run]:
    return [
        run
        for s in seeds
        for run in [
            *(Run(f"kappa={k}", s, jobs, 20, 1200, "sjf-bco", {"kappa": k}) for k in KAPPAS),
            *_baselines(s, jobs),
        ]
    ]


def _servers(jobs: int, seeds: list[int]) -> list[Run]:
    from rar_opt.algorithms import POLICIES

    top = max(SERVERS)
    return [
        Run(f"{n} servers {p}", s, jobs, n, 1500, p, nested_from=top) for s in seeds for n in SERVERS for p in POLICIES
    ]


def _lambda(jobs: int, seeds: list[int]) -> list[Run]:
    def swept(s: int) -> list[Run]:
        return [Run(f"lambda={lam:g}", s, jobs, 20, 1200, "sjf-bco", {"kappa": 1, "lam": lam}) for lam in LAMBDAS]

    return [run for s in seeds for run in [*swept(s), *_baselines(s, jobs)]]


def load_horizon(jobs: int) -> int:
    """The ``load`` experiment's T before the arrivals: the paper's 1200 for 160 jobs, and
    as many slots per job for more."""
    return max(1200, math.ceil(7.5 * jobs))


def _load(jobs: int, seeds: list[int]) -> list[Run]:
    from rar_opt.algorithms import POLICIES

    horizon = load_horizon(jobs)
    return [Run(f"load={x:g} {p}", s, jobs, 20, horizon, p, load=x) for s in seeds for x in LOADS for p in POLICIES]


EXPERIMENTS: dict[str, Callable[[int, list[int]], list[Run]]] = {
    "policies": _policies,
    "kappa": _kappa,
    "servers": _servers,
    "lambda": _lambda,
    "load": _load,
}


def instance_of(run: Run) -> Any:
    """The instance ``run`` is on: the family's draw (on ``nested_from`` servers, cut to
    the first ``servers``), with Poisson arrivals at ``load`` when it has one."""
    from rar_opt.instances.generate import GENERATORS, nested_cluster, with_arrivals

    paper = GENERATORS[run.family]
    drawn_on = run.servers if run.nested_from is None else run.nested_from
    inst = paper(run.seed, jobs=run.jobs, servers=drawn_on, horizon=run.horizon, budget=run.budget, preset=run.preset)
    if run.nested_from is not None:
        inst = nested_cluster(inst, run.servers)
    if run.load is not None:
        inst = with_arrivals(inst, run.load, run.seed)
    return inst


def execute(run: Run) -> dict[str, Any]:
    """Run one configuration; a schedule that ends after T is a row too (marked). The
    policy is judged as everywhere else (:func:`rar_opt.studies.evaluation.judge`)."""
    from rar_opt.studies.evaluation import judge

    inst = instance_of(run)
    row: dict[str, Any] = {
        "label": run.label,
        "seed": run.seed,
        "instance": inst.name,
        "policy": run.policy,
        "preset": run.preset,
        "options": run.options,
        **({"family": run.family} if run.family != "paper" else {}),  # the paper's rows as before
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
    if result.search is not None and "capped" in result.search:  # a search: did its wall-time cap stop it?
        chosen["time_capped"] = bool(result.search["capped"])
    found = {"makespan": judged.makespan, "avg_jct": judged.avg_jct, "min_jct": judged.min_jct}
    bounds = instance_bounds(run, inst)
    found |= bounds
    if run.load is not None:
        found |= _arrival_fields(inst, run.load, judged.avg_flow, int(bounds["lower_bound_total"]))
    return {**row, **found, **chosen}


_BOUNDS: dict[tuple[Any, ...], dict[str, Any]] = {}
"""The bounds of the draws this process has seen (:func:`instance_bounds`), by draw and seconds."""
_BOUNDS_KEPT = 64


def instance_bounds(run: Run, inst: Any) -> dict[str, Any]:
    """The best lower bounds on both of the paper's metrics on ``inst`` (the instance of
    ``run``), and the bound that gave each: the makespan's best cheap bound
    (:func:`rar_opt.bounds.lower_bounds`), and the total completion time's best bound with
    every solver bound on the total (the flow LP) given ``run.bound_time_limit`` seconds,
    per job as the average JCT's (``lower_bound_total`` is the total itself). Computed once
    per draw in this process: every run of an instance shares them. Bounds computed after a
    signal asked the process to stop (the LP not run) are not kept for the next runs."""
    from rar_opt.bounds import lower_bounds
    from rar_opt.studies.evaluation import total_bounds
    from rar_opt.support.processes import stop_requested

    key = (*run.draw(), run.bound_time_limit)
    if key in _BOUNDS:
        return dict(_BOUNDS[key])
    makespan = lower_bounds(inst)
    total = total_bounds(inst, run.bound_time_limit, run.seed)  # the studies' own call: one home
    found = {
        "lower_bound_makespan": makespan.best,
        "lower_bound_makespan_by": makespan.best_by,
        "lower_bound_avg_jct": total.best / inst.num_jobs,
        "lower_bound_avg_jct_by": total.best_by,
        "lower_bound_total": total.best,
    }
    if stop_requested() is None:
        if len(_BOUNDS) >= _BOUNDS_KEPT:
            _BOUNDS.clear()
        _BOUNDS[key] = found
    return dict(found)


def _arrival_fields(inst: Any, load: float, avg_flow: float, total_bound: int) -> dict[str, Any]:
    """A ``load`` row's own fields: the load, the average flow time (the simulator's, from
    each job's release; its average JCT counts from slot 0) and its lower bound, the total
    completion time's best bound less the releases, per job."""
    return {
        "load": load,
        "mean_release": float(inst.releases.mean()),
        "avg_flow": avg_flow,
        "lower_bound_avg_flow": (total_bound - int(inst.releases.sum())) / inst.num_jobs,
    }


def count_runs(name: str, seeds: list[int], jobs: int = 160, presets: int = 1) -> int:
    """How many runs experiment ``name`` has under ``presets`` presets (for a progress bar)."""
    return presets * len(EXPERIMENTS[name](jobs, seeds)) if name in EXPERIMENTS else 0


def preset_names(preset: str | Sequence[str]) -> list[str]:
    """One preset name or several, as a list (validated; a name given twice is refused)."""
    from rar_opt.instances.calibration import preset as check_preset

    names = [preset] if isinstance(preset, str) else list(preset)
    if not names or len(set(names)) != len(names):
        raise ParameterError("needs one or more presets, each once", where="preset")  # told by --preset
    for name in names:
        check_preset(name)
    return names


def run_experiment(
    name: str,
    seeds: list[int],
    jobs: int = 160,
    workers: int = 1,
    budget: float | None = None,
    preset: str | Sequence[str] = "paper-literal",
    on_row: Callable[[dict[str, Any]], None] | None = None,
    scheduler: str | None = None,
    family: str = "paper",
    bound_time_limit: float = BOUND_TIME_LIMIT,
) -> list[dict[str, Any]]:
    """Every run of experiment ``name`` under ``preset`` (one name or several: the run list
    once per preset), in a fixed order whatever the executor (``workers`` local Dask
    workers when more than 1, or the Dask scheduler at ``scheduler``); ``on_row`` is
    called with each row as it arrives (progress). ``family``: the paper-based generator
    that draws every instance (``paper``, ``paper-8gpu``, ``paper-4gpu``).
    ``bound_time_limit``: seconds of each solver bound on the total completion time (the
    flow LP) per instance; 0 leaves them out (the cheap bound only).

    When a signal asks the process to stop (Ctrl-C in rar-opt's commands:
    :func:`rar_opt.support.processes.stop_requested` then names it), the runs finished
    before it are returned, in run order, and no others: a run that comes back after the
    signal may have been cut short (a search stops early), so it is dropped
    (:func:`complete_seeds` gives the seeds all of whose runs are among them)."""
    from rar_opt.instances.generate import GENERATORS, check_budget, takes_paper_knobs

    if not takes_paper_knobs(family):
        known = ", ".join(k for k in GENERATORS if takes_paper_knobs(k))
        raise InputError(f"unknown paper family {family!r} (known: {known})", where="family")
    if name not in EXPERIMENTS:
        raise InputError(f"unknown experiment {name!r} (known: {', '.join(EXPERIMENTS)})", where="experiment")
    if not seeds or any(s < 0 for s in seeds):
        raise ParameterError("needs one or more non-negative seeds", where="seeds")
    # an instance's seed is also its seeded policies' and its bounds' solvers': their range, checked before any run
    for seed in seeds:
        if problem := seed_problem(seed, SOLVER_MAX_SEED):
            raise ParameterError(problem, where="seeds")
    if twice := repeated(seeds):  # one instance twice would weigh twice in every mean
        raise ParameterError(f"seed(s) {', '.join(map(str, twice))} given twice: each counts once", where="seeds")
    for count, value in (("jobs", jobs), ("workers", workers)):
        if value < 1:
            raise ParameterError(f"must be an integer >= 1, got {value!r}", where=count)
    if budget is not None:
        check_budget(budget)
    if not (is_real(bound_time_limit) and math.isfinite(bound_time_limit) and bound_time_limit >= 0):
        problem = f"must be a finite number of seconds >= 0, got {bound_time_limit!r}"
        raise ParameterError(problem, where="bound_time_limit")
    runs = [
        dataclasses.replace(r, budget=budget, preset=p, family=family, bound_time_limit=float(bound_time_limit))
        for p in preset_names(preset)
        for r in EXPERIMENTS[name](jobs, seeds)
    ]
    found: dict[int, dict[str, Any]] = {}
    try:
        with make_executor(workers=workers, scheduler=scheduler) as executor:
            _collect(name, runs, executor, found, on_row)
    except Interrupted:  # outside the executor's block: it closes as after a signal (its workers are gone)
        pass  # a signal asked to stop: the runs finished before it are returned (stop_requested() says so)
    return [found[i] for i in sorted(found)]  # in run order, whatever the order of arrival


def _collect(
    name: str,
    runs: list[Run],
    executor: Any,
    found: dict[int, dict[str, Any]],
    on_row: Callable[[dict[str, Any]], None] | None,
) -> None:
    """Every run's row into ``found`` (by its index) as it arrives."""
    for i, row in executor.run(execute, runs):
        check_stop()  # Ctrl-C: stop between runs; a row that comes back after the signal may be cut short
        found[i] = row
        if on_row is not None:
            on_row(row)
        log.info(
            "%s: %d/%d %s seed %d: makespan %s", name, len(found), len(runs), row["label"], row["seed"], row["makespan"]
        )


def complete_seeds(name: str, rows: list[dict[str, Any]], jobs: int = 160) -> dict[str, list[int]]:
    """The seeds of which every run of experiment ``name`` is among ``rows``, per preset (in
    the order met): after a stop the means over them compare like with like."""
    per_seed = count_runs(name, [0], jobs)
    seen: dict[str, dict[int, int]] = {}
    for row in rows:
        by_seed = seen.setdefault(row["preset"], {})
        by_seed[row["seed"]] = by_seed.get(row["seed"], 0) + 1
    return {preset: [s for s, n in by_seed.items() if n == per_seed] for preset, by_seed in seen.items()}


SUMMED = ("avg_flow", "lower_bound_makespan", "lower_bound_avg_jct", "lower_bound_avg_flow")
"""Row fields averaged over the seeds as ``mean_FIELD`` where the rows have them (the
bounds: every experiment's rows; the flow: ``load``'s)."""
NAMED = ("lower_bound_makespan_by", "lower_bound_avg_jct_by")
"""Row fields that name a bound: the summary lists the names met over the seeds."""


def summarise(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Mean makespan and average JCT per label (and preset, when the rows name one) over the
    seeds, and the means of :data:`SUMMED` where the rows have them; runs whose schedule
    ends after T are counted (``beyond_horizon``) and included in the means with their
    real makespan; runs of a search (``pack``, ``improve``, ``backfill``) that its
    wall-time cap stopped are counted as ``time_capped`` (absent when none was)."""
    out: dict[tuple[Any, str], dict[str, Any]] = {}
    values: dict[tuple[Any, str], dict[str, list[float]]] = {}
    for row in rows:
        key = (row.get("preset"), row["label"])
        if key not in out:
            head = {"preset": row["preset"]} if "preset" in row else {}
            out[key] = {**head, "label": row["label"], "runs": 0, "beyond_horizon": 0}
            values[key] = {}
        agg = out[key]
        agg["runs"] += 1
        agg["beyond_horizon"] += int(bool(row.get("exceeds_horizon")))
        if row.get("time_capped"):  # a search stopped by its wall-time cap: a machine-dependent schedule
            agg["time_capped"] = agg.get("time_capped", 0) + 1
        for name in ("makespan", "avg_jct", *SUMMED):
            if name in row:
                values[key].setdefault(name, []).append(row[name])
        for name in NAMED:
            if name in row and row[name] not in agg.setdefault(name, []):
                agg[name].append(row[name])
    for key, agg in out.items():
        for name, seen in values[key].items():
            agg[f"mean_{name}"] = statistics.fmean(seen)
        for name in NAMED:
            if name in agg:
                agg[name] = ", ".join(agg.pop(name))  # after the means: the order of the fields as before
    return list(out.values())
