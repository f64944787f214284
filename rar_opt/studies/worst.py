"""``study worst``: search for instances on which a policy is far from the optimum.

Every evaluation is one exact solve (a task of :mod:`.tasks` with the one policy), kept in
the store like a study's rows. Two strategies, compared at the same number of evaluations
(docs/studies.md):

* ``random``: instances of the family with seeds ``seed``, ``seed + 1``, ... (what a study
  samples);
* ``evolve`` (default): generation 0 is ``initial`` random instances (the same ones the
  random strategy starts with); every later generation of ``batch`` candidates
  mutates the best instances found so far (``elite`` of them; among equal ratios the most
  recent first, so the search moves along plateaus) and adds one fresh random instance.
  Child c of a generation depends only on the seed, the generation, c and the earlier
  generations, so a longer search extends a shorter one (its evaluations are a prefix).
  A mutation changes one to three of: a job's GPU count, iterations, gradient size or
  compute time, a server's capacity, the contention exponent alpha or the overhead xi2,
  and (unless fixed by ``--jobs``/``--servers``) adds or removes a job or a server, always
  within the family's ranges (:data:`RANGES`); a mutant the data model refuses (a job that
  could stall) is drawn again.

The fitness is ALG/OPT when the optimum is proven, else ALG / the best schedule known (a
value the true ratio is at least); with ``objective="theorem5"`` (SJF-BCO) it is divided by
the instance's Theorem 5 bound, so a fitness above 1 is an instance that breaks Theorem 5.

The search is deterministic for a seed: children are drawn from ``(seed, generation,
child)`` and a generation's results are used only once all of them are back, so neither
the executor nor the order of arrival matters; a re-run replays it and finds its
evaluations in the store (resume).

The classical baselines are not in the search's tasks (they would change the tasks' keys
and, on unproven candidates, the fitness): the instances a search reports get them beside
the policy when reported (:mod:`rar_opt.studies.beside`), and nothing of that is stored.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rar_opt.errors import InputError, ParameterError
from rar_opt.instance import Instance, Job
from rar_opt.studies.executors import Executor
from rar_opt.studies.run import StudyConfig
from rar_opt.studies.store import Store, TaskRow, open_store
from rar_opt.studies.tasks import TaskResult, generated_inputs, instance_inputs, instance_of, run_task, task_key
from rar_opt.support.checks import is_int
from rar_opt.support.processes import check_stop

WORST_KIND = "worst"
STRATEGIES = ("evolve", "random")
OBJECTIVES = ("ratio", "theorem5")
FRESH_SEED_OFFSET = 1_000_000
"""Fresh random instances of the evolve strategy use seeds from here on (apart from generation 0's)."""


@dataclass(frozen=True)
class Ranges:
    """What a family's instances may hold (the generator's own ranges)."""

    jobs: tuple[int, int]
    servers: tuple[int, int]
    capacities: tuple[int, ...]
    gpus: tuple[int, ...]
    iterations: tuple[int, int]
    tau_max: float  # the largest worst-case per-iteration time (slots)
    horizon_from_jobs: bool  # the horizon is the sum of the jobs' worst execution times


RANGES: dict[str, Ranges] = {
    "tiny": Ranges((2, 6), (1, 4), (1, 2, 3, 4), (1, 2, 3, 4), (2, 10), 0.9, True),
    "paper": Ranges((1, 10**6), (1, 10**6), (4, 8, 16, 32), (1, 2, 4, 8, 16, 32), (1000, 6000), 0.06, False),
    "paper-8gpu": Ranges((1, 10**6), (1, 10**6), (8,), (1, 2, 4, 8, 16, 32), (1000, 6000), 0.06, False),
    "paper-4gpu": Ranges((1, 10**6), (1, 10**6), (4,), (1, 2, 4, 8, 16, 32), (1000, 6000), 0.06, False),
}


@dataclass(frozen=True)
class WorstConfig:
    """A worst-case search (validated on construction)."""

    study: StudyConfig  # the family, seed, sizes, time limit and method; its policies: the one searched
    strategy: str = "evolve"
    batch: int = 8
    elite: int = 4
    initial: int = 8  # evolve: random instances before the first mutation
    objective: str = "ratio"  # or "theorem5": ALG/OPT divided by Theorem 5's bound (SJF-BCO only)

    def __post_init__(self) -> None:
        if len(self.study.policies) != 1:
            raise ParameterError("a worst-case search is about one policy", where="policy")
        if self.study.family not in RANGES:
            raise ParameterError(f"no mutation ranges for the {self.study.family} family", where="family")
        if self.objective not in OBJECTIVES:
            raise ParameterError(
                f"unknown objective {self.objective!r} (known: {', '.join(OBJECTIVES)})", where="objective"
            )
        if self.objective == "theorem5" and self.study.policies != ("sjf-bco",):
            raise ParameterError("Theorem 5 is about SJF-BCO: choose the policy sjf-bco", where="objective")
        if self.strategy not in STRATEGIES:
            raise ParameterError(
                f"unknown strategy {self.strategy!r} (known: {', '.join(STRATEGIES)})", where="strategy"
            )
        for name, low in (("batch", 2), ("elite", 1), ("initial", 1)):
            value = getattr(self, name)
            if not is_int(value) or value < low:
                raise ParameterError(f"must be an integer >= {low}, got {value!r}", where=name)

    @property
    def policy(self) -> str:
        """The policy searched against."""
        return self.study.policies[0]

    def to_dict(self) -> dict[str, Any]:
        """The configuration as the store records it."""
        return {
            **self.study.to_dict(),
            "strategy": self.strategy,
            "batch": self.batch,
            "elite": self.elite,
            "initial": self.initial,
            "objective": self.objective,
        }


@dataclass(frozen=True)
class Evaluation:
    """One evaluated candidate: where it came from and how bad the policy is on it."""

    index: int
    generation: int
    key: str
    name: str
    fitness: float
    proven: bool
    parent: str | None  # the key of the instance it was mutated from


@dataclass(frozen=True)
class SearchResult:
    """The search's evaluations and its worst one."""

    evaluations: tuple[Evaluation, ...]
    computed: int  # exact solves run now (the rest were in the store)

    @property
    def worst(self) -> Evaluation:
        """The evaluation of largest fitness (the first one on ties)."""
        return max(self.evaluations, key=lambda e: (e.fitness, -e.index))


def fitness(outputs: dict[str, Any], policy: str, objective: str = "ratio") -> float:
    """ALG/OPT when proven, else ALG / the best schedule known (a lower estimate); with the
    ``theorem5`` objective divided by the instance's Theorem 5 bound (above 1: a violation)."""
    row = outputs["policies"][policy]
    value = float(row["ratio"] if outputs["proven"] else row["ratio_low"])
    return value / float(outputs["theorem5_bound"]) if objective == "theorem5" else value


@dataclass
class _Draft:
    """An instance being mutated: its jobs as dicts, its servers and two cluster constants."""

    jobs: list[dict[str, Any]]
    servers: list[int]
    alpha: float
    xi2: float


Mutation = Callable[[_Draft, np.random.Generator, int, Ranges, tuple[bool, bool]], None]


def _job_gpus(d: _Draft, rng: np.random.Generator, j: int, ranges: Ranges, fixed: tuple[bool, bool]) -> None:
    d.jobs[j]["gpus"] = int(rng.choice(ranges.gpus))


def _job_iterations(d: _Draft, rng: np.random.Generator, j: int, ranges: Ranges, fixed: tuple[bool, bool]) -> None:
    d.jobs[j]["iterations"] = int(rng.integers(*ranges.iterations, endpoint=True))


def _job_gradient(d: _Draft, rng: np.random.Generator, j: int, ranges: Ranges, fixed: tuple[bool, bool]) -> None:
    d.jobs[j]["grad_size"] = float(d.jobs[j]["grad_size"] * math.exp(rng.normal(0.0, 0.6)))


def _job_compute(d: _Draft, rng: np.random.Generator, j: int, ranges: Ranges, fixed: tuple[bool, bool]) -> None:
    scale = math.exp(rng.normal(0.0, 0.3))  # forward and backward times together
    d.jobs[j]["fwd_time"], d.jobs[j]["bwd_time"] = d.jobs[j]["fwd_time"] * scale, d.jobs[j]["bwd_time"] * scale


def _server_capacity(d: _Draft, rng: np.random.Generator, j: int, ranges: Ranges, fixed: tuple[bool, bool]) -> None:
    d.servers[int(rng.integers(len(d.servers)))] = int(rng.choice(ranges.capacities))


def _contention_alpha(d: _Draft, rng: np.random.Generator, j: int, ranges: Ranges, fixed: tuple[bool, bool]) -> None:
    d.alpha = float(np.round(rng.uniform(0.0, 1.0), 3))


def _split_overhead(d: _Draft, rng: np.random.Generator, j: int, ranges: Ranges, fixed: tuple[bool, bool]) -> None:
    d.xi2 = float(d.xi2 * math.exp(rng.normal(0.0, 0.6)))


def _job_count(d: _Draft, rng: np.random.Generator, j: int, ranges: Ranges, fixed: tuple[bool, bool]) -> None:
    if fixed[0]:  # the number of jobs must stay
        return
    if len(d.jobs) < ranges.jobs[1] and rng.random() < 0.5:  # a copy of job j, renamed
        d.jobs.append({**d.jobs[j], "name": _fresh_name(d.jobs)})
    elif len(d.jobs) > ranges.jobs[0]:
        d.jobs.pop(j)


def _server_count(d: _Draft, rng: np.random.Generator, j: int, ranges: Ranges, fixed: tuple[bool, bool]) -> None:
    if fixed[1]:  # the number of servers must stay
        return
    if len(d.servers) < ranges.servers[1] and rng.random() < 0.5:
        d.servers.append(int(rng.choice(ranges.capacities)))
    elif len(d.servers) > ranges.servers[0]:
        d.servers.pop(int(rng.integers(len(d.servers))))


MUTATIONS: dict[str, Mutation] = {
    "job gpus": _job_gpus,
    "job iterations": _job_iterations,
    "job gradient size": _job_gradient,
    "job compute time": _job_compute,
    "server capacity": _server_capacity,
    "contention alpha": _contention_alpha,
    "split overhead xi2": _split_overhead,
    "job count": _job_count,
    "server count": _server_count,
}
"""The changes a mutation draws from, by name (uniformly; each draw picks one, then a job)."""


def mutate(
    instance: Instance, rng: np.random.Generator, ranges: Ranges, fixed: tuple[bool, bool], name: str
) -> Instance:
    """A valid mutant of ``instance``: one to three random changes of :data:`MUTATIONS`
    within ``ranges`` (``fixed``: whether the number of jobs / of servers must stay)."""
    changes = list(MUTATIONS.values())
    for _ in range(50):
        cluster = instance.cluster
        draft = _Draft([j.to_dict() for j in instance.jobs], list(cluster.servers), cluster.alpha, cluster.xi2)
        for _ in range(int(rng.integers(1, 3, endpoint=True))):
            change = changes[int(rng.integers(0, len(changes)))]
            change(draft, rng, int(rng.integers(len(draft.jobs))), ranges, fixed)
        candidate = _build(instance, draft.jobs, draft.servers, draft.alpha, draft.xi2, ranges, name)
        if candidate is not None:
            return candidate
    return dataclasses.replace(instance, name=name)  # nothing valid found: the parent, renamed


def _fresh_name(jobs: list[dict[str, Any]]) -> str:
    taken = {j["name"] for j in jobs}
    return next(f"j{k}" for k in range(len(jobs) + 1, 10**6) if f"j{k}" not in taken)


def _build(
    parent: Instance,
    jobs: list[dict[str, Any]],
    servers: list[int],
    alpha: float,
    xi2: float,
    ranges: Ranges,
    name: str,
) -> Instance | None:
    """The mutant, or None when it leaves the family's ranges or the data model refuses it."""
    if sum(servers) < max(j["gpus"] for j in jobs):
        return None
    cluster = dataclasses.replace(parent.cluster, servers=tuple(servers), alpha=alpha, xi2=xi2)
    meta = {k: v for k, v in parent.meta.items() if k not in ("seed", "params")}
    try:
        probe = Instance(name, 10**9, cluster, tuple(Job(**j) for j in jobs), meta)
        if float(np.max(probe.bounds.tau_max)) > ranges.tau_max:
            return None
        horizon = int(probe.bounds.rho_max.sum()) if ranges.horizon_from_jobs else parent.horizon
        return dataclasses.replace(probe, horizon=horizon)
    except InputError:
        return None


def search(
    store: Store,
    config: WorstConfig,
    evaluations: int,
    executor: Executor,
    on_result: Callable[[Evaluation], None] | None = None,
) -> SearchResult:
    """Run (or replay) the search for ``evaluations`` evaluations, storing each one."""
    if not is_int(evaluations) or evaluations < 1:
        raise ParameterError(f"must be an integer >= 1, got {evaluations!r}", where="evaluations")
    study, policy = config.study, config.policy
    ranges = RANGES[study.family]
    fixed = (study.jobs is not None, study.servers is not None)
    done: list[Evaluation] = []
    instances: dict[str, Instance] = {}
    computed = 0
    generation = 0

    def random_inputs(seed: int) -> dict[str, Any]:
        return generated_inputs(
            study.family,
            seed,
            jobs=study.jobs,
            servers=study.servers,
            preset=study.preset,
            policies=study.policies,
            method=study.method,
            time_limit=study.time_limit,
        )

    while len(done) < evaluations:
        sampling = config.strategy == "random" or len(done) < config.initial
        size = config.initial - len(done) if config.strategy == "evolve" and sampling else config.batch
        size = min(size, evaluations - len(done))
        batch: list[tuple[dict[str, Any], str | None]] = []
        if sampling:
            batch = [(random_inputs(study.seed + len(done) + c), None) for c in range(size)]
        else:
            ranked = sorted(done, key=lambda e: (-e.fitness, -e.index))[: config.elite]
            for c in range(size):
                rng = np.random.default_rng([study.seed, generation, c])
                if c == 0:  # one fresh random instance first (a shorter last generation keeps it)
                    batch.append((random_inputs(study.seed + FRESH_SEED_OFFSET + generation * config.batch + c), None))
                    continue
                parent = ranked[int(rng.integers(len(ranked)))]
                name = f"{study.family}-worst-{policy}-s{study.seed}-g{generation}-c{c}"
                child = mutate(instances[parent.key], rng, ranges, fixed, name)
                batch.append((instance_inputs(child, study.policies, study.method, study.time_limit, 0), parent.key))
        outputs, new = _evaluate(store, [x for x, _ in batch], len(done), executor)
        computed += new
        for (x, parent_key), out in zip(batch, outputs, strict=True):
            key = task_key(x)
            instances[key] = instance_of(x)
            ev = Evaluation(
                len(done),
                generation,
                key,
                out["instance"],
                fitness(out, policy, config.objective),
                bool(out["proven"]),
                parent_key,
            )
            done.append(ev)
            if on_result is not None:
                on_result(ev)
        generation += 1
    return SearchResult(tuple(done), computed)


def _evaluate(
    store: Store, inputs: list[dict[str, Any]], first_seq: int, executor: Executor
) -> tuple[list[dict[str, Any]], int]:
    """The outputs of ``inputs``, from the store where it has them, else computed (and
    stored as they finish); how many were computed."""
    keys = [task_key(x) for x in inputs]
    known: dict[str, dict[str, Any]] = {}
    for k in set(keys):
        row = store.get(k)
        if row is not None:
            known[k] = row.outputs
    todo = sorted({k: i for i, k in reversed(list(enumerate(keys))) if k not in known}.values())
    results: dict[str, TaskResult] = {}
    for t, result in executor.run(run_task, [inputs[i] for i in todo]):
        check_stop()  # after a signal nothing more is stored: a task cut short would look finished
        i = todo[t]
        store.add(result.key, first_seq + i, inputs[i], result.outputs, result.wall_s, result.timing, result.versions)
        results[result.key] = result
        known[result.key] = result.outputs
    return [known[k] for k in keys], len(results)


def open_search(path: str | Path, config: WorstConfig) -> Store:
    """The store at ``path`` for ``config`` (created if new; refused if made otherwise)."""
    return open_store(path, WORST_KIND, config.to_dict())


def worst_row(store: Store, result: SearchResult) -> TaskRow:
    """The stored row of the search's worst evaluation."""
    row = store.get(result.worst.key)
    if row is None:  # every evaluation is stored before the search goes on
        raise RuntimeError(f"evaluation {result.worst.key} is missing from the store")
    return row


def lineage(result: SearchResult, key: str) -> list[str]:
    """The keys from a random ancestor down to ``key`` (the evaluation's mutation chain)."""
    by_key = {e.key: e for e in result.evaluations}
    chain = [key]
    while by_key[chain[-1]].parent is not None:
        chain.append(by_key[chain[-1]].parent or "")
    return chain[::-1]


def best_so_far(result: SearchResult) -> list[float]:
    """The largest fitness after each evaluation (the search's progress curve)."""
    return [float(v) for v in np.maximum.accumulate([e.fitness for e in result.evaluations])]
