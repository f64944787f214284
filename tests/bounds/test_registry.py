"""The one registry of lower bounds (rar_opt.bounds.registry): everything that reports
bounds is built from it, a new entry reaches every report, and "the best bound" is the
same whoever asks."""

from __future__ import annotations

import json
import re

import pytest

from rar_opt.bounds import BOUNDS, Answer, Ask, Bound, every_bound, lower_bounds, registered, registry
from rar_opt.cli import main
from rar_opt.instance import Instance
from rar_opt.solvers import solve

from ..helpers import ROOT, Known

PACKAGE = ROOT / "rar_opt"


def _dummy(instance: Instance) -> int:
    return 1  # a valid bound on every instance (every job takes a slot at least)


DUMMY = Bound("dummy_floor", "makespan", "structural", "one slot at least", "tests only", _dummy)


def test_a_registered_bound_reaches_every_report(wait_beats_start: Instance, capsys: pytest.CaptureFixture) -> None:
    assert "dummy_floor" not in BOUNDS
    with registered(DUMMY):
        lb = lower_bounds(wait_beats_start)
        assert lb.dummy_floor == 1 and lb.to_dict()["dummy_floor"] == 1
        assert "dummy_floor" in {b.name for b in every_bound(wait_beats_start)}
        res = solve(wait_beats_start, "auto", time_limit=20)
        floor = next(p for p in res.record.phases if p.kind.name == "FLOOR")
        assert floor.floors is not None and floor.floors["dummy_floor"] == 1
        assert main(["bounds", "wait-beats-start", "--json", "--relaxation-time", "0", "--bins-time", "0"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert any(b["name"] == "dummy_floor" and b["value"] == 1 for b in out["bounds"])
    assert "dummy_floor" not in BOUNDS
    with pytest.raises(AttributeError):
        _ = lower_bounds(wait_beats_start).dummy_floor


def test_a_solver_bound_is_asked_with_its_time_limit_and_the_floor(wait_beats_start: Instance) -> None:
    seen: list[Ask] = []

    def ask(instance: Instance, a: Ask) -> Answer:
        seen.append(a)
        return Answer(a.floor, exact=False, note="echo")

    import sys
    import types

    module = types.ModuleType("_rar_opt_test_bounds")
    module.ask = ask  # type: ignore[attr-defined]
    sys.modules[module.__name__] = module
    echo = Bound("echo", "makespan", "solver", "echoes the floor", "tests only", f"{module.__name__}:ask")
    try:
        with registered(echo):
            assert "echo" not in {b.name for b in every_bound(wait_beats_start)}  # no time limit: not run
            found = {b.name: b for b in every_bound(wait_beats_start, time_limits={"echo": 2.5}, seed=7)}
            cheap_best = max(v.value for k, v in found.items() if k != "echo" and v.value is not None)
            assert found["echo"].value == cheap_best and found["echo"].exact is False
            assert (seen[0].time_limit, seen[0].seed, seen[0].floor) == (2.5, 7, cheap_best)
            with pytest.raises(ValueError, match="no solver bound"):
                every_bound(wait_beats_start, time_limits={"nonexistent": 1.0})
    finally:
        del sys.modules[module.__name__]


def test_a_solver_bounds_clock_starts_after_its_import(
    wait_beats_start: Instance, monkeypatch: pytest.MonkeyPatch
) -> None:
    # its time limit is the solve's: loading the solver's module (OR-Tools: about a second)
    # is not counted in the seconds it reports
    import time

    def slow_load(where: str):
        time.sleep(0.3)
        return lambda instance, a: Answer(a.floor, exact=False, note="loaded slowly")

    monkeypatch.setattr(registry, "_load", slow_load)
    bound = Bound("slowload", "makespan", "solver", "s", "tests only", "nowhere:ask")
    answer = bound.compute(wait_beats_start, Ask(1.0, 0, 3))
    assert answer.value == 3 and answer.seconds < 0.3


def test_a_quick_computation_leaves_out_the_slow_floors(wait_beats_start: Instance) -> None:
    full = {b.name: b.value for b in registry.cheap(wait_beats_start)}
    quick = {b.name: b.value for b in registry.cheap(wait_beats_start, quick=True)}
    assert set(registry.SLOW_FLOORS) <= set(full)
    assert quick == {k: v for k, v in full.items() if k not in registry.SLOW_FLOORS}
    assert all(BOUNDS[name].slow for name in registry.SLOW_FLOORS)


def test_entries_are_validated() -> None:
    with pytest.raises(ValueError, match="module:function"):
        Bound("x", "makespan", "solver", "s", "d", _dummy)
    with pytest.raises(ValueError, match="module:function"):
        Bound("x", "makespan", "basic", "s", "d", "a:b")
    with pytest.raises(ValueError, match="flag"):
        Bound("x", "makespan", "basic", "s", "d", _dummy, flag="--x-time")
    with pytest.raises(ValueError, match="already registered"):
        registry.register(Bound("work", "makespan", "basic", "s", "d", _dummy))


def test_the_best_bound_is_the_same_whoever_asks(known: Known) -> None:
    inst = known.instance
    limits = {"relaxation": 5.0, "server_bins": 5.0}
    lb = lower_bounds(inst, time_limits=limits)
    found = every_bound(inst, time_limits=limits)
    assert lb.best == max(b.value for b in found if b.value is not None)
    assert lb.best <= known.optimum
    assert registry.floor(inst) == lower_bounds(inst).best <= lb.best


def test_every_bound_name_has_one_home() -> None:
    """A bound's name is written in the registry; elsewhere in the package only as prose in
    a docstring or comment, never as a field, key or dict entry kept in step by hand."""
    names = [
        n for n in BOUNDS if n not in ("longest", "work", "load", "relaxation", "release", "classes")
    ]  # also plain words
    for path in PACKAGE.rglob("*.py"):
        if path.name == "registry.py":
            continue
        text = path.read_text(encoding="utf-8")
        for name in names:
            assert not re.search(rf"[\"']{name}[\"']", text), f"{path.relative_to(ROOT)} spells the bound {name!r}"
            assert not re.search(rf"^\s+{name}\s*:", text, re.M), f"{path.relative_to(ROOT)} has a field {name!r}"


def test_every_module_is_in_the_layers_contract() -> None:
    """The top-level contract in pyproject.toml places every module of the package."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    layers = config["tool"]["importlinter"]["contracts"][0]["layers"]
    placed = {m.strip() for layer in layers for m in re.split(r"[|:]", layer)}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        if (parts[-1] == "__init__" and module not in placed) or module == "rar_opt.__main__":
            continue  # a package's face re-exports its modules; __main__ only starts the command line
        assert any(module == p or module.startswith(p + ".") for p in placed), f"{module} is in no layer"
