"""Reliability on first contact: bad files, closed pipes, output paths, limits, bounded threads."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ..helpers import INSTANCES, run

TINY = INSTANCES / "tiny-2x1-s11.json"
WAIT = INSTANCES / "wait-beats-start.json"


def _instance_with(tmp_path: Path, name: str, change) -> Path:
    data = json.loads(TINY.read_text())
    change(data)
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(data))
    return path


def _one_line_exit_2(out: subprocess.CompletedProcess, *expected: str) -> None:
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1, out.stderr
    for text in expected:
        assert text in out.stderr, out.stderr


def test_files_that_are_not_json_text(tmp_path) -> None:
    (tmp_path / "bytes.json").write_bytes(bytes(range(256)))
    _one_line_exit_2(run("schedule", str(tmp_path / "bytes.json")), "bytes.json", "not UTF-8", "0x80 at offset 128")
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    _one_line_exit_2(run("schedule", str(tmp_path / "deep.json")), "deep.json", "deeper than 64 levels")
    text = TINY.read_text().replace('"horizon":', '"horizon": 3, "horizon":', 1)
    (tmp_path / "dup.json").write_text(text)
    _one_line_exit_2(run("schedule", str(tmp_path / "dup.json")), "dup.json", "duplicate key 'horizon'")


def test_a_byte_order_mark_is_skipped(tmp_path) -> None:
    # some editors start a UTF-8 file with EF BB BF; RFC 8259 lets a parser ignore it
    from rar_opt import Instance

    (tmp_path / "bom.json").write_bytes(b"\xef\xbb\xbf" + TINY.read_bytes())
    assert Instance.read(tmp_path / "bom.json") == Instance.read(TINY)


@pytest.mark.parametrize(
    ("field", "change"),
    [
        ("jobs[0].iterations", lambda d: d["jobs"][0].__setitem__("iterations", 10**25)),
        ("jobs[0].batch_size", lambda d: d["jobs"][0].__setitem__("batch_size", 10**20)),
        ("cluster.servers[0]", lambda d: d["cluster"]["servers"].__setitem__(0, 10**20)),
        ("cluster.servers[0]", lambda d: d["cluster"]["servers"].__setitem__(0, 5000)),  # > 4,096 GPUs
        ("horizon", lambda d: d.__setitem__("horizon", 10**30)),
        ("jobs[1].name", lambda d: d["jobs"][1].__setitem__("name", d["jobs"][0]["name"])),
        ("name", lambda d: d["jobs"][0].__setitem__("name", " ")),
    ],
)
def test_out_of_range_fields_are_named(tmp_path, field: str, change) -> None:
    _one_line_exit_2(run("schedule", str(_instance_with(tmp_path, "bad", change))), "bad.json", field)


def test_huge_schedule_entries_are_named(tmp_path) -> None:
    schedule = json.loads((INSTANCES / "optimal" / "tiny-2x1-s11.schedule.json").read_text())
    schedule["jobs"][0]["start"] = 10**30
    (tmp_path / "s.json").write_text(json.dumps(schedule))
    _one_line_exit_2(run("simulate", str(TINY), str(tmp_path / "s.json")), "s.json", "jobs[0].start")


@pytest.mark.parametrize(
    ("output", "expected"),
    [("", "--output: is empty"), (".", "is a directory"), ("/no/such/dir/x.json", "does not exist")],
)
def test_output_paths_are_checked_before_any_work(output: str, expected: str) -> None:
    for args in (("schedule", str(TINY)), ("experiment", "policies", "--seeds", "0", "1", "2", "3", "4")):
        out = run(*args, "-o", output)
        _one_line_exit_2(out, expected)


def test_threads_are_bounded_by_the_machine() -> None:
    too_many = (os.cpu_count() or 1) + 1
    expected = f"must be at most {os.cpu_count()}, the CPUs of this machine; got {too_many}"
    _one_line_exit_2(run("solve", str(TINY), "--threads", str(too_many)), expected)


@pytest.mark.parametrize("value", ["inf", "nan"])
def test_time_limit_must_be_finite(value: str) -> None:
    out = run("solve", str(TINY), "--time-limit", value)
    # the flag is named, and the instance file is not blamed for it
    _one_line_exit_2(out, "error: --time-limit: must be a finite number")
    assert TINY.name not in out.stderr


def test_compare_refuses_a_repeated_policy() -> None:
    _one_line_exit_2(run("compare", str(TINY), "--policies", "ff", "ff"), "--policies: names ff more than once")


def test_a_closed_pipe_ends_the_command() -> None:
    """``rar-opt -v solve ... | head -3`` used to wait forever on a lock."""
    cmd = f"{sys.executable} -m rar_opt -v solve {WAIT} 2>&1 | head -3; echo rar-opt ${{PIPESTATUS[0]}} >&2"
    out = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and len(out.stdout.splitlines()) == 3
    # rar-opt's own status, not head's: done (0) or ended by the closed pipe (128 + SIGPIPE)
    assert out.stderr.strip() in ("rar-opt 0", f"rar-opt {128 + signal.SIGPIPE}"), out.stderr


def test_verbose_works_after_the_subcommand() -> None:
    out = run("experiment", "lambda", "--seeds", "0", "--jobs", "8", "-v")
    assert out.returncode == 0 and "lambda: 1/6" in out.stderr  # 4 lambdas, then the 2 classical baselines
    quiet = run("experiment", "lambda", "--seeds", "0", "--jobs", "8")
    assert quiet.returncode == 0 and quiet.stderr == ""  # no progress bar when stderr is not a terminal


def test_names_carry_the_generator_parameters() -> None:
    default = json.loads(run("generate", "tiny", "--seed", "3").stdout)["name"]
    sized = json.loads(run("generate", "tiny", "--seed", "3", "--jobs", "12", "--servers", "4").stdout)["name"]
    assert default == "tiny-6x1-s3-drawn" and sized == "tiny-12x4-s3"


def test_the_time_limit_covers_build_and_hand_off() -> None:
    """What the solver is given is what is left of the caller's limit after the build."""
    from rar_opt import Instance
    from rar_opt.solvers import solve

    res = solve(Instance.read(INSTANCES / "tiny-8x4-s19.json"), "compact", time_limit=2.0)
    assert res.options["time_limit"] == 2.0
    assert res.options["solver_time_limit"] <= 2.0 - res.build_s


