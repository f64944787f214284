"""The seeded generators: determinism, the tiny ranges, the paper calibration (README)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rar_opt.instances.generate import PHILLY_MIX, generate, paper, philly_sizes, tiny

from .strategies import reference_rho_range


@given(st.sampled_from(["tiny", "paper"]), st.integers(0, 2**32 - 1))
def test_same_seed_same_instance(kind: str, seed: int) -> None:
    kw = {"jobs": 20, "servers": 4} if kind == "paper" else {}
    assert generate(kind, seed, **kw).to_dict() == generate(kind, seed, **kw).to_dict()


def test_different_seeds_differ(paper_instance) -> None:
    assert paper_instance.to_dict() != paper(1).to_dict()
    assert tiny(0).to_dict() != tiny(1).to_dict()


@given(st.integers(1, 2000))
def test_philly_mix_scales(n: int) -> None:
    sizes = philly_sizes(n)
    assert len(sizes) == n
    counts = Counter(sizes)
    for g, c in PHILLY_MIX.items():
        assert abs(counts[g] - c * n / 160) < 1.0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_paper_calibration_hits_the_paper_ranges(seed: int) -> None:
    inst = paper(seed)
    b = inst.bounds
    its = inst.arrays.iterations
    assert Counter(j.gpus for j in inst.jobs) == Counter(PHILLY_MIX)
    assert set(inst.cluster.servers) <= {4, 8, 16, 32} and inst.num_servers == 20
    assert inst.horizon == 1200
    assert its.min() >= 1000 and its.max() <= 6000
    assert b.tau_min.min() >= 0.01 - 1e-12 and b.tau_min.max() <= 0.05 + 1e-12
    estimate = its * b.tau_min
    assert estimate.min() >= 50 - 1e-9 and estimate.max() <= 300 + 1e-9
    # contention plus overhead add at most 15% in the worst case
    assert np.all(b.tau_max <= 1.15 * b.tau_min * (1 + 1e-12))
    assert (b.tau_max / b.tau_min).max() > 1.14  # and the budget is used


@given(st.integers(0, 10**6))
def test_tiny_is_tiny(seed: int) -> None:
    inst = tiny(seed)
    assert 2 <= inst.num_jobs <= 6 and 1 <= inst.num_servers <= 4
    assert all(1 <= o <= 4 for o in inst.cluster.servers)
    # the serial horizon: the jobs' worst execution times, recomputed by hand, one after another
    assert inst.horizon == sum(reference_rho_range(inst, j)[1] for j in range(inst.num_jobs)) <= 60


@pytest.mark.parametrize("budget", [0.05, 0.5, 1.0])
def test_paper_budget_bounds_the_slowdown(budget: float) -> None:
    inst = paper(1, jobs=40, servers=6, budget=budget)
    b = inst.bounds
    assert np.all(b.tau_max <= (1 + budget) * b.tau_min * (1 + 1e-12))
    assert inst.name.endswith(f"-b{budget:g}") and inst.meta["params"]["budget"] == budget
    # the same draws: only the physics changes with the budget
    base = paper(1, jobs=40, servers=6)
    assert [j.iterations for j in inst.jobs] == [j.iterations for j in base.jobs]
    assert np.allclose(b.tau_min, base.bounds.tau_min)


def test_budget_is_validated() -> None:
    from rar_opt import InputError

    with pytest.raises(InputError, match="budget"):
        paper(0, budget=0.0)
    with pytest.raises(InputError, match="only the paper generator"):
        generate("tiny", 0, budget=0.5)


def test_tiny_names_carry_their_size_and_tell_drawn_from_given() -> None:
    """A name says JOBSxSERVERS and the seed; sizes the seed drew are marked, so two
    different instances never share a name (the library's given-size names stay as they were)."""
    drawn = tiny(3)
    assert drawn.name == f"tiny-{drawn.num_jobs}x{drawn.num_servers}-s3-drawn"
    given = tiny(3, jobs=drawn.num_jobs, servers=drawn.num_servers)
    assert given.name == f"tiny-{drawn.num_jobs}x{drawn.num_servers}-s3"
    assert given.to_dict()["jobs"] != drawn.to_dict()["jobs"] or given.cluster != drawn.cluster
    names = {tiny(3).name, tiny(3, jobs=4).name, tiny(3, servers=2).name, tiny(3, jobs=4, servers=2).name}
    assert len(names) == 4
    assert tiny(13, jobs=4, servers=2).name == "tiny-4x2-s13"
