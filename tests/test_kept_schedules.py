"""The schedules kept from long searches (``benchmarks/results/schedules/``), which the JCT
table cites as best known (docs/bounds-table.md): each is a schedule of the instance its
name gives (the paper generator, rebuilt here), passes the checker, and its total
completion time is never below the flow LP's certified bound, so the gap the docs quote
is (sum - bound) / bound >= 0 and was recomputed from the files, not copied."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rar_opt import Schedule, check
from rar_opt.instances.generate import generate
from rar_opt.solvers.flowlp import flow_lp_bound

KEPT = Path(__file__).resolve().parent.parent / "benchmarks" / "results" / "schedules"
PRESETS = {"": "paper-literal", "split15": "paper-split15", "heavy": "contention-heavy"}
NAME = re.compile(r"^paper-(\d+)x(\d+)-s(\d+)(?:-(split15|heavy))?-jct\.schedule\.json$")
FILES = sorted(KEPT.glob("*-jct.schedule.json"))


def test_there_are_kept_schedules_and_every_name_is_understood() -> None:
    assert FILES, f"no kept schedule in {KEPT}"
    assert all(NAME.match(f.name) for f in FILES), [f.name for f in FILES if not NAME.match(f.name)]


@pytest.mark.parametrize("path", FILES, ids=[f.name for f in FILES])
def test_a_kept_schedule_is_feasible_and_above_the_bound(path: Path) -> None:
    jobs, servers, seed, preset = NAME.match(path.name).groups()  # type: ignore[union-attr]
    inst = generate("paper", int(seed), jobs=int(jobs), servers=int(servers), preset=PRESETS[preset or ""])
    schedule = Schedule.read(path)
    assert schedule.instance == inst.name
    report = check(inst, schedule)
    assert report.feasible and report.result.all_complete, report.violations[:3]
    total = int(report.result.completion.sum())
    bound = flow_lp_bound(inst, time_limit=60)
    assert bound.proven  # the LP's optimum at this size, well within its limit
    assert total >= bound.total
    assert (total - bound.total) / bound.total < 0.02  # what makes it worth keeping (best known within 2%)
