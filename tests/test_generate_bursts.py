"""Bursty arrivals: batch Poisson at a target load (``generate(load=X, burst=B)``, ``--burst``)."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rar_opt import InputError, Instance
from rar_opt.instances.generate import batch_sizes, generate

from .helpers import run

WINDOW = 50
"""Slots per counting window for the index of dispersion."""


def _offered(inst: Instance) -> float:
    """GPU-slots of work per GPU per slot over [0, last release): the last batch's work
    arrives at the end of the span measured, so it is left out."""
    work = inst.arrays.gpus * inst.bounds.rho_min
    last = int(inst.releases.max())
    return float(work[inst.releases < last].sum()) / (inst.cluster.num_gpus * last)


def _dispersion(inst: Instance) -> float:
    """Variance over mean of the number of arrivals per window of WINDOW slots (the last,
    incomplete window left out); 1 for a Poisson process."""
    counts = np.bincount(inst.releases // WINDOW)[:-1]
    return float(counts.var() / counts.mean())


def _digest(inst: Instance) -> str:
    return hashlib.sha256(json.dumps(inst.to_dict(), sort_keys=True).encode()).hexdigest()


GOLDEN = {
    ("paper", 0, ()): "2016b1147807994980dd225045be9916c0b82c9da42dac784c30d3d74a335ee4",
    ("paper", 2, (("jobs", 20), ("servers", 4), ("load", 0.8))): (
        "9b51b99c188ffd38ff6c6e7c78407abec5662236728da6b417f442de8a4a78eb"
    ),
    ("paper", 3, (("jobs", 200), ("servers", 8), ("load", 1.5))): (
        "bc2280646f78ea8af472ad2707770e4989919016ccd0f345612bc3e090a55087"
    ),
    ("tiny", 5, (("jobs", 6), ("load", 0.7))): "4da4b3a7529e898e273f9fed6597a957e75fab5c800ded8ee011a70074891939",
    ("tiny", 7, ()): "c14b414e4112bbdc028750e35f1787c7eb8fa66e87258802206dececa74744d7",
}
"""Digests of instances generated before bursts existed (the commit before they came)."""


@pytest.mark.parametrize("case", list(GOLDEN), ids=lambda c: f"{c[0]}-s{c[1]}")
def test_without_bursts_every_instance_is_unchanged(case) -> None:
    kind, seed, kwargs = case
    assert _digest(generate(kind, seed, **dict(kwargs))) == GOLDEN[case]


def test_burst_one_is_poisson() -> None:
    plain = generate("paper", 3, jobs=200, servers=8, load=1.5)
    single = generate("paper", 3, jobs=200, servers=8, load=1.5, burst=1)
    assert np.array_equal(plain.releases, single.releases)
    assert single.meta["arrivals"]["batches"] == 200 and single.name == plain.name + "-B1"


def test_bursts_are_seeded() -> None:
    first = generate("paper", 4, jobs=60, servers=6, load=1.0, burst=3)
    assert first == generate("paper", 4, jobs=60, servers=6, load=1.0, burst=3)
    assert _digest(first) == _digest(generate("paper", 4, jobs=60, servers=6, load=1.0, burst=3))
    draws = {tuple(generate("paper", s, jobs=60, servers=6, load=1.0, burst=3).releases) for s in range(4)}
    assert len(draws) == 4
    # the jobs are the generator's: only the releases differ from the instance without arrivals
    base = generate("paper", 4, jobs=60, servers=6)
    assert [dict(j.to_dict(), release=0) for j in first.jobs] == [dict(j.to_dict(), release=0) for j in base.jobs]
    assert first.horizon == base.horizon + int(first.releases.max())
    assert first.meta["arrivals"] | {"rate": None} == {
        "process": "batch-poisson",
        "load": 1.0,
        "seed": 4,
        "rate": None,
        "burst": 3.0,
        "batches": first.meta["arrivals"]["batches"],
    }


@pytest.mark.parametrize("burst", [2.0, 4.0, 8.0])
def test_the_mean_offered_load_is_the_target(burst: float) -> None:
    for load in (0.5, 1.0):
        inst = generate("paper", 1, jobs=3000, servers=20, load=load, burst=burst)
        assert _offered(inst) == pytest.approx(load, rel=0.12), (burst, load)


def test_bursts_are_visible_in_the_counts() -> None:
    """Poisson counts per window have variance = mean; batches of geometric size with mean b
    multiply that by E[B^2] / E[B] = 2b - 1."""
    poisson = _dispersion(generate("paper", 1, jobs=3000, servers=20, load=1.0))
    assert 0.7 < poisson < 1.4
    for burst in (2.0, 4.0, 8.0):
        idc = _dispersion(generate("paper", 1, jobs=3000, servers=20, load=1.0, burst=burst))
        assert idc > 2 * poisson
        assert idc == pytest.approx(2 * burst - 1, rel=0.35), burst


def test_a_batch_arrives_in_one_slot() -> None:
    inst = generate("paper", 2, jobs=500, servers=10, load=1.0, burst=5)
    batches = inst.meta["arrivals"]["batches"]
    assert len(np.unique(inst.releases)) <= batches < 500
    assert inst.releases.min() == 0
    counts = np.bincount(inst.releases)
    assert counts.max() >= 10  # some slot receives a burst (mean 5, geometric)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 500), st.floats(1.0, 50.0))
def test_batch_sizes_cover_the_jobs(seed: int, n: int, mean: float) -> None:
    sizes = batch_sizes(np.random.default_rng(seed), n, mean)
    assert sizes.sum() == n and (sizes >= 1).all()


@pytest.mark.parametrize("burst", [0.5, 0.0, -2.0, float("nan"), float("inf"), "2", True])
def test_a_bad_burst_is_refused(burst) -> None:
    with pytest.raises(InputError, match="burst"):
        generate("tiny", 1, load=1.0, burst=burst)


def test_a_burst_needs_a_load() -> None:
    with pytest.raises(InputError, match=r"burst.*needs a load"):
        generate("tiny", 1, burst=2.0)


def test_cli_burst(tmp_path) -> None:
    out = tmp_path / "a.json"
    done = run(
        "generate", "paper", "--seed", "2", "--jobs", "30", "--servers", "4", "--load", "0.8", "--burst", "3",
        "-o", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    inst = Instance.read(out)
    assert inst.meta["arrivals"]["process"] == "batch-poisson" and inst.name.endswith("-L0.8-B3")
    assert inst == generate("paper", 2, jobs=30, servers=4, load=0.8, burst=3)
    for args in (["--load", "1", "--burst", "0.5"], ["--burst", "2"], ["--load", "1", "--burst", "nan"]):
        bad_out = tmp_path / "bad.json"
        bad = run("generate", "tiny", "--seed", "2", *args, "-o", str(bad_out))
        assert bad.returncode == 2, args
        assert "--burst" in bad.stderr and "Traceback" not in bad.stderr, bad.stderr
        assert not bad_out.exists() and list(tmp_path.iterdir()) == [out]


def test_absurd_arrival_parameters_are_refused_by_name() -> None:
    # a mean batch of 1e19 jobs crashed the process (numpy's geometric draws overflowed);
    # a load of 1e-12 spread the arrivals past any horizon and was blamed on a release
    from rar_opt.errors import ParameterError
    from rar_opt.instances.generate import generate

    with pytest.raises(ParameterError, match=r"must be a number in \[1, 1e\+09\]") as caught:
        generate("tiny", seed=3, load=1.0, burst=1e19)
    assert caught.value.where == "burst"
    with pytest.raises(ParameterError, match=r"so low that one arrival takes") as caught:
        generate("tiny", seed=3, load=1e-12)
    assert caught.value.where == "load"
