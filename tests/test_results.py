"""One way to get any result as a dict, as rows and as a DataFrame (rar_opt.results)."""

from __future__ import annotations

import json

import pytest

from rar_opt import Instance, check, run_policy
from rar_opt.errors import ParameterError
from rar_opt.instances.library import instance_path
from rar_opt.results import flatten, to_dict, to_frame, to_rows
from rar_opt.solvers import solve
from rar_opt.studies.compare import compare


@pytest.fixture(scope="module")
def inst() -> Instance:
    return Instance.read(instance_path("tiny-4x2-s13"))


def test_to_dict_is_each_types_own_dict(inst) -> None:
    # the same dict, as plain JSON values (lists where the type's own has tuples)
    def as_json(d: dict) -> dict:
        return json.loads(json.dumps(d))

    run = run_policy(inst, "sjf-bco")
    sim = check(inst, run.schedule).result
    assert to_dict(sim) == as_json(sim.to_dict()) == as_json(sim.summary())  # the old name stays
    assert to_dict(run) == as_json({"policy": "sjf-bco", **run.record()})
    res = solve(inst, time_limit=20)
    assert to_dict(res) == as_json(res.summary())
    comparison = compare(inst, ["sjf-bco", "ff"], bound_time_limit=None)
    assert to_dict(comparison) == as_json(comparison.to_dict())
    with pytest.raises(ParameterError, match=r"^result: is a str"):
        to_dict("makespan 5")


def test_rows_and_frame(inst) -> None:
    runs = [run_policy(inst, p) for p in ("sjf-bco", "ff", "ls")]
    frame = to_frame(runs)
    assert list(frame["policy"]) == ["sjf-bco", "ff", "ls"]
    assert list(frame["theta"]) == [r.theta for r in runs]
    assert "estimator.l" in frame.columns and "estimator" not in frame.columns
    comparison = compare(inst, ["sjf-bco", "ff"], bound_time_limit=None)
    rows = to_rows(comparison)  # one row per policy, the reference repeated
    assert [r["policy"] for r in rows] == [r.policy for r in comparison.rows]
    assert all(r["reference"] == comparison.reference and r["instance"] == inst.name for r in rows)
    assert [r["makespan"] for r in rows] == [r.makespan for r in comparison.rows]


def test_flatten_joins_nested_keys() -> None:
    assert flatten({"a": {"b": 1, "c": {"d": [2]}}, "e": {}}) == {"a.b": 1, "a.c.d": [2], "e": {}}
