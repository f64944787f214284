"""Each command, run as a real process, against values computed independently or by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import rar_opt
from rar_opt import Instance, Schedule, __version__
from rar_opt.algorithms import POLICIES
from rar_opt.gpu_ids import assign_gpu_ids
from rar_opt.instances.generate import tiny

from ..helpers import INSTANCES, run
from ..strategies import reference_simulate

WAIT = INSTANCES / "wait-beats-start.json"


def test_simulate_reports_the_reference_completion(cli_files: dict[str, Path]) -> None:
    out = run("simulate", str(cli_files["inst"]), str(cli_files["good"]), "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    ref = reference_simulate(Instance.read(cli_files["inst"]), Schedule.read(cli_files["good"]))["completion"]
    assert data["feasible"] and data["violations"] == []
    assert data["completion"] == ref and data["makespan"] == max(ref) and data["min_jct"] == min(ref)
    assert data["avg_jct"] == pytest.approx(sum(ref) / len(ref))
    assert data["provenance"]["rar-opt"] == __version__  # a result record names the code that computed it
    table = run("simulate", str(cli_files["inst"]), str(cli_files["good"]))
    assert table.returncode == 0 and "makespan" in table.stdout and str(max(ref)) in table.stdout


def test_schedule_prints_the_mean_flow_time_where_jobs_arrive() -> None:
    arrivals = INSTANCES / "arrivals" / "arrivals-5x2.json"
    out = run("schedule", str(arrivals), "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    releases = [job.release for job in Instance.read(arrivals).jobs]
    assert any(releases)
    flows = [c - r for c, r in zip(data["completion"], releases, strict=True)]
    assert data["avg_flow"] == pytest.approx(sum(flows) / len(flows))
    assert data["avg_flow"] < data["avg_jct"]
    assert "avg_flow" in run("schedule", str(arrivals)).stdout
    assert "avg_flow" not in json.loads(run("schedule", str(WAIT), "--json").stdout)  # all at slot 0


def test_generate_writes_file(tmp_path) -> None:
    out = run("generate", "tiny", "--seed", "3", "-o", str(tmp_path / "t.json"), "--json")
    assert out.returncode == 0, out.stderr
    written = Instance.read(tmp_path / "t.json").to_dict()
    assert written["meta"].pop("generated_with").startswith(rar_opt.__version__)  # which rar-opt drew it
    assert written == tiny(3).to_dict()
    inst = tiny(3)
    assert json.loads(out.stdout)["name"] == f"tiny-{inst.num_jobs}x{inst.num_servers}-s3-drawn"


def test_generate_notes_an_instance_that_nothing_fits(tmp_path) -> None:
    # 80 contention-heavy paper jobs on four 8-GPU servers: their GPU-slots over 32 GPUs
    # exceed T = 1200, so every solve would end infeasible; the file is still written
    args = ("--jobs", "80", "--servers", "4", "--preset", "contention-heavy", "--server-gpus", "8")
    out = run("generate", "paper", "--seed", "3", *args, "-o", str(tmp_path / "p.json"))
    assert out.returncode == 0 and "note: no schedule of" in out.stderr and "T = 1200" in out.stderr, out.stderr
    assert (tmp_path / "p.json").exists()
    plain = run("generate", "paper", "--seed", "3", "-o", str(tmp_path / "q.json"))
    assert plain.returncode == 0 and "note:" not in plain.stderr, plain.stderr


def test_gpu_ids_round_trip_through_cli(cli_files: dict[str, Path], tmp_path) -> None:
    inst = Instance.read(cli_files["inst"])
    with_ids = assign_gpu_ids(inst, Schedule.read(cli_files["good"]))
    with_ids.write(tmp_path / "ids.json")
    assert run("simulate", str(cli_files["inst"]), str(tmp_path / "ids.json")).returncode == 0
    broken = with_ids.to_dict()
    broken["jobs"][0]["gpu_ids"][-1] = [0, 99]  # a GPU that does not exist
    (tmp_path / "bad-ids.json").write_text(json.dumps(broken))
    out = run("simulate", str(cli_files["inst"]), str(tmp_path / "bad-ids.json"))
    assert out.returncode == 2 and "gpu_ids" in out.stderr


def test_schedule_solve_compare_by_hand(tmp_path) -> None:
    # wait-beats-start: every list heuristic 8 (both jobs at once), the optimum 6 (one after
    # the other), which pack finds
    out = run("schedule", str(WAIT), "--policy", "sjf-bco", "-o", str(tmp_path / "s.json"), "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["makespan"] == 8 and data["completion"] == [8, 8] and data["kappa"] == 1
    assert {c["claim"]: c["holds"] for c in data["claims"]}["theorem5"] is True  # 8 <= 64/3 x 3
    assert run("simulate", str(WAIT), str(tmp_path / "s.json")).returncode == 0

    out = run("solve", str(WAIT), "--json", "-o", str(tmp_path / "opt.json"))
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["status"] == "optimal" and data["objective"] == data["makespan"] == 6
    assert data["solver"]["version"] and data["options"]["seed"] == 0 and data["options"]["threads"] == 1
    opt = Schedule.read(tmp_path / "opt.json")
    # auto: the structural floor (6) meets pack's schedule, before any model
    assert opt.meta["method"] == "pack" and data["options"]["proved_by"] == "floor"
    assert max(reference_simulate(Instance.read(WAIT), opt)["completion"]) == 6

    out = run("compare", str(WAIT), "--exact", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["reference_kind"] == "optimum" and data["reference"] == 6
    assert data["theorem5_bound"] == pytest.approx(64 / 3)
    spans = [(row["makespan"], row["ratio"]) for row in data["policies"]]
    # pack and backfill never run two split jobs on one server at once: the optimum
    assert spans == [(6, 1.0) if name in ("pack", "backfill") else (8, pytest.approx(8 / 6)) for name in POLICIES]


def test_schedule_takes_the_classical_and_search_options(tmp_path) -> None:
    paper = str(INSTANCES / "tiny-8x4-s19.json")
    out = run("schedule", paper, "--policy", "lpt", "--placement", "first-fit", "-o", str(tmp_path / "l.json"))
    assert out.returncode == 0, out.stderr
    assert Schedule.read(tmp_path / "l.json").meta["params"]["placement"] == "first-fit"
    runs = []
    for name in ("a", "b"):
        args = ("--policy", "improve", "--iterations", "3", "--seed", "5", "--time-limit", "30")
        out = run("schedule", paper, *args, "-o", str(tmp_path / f"{name}.json"))
        assert out.returncode == 0, out.stderr
        runs.append(Schedule.read(tmp_path / f"{name}.json"))
    assert runs[0].meta["search"]["iterations"] == 3 and runs[0].meta["seed"] == 5
    assert (runs[0].starts, runs[0].placements) == (runs[1].starts, runs[1].placements)


def test_solve_infeasible_horizon_exits_2(tmp_path) -> None:
    inst = tiny(3)  # six 1-GPU jobs on one 1-GPU server
    short = Instance(inst.name, int(inst.bounds.rho_min.max()), inst.cluster, inst.jobs)
    short.write(tmp_path / "short.json")
    for objective in ("makespan", "total", "flow"):
        out = run("solve", str(tmp_path / "short.json"), "--objective", objective, "--time-limit", "20")
        assert out.returncode == 2 and "proven infeasible" in out.stderr and "Traceback" not in out.stderr, objective


def test_solve_time_limit_is_not_an_error() -> None:
    out = run("solve", str(INSTANCES / "tiny-8x4-s19.json"), "--time-limit", "0.001", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["status"] in ("no_solution", "feasible", "optimal")


def test_simulate_trace_matches_the_reference(tmp_path) -> None:
    assert run("schedule", str(WAIT), "-o", str(tmp_path / "s.json")).returncode == 0
    out = run("simulate", str(WAIT), str(tmp_path / "s.json"), "--trace", "--json")
    data = json.loads(out.stdout)
    ref = reference_simulate(Instance.read(WAIT), Schedule.read(tmp_path / "s.json"))["trace"]
    assert [row["slot"] for row in data["trace"]] == sorted(ref)
    for row in data["trace"]:
        contention, iterations = ref[row["slot"]]
        assert [iterations[j] for j in row["active"]] == [row["iterations"][j] for j in row["active"]]
        assert row["contention"] == contention
    # by hand: both jobs split and sharing a server, p = 2: one iteration per slot, 8 slots
    assert [row["iterations"] for row in data["trace"]] == [[1, 1]] * 8


def test_plot_writes_a_picture(tmp_path) -> None:
    pytest.importorskip("matplotlib")
    assert run("schedule", str(WAIT), "-o", str(tmp_path / "s.json")).returncode == 0
    out = run("plot", str(WAIT), str(tmp_path / "s.json"), "-o", str(tmp_path / "g.png"))
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "g.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # both files written are named: the figure and the provenance file beside it
    (line,) = out.stdout.splitlines()
    assert line.startswith("written: ") and str(tmp_path / "g.png") in line
    assert str(tmp_path / "g.provenance.json") in line and (tmp_path / "g.provenance.json").is_file()
    other = run("plot", str(INSTANCES / "tiny-3x2-s12.json"), str(tmp_path / "s.json"), "-o", str(tmp_path / "x.png"))
    assert other.returncode == 2 and "schedule is for instance" in other.stderr and not (tmp_path / "x.png").exists()


def test_experiment_writes_a_result_file_with_versions(tmp_path) -> None:
    out = run("experiment", "lambda", "--seeds", "0", "--jobs", "16", "-o", str(tmp_path / "r.json"))
    assert out.returncode == 0, out.stderr
    record = json.loads((tmp_path / "r.json").read_text())
    assert record["versions"]["rar-opt"] and record["seeds"] == [0]
    # the classical baselines beside SJF-BCO's sweep, on the same instance
    labels = ["lambda=1", "lambda=2", "lambda=4", "lambda=8", "lpt", "sjf-oblivious"]
    assert [r["label"] for r in record["runs"]] == labels and len({r["instance"] for r in record["runs"]}) == 1
    assert "lambda=8" in out.stdout
    # the bounds' seconds and the bound that gave each column, in the file and under the table
    assert record["bound_time_limit"] == 10.0
    assert all(r["lower_bound_avg_jct_by"] in ("completion_rank", "flow_lp") for r in record["runs"])
    assert record["summary"][0]["lower_bound_makespan_by"] == record["runs"][0]["lower_bound_makespan_by"]
    assert "average JCT by " in out.stdout and "makespan by " in out.stdout


def test_the_load_experiment_under_several_presets(tmp_path) -> None:
    args = ("experiment", "load", "--seeds", "0", "--jobs", "8", "--preset", "paper-literal", "contention-heavy")
    out = run(*args, "-o", str(tmp_path / "r.json"))
    assert out.returncode == 0, out.stderr
    record = json.loads((tmp_path / "r.json").read_text())
    assert record["presets"] == ["paper-literal", "contention-heavy"] and "preset" not in record
    assert {r["preset"] for r in record["runs"]} == set(record["presets"])
    assert all(r["avg_flow"] >= r["lower_bound_avg_flow"] - 1e-9 for r in record["runs"])
    assert {s["preset"] for s in record["summary"]} == set(record["presets"])
    assert "avg flow bound" in out.stdout and "contention-heavy" in out.stdout


def test_library_instances_and_specs_by_name_from_anywhere(tmp_path) -> None:
    out = run("schedule", "wait-beats-start", "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["makespan"] == 8
    out = run("solve", "wait-beats-start", "--model", "compact-total", "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["objective"] == 9  # 3 + 6: one job after the other
    out = run("schedule", "no-such-instance", cwd=tmp_path)
    assert out.returncode == 2 and "neither a file nor a bundled instance" in out.stderr


def test_each_command_is_registered_by_the_module_commands_names() -> None:
    # a command imports only its own module (COMMANDS); the table must match what the
    # modules register, or a command would run with a parser that does not know it
    import argparse

    from rar_opt.cli import COMMAND_MODULES, COMMANDS, command_module

    found: dict[str, str] = {}
    for name in COMMAND_MODULES:
        parser = argparse.ArgumentParser()
        sub = parser.add_subparsers(dest="command")
        command_module(name).register(sub, argparse.ArgumentParser(add_help=False))
        found.update(dict.fromkeys(sub.choices, name))
    assert found == COMMANDS


def test_schedule_imports_neither_pyomo_nor_ortools(tmp_path: Path) -> None:
    # the start-up of `schedule` and `simulate` at 100x (benchmarks/commands.py) is part of their 10 s
    code = (
        "import sys, contextlib, io\n"
        "from rar_opt.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    assert main(['schedule', 'tiny-4x2-s13', '-o', {str(tmp_path / 's.json')!r}]) == 0\n"
        f"    assert main(['simulate', 'tiny-4x2-s13', {str(tmp_path / 's.json')!r}]) == 0\n"
        "print(sorted(m for m in ('pyomo', 'ortools', 'pandas', 'dask') if m in sys.modules))\n"
    )
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_a_schedule_read_against_changed_numbers_is_judged_with_a_warning(tmp_path: Path) -> None:
    """A schedule file records the digest of its instance's data: simulate and plot warn when
    the instance given (same name, same shape) has other numbers, and judge it all the same."""
    import dataclasses

    inst = tiny(7)
    inst.write(tmp_path / "i.json")
    assert run("schedule", str(tmp_path / "i.json"), "-o", str(tmp_path / "s.json")).returncode == 0
    same = run("simulate", str(tmp_path / "i.json"), str(tmp_path / "s.json"))
    assert same.returncode == 0 and "warning" not in same.stderr
    dataclasses.replace(inst, horizon=inst.horizon + 1).write(tmp_path / "edited.json")  # still feasible there
    out = run("simulate", str(tmp_path / "edited.json"), str(tmp_path / "s.json"))
    assert out.returncode == 0 and "Traceback" not in out.stderr
    assert f"warning: {tmp_path / 's.json'}: made for other data of instance {inst.name!r}" in out.stderr
    assert "makespan" in out.stdout  # judged on the instance as given


def test_schedule_with_o_prints_no_job_table_unless_asked(tmp_path: Path) -> None:
    inst = tiny(7)
    inst.write(tmp_path / "i.json")
    out = run("schedule", str(tmp_path / "i.json"), "-o", str(tmp_path / "s.json"))
    assert out.returncode == 0, out.stderr
    assert "completion" not in out.stdout  # the table's header
    assert f"jobs: {inst.num_jobs}, each with its start and placement in {tmp_path / 's.json'}" in out.stdout
    assert "--table" in out.stdout
    full = run("schedule", str(tmp_path / "i.json"), "-o", str(tmp_path / "s.json"), "--table")
    assert full.returncode == 0 and "completion" in full.stdout
    rows = [line for line in full.stdout.splitlines() if line.split()[:1] and line.split()[0].isdigit()]
    assert len(rows) >= inst.num_jobs
    bare = run("schedule", str(tmp_path / "i.json"))  # no file: the table is the output
    assert "completion" in bare.stdout
