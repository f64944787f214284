"""What ``--json`` records beside the numbers: every option that changes them (compare's
seed and time limits)."""

from __future__ import annotations

import json

import pytest


def _json(capsys, *args: str) -> dict:
    from rar_opt.cli import main

    code = main([*args, "--json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out)


@pytest.mark.parametrize("seed", [0, 5])
def test_compare_records_its_seed_and_seconds(seed: int, capsys) -> None:
    data = _json(capsys, "compare", "tiny-4x2-s13", "--policies", "rand", "--seed", str(seed), "--bound-time-limit", "0")
    assert data["seed"] == seed and data["exact"] is False
    assert data["time_limit"] is None and data["bound_time_limit"] is None  # no solve; the cheap bounds only
    assert "provenance" in data


def test_compare_records_the_exact_solves_seconds(capsys) -> None:
    data = _json(capsys, "compare", "tiny-4x2-s13", "--policies", "ff", "--exact", "--time-limit", "7", "--seed", "2")
    assert (data["seed"], data["exact"], data["time_limit"], data["bound_time_limit"]) == (2, True, 7.0, 10.0)


def test_compare_refuses_a_time_limit_without_exact(capsys) -> None:
    from rar_opt.cli import main

    assert main(["compare", "tiny-4x2-s13", "--time-limit", "5"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --time-limit: only --exact solves") and err.count("\n") == 1
