"""Schedules: JSON round trips, structure errors on construction, matching an instance."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rar_opt import InputError, Instance, Schedule

from .strategies import feasible_schedules, tiny_instances


@given(data=st.data())
def test_schedule_json_round_trip(tmp_path_factory, data) -> None:
    inst = data.draw(tiny_instances())
    sched = data.draw(feasible_schedules(inst))
    path = tmp_path_factory.mktemp("rt") / "s.json"
    sched.write(path)
    assert Schedule.read(path) == sched


def test_schedule_mismatch(two_server_contention: Instance) -> None:
    other = Schedule.from_arrays("elsewhere", [0, 0], [[2, 0], [0, 2]])
    with pytest.raises(InputError, match="schedule is for instance 'elsewhere'"):
        other.require_matches(two_server_contention)
    wide = Schedule.from_arrays(two_server_contention.name, [0, 0], [[2, 0, 0], [0, 2, 0]])
    with pytest.raises(InputError, match=r"^servers: is 3, the instance has 2 servers"):
        wide.require_matches(two_server_contention)  # compressed rows: their width, given once
    rows = Schedule(two_server_contention.name, (0, 0), ((2, 0, 0), (0, 2, 0)))
    with pytest.raises(InputError, match=r"^jobs\[0\]\.placement: has 3 entries, the instance has 2 servers"):
        rows.require_matches(two_server_contention)  # dense rows: a row's length


def test_schedule_structure_errors() -> None:
    with pytest.raises(InputError, match=r"jobs\[1\].placement"):
        Schedule(instance="x", starts=(0, 0), placements=((1, 1), (2,)))
    with pytest.raises(InputError, match=r"jobs\[0\].start"):
        Schedule(instance="x", starts=(0.5,), placements=((1, 1),))  # type: ignore[arg-type]
    with pytest.raises(InputError, match="appears twice"):
        Schedule.from_dict(
            {
                "format": "rar-opt/schedule",
                "version": 1,
                "instance": "x",
                "jobs": [{"job": 0, "start": 0, "placement": [1]}, {"job": 0, "start": 0, "placement": [1]}],
            }
        )


def test_from_arrays_never_rounds() -> None:
    # floats are refused as the constructor refuses them; they were truncated (2.9 -> 2)
    with pytest.raises(InputError, match=r"jobs\[0\]\.start: must be an integer"):
        Schedule.from_arrays("x", [0.7, 2.9], [[2, 0], [0, 2]])
    with pytest.raises(InputError, match=r"placement\[0\]: must be an integer"):
        Schedule.from_arrays("x", [0, 1], np.array([[2.5, 0], [0, 2]]))
    with pytest.raises(InputError, match="start"):
        Schedule.from_arrays("x", [0, float("nan")], [[2, 0], [0, 2]])
    exact = Schedule.from_arrays("x", np.array([0, 1]), np.array([[2, 0], [0, 2]], dtype=object))
    assert exact.starts == (0, 1) and exact.placements == ((2, 0), (0, 2))
