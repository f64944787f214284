"""What ``--json`` records beside the numbers: every option that changes them (compare's
seed and time limits) and, for ``schedule``, what its ``-o`` file holds (meta, starts and
placements)."""

from __future__ import annotations

import json

import pytest

from rar_opt import Instance, Schedule
from rar_opt.instances.generate import tiny


def _json(capsys, *args: str) -> dict:
    from rar_opt.cli import main

    code = main([*args, "--json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out)


@pytest.mark.parametrize("seed", [0, 5])
def test_compare_records_its_seed_and_seconds(seed: int, capsys) -> None:
    data = _json(
        capsys, "compare", "tiny-4x2-s13", "--policies", "rand", "--seed", str(seed), "--bound-time-limit", "0"
    )
    assert data["seed"] == seed and data["exact"] is False
    assert data["time_limit"] is None and data["bound_time_limit"] is None  # no solve; the cheap bounds only
    assert "provenance" in data


def test_compare_records_the_exact_solves_seconds(capsys) -> None:
    data = _json(capsys, "compare", "tiny-4x2-s13", "--policies", "ff", "--exact", "--time-limit", "7", "--seed", "2")
    assert (data["seed"], data["exact"], data["time_limit"], data["bound_time_limit"]) == (2, True, 7.0, 10.0)


def test_compare_refuses_a_time_limit_without_exact(capsys) -> None:
    from rar_opt.cli import main

    assert main(["compare", "tiny-4x2-s13", "--time-limit", "5"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --time-limit: only --exact solves") and err.count("\n") == 1


def test_schedule_json_holds_what_the_file_holds(tmp_path, capsys) -> None:
    path = tmp_path / "s.json"
    data = _json(capsys, "schedule", "tiny-4x2-s13", "--policy", "rand", "--seed", "3", "-o", str(path))
    written = json.loads(path.read_text())
    assert data["meta"] == written["meta"]
    assert data["meta"]["seed"] == 3 and data["meta"]["params"]["seed"] == 3 and data["meta"]["params"]["mode"]
    assert data["meta"]["exceeds_horizon"] is False and data["meta"]["rar_opt"]
    from rar_opt.support.provenance import provenance

    assert written["meta"]["provenance"] == json.loads(json.dumps(provenance()))  # the code that wrote it
    from rar_opt.instances.library import instance_path

    assert written["meta"]["instance_sha256"] == Instance.read(instance_path("tiny-4x2-s13")).data_digest()
    assert data["servers"] == written["servers"] and data["jobs"] == written["jobs"]
    schedule = Schedule.read(path)
    assert [job["start"] for job in data["jobs"]] == list(schedule.starts)
    # without -o the same record
    again = _json(capsys, "schedule", "tiny-4x2-s13", "--policy", "rand", "--seed", "3")
    assert again["meta"] == data["meta"] and again["jobs"] == data["jobs"]


def test_schedule_json_says_when_no_trial_fits_the_horizon(tmp_path, capsys) -> None:
    inst = tiny(1, jobs=4, servers=2)
    short = inst.to_dict()
    short["horizon"] = int(inst.bounds.rho_min.max())  # the shortest horizon a file may give
    Instance.from_dict(short).write(tmp_path / "short.json")
    data = _json(capsys, "schedule", str(tmp_path / "short.json"), "--policy", "ff")
    assert data["meta"]["exceeds_horizon"] is True and data["makespan"] > short["horizon"]


def test_compare_text_names_the_exact_solves_makespan_as_its_json_does(capsys) -> None:
    from rar_opt.cli import main

    args = ["compare", "tiny-6x3-s16", "--policies", "ff", "--exact", "--time-limit", "10", "--bound-time-limit", "0"]
    data = _json(capsys, *args)
    assert main(args) == 0
    first = capsys.readouterr().out.splitlines()[0]
    solve = data["solve"]
    assert solve["makespan"] is not None
    assert f"(exact solve: {solve['status']}, makespan {solve['makespan']}, bound {solve['bound']})" in first


def test_solve_records_the_time_limit_given_in_the_file_and_the_json(tmp_path, capsys) -> None:
    # in this test process the start-up clock has run for as long as pytest has: what is left
    # of 10 s after it is far below 10, so a record of the remaining time would show here
    path = tmp_path / "sol.json"
    data = _json(capsys, "solve", "tiny-4x2-s13", "--time-limit", "10", "-o", str(path))
    written = json.loads(path.read_text())
    assert written["meta"]["options"]["time_limit"] == 10.0
    assert data["time_limit"] == 10.0 and data["options"]["time_limit"] == 10.0
    assert written["meta"]["options"] == data["options"]
    assert written["meta"]["provenance"] == data["provenance"]
    # what the limit lost before the solve began (here: all of pytest's run so far) is on record
    assert data["startup_s"] > 0 and data["runtime_s"] < 10.0
    Schedule.read(path)  # and the file still reads


def test_probe_file_records_the_run_and_reads_back(tmp_path, capsys) -> None:
    from rar_opt import __version__

    path = tmp_path / "p6.json"
    args = ("--makespan", "6", "--seed", "3", "--time-limit", "30", "--no-pricing", "-o", str(path))
    data = _json(capsys, "probe", "wait-beats-start", *args)
    meta = json.loads(path.read_text())["meta"]
    assert meta["method"] == "probe" and meta["status"] == data["status"] == "feasible"
    options = meta["options"]
    assert (options["makespan_asked"], options["seed"], options["time_limit"]) == (6, 3, 30.0)
    assert (options["pricing"], options["reversal"], options["symmetry"], options["search"]) == (
        False,
        True,
        True,
        "no-lp",
    )
    assert options["schedule_makespan"] == 6 and options["seconds"] == data["seconds"] and data["startup_s"] > 0
    assert meta["versions"]["rar-opt"] == __version__ and meta["versions"]["ortools"] == meta["solver"]["version"]
    # the file is still a schedule of the instance: simulate reads it and finds the same makespan
    simulated = _json(capsys, "simulate", "wait-beats-start", str(path))
    assert simulated["feasible"] and simulated["makespan"] == 6


def test_a_command_called_from_a_program_counts_its_limit_from_the_call(capsys) -> None:
    # the command line counts from the start of its process (imports included); called from
    # a program that has run for minutes (a test session, a notebook), the limit counted from
    # the program's start was spent before the command began, and a probe got no time at all
    import time

    from rar_opt.support.processes import command_began, seconds_since_start

    command_began(None)  # the process's age, as the command line's own process counts it
    if seconds_since_start() < 6.0:
        time.sleep(6.0 - seconds_since_start())
    age = seconds_since_start()
    data = _json(capsys, "probe", "wait-beats-start", "--makespan", "6", "--time-limit", "30")
    assert data["status"] == "feasible" and 0 <= data["startup_s"] < age  # from the call, not the process's start
    command_began(time.perf_counter() - 2.0)
    assert 2.0 <= seconds_since_start() < 3.0
    command_began(None)
