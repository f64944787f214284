"""The models/ catalogue: every spec loads, builds, exports and reaches the known optimum;
every option of every formulation reaches the built model (the command line's side of
specs and options is in tests/cli/test_specs.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rar_opt import InputError, Instance
from rar_opt.formulations.specs import ModelSpec, build_model, export_model
from rar_opt.solvers import Status, solve

from .helpers import MODELS, ROOT

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
    assert model.rar.instance == inst.name and len(spec.doc) > 40  # the doc says what it is for
    if spec.relaxation == "contention-free" or spec.formulation == "cpsat":  # CP-SAT models: no LP, MPS or GAMS
        with pytest.raises(InputError, match="CP-SAT model"):
            export_model(spec, inst, tmp_path / "m.lp", "lp")
        assert list(tmp_path.iterdir()) == []
        return
    fmt = "nl" if spec.formulation == "nonconvex" else "lp"
    size = export_model(spec, inst, tmp_path / f"m.{fmt}", fmt)
    assert size["variables"] > 0 and size["constraints"] > 0
    assert [p.name for p in tmp_path.iterdir()] == [f"m.{fmt}"]


def test_the_catalogue_covers_every_axis_value() -> None:
    from rar_opt.formulations import compact, gdp
    from rar_opt.formulations.base import RELAXATIONS, RICH_OBJECTIVES

    variants = [ModelSpec.read(p).variant() for p in SPECS]
    assert {v["objective"] for v in variants if "objective" in v} >= set(RICH_OBJECTIVES)
    assert {v["linearization"] for v in variants if "linearization" in v} >= set(compact.LINEARIZATIONS)
    assert {v["transformation"] for v in variants if "transformation" in v} == set(gdp.TRANSFORMATIONS)
    assert {v["relaxation"] for v in variants if "relaxation" in v} == set(RELAXATIONS)


def _catalogue_rows(doc: str, heading: str) -> list[str]:
    """The first cells of the table that follows ``heading`` in ``doc`` (docs/), one per row."""
    text = (ROOT / "docs" / doc).read_text()
    after = text[text.index(heading) :].splitlines()
    start = next(i for i, line in enumerate(after) if line.startswith("|"))
    rows = []
    for line in after[start + 2 :]:  # past the header and the rule
        if not line.startswith("|"):
            break
        rows.append(line.split("|")[1])
    return rows


@pytest.mark.parametrize(
    ("doc", "heading", "name"),
    [
        ("formats.md", "The catalogue in `models/`", lambda p: p.name),
        ("variants.md", "## The catalogue (`models/`)", lambda p: p.stem),
    ],
    ids=["formats", "variants"],
)
def test_the_catalogue_tables_list_every_spec(doc: str, heading: str, name) -> None:
    listed = [n for cell in _catalogue_rows(doc, heading) for n in re.findall(r"`([^`]+)`", cell)]
    assert sorted(listed) == sorted(name(p) for p in SPECS)  # each file once, and no file that is gone


@pytest.mark.parametrize("fmt,comment", [("lp", "\\ "), ("mps", "* "), ("gms", "* ")])
def test_an_export_records_the_variant_in_its_header(fmt: str, comment: str, tmp_path, tiny_3x2_s12) -> None:
    spec = ModelSpec.read(MODELS / "relax-lp.json")
    export_model(spec, tiny_3x2_s12, tmp_path / f"m.{fmt}", fmt)
    lines = (tmp_path / f"m.{fmt}").read_text().splitlines()
    assert lines[0] == f"{comment}rar-opt model spec 'relax-lp': {spec.doc}"
    variant = json.loads(lines[1].removeprefix(f"{comment}variant: "))
    assert variant == {**spec.variant()} and variant["relaxation"] == "lp"
    assert lines[2].startswith(f"{comment}relaxation: lp (its optimum is a lower bound")
    assert any(line.startswith(f"{comment}versions: ") and '"pyomo"' in line for line in lines[:6])


def test_a_top_level_relaxation_is_the_option(tmp_path) -> None:
    spec = {"format": "rar-opt/model", "version": 1, "name": "r", "formulation": "compact", "relaxation": "lp"}
    (tmp_path / "r.json").write_text(json.dumps(spec))
    assert ModelSpec.read(tmp_path / "r.json").options == {"relaxation": "lp"}
    spec["options"] = {"relaxation": "preemptive"}
    (tmp_path / "r.json").write_text(json.dumps(spec))
    with pytest.raises(InputError, match=r"r.json: relaxation: contradicts options.relaxation"):
        ModelSpec.read(tmp_path / "r.json")
    spec = {**spec, "formulation": "enumerative", "options": {}}
    (tmp_path / "r.json").write_text(json.dumps(spec))
    with pytest.raises(InputError, match=r"options.relaxation: the enumerative formulation does not take"):
        ModelSpec.read(tmp_path / "r.json")


@pytest.mark.parametrize(
    ("name", "objective"),
    [
        ("compact-makespan", 6),
        ("compact-plain", 6),
        ("enumerative", 6),
        ("compact-total", 9),
        ("compact-weighted", 9),  # weights 1: the total
        ("compact-lexicographic", 41 * 6 + 9),  # M = J T + 1 = 41, then makespan 6 and total 9
        ("compact-onehot", 6),
        ("gdp-bigm", 6),
        ("gdp-hull", 6),
        ("gdp-mbigm", 6),
    ],
)
def test_specs_reach_the_optimum(name: str, objective: int, wait_beats_start: Instance) -> None:
    # makespan 6: one job after the other (the recorded optimum); total 3 + 6 = 9 the same
    # way, against 16 for both at once and 10 for the best overlap (4 + 6)
    spec = ModelSpec.read(MODELS / f"{name}.json")
    res = solve(wait_beats_start, spec.formulation, warm_start="ls", **spec.options)
    assert res.status == Status.OPTIMAL and round(res.objective) == objective, res.message
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


@pytest.mark.parametrize("name", ["", "   "])
def test_a_spec_without_a_name_is_refused(name: str, tmp_path) -> None:
    spec = {"format": "rar-opt/model", "version": 1, "name": name, "formulation": "compact"}
    (tmp_path / "anon.json").write_text(json.dumps(spec))
    with pytest.raises(InputError, match=r"anon.json: name: must name the variant, got an empty or blank name"):
        ModelSpec.read(tmp_path / "anon.json")


@pytest.mark.parametrize("fmt,comment", [("lp", "\\ "), ("mps", "* "), ("gms", "* ")])
def test_a_doc_of_several_lines_stays_a_comment(fmt: str, comment: str, tmp_path, tiny_3x2_s12) -> None:
    # every header line starts as a comment, so the file reads as the model alone
    spec = ModelSpec("two-lines", "compact", {"relaxation": "lp"}, "first line\nsecond line\r\nthird")
    export_model(spec, tiny_3x2_s12, tmp_path / f"m.{fmt}", fmt)
    text = (tmp_path / f"m.{fmt}").read_text()
    assert f"{comment}second line\n{comment}third\n" in text
    head = text.split("versions: ")[0].splitlines()
    assert all(line.startswith(comment) for line in head)


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
    ("cpsat", "symmetry", False, lambda m: m.rar.extra["symmetry_rows"] == 0),
    ("cpsat", "objective", "total", lambda m: len(m.model.proto.objective.vars) == len(m.end)),
    ("cpsat", "pricing", True, lambda m: m.rar.extra["pricing_pairs"] > 0),
    (
        "cpsat",
        "server_intervals",
        True,
        lambda m: any(c.has_interval() and c.name[:1] in ("W", "P") for c in m.model.proto.constraints),
    ),
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


def test_weights_round_trip_and_bad_weights_are_named(tiny_3x2_s12: Instance) -> None:
    import dataclasses

    data = tiny_3x2_s12.to_dict()
    assert all("weight" not in job for job in data["jobs"])  # files without weights stay as they are
    heavy = dataclasses.replace(
        tiny_3x2_s12, jobs=(dataclasses.replace(tiny_3x2_s12.jobs[0], weight=2.5), *tiny_3x2_s12.jobs[1:])
    )
    again = Instance.from_dict(heavy.to_dict())
    assert again.jobs[0].weight == 2.5 and again.to_dict()["jobs"][0]["weight"] == 2.5 and again == heavy
    for bad, message in [
        (-1, "must be above 0"),
        (0, "must be above 0"),
        ("heavy", "must be a number"),
        (True, "must be a number"),
    ]:
        data = heavy.to_dict()
        data["jobs"][1]["weight"] = bad
        with pytest.raises(InputError, match=rf"jobs\[1\]\.weight: .*{message}"):
            Instance.from_dict(data)


def test_export_counts_what_the_lp_file_holds(tmp_path) -> None:
    """export's ``variables`` are the Pyomo model's, fixed ones included (as HiGHS gets them
    from solve); the LP file leaves the fixed ones out (docs/formats.md, "Model sizes")."""
    import highspy

    from rar_opt import Instance
    from rar_opt.formulations.specs import ModelSpec, export_model
    from rar_opt.instances.library import instance_path, model_path

    inst = Instance.read(instance_path("wait-beats-start-plus"))
    size = export_model(ModelSpec.read(model_path("compact-makespan")), inst, tmp_path / "m.lp", "lp")
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.readModel(str(tmp_path / "m.lp"))
    assert size["fixed_variables"] > 0
    assert (
        size["variables"] - size["fixed_variables"] <= h.getNumCol() <= size["variables"] - size["fixed_variables"] + 1
    )
    assert h.getNumRow() == size["constraints"]
