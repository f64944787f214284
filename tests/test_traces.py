"""Job traces as CSV (rar_opt.instances.traces): the example trace, the mapping onto slots, bad rows."""

from __future__ import annotations

import csv
import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rar_opt import InputError, Instance, check
from rar_opt.algorithms import run_policy
from rar_opt.errors import ParameterError
from rar_opt.instances.generate import philly_sizes
from rar_opt.instances.traces import UNITS, parse_span, read_trace, trace_instance

from .helpers import INSTANCES

EXAMPLE = INSTANCES / "arrivals" / "trace-morning.csv"
EXAMPLE_INSTANCE = INSTANCES / "arrivals" / "trace-morning.json"
SLOT = 300.0  # the example's --slot 5min


def _example() -> Instance:
    return trace_instance(read_trace(EXAMPLE), servers=8, server_gpus=8, slot=SLOT)


def _csv_rows(path: Path) -> list[dict[str, str]]:
    lines = [line for line in path.read_text().splitlines() if not line.startswith("#")]
    return list(csv.DictReader(lines))


def test_the_example_trace_makes_the_stored_instance() -> None:
    made = _example()
    stored = Instance.read(EXAMPLE_INSTANCE)
    assert made.to_dict() == stored.to_dict()
    assert made.name == "trace-morning-32x8-s0" and made.num_jobs == 32
    assert made.meta["trace"]["units"] == {"submit": "min", "duration": "min"}


def test_the_example_maps_each_row() -> None:
    inst = _example()
    rows = {r["name"]: r for r in _csv_rows(EXAMPLE)}
    assert [j.name for j in inst.jobs] == list(rows)  # the file is in submit order already
    assert np.all(np.diff(inst.releases) >= 0) and inst.releases[0] == 0
    bounds = inst.bounds
    for k, job in enumerate(inst.jobs):
        row = rows[job.name]
        assert job.gpus == int(row["gpus"])
        assert job.release == math.floor(float(row["submit[min]"]) * 60 / SLOT)
        if row["duration[min]"] and not row["iterations"]:  # the duration is the fastest time, in whole slots
            assert bounds.rho_min[k] == math.ceil(float(row["duration[min]"]) * 60 / SLOT), job.name
        if row["iterations"]:
            assert job.iterations == int(row["iterations"])
        if row["iterations"] and row["duration[min]"]:  # both: the per-iteration time they give
            assert bounds.tau_min[k] == pytest.approx(float(row["duration[min]"]) * 60 / SLOT / int(row["iterations"]))
        elif not row["duration[min]"]:  # iterations alone: tau drawn in the paper's range, 1/k
            assert 0.01 <= bounds.tau_min[k] <= 0.05
            assert 1 / bounds.tau_min[k] == pytest.approx(round(1 / bounds.tau_min[k]))
    # the literal reading's promise: contention and overhead add at most 15% to any job
    assert np.all(bounds.tau_max <= 1.15 * bounds.tau_min * (1 + 1e-9))
    # the default horizon: running every job one after the other after the last arrival fits
    assert inst.horizon == int(inst.releases.max() + bounds.rho_max.sum())


@pytest.mark.parametrize("policy", ["sjf-bco", "online-ff", "online-sjf-bco"])
def test_policies_schedule_the_example(policy: str) -> None:
    inst = Instance.read(EXAMPLE_INSTANCE)
    schedule = run_policy(inst, policy).schedule
    report = check(inst, schedule)
    assert report.feasible, [str(v) for v in report.violations]
    assert np.all(np.asarray(schedule.starts) >= inst.releases)


def test_a_trace_is_seeded() -> None:
    trace = read_trace(EXAMPLE)
    first = trace_instance(trace, servers=6, seed=3)
    assert first.to_dict() == trace_instance(trace, servers=6, seed=3).to_dict()
    assert first.cluster.servers != trace_instance(trace, servers=6, seed=4).cluster.servers or (
        first.jobs != trace_instance(trace, servers=6, seed=4).jobs
    )
    assert set(first.cluster.servers) <= {4, 8, 16, 32}  # the paper's server sizes, drawn by the seed


