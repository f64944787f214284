"""Model specs and formulation options on the command line (solve --model/--option, export)."""

from __future__ import annotations

import json

import pytest

from ..helpers import INSTANCES, MODELS, run

WAIT = INSTANCES / "wait-beats-start.json"
OPT = 6  # wait-beats-start's proven optimum


def test_export_refuses_lp_for_the_nonconvex_model(tmp_path) -> None:
    out = run(
        "export", str(WAIT), "--model", str(MODELS / "nonconvex.json"), "--format", "lp", "-o", str(tmp_path / "x.lp")
    )
    assert out.returncode == 2 and "use nl" in out.stderr and not (tmp_path / "x.lp").exists()


def test_solve_takes_a_spec_horizon_and_an_option(tmp_path) -> None:
    spec = {"format": "rar-opt/model", "version": 1, "name": "h", "formulation": "compact", "options": {}}
    spec["options"] = {"horizon": OPT - 1}  # one slot short of the optimum: proven infeasible
    (tmp_path / "h.json").write_text(json.dumps(spec))
    out = run("solve", str(WAIT), "--model", str(tmp_path / "h.json"), "--json")
    assert out.returncode == 2 and f"horizon {OPT - 1}" in out.stderr
    out = run("solve", str(WAIT), "--option", f"horizon={OPT}", "--json")
    assert out.returncode == 0
    data = json.loads(out.stdout)
    assert data["options"]["horizon"] == OPT and data["makespan"] == OPT


@pytest.mark.parametrize(
    "options,field",
    [
        ({"horizon": 10_000}, "options.horizon: = 10000 exceeds the instance's horizon"),
        ({"horizon": 0}, "options.horizon: must be an integer >= 1"),
        ({"objective": "fastest"}, "options.objective: must be one of makespan, total"),
        ({"symmetry": "yes"}, "options.symmetry: must be true or false"),
        ({"max_cells": 2.5}, "options.max_cells: must be an integer"),
        ({"started": "never"}, "options.started: must be one of sum, cumulative"),
        ({"bogus": 1}, "options.bogus: the compact formulation does not take 'bogus'"),
    ],
)
def test_bad_options_exit_2_naming_the_field(options: dict, field: str, tmp_path) -> None:
    spec = {"format": "rar-opt/model", "version": 1, "name": "b", "formulation": "compact", "options": options}
    (tmp_path / "b.json").write_text(json.dumps(spec))
    out = run("solve", str(WAIT), "--model", str(tmp_path / "b.json"))
    assert out.returncode == 2 and field in out.stderr and "b.json" in out.stderr, out.stderr
    ((key, value),) = options.items()
    out = run("solve", str(WAIT), "--option", f"{key}={json.dumps(value)}")
    assert out.returncode == 2 and field in out.stderr, out.stderr


def test_an_option_the_formulation_does_not_take_exits_2() -> None:
    out = run("solve", str(WAIT), "--formulation", "nonconvex", "--objective", "total")
    assert out.returncode == 2 and "options.objective" in out.stderr
