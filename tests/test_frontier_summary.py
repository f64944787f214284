"""The per-size table of the frontier benchmark (benchmarks/frontier.py ``--by-size``), which
docs/frontier.md and the README quote: its counts must be the rows' counts."""

from __future__ import annotations

import pytest


def _row(family: str, seed: int, cpsat_seed: int, proven: bool, wall_s: float) -> dict:
    return {
        "size": "24x8x150",
        "family": family,
        "seed": seed,
        "cpsat_seed": cpsat_seed,
        "method": "auto",
        "proven": proven,
        "wall_s": wall_s,
        "makespan": 10,
        "bound": 9.0 if not proven else 10.0,
    }


@pytest.mark.usefixtures("benchmark_scripts")
def test_by_size_counts_runs_seeds_and_instances() -> None:
    import frontier

    rows = [
        _row("tiny", 0, 0, True, 4.0),
        _row("tiny", 0, 1, True, 8.0),
        _row("heavy", 0, 0, True, 30.0),
        _row("heavy", 0, 1, False, 60.0),  # proven with one seed of two: not "every seed"
        _row("tiny", 1, 0, False, 60.0),
        _row("tiny", 1, 1, False, 60.0),
    ]
    lines = frontier.by_size(rows).splitlines()
    assert len(lines) == 3  # header, rule, one size
    cells = [c.strip() for c in lines[2].strip("|").split("|")]
    assert cells[:4] == ["24x8x150", "auto", "3", "3 / 6"]
    assert cells[4] == "2 / 1 (seeds 0-1)"  # seed 0 proves two instances, seed 1 one
    assert cells[5] == "1 of 3"  # only tiny-s0 is proven with both seeds
    assert cells[6] == "30.0 / 8.0"  # over the proven runs 4, 8, 30


@pytest.mark.usefixtures("benchmark_scripts")
def test_the_timed_plan_and_the_seconds_script_keep_the_searches_as_they_were() -> None:
    # auto-timed is the A/B control of the counted searches, and hint_seconds.py measures the
    # seconds' effect: both must still run the searches without counts (docs/exactness.md,
    # "Searches that count their work")
    import frontier
    import hint_seconds

    from rar_opt.solvers.plan import AUTO_LARGE, COUNTED_IMPROVERS, TIMED_IMPROVERS

    timed = frontier.VARIANTS["auto-timed"].for_jobs(24)
    assert timed.fitting_improvers == TIMED_IMPROVERS and timed.fitting_improve_share == 0.1
    assert AUTO_LARGE.fitting_improvers == COUNTED_IMPROVERS
    for name in ("auto-large-backfill", "auto-large-reseed", "auto-large-restrict"):  # measured on the timed plan
        assert frontier.VARIANTS[name].fitting_improvers == TIMED_IMPROVERS
    for _, options in hint_seconds.searches():
        assert "iterations" not in options and "lanes_tries" not in options  # the script passes its own
