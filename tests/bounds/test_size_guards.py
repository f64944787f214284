"""Solver bounds never build a model beyond their size guard, and their time limit covers the
build (issue 32: ``rar-opt bounds`` at 100 times the paper grew to 23 GB in the relaxation's
build, which its time limit did not cover)."""

from __future__ import annotations

import dataclasses
import json
import sys
import time
import types

import pytest

from rar_opt.bounds import Answer, Ask, Bound, every_bound, lower_bounds, registered
from rar_opt.bounds.registry import NOT_BUILT, entries
from rar_opt.cli import main
from rar_opt.formulations import cfree, flowlp, gpubins
from rar_opt.instance import Instance
from rar_opt.instances.generate import paper
from rar_opt.solvers import relaxation_bound

SOLVER = {b.name for b in entries("makespan", families=("solver",)) if b.flag} | {
    b.name for b in entries("total", families=("solver",)) if b.flag
}


@pytest.fixture(scope="module")
def wide() -> Instance:
    """1,000 jobs on 120 servers (T = 10^5): every solver bound's model is over its guard."""
    return dataclasses.replace(paper(3, jobs=1000, servers=120), horizon=100_000)


def test_every_offered_solver_bound_has_a_size_guard() -> None:
    for objective in ("makespan", "total"):
        for bound in entries(objective, families=("solver",)):
            assert bound.guard or not bound.flag, f"{bound.name} is offered by rar-opt bounds without a size guard"


def test_a_bound_over_its_guard_is_skipped_with_its_note(wide: Instance, monkeypatch: pytest.MonkeyPatch) -> None:
    assert cfree.too_large(wide) and gpubins.too_large(wide) and flowlp.too_large(wide)

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("a model over its size guard was built")

    for module in (cfree, gpubins):  # nothing is built, whatever the time limits
        monkeypatch.setattr(module, "build", never)
    limits = {"relaxation": 600.0, "server_bins": 600.0}
    found = {b.name: b for b in every_bound(wide, time_limits=limits)}
    total = {b.name: b for b in every_bound(wide, objective="total", time_limits={"flow_lp": 600.0})}
    for name, got in {**found, **total}.items():
        if name in SOLVER:
            assert got.value is None and got.note.startswith(NOT_BUILT), (name, got.note)
            assert "limit" in got.note
        else:  # the cheap bounds are all there, with values
            assert got.value is not None
    assert {"relaxation", "server_bins"} <= set(found) and "flow_lp" in total
    lb = lower_bounds(wide, time_limits=limits)
    assert lb.best == max(b.value for b in found.values() if b.value is not None)
    assert lb.to_dict()["relaxation_note"].startswith(NOT_BUILT)


def test_the_guard_is_asked_before_the_bound_is_loaded(wait_beats_start: Instance) -> None:
    asked: list[str] = []
    module = types.ModuleType("_rar_opt_test_guard")
    module.never = lambda instance, ask: asked.append("solved") or Answer(1)  # type: ignore[attr-defined]
    module.big = lambda instance: "more cells than allowed"  # type: ignore[attr-defined]
    sys.modules[module.__name__] = module
    bound = Bound(
        "guarded", "makespan", "solver", "s", "tests only", f"{module.__name__}:never", guard=f"{module.__name__}:big"
    )
    try:
        with registered(bound):
            got = {b.name: b for b in every_bound(wait_beats_start, time_limits={"guarded": 5.0})}["guarded"]
        assert (got.value, got.note, asked) == (None, NOT_BUILT + "more cells than allowed", [])
        assert bound.compute(wait_beats_start, Ask(1.0)).value is None
    finally:
        del sys.modules[module.__name__]
    with pytest.raises(ValueError, match="size guard"):
        Bound("x", "makespan", "basic", "s", "d", lambda i: 1, guard="a:b")


def test_the_cli_reports_a_skipped_bound(wide: Instance, tmp_path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "wide.json"
    wide.write(path)
    assert main(["bounds", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    notes = {b["name"]: b["note"] for b in out["bounds"] + out["total_bounds"] if b["value"] is None}
    assert set(notes) == SOLVER and all(n.startswith(NOT_BUILT) for n in notes.values())
    assert out["best"] is not None and out["best_total"] is not None


def test_the_relaxation_s_time_limit_covers_its_build() -> None:
    # under the guard (96,000 cells) but several seconds of building: half a second stops it
    inst = paper(4, jobs=800, servers=120)
    assert cfree.too_large(inst) is None
    began = time.perf_counter()
    found = relaxation_bound(inst, time_limit=0.5)
    assert time.perf_counter() - began < 2.0
    assert found.bound is None and "not built" in found.status
    with pytest.raises(cfree.BuildStopped):
        cfree.build(inst, deadline=time.perf_counter())
