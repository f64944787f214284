"""``study run``: instances of a family, each against its exact optimum, into a store.

A study is a configuration (:class:`StudyConfig`) and a number of instances: instance i
is the family's generator with seed ``seed + i``. Every instance is one task
(:func:`rar_opt.studies.tasks.run_task`); the tasks go to an executor and each finished
task is written to the store at once. Running the same command again skips the tasks the
store already holds, so a killed study resumes where it stopped; a larger ``count``
extends it. The store is bound to the configuration (everything but the count and the
executor), so rows of different configurations never mix. Besides the policies asked for,
a study always runs the classical baselines (:data:`rar_opt.algorithms.BASELINES`: longest
first for the makespan, shortest first for the average JCT), and its store records them
among its policies.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rar_opt.algorithms import with_baselines
from rar_opt.errors import InputError, ParameterError
from rar_opt.instances.calibration import PRESETS
from rar_opt.instances.generate import takes_paper_knobs
from rar_opt.studies.executors import Executor
from rar_opt.studies.store import Store, open_store
from rar_opt.studies.tasks import (
    ARRIVAL_FAMILIES,
    DEFAULT_LOAD,
    TaskResult,
    check_policies,
    exact_method,
    generated_inputs,
    generator_of,
    run_task,
    task_key,
)
from rar_opt.support.checks import GENERATOR_MAX_SEED, is_int, is_real, seconds_problem, seed_problem
from rar_opt.support.processes import check_stop

STUDY_KIND = "study"


@dataclass(frozen=True)
class StudyConfig:
    """What a study computes (validated on construction)."""

    family: str
    seed: int = 0
    jobs: int | None = None
    servers: int | None = None
    preset: str | None = None
    policies: tuple[str, ...] = ()
    time_limit: float = 60.0
    method: str = ""
    load: float | None = None  # an arrival family's offered load (default DEFAULT_LOAD)

    def __post_init__(self) -> None:
        generator = generator_of(self.family)
        if self.preset is not None:
            if not takes_paper_knobs(generator):
                raise ParameterError(f"only the paper families take a preset, not {self.family}", where="preset")
            if self.preset not in PRESETS:
                raise ParameterError(f"unknown preset {self.preset!r} (known: {', '.join(PRESETS)})", where="preset")
        if problem := seed_problem(self.seed, GENERATOR_MAX_SEED):
            raise ParameterError(problem, where="seed")
        for name in ("jobs", "servers"):
            value = getattr(self, name)
            if value is not None and (not is_int(value) or value < 1):
                raise ParameterError(f"must be an integer >= 1, got {value!r}", where=name)
        t = self.time_limit
        if problem := seconds_problem(t):
            raise ParameterError(problem, where="time_limit")
        object.__setattr__(self, "time_limit", float(t))
        if self.family in ARRIVAL_FAMILIES:
            x = DEFAULT_LOAD if self.load is None else self.load
            if not is_real(x) or not math.isfinite(x) or x <= 0:
                raise ParameterError(
                    f"must be a finite number > 0 (offered GPU-time per GPU per slot), got {x!r}", where="load"
                )
            object.__setattr__(self, "load", float(x))
        elif self.load is not None:
            raise ParameterError(
                f"only the arrival families ({', '.join(ARRIVAL_FAMILIES)}) take a load, not {self.family}",
                where="load",
            )
        object.__setattr__(self, "policies", check_policies(self.policies))
        object.__setattr__(self, "method", self.method or exact_method())
        from rar_opt.solvers.solve import missing_backend

        if (missing := missing_backend(self.method)) is not None:  # every solve would end in "error"
            raise ParameterError(f"{self.method} cannot be solved on this install: {missing}", where="method")

    def to_dict(self) -> dict[str, Any]:
        """The configuration as the store records it."""
        return {
            "family": self.family,
            "seed": self.seed,
            "jobs": self.jobs,
            "servers": self.servers,
            "preset": self.preset,
            "policies": list(self.policies),
            "time_limit": self.time_limit,
            "method": self.method,
            **({"load": self.load} if self.load is not None else {}),  # other stores' configurations as before
        }

    def with_baselines(self) -> StudyConfig:
        """This configuration with the classical baselines among its policies
        (:data:`rar_opt.algorithms.BASELINES`): what a study runs and its store records."""
        return dataclasses.replace(self, policies=check_policies(with_baselines(self.policies)))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StudyConfig:
        """The configuration a store recorded."""
        return cls(**{**data, "policies": tuple(data["policies"])})

    def inputs(self, count: int) -> list[dict[str, Any]]:
        """The inputs of the first ``count`` tasks (instance i has seed ``seed + i``)."""
        return [
            generated_inputs(
                self.family,
                self.seed + i,
                jobs=self.jobs,
                servers=self.servers,
                preset=self.preset,
                policies=self.policies,
                method=self.method,
                time_limit=self.time_limit,
                load=self.load,
            )
            for i in range(count)
        ]


@dataclass(frozen=True)
class RunSummary:
    """What one ``study run`` did."""

    tasks: int  # tasks asked for
    already: int  # found in the store (resumed)
    computed: int  # computed and written now
    stored: int  # rows in the store at the end (all counts)
    executor: dict[str, Any]


@contextmanager
def discard_if_empty(store: Store, new: bool) -> Iterator[None]:
    """A store this command created is removed again when the command fails before its first
    row (a bad option found by the first task, say), so no empty store is left bound to it;
    but never while another command has it open (two commands started on one new store:
    the other one is filling it)."""
    try:
        yield
    except BaseException:
        if new:
            store.discard_if_unused()
        raise


def open_study(path: str | Path, config: StudyConfig) -> Store:
    """The store at ``path`` for ``config`` with the classical baselines among its policies
    (:meth:`StudyConfig.with_baselines`), created if new; refused if made otherwise, and in
    so many words when it was made by the same command before the baselines were always run
    (its rows lack them and its tasks' keys differ: it cannot be resumed or extended)."""
    config = config.with_baselines()
    try:
        return open_store(path, STUDY_KIND, config.to_dict())
    except InputError:
        if (old := _made_without_baselines(path, config)) is not None:
            added = [p for p in config.policies if p not in old]
            raise InputError(
                f"was made with the policies {', '.join(old)}, before studies always ran the classical "
                f"baselines (missing: {', '.join(added)}); its rows lack them and cannot be resumed or "
                "extended with them: run the study into a new store file (study report still reads this one)",
                file=str(path),
            ) from None
        raise


def _made_without_baselines(path: str | Path, config: StudyConfig) -> list[str] | None:
    """The policies of the study store at ``path`` when it is ``config``'s but for the
    classical baselines it lacks (made before they were always run), else None."""
    try:
        with open_store(path) as store:
            kind, stored = store.kind, dict(store.config)
    except InputError:
        return None
    old = stored.get("policies")
    if kind != STUDY_KIND or not isinstance(old, list) or set(old) == set(config.policies):
        return None
    same_else = {**stored, "policies": list(config.policies)} == config.to_dict()
    return [str(p) for p in old] if same_else and set(with_baselines(old)) == set(config.policies) else None


def run_study(
    path: str | Path,
    config: StudyConfig,
    count: int,
    executor: Executor,
    on_result: Callable[[TaskResult], None] | None = None,
    on_start: Callable[[int, int], None] | None = None,
) -> RunSummary:
    """Compute the first ``count`` tasks of ``config`` that the store lacks, writing each as
    it finishes. ``on_start(todo, already)`` is called once, ``on_result`` per finished task."""
    if not is_int(count) or count < 1:
        raise ParameterError(f"must be an integer >= 1, got {count!r}", where="count")
    config = config.with_baselines()
    inputs = config.inputs(count)
    new = not Path(path).exists()
    with open_study(path, config) as store, discard_if_empty(store, new):
        done = store.keys()
        todo = [(i, x) for i, x in enumerate(inputs) if task_key(x) not in done]
        if on_start is not None:
            on_start(len(todo), count - len(todo))
        computed = 0
        for k, result in executor.run(run_task, [x for _, x in todo]):
            check_stop()  # after a signal nothing more is stored: a task cut short would look finished
            seq, x = todo[k]
            if store.add(result.key, seq, x, result.outputs, result.wall_s, result.timing, result.versions):
                computed += 1
            if on_result is not None:
                on_result(result)
        return RunSummary(count, count - len(todo), computed, store.count(), executor.description)
