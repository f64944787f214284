"""``rar-opt generate`` says on stderr when no schedule is known to fit the instance's
horizon: a note when a lower bound is already past T, a warning when the bound fits but the
default schedule (SJF-BCO) ends after T. Either way the instance is written and the exit is 0."""

from __future__ import annotations

from pathlib import Path

import pytest

from rar_opt.cli import main
from rar_opt.instance import Instance


def _generate(tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    out = tmp_path / "g.json"
    assert main(["generate", "paper", "--seed", "0", *extra, "-o", str(out)]) == 0
    assert Instance.read(out).horizon == 1200  # written whatever the note says
    return capsys.readouterr().err


def test_a_default_schedule_past_the_horizon_is_told(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # 3 GPUs per server: the best lower bound is 1198 <= T = 1200, but SJF-BCO ends at 1445, and
    # generate said nothing, so that a solve finding no schedule came as a surprise
    err = _generate(tmp_path, capsys, "--server-gpus", "3")
    assert err == (
        "warning: no schedule of paper-160x20-s0-g3 is known to fit its horizon T = 1200: SJF-BCO's "
        "(the default schedule) ends at slot 1445, although the best lower bound, 1198, is within T; "
        "solve may find no schedule (more servers or fewer jobs would help)\n"
    )


def test_a_bound_past_the_horizon_gets_the_note_alone(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = _generate(tmp_path, capsys, "--server-gpus", "2")
    assert err.startswith("note: no schedule of paper-160x20-s0-g2 fits its horizon: it needs at least 1796 slots")
    assert "warning" not in err and err.count("\n") == 1


def test_an_instance_whose_default_schedule_fits_gets_no_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _generate(tmp_path, capsys) == ""
    assert _generate(tmp_path, capsys, "--server-gpus", "4") == ""  # SJF-BCO ends at 1022
