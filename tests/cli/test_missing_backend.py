"""A backend whose package is missing (SCIP without the ``minlp`` extra) is refused before
any work: exit 2 naming the flag and the install command, nothing written, and a study
that would store an "error" row for every instance does not start."""

from __future__ import annotations

import pytest

from rar_opt.cli import main
from rar_opt.errors import InputError


@pytest.fixture
def no_scip(monkeypatch):
    from rar_opt.solvers import scip

    monkeypatch.setattr(scip, "scip_available", lambda: False)


def test_solve_with_a_missing_backend_exits_2_before_work(no_scip, tmp_path, capsys) -> None:
    out = tmp_path / "s.json"
    assert main(["solve", "tiny-2x1-s11", "--formulation", "nonconvex", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "error: --formulation: nonconvex cannot be solved on this install" in err and "rar-opt[minlp]" in err
    assert not out.exists()
    assert main(["solve", "tiny-2x1-s11", "--formulation", "compact", "--backend", "scip"]) == 2
    assert "error: --backend:" in capsys.readouterr().err


def test_a_study_with_a_missing_backend_does_not_start(no_scip, tmp_path, capsys) -> None:
    from rar_opt.studies.run import StudyConfig

    with pytest.raises(InputError, match="minlp"):
        StudyConfig(family="tiny", seed=5, policies=("sjf-bco",), time_limit=5, method="nonconvex")
    store = tmp_path / "s.db"
    argv = ["study", "run", str(store), "--family", "tiny", "--count", "2", "--method", "nonconvex"]
    assert main([*argv, "--time-limit", "5", "--policies", "sjf-bco"]) == 2
    assert "error: --method: nonconvex cannot be solved on this install" in capsys.readouterr().err
    assert not store.exists()


def test_the_library_solve_keeps_its_error_status(no_scip) -> None:
    # the API does not raise for it: the result says why (tests/solvers/test_solve.py too)
    from rar_opt.solvers.solve import missing_backend

    assert missing_backend("nonconvex") is not None and missing_backend("auto") is None
    assert missing_backend("compact") is None and missing_backend("compact", "scip") is not None


def test_pictures_without_matplotlib_are_refused_before_any_work(monkeypatch, tmp_path, capsys) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))
    folder = tmp_path / "figs"
    assert main(["study", "report", str(tmp_path / "none.db"), "--plots", str(folder)]) == 2
    assert "error: --plots: pictures need matplotlib" in capsys.readouterr().err
    assert not folder.exists()
    assert main(["plot", "tiny-2x1-s11", str(tmp_path / "s.json"), "-o", str(tmp_path / "p.png")]) == 2
    assert "rar-opt[plot]" in capsys.readouterr().err


def test_variants_refuse_a_model_whose_backend_is_missing_with_the_reason(no_scip) -> None:
    from rar_opt import Instance
    from rar_opt.formulations.specs import ModelSpec
    from rar_opt.instances.library import instance_path, model_path
    from rar_opt.studies.variants import REFUSED, measure

    row = measure(ModelSpec.read(model_path("nonconvex")), Instance.read(instance_path("tiny-2x1-s11")), time_limit=5)
    assert row.status == REFUSED and "rar-opt[minlp]" in (row.message or "")
