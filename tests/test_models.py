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
    res = solve(inst, formulation=spec.formulation, symmetry=spec.options.get("symmetry", True), warm_start="ls")
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
    with pytest.raises(InputError, match=r"bad.json: options.objectiv: unknown option"):
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
