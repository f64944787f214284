"""The worst-case search: deterministic for a seed, resumable, mutants within the family."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rar_opt import Instance, Schedule, check
from rar_opt.instances.generate import tiny
from rar_opt.studies.executors import SerialExecutor
from rar_opt.studies.run import StudyConfig
from rar_opt.studies.worst import RANGES, WorstConfig, mutate, open_search, search

from ..helpers import run


def _config(strategy: str = "evolve") -> WorstConfig:
    return WorstConfig(
        StudyConfig(family="tiny", seed=5, policies=("sjf-bco",), time_limit=5.0), strategy, batch=4, initial=4
    )


def test_the_search_is_deterministic_for_a_seed_and_resumes(tmp_path) -> None:
    config = _config()
    runs = []
    for name in ("a.db", "b.db"):
        with open_search(tmp_path / name, config) as store:
            runs.append(search(store, config, 14, SerialExecutor()))
    a, b = runs
    assert [(e.key, e.fitness, e.parent) for e in a.evaluations] == [
        (e.key, e.fitness, e.parent) for e in b.evaluations
    ]
    assert len(a.evaluations) == 14 and any(e.parent is not None for e in a.evaluations)
    with open_search(tmp_path / "a.db", config) as store:
        again = search(store, config, 18, SerialExecutor())  # replays the first 14 from the store
    assert again.computed <= 4
    assert [e.key for e in again.evaluations[:14]] == [e.key for e in a.evaluations]
    assert again.worst.fitness >= a.worst.fitness >= 1.0


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), draw=st.integers(0, 2**32 - 1))
def test_mutants_stay_within_the_family(seed: int, draw: int) -> None:
    ranges = RANGES["tiny"]
    child = mutate(tiny(seed), np.random.default_rng(draw), ranges, (False, False), "child")
    assert ranges.jobs[0] <= child.num_jobs <= ranges.jobs[1]
    assert ranges.servers[0] <= child.num_servers <= ranges.servers[1]
    assert set(child.cluster.servers) <= set(ranges.capacities)
    assert all(
        j.gpus in ranges.gpus and ranges.iterations[0] <= j.iterations <= ranges.iterations[1] for j in child.jobs
    )
    assert float(child.bounds.tau_max.max()) <= ranges.tau_max
    assert child.horizon == int(child.bounds.rho_max.sum())
    assert 0.0 <= child.cluster.alpha <= 1.0


def test_the_command_writes_the_worst_instance_with_both_schedules(tmp_path) -> None:
    args = [
        "--policy",
        "ls",
        "--family",
        "tiny",
        "--evaluations",
        "8",
        "--batch",
        "4",
        "--time-limit",
        "5",
        "--seed",
        "3",
    ]
    out = run("study", "worst", str(tmp_path / "w.db"), *args, "-o", str(tmp_path / "worst.json"), "--json")
    assert out.returncode == 0, out.stderr
    record = json.loads(out.stdout)
    inst = Instance.read(tmp_path / "worst.json")
    meta = inst.meta["study"]
    mine = check(inst, Schedule.from_dict(meta["schedules"]["ls"])).result.makespan
    best = check(inst, Schedule.from_dict(meta["schedules"]["optimum"])).result.makespan
    assert record["worst_proven"] and mine / best == record["worst_ratio"] == meta["ratio"]
    assert inst.meta["search"]["evaluations"] == 8 and inst.meta["search"]["lineage"][-1] == meta["key"]
    assert record["best_so_far"] == sorted(record["best_so_far"])


def test_the_theorem5_objective_divides_by_the_bound_and_is_for_sjf_bco_only() -> None:
    import pytest

    from rar_opt import InputError
    from rar_opt.studies.worst import fitness

    out = {"proven": True, "theorem5_bound": 2.0, "policies": {"sjf-bco": {"ratio": 1.5, "ratio_low": 1.5}}}
    assert fitness(out, "sjf-bco") == 1.5 and fitness(out, "sjf-bco", "theorem5") == 0.75
    out = {**out, "proven": False, "policies": {"sjf-bco": {"ratio": None, "ratio_low": 1.2}}}
    assert fitness(out, "sjf-bco") == 1.2  # not proven: the lower estimate
    with pytest.raises(InputError, match="Theorem 5 is about SJF-BCO"):
        WorstConfig(StudyConfig(family="tiny", policies=("ls",)), objective="theorem5")


@pytest.mark.slow  # starts a local Dask cluster
def test_the_search_does_not_depend_on_the_executor(tmp_path) -> None:
    from rar_opt.studies.executors import DaskExecutor

    config = _config()
    with open_search(tmp_path / "serial.db", config) as store:
        serial = search(store, config, 12, SerialExecutor())
    with DaskExecutor(workers=2) as dask, open_search(tmp_path / "dask.db", config) as store:
        parallel = search(store, config, 12, dask)
    assert [(e.key, e.fitness) for e in serial.evaluations] == [(e.key, e.fitness) for e in parallel.evaluations]
