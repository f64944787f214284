"""Homogeneous clusters: ``paper`` with ``server_gpus`` and the ``paper-8gpu`` / ``paper-4gpu``
families (the paper's jobs, the same draws for a seed, on servers of G GPUs each)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rar_opt
from rar_opt import InputError, Instance
from rar_opt.algorithms import run_policy
from rar_opt.check import check
from rar_opt.cli import main
from rar_opt.instances.generate import GENERATOR_RANGES, GENERATORS, generate, paper, philly_sizes, takes_paper_knobs
from rar_opt.studies.experiments import run_experiment
from rar_opt.studies.run import StudyConfig
from rar_opt.studies.tasks import FAMILIES, generated_inputs, instance_of


@pytest.mark.parametrize("gpus", [4, 8])
@pytest.mark.parametrize("seed", [0, 7])
def test_same_seed_same_instance_every_server_g_gpus(seed: int, gpus: int) -> None:
    inst = paper(seed, jobs=40, servers=10, server_gpus=gpus)
    assert inst.to_dict() == paper(seed, jobs=40, servers=10, server_gpus=gpus).to_dict()
    assert inst.cluster.servers == (gpus,) * 10
    assert inst.to_dict() != paper(seed + 1, jobs=40, servers=10, server_gpus=gpus).to_dict()


@pytest.mark.parametrize("gpus", [4, 8])
@pytest.mark.parametrize("seed", [0, 3])
def test_the_jobs_are_the_default_generators_draws(seed: int, gpus: int) -> None:
    """The same job sizes (in the same order), iterations, batches and best per-iteration
    times as the paper's own cluster for the seed: only the calibration (xi2, m) differs."""
    base = paper(seed, jobs=60, servers=8)
    homog = paper(seed, jobs=60, servers=8, server_gpus=gpus)
    assert [(j.gpus, j.iterations, j.batch_size) for j in homog.jobs] == [
        (j.gpus, j.iterations, j.batch_size) for j in base.jobs
    ]
    assert sorted(j.gpus for j in homog.jobs) == philly_sizes(60)  # the Philly mix, not cut to a server
    assert np.allclose(homog.bounds.tau_min, base.bounds.tau_min, rtol=1e-12)