def test_without_gpus_the_philly_mix(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("submit[h],duration[h]\n" + "".join(f"{i * 0.1},{1 + i % 3}\n" for i in range(40)))
    inst = trace_instance(read_trace(path), servers=4, server_gpus=8, seed=1)
    assert sorted(j.gpus for j in inst.jobs) == sorted(min(g, 32) for g in philly_sizes(40))
    assert inst.meta["trace"]["sizes"] == "philly-mix"
    other = trace_instance(read_trace(path), servers=4, server_gpus=8, seed=2)
    assert [j.gpus for j in inst.jobs] != [j.gpus for j in other.jobs]  # a seeded order


# -- any valid trace ---------------------------------------------------------------------
@st.composite
def traces(draw):
    """A valid trace as CSV text with integer times, so that the expected slots are exact."""
    n = draw(st.integers(1, 25))
    submit_unit = draw(st.sampled_from(list(UNITS)))
    duration_unit = draw(st.sampled_from(list(UNITS)))
    columns = draw(st.sampled_from(["d", "i", "di"]))
    rows = []
    for _ in range(n):
        submit = draw(st.integers(-500, 2000))
        gpus = draw(st.integers(1, 8))
        kinds = {"d": ["d"], "i": ["i"], "di": ["d", "i", "di"]}[columns]
        kind = draw(st.sampled_from(kinds))
        duration = draw(st.integers(1, 40)) if "d" in kind else None
        iterations = draw(st.integers(1, 400)) if "i" in kind else None
        if kind == "di":  # an iteration must fit in a slot: at least as many iterations as the duration's seconds
            iterations = max(iterations or 1, int(duration * UNITS[duration_unit]))
        rows.append((submit, gpus, duration, iterations))
    header = [f"submit[{submit_unit}]", "gpus"]
    header += [f"duration[{duration_unit}]"] if "d" in columns else []
    header += ["iterations"] if "i" in columns else []
    order = draw(st.permutations(range(len(header))))
    lines = [",".join(header[c] for c in order)]
    for submit, gpus, duration, iterations in rows:
        cells = [str(submit), str(gpus)]
        cells += ["" if duration is None else str(duration)] if "d" in columns else []
        cells += ["" if iterations is None else str(iterations)] if "i" in columns else []
        lines.append(",".join(cells[c] for c in order))
    return "\n".join(lines) + "\n", rows, submit_unit, duration_unit


@settings(max_examples=60, deadline=None)
@given(traces(), st.sampled_from([30, 60, 300, 3600]), st.integers(0, 3))
def test_any_valid_trace_round_trips(tmp_path_factory, case, slot: int, seed: int) -> None:
    text, rows, submit_unit, duration_unit = case
    path = tmp_path_factory.mktemp("trace") / "t.csv"
    path.write_text(text)
    inst = trace_instance(read_trace(path), servers=2, server_gpus=8, slot=float(slot), seed=seed)
    assert Instance.from_dict(inst.to_dict()) == inst
    unit = int(UNITS[submit_unit])
    first = min(r[0] for r in rows)
    order = sorted(range(len(rows)), key=lambda i: rows[i][0])  # stable: file order on ties
    # releases: the submit offsets in whole slots, sorted; job k is the order[k]-th row (line order[k] + 2)
    assert list(inst.releases) == [(rows[i][0] - first) * unit // slot for i in order]
    assert [j.name for j in inst.jobs] == [f"line{i + 2}" for i in order]
    bounds = inst.bounds
    for k, i in enumerate(order):
        _, gpus, duration, iterations = rows[i]
        assert inst.jobs[k].gpus == gpus
        if duration is not None and iterations is None:
            assert bounds.rho_min[k] == -(-duration * int(UNITS[duration_unit]) // slot)  # ceil
        if iterations is not None:
            assert inst.jobs[k].iterations == iterations
    assert inst.horizon >= int(max(inst.releases + bounds.rho_max))


# -- bad input -----------------------------------------------------------------------------
BAD = [
    ("", "is empty: no header line"),
    ("# only a comment\n\n", "is empty: no header line"),
    ("submit[s],gpus,duration[s]\n", "line 1: the header is not followed by any job"),
    ("# c\nsubmit[s],gpus,duration[s]\n\n", "line 2: the header is not followed by any job"),
    ("gpus,duration[s]\n1,5\n", "line 1: submit: missing column"),
    ("submit[s],gpus\n0,1\n", "line 1: duration: missing column"),
    ("submit[days],gpus,duration[s]\n0,1,5\n", "line 1: submit: unknown unit 'days'"),
    ("submit[s],gpus,duration[weeks]\n0,1,5\n", "line 1: duration: unknown unit 'weeks'"),
    ("submit,gpus,duration[s]\n0,1,5\n", "line 1: submit: needs its unit in the header"),
    ("submit[s],gpus[s],duration[s]\n0,1,5\n", "line 1: gpus: takes no unit"),
    ("submit[s],gpus,duration[s],user\n0,1,5,x\n", "line 1: user: unknown column"),
    ("submit[s],gpus,,duration[s]\n0,1,,5\n", "line 1: column 3: has no name"),
    ("submit[s],gpus,submit[min],duration[s]\n0,1,0,5\n", "line 1: submit: appears twice"),
    ("submit[s],gpus,duration[s],GPUS\n0,1,5,1\n", "line 1: gpus: appears twice"),
    ("submit[s];gpus;duration[s]\n0;1;5\n", "the separator is a comma"),
    ("submit[s],gpus,duration[s]\n0,1,5\nabc,1,5\n", "line 3: submit: must be a finite number, got 'abc'"),
    ("submit[s],gpus,duration[s]\n0,1,5\nnan,1,5\n", "line 3: submit: must be a finite number"),
    ("submit[s],gpus,duration[s]\n,1,5\n", "line 2: submit: is empty"),
    ("submit[s],gpus,duration[s]\n0,0,5\n", "line 2: gpus: = 0 must be in 1.."),
    ("submit[s],gpus,duration[s]\n0,-2,5\n", "line 2: gpus: must be a whole number >= 1, got '-2'"),
    ("submit[s],gpus,duration[s]\n0,2.5,5\n", "line 2: gpus: must be a whole number"),
    ("submit[s],gpus,duration[s]\n0,,5\n", "line 2: gpus: is empty"),
    ("submit[s],gpus,duration[s]\n0,1,0\n", "line 2: duration: must be > 0"),
    ("submit[s],gpus,duration[s]\n0,1,-3\n", "line 2: duration: must be > 0"),
    ("submit[s],gpus,duration[s]\n0,1,5 min\n", "line 2: duration: must be a finite number"),
    ("submit[s],gpus,duration[s]\n0,1,\n", "line 2: duration: is empty"),
    ("submit[s],gpus,iterations\n0,1,0\n", "line 2: iterations: = 0 must be in 1.."),
    ("submit[s],gpus,duration[s],iterations\n0,1,5,10\n1,1,,\n", "line 3: duration: and iterations are both empty"),
    ("submit[s],gpus,duration[s]\n0,1,5\n1,1\n", "line 3: has 2 fields, the header 3"),
    ("name,submit[s],gpus,duration[s]\na,0,1,5\na,1,1,5\n", "line 3: name: 'a' is also the name on line 2"),
    ("name,submit[s],gpus,duration[s]\n,0,1,5\n", "line 2: name: is empty"),
    ('submit[s],gpus,duration[s]\n0,1,"5\n', "line 2: malformed CSV"),
    ("submit[h],gpus,duration[s]\n1e306,1,5\n", "line 2: submit: = 1e306 h is beyond what a float holds"),
]


@pytest.mark.parametrize(("text", "expect"), BAD, ids=[e for _, e in BAD])
def test_bad_traces_name_the_line_and_column(tmp_path: Path, text: str, expect: str) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        read_trace(path)
    assert str(caught.value).startswith(f"{path}: ") and expect in str(caught.value)


def test_bad_bytes_and_missing_files(tmp_path: Path) -> None:
    path = tmp_path / "latin1.csv"
    path.write_bytes("submit[s],gpus,duration[s]\n0,1,5\n# caf\xe9\n".encode("latin-1"))
    with pytest.raises(InputError, match="is not UTF-8"):
        read_trace(path)
    with pytest.raises(InputError, match="cannot read file"):
        read_trace(tmp_path / "missing.csv")


def test_bad_rows_against_the_cluster(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("submit[min],gpus,duration[min],iterations\n0,2,30,\n5,8,40,\n9,16,20,\n")
    trace = read_trace(path)
    with pytest.raises(InputError, match=r"t\.csv: line 3: gpus: = 8 is more than the cluster's 4 GPUs"):
        trace_instance(trace, servers=1, server_gpus=4)
    # the fastest completion of line 3's job: release 5 + 40 slots
    with pytest.raises(ParameterError, match=r"= 44 is too short: the job on line 3 .* before slot 45") as caught:
        trace_instance(trace, servers=4, server_gpus=8, horizon=44)
    assert caught.value.where == "horizon"
    assert trace_instance(trace, servers=4, server_gpus=8, horizon=45).horizon == 45
    # an iteration longer than a slot
    path.write_text("submit[s],gpus,duration[min],iterations\n0,1,30,20\n")
    with pytest.raises(InputError, match=r"line 2: duration: an iteration lasts 1\.5 slots"):
        trace_instance(read_trace(path), servers=1, server_gpus=4)
    # an iteration that fits in a slot alone but could stall under contention: told by its line
    path.write_text("submit[s],gpus,duration[min],iterations\n0,1,30,40\n0,16,95,100\n")
    with pytest.raises(InputError, match=r"line 3: duration: .*could stall"):
        trace_instance(read_trace(path), servers=4, server_gpus=4)
    # durations too long for any whole number of iterations: refused before any cast to integers
    for huge in ("1e15", "1e18", "1e300"):
        path.write_text(f"name,submit[min],gpus,duration[min]\na,0,2,{huge}\n")
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no numpy cast warning on the way
            with pytest.raises(InputError, match=r"line 2: duration: is .* too long for slots of 60 s"):
                trace_instance(read_trace(path), servers=4, server_gpus=8)


@pytest.mark.parametrize(
    ("kwargs", "where"),
    [
        ({"servers": 0}, "servers"),
        ({"servers": 2, "server_gpus": 0}, "server_gpus"),
        ({"servers": 2, "seed": -1}, "seed"),
        ({"servers": 2, "slot": 0.0}, "slot"),
        ({"servers": 2, "slot": float("inf")}, "slot"),
        ({"servers": 2, "horizon": 0}, "horizon"),
        ({"servers": 2, "preset": "nope"}, "preset"),
    ],
)
def test_bad_parameters_name_themselves(kwargs, where: str) -> None:
    with pytest.raises(ParameterError) as caught:
        trace_instance(read_trace(EXAMPLE), **kwargs)
    assert caught.value.where == where


@pytest.mark.parametrize(
    ("text", "seconds"), [("60s", 60.0), ("1min", 60.0), ("0.5 h", 1800.0), ("5MIN", 300.0), ("1e1s", 10.0)]
)
def test_slot_lengths(text: str, seconds: float) -> None:
    assert parse_span(text, "slot") == seconds


@pytest.mark.parametrize(("text", "expect"), [("60", "a number and a unit"), ("2d", "unknown unit"), ("0s", "> 0")])
def test_bad_slot_lengths(text: str, expect: str) -> None:
    with pytest.raises(ParameterError, match=expect):
        parse_span(text, "slot")


@settings(max_examples=150, deadline=None)
@given(traces(), st.data())
def test_a_bad_cell_is_named_by_its_line_and_column(tmp_path_factory, case, data) -> None:
    text, rows, _, _ = case
    lines = text.splitlines()
    header = lines[0].split(",")
    row = data.draw(st.integers(1, len(rows)))  # lines[row] is file line row + 1
    column = data.draw(st.sampled_from(header))
    name = column.split("[")[0]
    whole = name in ("gpus", "iterations")  # 2.5 is a valid time, not a valid count
    bad = data.draw(st.sampled_from(["x", "nan", "-1", "0", "1e999"] + (["2.5"] if whole else [])))
    if name == "submit" and bad in ("-1", "0"):
        bad = "x"  # any finite submit time is valid
    cells = lines[row].split(",")
    cells[header.index(column)] = bad
    lines[row] = ",".join(cells)
    path = tmp_path_factory.mktemp("trace") / "bad.csv"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as caught:
        read_trace(path)
    assert caught.value.where == f"line {row + 1}: {name}" and caught.value.file == str(path)


def test_spreadsheet_habits_are_read(tmp_path: Path) -> None:
    """A byte-order mark, CRLF line ends, upper case and spaces in the header, a row of
    empty fields: the same trace as the plain file."""
    plain, fancy = tmp_path / "plain.csv", tmp_path / "fancy.csv"
    plain.write_text("submit[h],gpus,duration[min]\n0,2,30\n0.5,1,10\n")
    fancy.write_bytes(b"\xef\xbb\xbfSubmit [H], GPUs ,Duration[MIN]\r\n0, 2 ,30\r\n,,\r\n0.5,1,10\r\n")
    a, b = read_trace(plain), read_trace(fancy)
    assert [(r.submit, r.gpus, r.duration) for r in a.rows] == [(r.submit, r.gpus, r.duration) for r in b.rows]
    assert [r.line for r in b.rows] == [2, 4] and b.units == (("submit", "h"), ("duration", "min"))


def test_slotting_tolerates_rounding_only(tmp_path: Path) -> None:
    # 59.99999995 s is below the first minute (the tolerance was 1e-9 and took it as 1 min);
    # 3 min of 1-min slots is 3 slots though 180 / 60 in floats may come out a hair below
    path = tmp_path / "t.csv"
    path.write_text("submit[s],gpus,duration[s]\n0,1,60\n59.99999995,1,60\n180,1,60\n")
    inst = trace_instance(read_trace(path), servers=1, server_gpus=4, slot=60.0)
    assert [job.release for job in inst.jobs] == [0, 0, 3]
