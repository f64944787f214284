"""Generator presets: the same draws under every reading, each hitting the target it states."""

from __future__ import annotations

import numpy as np
import pytest

from rar_opt import InputError, Instance
from rar_opt.instances.calibration import PRESETS, Calibration
from rar_opt.instances.generate import generate, paper

from .helpers import PAPER_FILE, run


@pytest.mark.parametrize("seed", [0, 3])
def test_presets_share_the_draws(seed: int) -> None:
    base = paper(seed, jobs=60, servers=8)
    for name in PRESETS:
        other = paper(seed, jobs=60, servers=8, preset=name)
        assert other.cluster.servers == base.cluster.servers
        assert [(j.gpus, j.iterations, j.batch_size) for j in other.jobs] == [
            (j.gpus, j.iterations, j.batch_size) for j in base.jobs
        ]
        # the best per-iteration time is the drawn one under every preset
        assert np.allclose(other.bounds.tau_min, base.bounds.tau_min, rtol=1e-12)


def test_paper_literal_is_todays_paper_output() -> None:
    stored = Instance.read(PAPER_FILE)  # written before presets existed
    assert paper(0, preset="paper-literal").to_dict() == stored.to_dict()
    assert paper(0).to_dict() == stored.to_dict()


@pytest.mark.parametrize("name", ["paper-split15", "contention-heavy"])
def test_split_presets_hit_their_target_at_the_mildest_split(name: str) -> None:
    cal = PRESETS[name]
    inst = paper(1, preset=name)
    tm, b = inst.time_model, inst.bounds
    n, p = cal.reference
    jobs = np.flatnonzero((b.n_min == 1) & (b.n_max >= n))  # jobs whose best is one server
    best = b.tau_min[jobs]
    at_ref = tm.tau(np.full(len(jobs), p), np.full(len(jobs), n), jobs)
    overhead = inst.cluster.xi2 * (n - 1)
    contention = at_ref - best - overhead
    # contention adds exactly its share where the ring time is not capped (most jobs) ...
    exact = np.isclose(contention / best, cal.contention, rtol=1e-9)
    assert exact.mean() > 0.8 and np.all(contention / best <= cal.contention * (1 + 1e-9))
    # ... and the overhead at most its share, with equality for the job that binds it
    assert np.all(overhead / best <= cal.overhead * (1 + 1e-9))
    assert np.isclose((overhead / best).max(), cal.overhead, rtol=1e-9)
    # a worse placement exceeds the 15% under this reading
    assert (b.tau_max / b.tau_min).max() > 1 + cal.contention + cal.overhead


def test_paper_literal_caps_the_worst_case() -> None:
    inst = paper(1)
    assert (inst.bounds.tau_max / inst.bounds.tau_min).max() <= 1.15 + 1e-9


def test_knobs_and_bad_input() -> None:
    custom = generate("paper", 0, jobs=40, servers=6, reference=(3, 4), contention_share=0.1)
    assert custom.name.endswith("-custom") and tuple(custom.meta["params"]["calibration"]["reference"]) == (3, 4)
    with pytest.raises(InputError, match="must be a share in"):
        Calibration("worst", 0.0, 0.1)
    with pytest.raises(InputError, match=r"^preset: only the paper generator takes it, not tiny"):
        generate("tiny", 0, preset="paper-split15")
    out = run("generate", "paper", "--seed", "0", "--overhead-share", "2")
    assert out.returncode == 2 and out.stderr.startswith("error: --overhead-share: must be a share in (0, 1], got 2.0")
    out = run("generate", "tiny", "--seed", "0", "--reference", "worst")
    assert out.returncode == 2 and out.stderr == "error: --reference: only the paper generator takes it, not tiny\n"
    out = run("generate", "paper", "--seed", "0", "--preset", "bogus")
    assert out.returncode == 2 and "invalid choice" in out.stderr


def test_size_link_permutes_the_same_draws() -> None:
    base = paper(4, jobs=60, servers=8)
    linked = generate("paper", 4, jobs=60, servers=8, size_link="sorted")
    assert linked.name.endswith("-custom")
    duration = lambda inst: inst.arrays.iterations * inst.bounds.tau_min  # noqa: E731
    assert sorted(base.arrays.iterations.tolist()) == sorted(linked.arrays.iterations.tolist())
    assert np.allclose(np.sort(duration(base)), np.sort(duration(linked)))
    order = np.argsort(linked.arrays.gpus, kind="stable")
    assert np.all(np.diff(duration(linked)[order]) >= -1e-9)  # larger jobs never run shorter
