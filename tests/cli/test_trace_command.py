"""``rar-opt trace``: a CSV trace made into an instance; bad input exits 2 naming file, line, field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rar_opt import Instance

from ..helpers import INSTANCES, run

EXAMPLE = INSTANCES / "arrivals" / "trace-morning.csv"
GOOD = "submit[min],gpus,duration[min]\n0,2,30\n5,8,40\n"


def test_the_documented_command_remakes_the_example(tmp_path: Path) -> None:
    out = tmp_path / "t.json"
    args = ["--servers", "8", "--server-gpus", "8", "--slot", "5min"]
    done = run("trace", str(EXAMPLE), *args, "-o", str(out), "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["jobs"] == 32 and summary["last_release"] == 50 and summary["slot_s"] == 300.0
    assert Instance.read(out).to_dict() == Instance.read(INSTANCES / "arrivals" / "trace-morning.json").to_dict()
    printed = run("trace", str(EXAMPLE), *args)  # without -o: the instance's JSON
    assert printed.returncode == 0 and json.loads(printed.stdout) == json.loads(out.read_text())


@pytest.mark.parametrize(
    ("text", "args", "expect"),
    [
        ("", [], "bad.csv: is empty"),
        ("submit[min],gpus,duration[min]\n", [], "bad.csv: line 1: the header is not followed by any job"),
        ("gpus,duration[min]\n2,30\n", [], "bad.csv: line 1: submit: missing column"),
        ("submit[d],gpus,duration[min]\n0,2,30\n", [], "bad.csv: line 1: submit: unknown unit 'd'"),
        ("submit[s],gpus,gpus,duration[min]\n0,2,2,30\n", [], "bad.csv: line 1: gpus: appears twice"),
        ("submit[s],gpus,duration[min]\n0,2,30\n1,two,30\n", [], "bad.csv: line 3: gpus: must be a whole number"),
        ("submit[s],gpus,duration[min]\n0,-4,30\n", [], "bad.csv: line 2: gpus"),
        (GOOD, ["--server-gpus", "4", "--servers", "1"], "bad.csv: line 3: gpus: = 8 is more than the cluster's 4"),
        (GOOD, ["--horizon", "20"], "--horizon: = 20 is too short: the job on line 3 of"),
        (GOOD, ["--slot", "5"], "--slot: must be a number and a unit"),
        (GOOD, ["--slot", "1d"], "--slot: unknown unit 'd'"),
        (GOOD, ["--servers", "0"], "--servers: must be an integer"),
        (GOOD, ["--server-gpus", "0"], "--server-gpus: must be an integer"),
        (GOOD, ["--seed", "-1"], "--seed: must be an integer"),
    ],
)
def test_bad_input_exits_2_naming_the_place(tmp_path: Path, text: str, args: list[str], expect: str) -> None:
    trace = tmp_path / "bad.csv"
    trace.write_text(text)
    out = tmp_path / "out.json"
    base = ["--servers", "4", "--server-gpus", "8"]
    done = run("trace", str(trace), *base, *args, "-o", str(out))
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert expect in done.stderr, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.csv"]  # nothing written, no temporary file


def test_a_missing_trace_file_exits_2(tmp_path: Path) -> None:
    done = run("trace", str(tmp_path / "none.csv"), "--servers", "2")
    assert done.returncode == 2 and "none.csv: cannot read file" in done.stderr and "Traceback" not in done.stderr
