"""The models/ catalogue: every spec loads, builds, exports and reaches the known optimum;
every option of every formulation reaches the built model (the command line's side of
specs and options is in tests/cli/test_specs.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rar_opt import InputError, Instance
from rar_opt.models import ModelSpec, build_model, export_model
from rar_opt.solvers import Status, solve

from .helpers import MODELS

SPECS = sorted(MODELS.glob("*.json"))


def instance_for(formulation: str, request: pytest.FixtureRequest) -> Instance:
    """wait-beats-start (identical jobs, so symmetry rows exist), except for the enumerative
    model, which lists every schedule: tiny-3x2-s12 (T = 5) keeps that short."""
    return request.getfixturevalue("tiny_3x2_s12" if formulation == "enumerative" else "wait_beats_start")


@pytest.mark.parametrize("path", SPECS, ids=lambda p: p.stem)
def test_every_spec_builds_and_exports(path: Path, tmp_path, request: pytest.FixtureRequest) -> None:
    spec = ModelSpec.read(path)
    inst = instance_for(spec.formulation, request)
    model = build_model(spec, inst)
    assert model.name and spec.doc
    fmt = "nl" if spec.formulation == "nonconvex" else "lp"
    size = export_model(spec, inst, tmp_path / f"m.{fmt}", fmt)
    assert size["variables"] > 0 and size["constraints"] > 0
    assert [p.name for p in tmp_path.iterdir()] == [f"m.{fmt}"]


@pytest.mark.parametrize(
    ("name", "objective"),
    [("compact-makespan", 6), ("compact-plain", 6), ("enumerative", 6), ("compact-total", 9)],
)
def test_specs_reach_the_optimum(name: str, objective: int, wait_beats_start: Instance) -> None:
    # makespan 6: one job after the other (the recorded optimum); total 3 + 6 = 9 the same
    # way, against 16 for both at once and 10 for the best overlap (4 + 6)
    spec = ModelSpec.read(MODELS / f"{name}.json")
    res = solve(wait_beats_start, spec.formulation, warm_start="ls", **spec.options)
    assert res.status == Status.OPTIMAL and round(res.objective) == objective
    assert res.makespan == wait_beats_start.meta["known_optimum"] == 6


def test_bad_specs_are_named(tmp_path) -> None:
    bad = {
        "format": "rar-opt/model",
        "version": 1,
        "name": "x",
        "formulation": "compact",
        "options": {"objectiv": "makespan"},
    }
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    with pytest.raises(
        InputError, match=r"bad.json: options.objectiv: the compact formulation does not take .objectiv."
    ):
        ModelSpec.read(tmp_path / "bad.json")
    bad["options"] = {"symmetry": 1}
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    with pytest.raises(InputError, match=r"options\.symmetry"):
        ModelSpec.read(tmp_path / "bad.json")


# -- every option of every formulation reaches the model, from a spec and from solve() ----
def _has(name: str):
    return lambda m: hasattr(m, name)


def _total_objective(m) -> bool:
    return m.obj.expr is not m.makespan


# (formulation, option, value, what the built model must show); the horizon option is
# given as an offset below T. A test below asserts that this table covers every option.
OPTION_EFFECTS = [
    ("compact", "objective", "total", _total_objective),
    ("compact", "symmetry", False, lambda m: not hasattr(m, "identical_jobs")),
    ("compact", "cuts", True, _has("earliest_done")),
    ("compact", "horizon", -1, lambda m: len(m.T) == m.rar.horizon),
    ("compact", "started", "cumulative", _has("started")),
    ("compact", "linearization", "onehot", _has("e")),
    ("compact", "relaxation", "preemptive", lambda m: not hasattr(m, "active_until_done")),
    ("gdp", "transformation", "hull", _has("_pyomo_gdp_hull_reformulation")),
    ("gdp", "objective", "lexicographic", lambda m: "lexicographic_multiplier" in m.rar.extra),
    ("gdp", "symmetry", False, lambda m: not hasattr(m, "identical_jobs")),
    ("gdp", "horizon", -1, lambda m: len(m.T) == m.rar.horizon),
    ("enumerative", "objective", "total", _total_objective),
    ("enumerative", "horizon", -1, lambda m: int(m.rar.extra["enumerated"].completion.max()) <= m.rar.horizon),
    ("nonconvex", "horizon", -1, lambda m: len(m.T) == m.rar.horizon),
    ("cpsat", "horizon", -1, lambda m: max(m.makespan.proto.domain) == m.rar.horizon),
]
REFUSALS = [  # options whose effect is a refusal past a size
    ("compact", "max_cells", 10, "job-server-slot cells"),
    ("gdp", "max_cells", 10, "job-server-slot cells"),
    ("enumerative", "limit", 1, "limit 1 schedules"),
    ("cpsat", "max_cells", 1, "split-job x server x slot cells"),
]


def test_the_effect_table_covers_every_option() -> None:
    from rar_opt.formulations import FORMULATIONS

    declared = {(f.name, o) for f in FORMULATIONS.values() for o in f.option_names()}
    covered = {(f, o) for f, o, *_ in OPTION_EFFECTS + REFUSALS}
    assert declared == covered


@pytest.mark.parametrize("form,option,value,shows", OPTION_EFFECTS, ids=lambda v: str(v)[:20])
def test_a_spec_option_reaches_the_built_model(form: str, option: str, value, shows, request) -> None:
    inst = instance_for(form, request)
    if option == "horizon":
        value = inst.horizon + value
    model = build_model(ModelSpec("t", form, {option: value}), inst)
    assert shows(model)
    assert getattr(model.rar.options, option) == value
    default = build_model(ModelSpec("t", form, {}), inst)
    if option == "horizon":  # the default models all T slots
        assert model.rar.horizon == value < default.rar.horizon == inst.horizon
    else:
        assert not shows(default)  # the option changed something


@pytest.mark.parametrize("form,option,value,message", REFUSALS)
def test_size_options_refuse(form: str, option: str, value, message: str, request) -> None:
    with pytest.raises(InputError, match=message):
        build_model(ModelSpec("t", form, {option: value}), instance_for(form, request))


def test_solve_takes_a_spec_horizon(wait_beats_start: Instance) -> None:
    opt = wait_beats_start.meta["known_optimum"]
    res = solve(wait_beats_start, "compact", horizon=opt)
    assert res.options["horizon"] == opt and res.makespan == opt
    assert solve(wait_beats_start, "compact", horizon=opt - 1).status == Status.INFEASIBLE  # one slot short


def test_an_option_the_formulation_does_not_take_is_refused(wait_beats_start: Instance) -> None:
    with pytest.raises(InputError, match="the nonconvex formulation does not take 'objective'"):
        solve(wait_beats_start, "nonconvex", objective="total")
