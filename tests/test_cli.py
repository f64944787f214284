"""The command line, run as a real process: exit codes, one-line errors, no tracebacks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rar_opt import Instance, Schedule, run_policy
from rar_opt.generate import tiny
from rar_opt.gpus import assign_gpu_ids

from .test_instance import _base


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rar_opt", *args], capture_output=True, text=True, cwd=cwd, timeout=300
    )


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("cli")
    inst = tiny(7)
    inst.write(d / "inst.json")
    good = run_policy(inst, "consolidate").schedule  # feasible: every policy's schedule is (test_algorithms)
    good.write(d / "good.json")
    files = {"dir": d, "inst": d / "inst.json", "good": d / "good.json"}

    def bad(name: str, obj) -> None:
        path = d / f"{name}.json"
        path.write_text(obj if isinstance(obj, str) else json.dumps(obj))
        files[name] = path

    bad("malformed", '{"format": "rar-opt/instance", "version": 1,')
    d0 = _base()
    d0["colour"] = "red"
    bad("unknown_key", d0)
    d1 = _base()
    d1["jobs"][0]["gpus"] = "two"
    bad("wrong_type", d1)
    d2 = _base()
    d2["cluster"]["servers"] = [2, -2]
    bad("negative_gpus", d2)
    d3 = _base()
    d3["jobs"][0]["gpus"] = 9
    bad("too_large", d3)
    d4 = _base()
    d4["jobs"][0]["bwd_time"] = 2.0
    bad("stalling", d4)
    d5 = _base()
    d5["horizon"] = 1
    bad("short_horizon", d5)
    other = good.to_dict()
    other["instance"] = "some-other-instance"
    bad("other_instance", other)
    short = good.to_dict()
    short["jobs"][0]["placement"] = short["jobs"][0]["placement"] + [0]
    bad("ragged_placement", short)
    wide = good.to_dict()
    for item in wide["jobs"]:
        item["placement"] = item["placement"] + [0]
    bad("placement_length", wide)
    infeasible = good.to_dict()
    for item in infeasible["jobs"]:
        item["start"] = 0
    bad("all_at_zero", infeasible)
    return files


def test_generate_and_simulate(files) -> None:
    out = run("simulate", str(files["inst"]), str(files["good"]), "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["feasible"] and data["makespan"] == max(data["completion"])
    table = run("simulate", str(files["inst"]), str(files["good"]))
    assert table.returncode == 0 and "makespan" in table.stdout


def test_generate_writes_file(tmp_path) -> None:
    out = run("generate", "tiny", "--seed", "3", "-o", str(tmp_path / "t.json"), "--json")
    assert out.returncode == 0, out.stderr
    assert Instance.read(tmp_path / "t.json").to_dict() == tiny(3).to_dict()
    assert json.loads(out.stdout)["name"] == "tiny-s3"


def test_gpu_ids_round_trip_through_cli(files, tmp_path) -> None:
    inst = Instance.read(files["inst"])
    with_ids = assign_gpu_ids(inst, Schedule.read(files["good"]))
    with_ids.write(tmp_path / "ids.json")
    assert run("simulate", str(files["inst"]), str(tmp_path / "ids.json")).returncode == 0


@pytest.mark.parametrize(
    ("instance", "schedule", "expect"),
    [
        ("malformed", None, "malformed JSON"),
        ("unknown_key", None, "unknown key 'colour'"),
        ("wrong_type", None, "jobs[0].gpus: must be an integer"),
        ("negative_gpus", None, "cluster.servers[1]"),
        ("too_large", None, "exceeds the cluster's 4 GPUs"),
        ("stalling", None, "could stall"),
        ("short_horizon", None, "horizon"),
        ("inst", "other_instance", "schedule is for instance 'some-other-instance'"),
        ("inst", "ragged_placement", "one entry per server"),
        ("inst", "placement_length", "the instance has 3 servers"),
        ("inst", "all_at_zero", "server_capacity"),
        ("inst", "missing", "cannot read file"),
    ],
)
def test_bad_input_exits_2_with_one_line(files, instance, schedule, expect) -> None:
    inst_path = files.get(instance, files["dir"] / f"{instance}.json")
    sched_path = files.get(schedule, files["dir"] / f"{schedule}.json") if schedule else files["good"]
    out = run("simulate", str(inst_path), str(sched_path))
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    assert expect in out.stderr
    assert (sched_path.name if schedule else inst_path.name) in out.stderr or schedule == "all_at_zero"


def test_unwritable_output_leaves_nothing(tmp_path) -> None:
    target = tmp_path / "no-such-dir" / "t.json"
    out = run("generate", "tiny", "--seed", "1", "-o", str(target))
    assert out.returncode == 2 and "cannot write file" in out.stderr and "Traceback" not in out.stderr
    assert not target.parent.exists()
    out = run("generate", "tiny", "--seed", "1", "-o", str(tmp_path / "ok.json"))
    assert out.returncode == 0
    assert [p.name for p in tmp_path.iterdir()] == ["ok.json"]  # no temporary file left behind


def test_usage_errors_exit_2() -> None:
    assert run("generate", "tiny").returncode == 2  # --seed is required
    assert run("frobnicate").returncode == 2


LIB = Path(__file__).resolve().parent.parent / "instances"


def test_schedule_solve_compare_json(tmp_path) -> None:
    inst = LIB / "wait-beats-start.json"
    out = run("schedule", str(inst), "--policy", "sjf-bco", "-o", str(tmp_path / "s.json"), "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["makespan"] == 8 and data["theta"] >= 1 and (tmp_path / "s.json").exists()
    assert run("simulate", str(inst), str(tmp_path / "s.json")).returncode == 0

    out = run("solve", str(inst), "--json", "-o", str(tmp_path / "opt.json"))
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["status"] == "optimal" and data["objective"] == data["makespan"] == 6
    assert data["solver"]["version"] and data["options"]["seed"] == 0 and data["options"]["threads"] == 1
    assert Schedule.read(tmp_path / "opt.json").meta["solver"]["name"] == "highs"

    out = run("compare", str(inst), "--exact", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["reference_kind"] == "optimum" and data["reference"] == 6
    assert all(row["ratio"] >= 1 for row in data["policies"])


def test_solve_infeasible_horizon_exits_2(tmp_path) -> None:
    inst = tiny(3)  # six 1-GPU jobs on one 1-GPU server
    short = Instance(inst.name, int(inst.bounds.rho_min.max()), inst.cluster, inst.jobs)
    short.write(tmp_path / "short.json")
    out = run("solve", str(tmp_path / "short.json"))
    assert out.returncode == 2 and "proven infeasible" in out.stderr and "Traceback" not in out.stderr


def test_solve_time_limit_is_not_an_error(tmp_path) -> None:
    out = run("solve", str(LIB / "tiny-8x4-s19.json"), "--time-limit", "0.001", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["status"] in ("no_solution", "feasible", "optimal")


def test_simulate_trace_matches_the_completion(tmp_path) -> None:
    inst = LIB / "wait-beats-start.json"
    assert run("schedule", str(inst), "-o", str(tmp_path / "s.json")).returncode == 0
    out = run("simulate", str(inst), str(tmp_path / "s.json"), "--trace", "--json")
    data = json.loads(out.stdout)
    done = [0, 0]
    for row in data["trace"]:
        for j in row["active"]:
            done[j] += row["iterations"][j]
    iters = [job["iterations"] for job in json.loads(inst.read_text())["jobs"]]
    assert all(d >= f for d, f in zip(done, iters, strict=True))
    assert data["trace"][-1]["slot"] == data["makespan"] - 1


def test_plot_writes_a_png(tmp_path) -> None:
    pytest.importorskip("matplotlib")
    inst = LIB / "wait-beats-start.json"
    assert run("schedule", str(inst), "-o", str(tmp_path / "s.json")).returncode == 0
    out = run("plot", str(tmp_path / "s.json"), "--instance", str(inst), "-o", str(tmp_path / "g.png"))
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "g.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    other = run(
        "plot", str(tmp_path / "s.json"), "--instance", str(LIB / "tiny-3x2-s12.json"), "-o", str(tmp_path / "x.png")
    )
    assert other.returncode == 2 and "schedule is for instance" in other.stderr and not (tmp_path / "x.png").exists()


@pytest.mark.parametrize(
    "args",
    [
        ("generate", "tiny", "--seed", "-1"),
        ("generate", "paper", "--seed", "1", "--servers", "0"),
        ("generate", "paper", "--seed", "1", "--budget", "-1"),
        ("schedule", str(LIB / "wait-beats-start.json"), "--policy", "rand", "--seed", "-3"),
        ("solve", str(LIB / "wait-beats-start.json"), "--time-limit", "-5"),
        ("solve", str(LIB / "wait-beats-start.json"), "--threads", "-1"),
        ("experiment", "kappa", "--seeds", "-1"),
    ],
)
def test_bad_numbers_exit_2(args) -> None:
    out = run(*args)
    assert out.returncode == 2 and out.stderr.startswith("error: ") and "Traceback" not in out.stderr
