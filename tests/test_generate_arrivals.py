"""Poisson arrivals at a target load (rar_opt.instances.generate.with_arrivals, ``--load``)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rar_opt import InputError, Instance, check
from rar_opt.algorithms import run_policy
from rar_opt.instances.generate import generate

from .helpers import run


def _offered(inst: Instance) -> float:
    """GPU-slots of work per GPU per slot between the first and the last arrival."""
    work = inst.arrays.gpus * inst.bounds.rho_min
    order = np.argsort(inst.releases, kind="stable")
    # the last job's work arrives after the span measured: leave it out
    return float(work[order[:-1]].sum()) / (inst.cluster.num_gpus * float(inst.releases.max()))


@pytest.mark.parametrize("load", [0.5, 1.0, 2.0])
def test_the_offered_load_is_the_target(load: float) -> None:
    inst = generate("paper", 3, jobs=400, servers=8, load=load)
    assert inst.releases.min() == 0 and inst.has_releases
    assert _offered(inst) == pytest.approx(load, rel=0.15)
    assert inst.meta["arrivals"]["load"] == load and inst.name.endswith(f"-L{load:g}")
    base = generate("paper", 3, jobs=400, servers=8)
    assert inst.horizon == base.horizon + int(inst.releases.max())
    assert [j.gpus for j in inst.jobs] == [j.gpus for j in base.jobs]  # the same jobs, arriving over time


def test_arrivals_are_seeded() -> None:
    first = generate("tiny", 5, jobs=6, load=0.7)
    assert first == generate("tiny", 5, jobs=6, load=0.7)
    draws = {tuple(generate("paper", s, jobs=30, servers=4, load=1.0).releases) for s in range(4)}
    assert len(draws) == 4
    assert not generate("tiny", 5, jobs=6).has_releases  # no load: every job at slot 0


def test_generated_arrivals_schedule_within_the_horizon() -> None:
    inst = generate("paper", 0, jobs=40, servers=6, load=0.9)
    for name in ("sjf-bco", "online-sjf-bco", "online-ff"):
        result = run_policy(inst, name)
        assert check(inst, result.schedule).feasible, name


@pytest.mark.parametrize("load", [0.0, -1.0, float("nan"), float("inf"), "1"])
def test_a_bad_load_is_refused(load) -> None:
    with pytest.raises(InputError, match="load"):
        generate("tiny", 1, load=load)


def test_cli_load(tmp_path) -> None:
    out = tmp_path / "a.json"
    done = run("generate", "paper", "--seed", "2", "--jobs", "20", "--servers", "4", "--load", "0.8", "-o", str(out))
    assert done.returncode == 0, done.stderr
    jobs = json.loads(out.read_text())["jobs"]
    assert any("release" in j for j in jobs) and Instance.read(out).has_releases
    bad = run("generate", "tiny", "--seed", "2", "--load", "0")
    assert bad.returncode == 2 and "--load" in bad.stderr and "Traceback" not in bad.stderr