def test_a_backend_without_threads_refuses_a_thread_count() -> None:
    _one_line_exit_2(
        run("solve", str(WAIT), "--formulation", "nonconvex", "--threads", "2"), "scip backend runs on one thread"
    )


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("buffered", [True, False], ids=["buffered", "unbuffered"])
def test_a_full_standard_output_is_one_line_and_exit_2(buffered: bool) -> None:
    # `> /dev/full` was "internal error: OSError: [Errno 28] ..." and exit 1 (unbuffered), or a
    # traceback at the exit's flush (buffered); -o /dev/full already said "cannot write", exit 2
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if not buffered:
        env["PYTHONUNBUFFERED"] = "1"
    # --help too: argparse prints it and exits 0, which a lost help once did silently
    commands = (["schedule", str(TINY), "--json"], ["schedule", str(TINY)], ["--version"], ["--help"], ["solve", "-h"])
    for args in commands:
        with open("/dev/full", "w") as full:
            out = subprocess.run(
                [sys.executable, "-m", "rar_opt", *args], stdout=full, stderr=subprocess.PIPE, text=True, env=env
            )
        assert out.returncode == 2, (args, out.stderr)
        assert out.stderr == "error: standard output: cannot write (No space left on device)\n", (args, out.stderr)


def test_a_pipe_closed_early_stays_quiet() -> None:
    # the closed pipe is not a full disk: no error line, as before
    cmd = f"{sys.executable} -m rar_opt schedule {TINY} --json | head -c 1 >/dev/null; echo ${{PIPESTATUS[0]}}"
    out = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() in ("0", str(128 + signal.SIGPIPE)) and out.stderr == "", (out.stdout, out.stderr)
