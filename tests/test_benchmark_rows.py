"""The goal-row loop of the sum benchmarks (benchmarks/neighbourhood_steps.py) solves with
the seed it is given, not the instance's: a results file that says seed 1 ran seed 1."""

from __future__ import annotations

from typing import Any

import pytest


class _Asked(Exception):
    """Raised by the stand-in solver once it has seen the seed."""


@pytest.mark.parametrize("seed", [0, 1, 5])
@pytest.mark.usefixtures("benchmark_scripts")
def test_solved_rows_solve_with_the_seed_asked(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    import neighbourhood_steps

    from rar_opt import solvers

    asked: list[Any] = []

    def fake_solve(inst: Any, method: str, **options: Any) -> Any:
        asked.append(options["seed"])
        raise _Asked  # one call is enough: the seed is what is checked

    monkeypatch.setattr(solvers, "solve", fake_solve)
    rows = neighbourhood_steps.solved_rows("paper-160x20-s2-heavy", 1.0, seed)
    with pytest.raises(_Asked):
        next(rows)
    assert asked == [seed]
