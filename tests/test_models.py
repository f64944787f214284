"""The models/ catalogue: every spec loads, builds, exports, and the exact ones agree."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rar_opt import InputError, Instance
from rar_opt.models import ModelSpec, build_model, export_model
from rar_opt.solvers import Status, solve

from .test_cli import run

ROOT = Path(__file__).resolve().parent.parent
SPECS = sorted((ROOT / "models").glob("*.json"))
INSTANCE = ROOT / "instances" / "wait-beats-start.json"


@pytest.mark.parametrize("path", SPECS, ids=lambda p: p.stem)
def test_every_spec_builds_and_exports(path: Path, tmp_path) -> None:
    spec = ModelSpec.read(path)
    inst = Instance.read(INSTANCE)
    model = build_model(spec, inst)
    assert model.name and spec.doc
    fmt = "nl" if spec.formulation == "nonconvex" else "lp"
    size = export_model(spec, inst, tmp_path / f"m.{fmt}", fmt)
    assert size["variables"] > 0 and size["constraints"] > 0
    assert [p.name for p in tmp_path.iterdir()] == [f"m.{fmt}"]


@pytest.mark.parametrize("name", ["compact-makespan", "compact-plain", "enumerative"])
def test_makespan_specs_reach_the_recorded_optimum(name: str) -> None:
    inst = Instance.read(INSTANCE)
    spec = ModelSpec.read(ROOT / "models" / f"{name}.json")
    res = solve(inst, spec.formulation, warm_start="ls", **spec.options)
    assert res.status == Status.OPTIMAL and res.makespan == inst.meta["known_optimum"]


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
    out = run(
        "export",
        str(INSTANCE),
        "--model",
        str(ROOT / "models" / "nonconvex.json"),
        "--format",
        "lp",
        "-o",
        str(tmp_path / "x.lp"),
    )
    assert out.returncode == 2 and "use nl" in out.stderr and not (tmp_path / "x.lp").exists()


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
    ("compact", "started", "cumulative", _has("started_def")),
    ("enumerative", "objective", "total", _total_objective),
    ("enumerative", "horizon", -1, lambda m: int(m.rar.extra["enumerated"].completion.max()) <= m.rar.horizon),
    ("nonconvex", "horizon", -1, lambda m: len(m.T) == m.rar.horizon),
]
REFUSALS = [  # options whose effect is a refusal past a size
    ("compact", "max_cells", 10, "job-server-slot cells"),
    ("enumerative", "limit", 1, "limit 1 schedules"),
]


def test_the_effect_table_covers_every_option() -> None:
    from rar_opt.formulations import FORMULATIONS

    declared = {(f.name, o) for f in FORMULATIONS.values() for o in f.option_names()}
    covered = {(f, o) for f, o, *_ in OPTION_EFFECTS + REFUSALS}
    assert declared == covered


@pytest.mark.parametrize("form,option,value,shows", OPTION_EFFECTS, ids=lambda v: str(v)[:20])
def test_a_spec_option_reaches_the_built_model(form: str, option: str, value, shows) -> None:
    inst = Instance.read(INSTANCE)
    if option == "horizon":
        value = inst.horizon + value
    model = build_model(ModelSpec("t", form, {option: value}), inst)
    assert shows(model)
    assert getattr(model.rar.options, option) == value
    default = build_model(ModelSpec("t", form, {}), inst)
    assert option == "horizon" or not shows(default)  # the option changed something


@pytest.mark.parametrize("form,option,value,message", REFUSALS)
def test_size_options_refuse(form: str, option: str, value, message: str) -> None:
    with pytest.raises(InputError, match=message):
        build_model(ModelSpec("t", form, {option: value}), Instance.read(INSTANCE))


def test_solve_and_the_cli_take_a_spec_horizon(tmp_path) -> None:
    inst = Instance.read(INSTANCE)
    opt = inst.meta["known_optimum"]
    assert solve(inst, "compact", horizon=opt).options["horizon"] == opt
    spec = {"format": "rar-opt/model", "version": 1, "name": "h", "formulation": "compact", "options": {}}
    spec["options"] = {"horizon": opt - 1}  # one slot short of the optimum: proven infeasible
    (tmp_path / "h.json").write_text(json.dumps(spec))
    out = run("solve", str(INSTANCE), "--model", str(tmp_path / "h.json"), "--json")
    assert out.returncode == 2 and f"horizon {opt - 1}" in out.stderr
    out = run("solve", str(INSTANCE), "--option", f"horizon={opt}", "--json")
    assert out.returncode == 0 and json.loads(out.stdout)["options"]["horizon"] == opt


@pytest.mark.parametrize(
    "options,field",
    [
        ({"horizon": 10_000}, "options.horizon: = 10000 exceeds the instance's horizon"),
        ({"horizon": 0}, "options.horizon: must be an integer >= 1"),
        ({"objective": "fastest"}, "options.objective: must be one of makespan, total"),
        ({"symmetry": "yes"}, "options.symmetry: must be true or false"),
        ({"max_cells": 2.5}, "options.max_cells: must be an integer"),
        ({"bogus": 1}, "options.bogus: the compact formulation does not take 'bogus'"),
    ],
)
def test_bad_options_exit_2_naming_the_field(options: dict, field: str, tmp_path) -> None:
    spec = {"format": "rar-opt/model", "version": 1, "name": "b", "formulation": "compact", "options": options}
    (tmp_path / "b.json").write_text(json.dumps(spec))
    out = run("solve", str(INSTANCE), "--model", str(tmp_path / "b.json"))
    assert out.returncode == 2 and field in out.stderr and "b.json" in out.stderr, out.stderr
    ((key, value),) = options.items()
    out = run("solve", str(INSTANCE), "--option", f"{key}={json.dumps(value)}")
    assert out.returncode == 2 and field in out.stderr, out.stderr


def test_an_option_the_formulation_does_not_take_is_refused() -> None:
    with pytest.raises(InputError, match="the nonconvex formulation does not take 'objective'"):
        solve(Instance.read(INSTANCE), "nonconvex", objective="total")
    out = run("solve", str(INSTANCE), "--formulation", "nonconvex", "--objective", "total")
    assert out.returncode == 2 and "options.objective" in out.stderr