def test_the_large_jobs_must_span_servers() -> None:
    inst = paper(0, server_gpus=8)  # the paper's 160 jobs on 20 servers of 8 GPUs
    large = inst.arrays.gpus > 8
    assert large.sum() == 10  # the 8 jobs of 16 GPUs and the 2 of 32
    assert (inst.bounds.n_min[large] == inst.arrays.gpus[large] // 8).all()
    # the worst case still within the literal 15%
    assert (inst.bounds.tau_max / inst.bounds.tau_min).max() <= 1.15 + 1e-9


def test_the_choice_is_recorded_in_meta_and_name() -> None:
    inst = paper(2, jobs=30, servers=6, server_gpus=4, preset="contention-heavy")
    assert inst.meta["params"]["server_gpus"] == 4
    assert inst.meta["preset"] == "contention-heavy"
    assert inst.name == "paper-30x6-s2-heavy-g4"
    assert "server_gpus" not in paper(2, jobs=30, servers=6).meta["params"]  # the paper's output unchanged


@pytest.mark.parametrize("gpus", [4, 8])
def test_json_round_trip(tmp_path: Path, gpus: int) -> None:
    inst = paper(5, jobs=32, servers=8, server_gpus=gpus)
    again = Instance.from_dict(inst.to_dict())
    assert again == inst and again.to_dict() == inst.to_dict()
    inst.write(tmp_path / "i.json")
    assert Instance.read(tmp_path / "i.json").to_dict() == inst.to_dict()


def test_the_families_are_registered_generators() -> None:
    for name, gpus in (("paper-8gpu", 8), ("paper-4gpu", 4)):
        assert name in GENERATORS and name in FAMILIES and takes_paper_knobs(name)
        assert GENERATOR_RANGES[name]["gpus_per_server"] == [gpus]
        assert (
            generate(name, 1, jobs=30, servers=8).to_dict() == paper(1, jobs=30, servers=8, server_gpus=gpus).to_dict()
        )
        heavy = generate(name, 1, jobs=30, servers=8, preset="contention-heavy")
        assert heavy.to_dict() == paper(1, jobs=30, servers=8, server_gpus=gpus, preset="contention-heavy").to_dict()
    assert generate("paper", 1, jobs=30, servers=8, server_gpus=4).cluster.servers == (4,) * 8
    assert not takes_paper_knobs("tiny")


def test_studies_and_experiments_take_the_families() -> None:
    config = StudyConfig(family="paper-8gpu", preset="paper-split15", jobs=12, servers=4, policies=("sjf-bco",))
    inputs = config.inputs(1)[0]
    assert inputs == generated_inputs(
        "paper-8gpu",
        0,
        jobs=12,
        servers=4,
        preset="paper-split15",
        policies=("sjf-bco",),
        method="auto",
        time_limit=60.0,
    )
    assert (
        instance_of(inputs).to_dict() == paper(0, jobs=12, servers=4, server_gpus=8, preset="paper-split15").to_dict()
    )
    rows = run_experiment("lambda", [0], jobs=16, family="paper-4gpu")
    assert {r["family"] for r in rows} == {"paper-4gpu"}
    assert {r["instance"] for r in rows} == {paper(0, jobs=16, servers=20, server_gpus=4).name}
    assert "family" not in run_experiment("lambda", [0], jobs=16)[0]  # the paper's rows as before
    with pytest.raises(InputError, match=r"^family: unknown paper family 'tiny'"):
        run_experiment("lambda", [0], jobs=16, family="tiny")


@pytest.mark.parametrize("bad", [0, -8, 2.5, True, "8", 4097])
def test_bad_server_gpus_is_refused(bad: object) -> None:
    with pytest.raises(InputError, match=r"^server_gpus: must be an integer in 1\.\.4096"):
        paper(0, jobs=10, servers=4, server_gpus=bad)  # type: ignore[arg-type]


def test_a_job_larger_than_the_cluster_is_named() -> None:
    with pytest.raises(InputError, match=r"^servers: = 2 servers of 8 GPUs \(16 GPUs\) cannot hold job j\d+ of 32"):
        paper(0, servers=2, server_gpus=8)
    with pytest.raises(InputError, match=r"^server_gpus: only the paper generator takes it"):
        generate("tiny", 0, server_gpus=4)
    with pytest.raises(InputError, match=r"^server_gpus: only the paper generator takes it, not paper-8gpu"):
        generate("paper-8gpu", 0, server_gpus=4)


@pytest.mark.parametrize(
    ("args", "expect"),
    [
        (["paper", "--server-gpus", "0"], "error: --server-gpus: must be an integer in 1..4096"),
        (["paper", "--server-gpus", "-4"], "error: --server-gpus: must be an integer in 1..4096"),
        (["paper", "--server-gpus", "5000"], "error: --server-gpus: must be an integer in 1..4096"),
        (["paper", "--server-gpus", "8", "--servers", "3"], "error: --servers: = 3 servers of 8 GPUs (24 GPUs) cannot"),
        (["paper-4gpu", "--servers", "7"], "job j"),
        (["tiny", "--server-gpus", "4"], "error: --server-gpus: only the paper generator"),
        (["paper", "--server-gpus", "x"], "--server-gpus: invalid int value"),
    ],
)
def test_cli_bad_input_exits_2_naming_the_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], expect: str
) -> None:
    out = tmp_path / "i.json"
    assert _exit_code(["generate", *args, "--seed", "0", "-o", str(out)]) == 2
    assert expect in capsys.readouterr().err and not out.exists()


def test_cli_writes_the_homogeneous_instance(tmp_path: Path) -> None:
    out = tmp_path / "i.json"
    args = ["--seed", "0", "--jobs", "20", "--servers", "5", "--server-gpus", "8", "-o", str(out)]
    assert main(["generate", "paper", *args]) == 0
    written = Instance.read(out).to_dict()
    assert written["meta"].pop("generated_with").startswith(rar_opt.__version__)  # the CLI adds which rar-opt drew it
    assert written == paper(0, jobs=20, servers=5, server_gpus=8).to_dict()


def _exit_code(argv: list[str]) -> int:
    """``rar-opt ARGV``'s exit status in this process (argparse's own errors exit)."""
    try:
        return main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)


@st.composite
def homogeneous(draw: st.DrawFn) -> Instance:
    jobs = draw(st.integers(3, 24))
    gpus = draw(st.sampled_from([4, 8]))
    fewest = math.ceil(max(philly_sizes(jobs)) / gpus)
    servers = draw(st.integers(fewest, fewest + 3))
    preset = draw(st.sampled_from(["paper-literal", "contention-heavy"]))
    return paper(
        draw(st.integers(0, 2**16)), jobs=jobs, servers=servers, server_gpus=gpus, preset=preset, horizon=20000
    )


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(homogeneous())
def test_sjf_bco_and_pack_schedules_pass_the_checker(inst: Instance) -> None:
    for policy, options in (("sjf-bco", {}), ("pack", {"iterations": 2, "time_limit": 2.0})):
        result = run_policy(inst, policy, seed=0, **options)
        report = check(inst, result.schedule)
        assert report.feasible, (policy, inst.name, report)
