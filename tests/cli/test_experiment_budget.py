"""``rar-opt experiment -o FILE`` records the budget (worst-case contention + overhead share)
its instances were drawn with, also when ``--budget`` was not given."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rar_opt.cli import main
from rar_opt.cli.sweeps import budget_in_effect
from rar_opt.instances.generate import paper


def _record(tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> dict:
    out = tmp_path / "r.json"
    args = ["experiment", "lambda", "--seeds", "0", "--jobs", "8", "--bound-time-limit", "0", "--quiet"]
    assert main([*args, *extra, "-o", str(out)]) == 0
    capsys.readouterr()
    return json.loads(out.read_text())


def test_the_default_budget_is_recorded(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the record said "budget": null while the instances were drawn with 0.15
    record = _record(tmp_path, capsys)
    assert record["budget"] == 0.15 == paper(0, jobs=8).meta["params"]["budget"]
    assert _record(tmp_path, capsys, "--budget", "0.25")["budget"] == 0.25


def test_a_presets_own_budget_is_recorded() -> None:
    assert budget_in_effect(None, ["contention-heavy"]) == 0.3
    assert budget_in_effect(None, ["paper-literal", "paper-split15"]) == 0.15  # the same share: one number
    assert budget_in_effect(None, ["paper-literal", "contention-heavy"]) == {
        "paper-literal": 0.15,
        "contention-heavy": 0.3,
    }
    assert budget_in_effect(0.2, ["paper-literal", "contention-heavy"]) == 0.2  # --budget sets both
