"""Model specs and formulation options on the command line (solve --model/--option, export)."""

from __future__ import annotations

import json

import pytest

from rar_opt import Instance

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
    out = run("solve", str(WAIT), "--option", f"{key}={json.dumps(value)}")  # named by the flag that gave it
    # under auto (the default method) an option that nothing takes is refused as auto's
    expected = field.replace("options.", "--option ")
    if key == "bogus":
        expected = "--option bogus: auto takes no option 'bogus'"
    assert out.returncode == 2 and expected in out.stderr, out.stderr
    assert "wait-beats-start" not in out.stderr, out.stderr  # not the instance file's fault


def test_an_option_the_formulation_does_not_take_exits_2() -> None:
    out = run("solve", str(WAIT), "--formulation", "nonconvex", "--objective", "total")
    assert out.returncode == 2 and "error: --objective:" in out.stderr  # the flag that set it


@pytest.mark.parametrize("weight,message", [(-1, "must be above 0"), ("heavy", "must be a number")])
def test_bad_weights_exit_2_naming_the_field(weight, message: str, tmp_path) -> None:
    data = json.loads(WAIT.read_text())
    data["jobs"][1]["weight"] = weight
    (tmp_path / "w.json").write_text(json.dumps(data))
    out = run("solve", str(tmp_path / "w.json"), "--option", "objective=weighted")
    assert out.returncode == 2 and "w.json: jobs[1].weight" in out.stderr and message in out.stderr, out.stderr
    assert "Traceback" not in out.stderr


def test_a_relaxation_spec_is_solved_as_a_bound_never_a_schedule(tmp_path) -> None:
    out = run("solve", str(WAIT), "--model", str(MODELS / "relax-lp.json"), "--json", "-o", str(tmp_path / "s.json"))
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["status"] == "bound" and data["objective"] is None and data["makespan"] is None
    assert data["bound"] <= 6  # wait-beats-start's optimum
    assert not (tmp_path / "s.json").exists()  # no schedule, so no schedule file
    out = run("solve", str(WAIT), "--option", "linearization=binary")
    assert out.returncode == 2 and "--option linearization: must be one of staircase, onehot" in out.stderr


def test_export_writes_gams_with_the_variant_and_refuses_a_cp_model(tmp_path) -> None:
    target = tmp_path / "m.gms"
    out = run("export", str(WAIT), "--model", str(MODELS / "gdp-hull.json"), "--format", "gms", "-o", str(target))
    assert out.returncode == 0, out.stderr
    lines = target.read_text().splitlines()
    head = lines[:4]
    assert head[0].startswith("* rar-opt model spec 'gdp-hull'") and '"transformation": "hull"' in head[1]
    # the header names the code and the instance's data, as schedule files do
    digest = Instance.read(WAIT).data_digest()
    assert any(line.startswith("* written with: ") for line in lines[:10])
    assert f"* instance data sha256: {digest}" in lines[:10]
    out = run(
        "export",
        str(WAIT),
        "--model",
        str(MODELS / "relax-contention-free.json"),
        "--format",
        "mps",
        "-o",
        str(tmp_path / "c.mps"),
    )
    assert out.returncode == 2 and "CP-SAT model" in out.stderr and not (tmp_path / "c.mps").exists()


def test_variants_prints_one_row_per_spec_and_records_versions(tmp_path) -> None:
    folder = tmp_path / "specs"
    folder.mkdir()
    for name in ("compact-makespan", "relax-lp", "relax-contention-free"):
        (folder / f"{name}.json").write_text((MODELS / f"{name}.json").read_text())
    out = run("variants", str(WAIT), "--models", str(folder), "--json", "-o", str(tmp_path / "v.json"))
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert json.loads((tmp_path / "v.json").read_text())["rows"] == data["rows"]
    rows = {r["spec"]: r for r in data["rows"]}
    assert set(rows) == {"compact-makespan", "relax-lp", "relax-contention-free"}
    assert rows["compact-makespan"]["status"] == "optimal" and rows["compact-makespan"]["objective"] == OPT
    for name in ("relax-lp", "relax-contention-free"):
        assert rows[name]["status"] == "bound" and rows[name]["objective"] is None and rows[name]["bound"] <= OPT
    assert data["disagreements"] == [] and "pyomo" in data["versions"] and data["seed"] == 0
    assert data["provenance"]["version"].startswith(data["versions"]["rar-opt"])
    out = run("variants", str(WAIT), "--models", str(tmp_path / "none"))
    assert out.returncode == 2 and "--models" in out.stderr


