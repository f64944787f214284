"""The sparse placement form of schedule files (issue 21): written by every writer, read
beside the dense form, the same schedule either way."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rar_opt import InputError, Schedule, check, simulate
from rar_opt._placements import SparseRows

from .helpers import OPTIMAL
from .strategies import arbitrary_schedules, instance_and_schedule, tiny_instances


def _dense_dict(schedule: Schedule) -> dict:
    """The first format's dense form of ``schedule`` (version 1), built by hand."""
    data = schedule.to_dict()
    del data["servers"]
    data["version"] = 1
    for item, row in zip(data["jobs"], schedule.placements, strict=True):
        del item["on"]
        item["placement"] = list(row)
    return data


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_sparse_and_dense_files_give_the_same_schedule(data) -> None:
    instance = data.draw(tiny_instances())
    schedule = data.draw(arbitrary_schedules(instance))
    sparse = json.loads(json.dumps(schedule.to_dict()))
    dense = json.loads(json.dumps(_dense_dict(schedule)))
    from_sparse, from_dense = Schedule.from_dict(sparse), Schedule.from_dict(dense)
    assert from_sparse == schedule == from_dense
    assert from_sparse.placements == schedule.placements  # the dense rows, entry by entry
    assert np.array_equal(from_sparse.placement_array, schedule.placement_array)
    assert from_sparse.to_dict() == sparse  # round trip
    assert sparse["version"] == 2 and from_dense.to_dict(dense=True) == dense  # both forms written as read
    # the judges see the same schedule in either form
    a, b = check(instance, from_sparse), check(instance, from_dense)
    assert [str(v) for v in a.violations] == [str(v) for v in b.violations]
    assert np.array_equal(simulate(instance, from_sparse).completion, simulate(instance, from_dense).completion)


@settings(max_examples=40, deadline=None)
@given(instance_and_schedule(feasible=True))
def test_the_sparse_form_lists_exactly_the_nonzero_entries(pair) -> None:
    _, schedule = pair
    data = schedule.to_dict()
    for j, item in enumerate(data["jobs"]):
        row = schedule.placements[j]
        assert item["on"] == [[s, y] for s, y in enumerate(row) if y != 0]
    assert data["servers"] == len(schedule.placements[0])


def test_the_dense_writer_follows_the_first_format() -> None:
    # version 1, no 'servers', a 'placement' of S entries per job: what readers of the
    # first format expect (docs/formats.md section 3)
    schedule = Schedule(instance="x", starts=(0, 1), placements=((1, 0, 0), (0, 2, 1)), gpu_ids=None)
    data = schedule.to_dict(dense=True)
    assert data == {
        "format": "rar-opt/schedule",
        "version": 1,
        "instance": "x",
        "jobs": [{"job": 0, "start": 0, "placement": [1, 0, 0]}, {"job": 1, "start": 1, "placement": [0, 2, 1]}],
        "meta": {},
    }


def test_sparse_files_of_version_1_still_read() -> None:
    # rar-opt wrote the sparse form as version 1 before version 2 existed
    data = Schedule(instance="x", starts=(0, 1), placements=((1, 0), (0, 2))).to_dict()
    data["version"] = 1
    assert Schedule.from_dict(data).placements == ((1, 0), (0, 2))


def test_old_dense_files_still_read() -> None:
    for path in sorted(OPTIMAL.glob("*.schedule.json"))[:5]:
        assert "placement" in json.loads(path.read_text())["jobs"][0]
        schedule = Schedule.read(path)
        again = Schedule.from_dict(schedule.to_dict())
        assert again == schedule and again.placements == schedule.placements


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (lambda d: d["jobs"][0].__setitem__("on", [[5, 1]]), r"jobs\[0\]\.on\[0\]\[0\]"),  # beyond S
        (lambda d: d["jobs"][0].__setitem__("on", [[0, 1], [0, 2]]), r"jobs\[0\]\.on.*server 0 twice"),
        (lambda d: d["jobs"][0].__setitem__("on", [[0]]), r"jobs\[0\]\.on\[0\]"),
        (lambda d: d["jobs"][0].__setitem__("on", [[0, 1.5]]), r"jobs\[0\]\.on\[0\]\[1\]"),
        (lambda d: d.__delitem__("servers"), r"servers: version 2 is the sparse form and needs 'servers'"),
        (lambda d: (d.__delitem__("servers"), d.__setitem__("version", 1)), r"jobs\[0\]\.on.*no 'servers'"),
        (lambda d: d.__setitem__("version", 3), r"version: unsupported version 3 .*reads version 1 and 2"),
        (lambda d: d.__setitem__("servers", 0), r"servers"),
    ],
)
def test_bad_sparse_entries_are_named(change, where: str) -> None:
    data = Schedule(instance="x", starts=(0, 1), placements=((1, 0), (0, 2))).to_dict()
    change(data)
    with pytest.raises(InputError, match=where):
        Schedule.from_dict(data)


def test_sparse_rows_behave_like_the_dense_tuples() -> None:
    dense = np.array([[0, 2, 0], [1, 0, -1]])
    rows = SparseRows.from_dense(dense)
    assert rows == ((0, 2, 0), (1, 0, -1)) and rows == ((0, 2, 0), (1, 0, -1))
    assert rows[1] == (1, 0, -1) and rows[-1] == (1, 0, -1) and list(rows) == [(0, 2, 0), (1, 0, -1)]
    assert np.array_equal(rows.dense(), dense) and len(rows) == 2
    with pytest.raises(IndexError):
        rows[2]