def test_two_specs_of_one_name_in_a_models_folder_exit_2_naming_both(tmp_path, capsys) -> None:
    from rar_opt.cli import main

    folder = tmp_path / "models"
    folder.mkdir()
    spec = json.loads((MODELS / "compact-makespan.json").read_text())
    (folder / "a.json").write_text(json.dumps(spec))
    spec.setdefault("options", {})["symmetry"] = False  # a tweaked copy that kept its name
    (folder / "b.json").write_text(json.dumps(spec))
    out = tmp_path / "v.json"
    code = main(["variants", "wait-beats-start", "--models", str(folder), "--time-limit", "5", "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and not out.exists()
    assert str(folder / "b.json") in err and str(folder / "a.json") in err and "name" in err


def test_an_export_error_names_the_spec_file_or_the_format_flag(tmp_path, capsys) -> None:
    from rar_opt.cli import main

    spec = json.loads((MODELS / "compact-makespan.json").read_text())
    spec["options"]["horizon"] = 1000  # past tiny-4x2-s13's horizon: the spec's fault
    path = tmp_path / "long.json"
    path.write_text(json.dumps(spec))
    out = tmp_path / "x.lp"
    assert main(["export", "tiny-4x2-s13", "--model", str(path), "--format", "lp", "-o", str(out)]) == 2
    assert capsys.readouterr().err.startswith(f"error: {path}: options.horizon: = 1000 exceeds")
    mps = tmp_path / "x.mps"
    assert main(["export", "tiny-4x2-s13", "--model", "nonconvex", "--format", "mps", "-o", str(mps)]) == 2
    assert capsys.readouterr().err.startswith("error: --format: the nonconvex model has products")
    assert not out.exists() and not mps.exists()


def test_the_weights_scale_is_recorded_by_solve_and_in_the_export_header(tmp_path, capsys) -> None:
    from rar_opt.cli import main

    data = json.loads((INSTANCES / "tiny-4x2-s13.json").read_text())
    weights = [0.5, 1.25, 1 / 3, 2.0]
    for job, w in zip(data["jobs"], weights, strict=True):
        job["weight"] = w
    path = tmp_path / "w.json"
    path.write_text(json.dumps(data))
    assert main(["solve", str(path), "--model", "compact-weighted", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    scale = out["options"]["objective_scale"]
    assert out["model_spec"]["name"] == "compact-weighted"  # which spec the options came from
    assert scale == 12  # the least common denominator of 1/2, 5/4 and 1/3
    weighted = sum(w * c for w, c in zip(weights, out["completion"], strict=True))
    assert out["objective"] == pytest.approx(scale * weighted)  # K sum_j w_j C_j, read back with K
    lp = tmp_path / "w.lp"
    assert main(["export", str(path), "--model", "compact-weighted", "--format", "lp", "-o", str(lp)]) == 0
    assert '\\ objective reading: {"objective_scale": 12}' in lp.read_text().splitlines()[:4]


def test_a_formulation_flag_against_the_spec_names_the_flag_and_the_spec(capsys) -> None:
    from rar_opt.cli import main

    assert main(["solve", "tiny-4x2-s13", "--model", "compact-total", "--formulation", "gdp"]) == 2
    assert capsys.readouterr().err == (
        "error: --formulation: gdp contradicts the spec's formulation 'compact' (compact-total)\n"
    )


def test_a_flag_that_replaces_a_specs_option_says_so(caplog, capsys) -> None:
    from rar_opt.cli import main

    # the spec minimises the total; --objective asks for the makespan: the flag wins, with a warning
    with caplog.at_level("WARNING", logger="rar_opt"):
        assert main(["solve", str(WAIT), "--model", "compact-total", "--objective", "makespan", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["objective"] == OPT and out["options"]["objective"] == "makespan"
    said = [r.getMessage() for r in caplog.records]
    assert said == ['--objective: objective="makespan" replaces the spec\'s objective="total" (compact-total)']
    caplog.clear()
    # a flag that agrees with the spec, or no spec at all, says nothing
    with caplog.at_level("WARNING", logger="rar_opt"):
        assert main(["solve", str(WAIT), "--model", "compact-total", "--objective", "total", "--json"]) == 0
        assert main(["solve", str(WAIT), "--formulation", "compact", "--objective", "total", "--json"]) == 0
    assert not [r for r in caplog.records if "replaces" in r.getMessage()]


def test_a_shortcut_flag_that_replaces_an_option_says_so(caplog, capsys) -> None:
    # `--option objective=makespan --objective total` ran the total without a word (a spec's
    # option replaced by a flag was already said): the flag wins, with the same kind of warning
    from rar_opt.cli import main

    args = ["solve", str(WAIT), "--formulation", "compact", "--json"]
    with caplog.at_level("WARNING", logger="rar_opt"):
        assert main([*args, "--option", "objective=makespan", "--objective", "total"]) == 0
        assert json.loads(capsys.readouterr().out)["options"]["objective"] == "total"
        assert main([*args, "--option", "symmetry=false", "--symmetry"]) == 0
        assert json.loads(capsys.readouterr().out)["options"]["symmetry"] is True
    said = [r.getMessage() for r in caplog.records]
    assert said == [
        '--objective: objective="total" replaces --option objective="makespan"',
        "--symmetry: symmetry=true replaces --option symmetry=false",
    ]
    caplog.clear()
    with caplog.at_level("WARNING", logger="rar_opt"):  # the same value twice: nothing to say
        assert main([*args, "--option", "objective=total", "--objective", "total"]) == 0
    assert not [r for r in caplog.records if "replaces" in r.getMessage()]


def test_a_warning_on_stderr_says_it_is_one() -> None:
    # the command line's log lines: a warning (or worse) carries its level first, as an
    # error line does; -v's progress lines stay bare
    import logging

    from rar_opt.cli import _Said

    def line(level: int) -> str:
        record = logging.LogRecord("rar_opt", level, __file__, 1, "--objective: objective=%s", ('"makespan"',), None)
        return _Said().format(record)

    assert line(logging.WARNING) == 'warning: --objective: objective="makespan"'
    assert line(logging.ERROR) == 'error: --objective: objective="makespan"'
    assert line(logging.INFO) == '--objective: objective="makespan"'
