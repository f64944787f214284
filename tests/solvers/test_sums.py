"""``auto`` for the total completion and flow time (rar_opt.solvers.sums): the same optimum
as brute force where brute force reaches, a bound never above it, a checked schedule whose
sum is the reported objective, and an answer (schedule and bound) where the model is too
large to build."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rar_opt import Instance, check
from rar_opt.bounds import completion_bounds
from rar_opt.solvers import Status, solve
from rar_opt.solvers.budget import run_seed
from rar_opt.solvers.record import PhaseKind

from ..bruteforce import brute_force
from ..strategies import micro_instances, with_releases


def _sum(inst: Instance, res, objective: str) -> int:
    report = check(inst, res.schedule)
    assert report.feasible
    total = int(np.sum(report.result.completion))
    return total - int(inst.releases.sum()) if objective == "flow" else total


@settings(max_examples=10, deadline=None)
@given(with_releases(micro_instances()))
def test_auto_flow_is_the_brute_force_optimum(inst: Instance) -> None:
    res = solve(inst, "auto", time_limit=60, objective="flow")
    assert res.status == Status.OPTIMAL, res.message
    value = _sum(inst, res, "flow")
    assert value == res.objective
    upper = int(inst.releases.max()) + value - int(inst.bounds.rho_min.sum()) + 1
    found = brute_force(inst, max(upper, 1), objective="flow")
    assert found is not None and found[0] == value
    # every bound of the record is on the flow time's scale: none above the optimum
    assert all(p.bound is None or p.bound <= value for p in res.record.phases)
    assert all(v - value <= 0 for p in res.record.phases for v in (p.floors or {}).values())


@settings(max_examples=10, deadline=None)
@given(micro_instances())
def test_auto_total_bounds_hold_and_phases_are_recorded(inst: Instance) -> None:
    res = solve(inst, "auto", time_limit=60, objective="total")
    assert res.schedule is not None and res.bound is not None
    value = _sum(inst, res, "total")
    assert res.objective == value >= res.bound >= completion_bounds(inst).total
    kinds = [p.kind for p in res.record.phases]
    assert kinds[:2] == [PhaseKind.HEURISTICS, PhaseKind.FLOOR]
    # every phase's bound is at most the best schedule's sum
    assert all(p.bound is None or p.bound <= value for p in res.record.phases)


def test_auto_answers_where_the_model_is_too_large(paper_instance: Instance) -> None:
    res = solve(paper_instance, "auto", time_limit=8, objective="flow")
    assert res.status in (Status.FEASIBLE, Status.OPTIMAL)
    assert res.record.full_model is not None and "cells" in res.record.full_model
    value = _sum(paper_instance, res, "flow")
    assert res.objective == value and res.bound is not None and res.bound <= value
    tried = res.record.phases[0].tried
    assert tried is not None and value <= min(v for v in tried.values() if v is not None)


def test_improve_aimed_at_the_sum_is_never_worse_than_its_starts(paper_instance: Instance) -> None:
    from rar_opt.algorithms import run_policy

    run = run_policy(paper_instance, "improve", objective="total", iterations=30)
    search = run.record()["search"]
    total = int(np.sum(check(paper_instance, run.schedule).result.completion))
    assert search["objective"] == "total" and total <= search["start_total_completion"]
    with pytest.raises(Exception, match="objective"):
        run_policy(paper_instance, "improve", objective="jct")


@settings(max_examples=8, deadline=None)
@given(micro_instances())
def test_a_makespan_cap_is_kept_and_only_costs_the_sum(inst: Instance) -> None:
    free = solve(inst, "auto", time_limit=60, objective="total")
    capped = solve(inst, "auto", time_limit=60, objective="total", makespan_within=1.0)
    cap = capped.record.options["makespan_cap"]
    assert capped.schedule is not None and capped.makespan is not None and capped.makespan <= cap
    assert capped.bound is not None and capped.bound <= capped.objective
    if free.status == Status.OPTIMAL and capped.status == Status.OPTIMAL:
        assert capped.objective >= free.objective  # a cap never helps the sum


def test_a_search_phase_past_the_makespan_cap_records_no_sum() -> None:
    # the searches score the cap as a penalty, so their best may end past it; such a
    # schedule is no answer under the cap, and its sum must not stand in the record
    # beside (and below) the answer
    from rar_opt.instances.generate import paper
    from rar_opt.solvers.sum_best import Best

    best = Best(cap=50)
    assert best.recorded((900, 51)) == (Status.NO_SOLUTION, None)
    assert best.recorded((900, 50)) == (Status.FEASIBLE, 900)
    assert best.recorded(None) == (Status.NO_SOLUTION, None)
    assert Best().recorded((900, 10**6)) == (Status.FEASIBLE, 900)
    inst = paper(3, jobs=40, servers=6, preset="contention-heavy")  # backfill ended past the cap here
    res = solve(inst, "auto", time_limit=6, objective="total", makespan_within=1.0)
    assert res.objective is not None
    for phase in res.record.phases:
        if phase.kind in (PhaseKind.HEURISTICS, PhaseKind.IMPROVE) and phase.objective is not None:
            assert phase.objective >= res.objective, phase.name


@pytest.mark.parametrize("factor", [0.5, float("nan"), float("inf"), -1.0, True])
def test_bad_trade_off_factors_are_refused(wait_beats_start: Instance, factor: float) -> None:
    from rar_opt.errors import ParameterError

    with pytest.raises(ParameterError, match="factor >= 1"):
        solve(wait_beats_start, "auto", time_limit=5, objective="total", makespan_within=factor)


def _without_backfill(monkeypatch: pytest.MonkeyPatch, inst: Instance, objective: str, time_limit: float):
    """auto as it answered before the backfill phase (the phase left out)."""
    from rar_opt.solvers import sums

    with monkeypatch.context() as m:
        m.setattr(sums, "_backfill", lambda *args: [])
        return solve(inst, "auto", time_limit=time_limit, objective=objective)


def test_the_backfill_phase_never_makes_the_answer_worse_on_the_library(library, monkeypatch) -> None:
    # (the library has no releases: the flow time is the total completion time there)
    for known in library:
        res = solve(known.instance, "auto", time_limit=30, objective="total")
        before = _without_backfill(monkeypatch, known.instance, "total", 30)
        assert res.objective is not None and before.objective is not None
        assert res.objective <= before.objective, known.name
        assert res.objective == _sum(known.instance, res, "total")


def test_the_backfill_phase_is_recorded_and_its_schedule_re_simulated() -> None:
    from rar_opt.instances.generate import paper

    inst = paper(0, jobs=40, servers=4, preset="contention-heavy")
    res = solve(inst, "auto", time_limit=4, objective="total")
    phases = {p.name: p for p in res.record.phases}
    assert "improve (backfill)" in phases and "improve" in phases
    found = phases["improve (backfill)"]
    assert found.status in (Status.FEASIBLE, Status.NO_SOLUTION) and found.bound is None
    assert res.objective == _sum(inst, res, "total")
    searched = [p for p in res.record.phases if p.kind in (PhaseKind.HEURISTICS, PhaseKind.IMPROVE)]
    assert res.objective <= min(p.objective for p in searched if p.objective is not None)
    assert "improve (backfill)" in [p["phase"] for p in res.record.to_dict()["phases"]]


def test_auto_for_sums_returns_within_a_short_limit_and_when_backfill_builds_nothing(
    paper_instance: Instance, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rar_opt.algorithms.backfill import Builder
    from rar_opt.instances.generate import paper

    res = solve(paper_instance, "auto", time_limit=2, objective="flow")  # returns: the phases keep the clock
    assert res.schedule is not None and res.objective == _sum(paper_instance, res, "flow")
    monkeypatch.setattr(
        Builder, "plan", lambda self, order, deadline=None, unsplit=frozenset(): None
    )  # never built in time
    inst = paper(0, jobs=40, servers=4, preset="contention-heavy")
    res = solve(inst, "auto", time_limit=3, objective="total")
    found = [p for p in res.record.phases if p.name == "improve (backfill)"]
    assert [p.status for p in found] == [Status.NO_SOLUTION]
    assert res.schedule is not None and res.schedule.meta["method"] != "backfill"


@pytest.mark.parametrize("objective", ["total", "flow"])
def test_a_full_model_stopped_in_its_build_reports_the_start_on_the_sum_scale(objective: str) -> None:
    # the time limit ends the CP-SAT build: the start is the incumbent, and its value is
    # the sum the model minimises (it was the start's makespan: a user report)
    from rar_opt.algorithms import run_policy
    from rar_opt.instances.generate import paper, with_arrivals
    from rar_opt.solvers.budget import Budget
    from rar_opt.solvers.solve import _full_sum_model

    inst = with_arrivals(paper(5, jobs=24, servers=4), load=0.9, seed=5)
    start = run_policy(inst, "ff").schedule
    res = _full_sum_model(inst, objective, start, Budget.start(1e-3), {})
    assert res.status == Status.FEASIBLE and res.record.stopped == "build"
    completion = check(inst, start).result.completion
    want = int(np.sum(completion)) - (int(inst.releases.sum()) if objective == "flow" else 0)
    assert res.objective == want and res.objective != res.makespan


@pytest.mark.parametrize("objective", ["total", "flow"])
def test_a_horizon_too_short_is_proven_infeasible_for_sums(objective: str) -> None:
    """Where no schedule ends within T, ``auto`` for a sum says so (``infeasible``, as the
    makespan's ``auto`` does), by the makespan floor past T or by the full model."""
    import dataclasses

    import rar_opt
    from rar_opt.bounds import registry

    inst = rar_opt.generate("tiny", seed=2, jobs=6, servers=3)
    floor = registry.floor(inst)
    optimum = solve(inst, "auto", time_limit=20).objective
    assert optimum is not None and floor < optimum  # so both routes below are taken
    for horizon, route in ((floor - 1, PhaseKind.FLOOR), (int(optimum) - 1, PhaseKind.FULL)):
        res = solve(dataclasses.replace(inst, horizon=horizon), "auto", objective=objective, time_limit=20)
        assert res.status == Status.INFEASIBLE and res.schedule is None, (horizon, res.status)
        assert res.record.phases[-1].kind == route and res.record.phases[-1].status == Status.INFEASIBLE
        assert res.record.options["horizon"] == horizon


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(1, 5))
def test_restarted_runs_get_distinct_valid_seeds_the_first_being_the_seed_itself(seed: int, runs: int) -> None:
    from rar_opt.support.checks import SOLVER_MAX_SEED

    seeds = [run_seed(seed, r) for r in range(runs)]
    assert seeds[0] == seed  # one run per rule: the search it was before restarts existed
    assert all(0 <= s <= SOLVER_MAX_SEED for s in seeds)
    assert len(set(seeds)) == runs
    assert seeds == [run_seed(seed, r) for r in range(runs)]  # the same pair, the same seed


@pytest.mark.parametrize(
    ("restarts", "race", "kinds"),
    [  # before, shipped, mixed: the shipped setting in every tier, the others in the slow one
        pytest.param(1, 1.0, ("both",), marks=pytest.mark.slow),
        (2, 0.5, ("none",)),
        pytest.param(1, 0.5, ("none", "both"), marks=pytest.mark.slow),
    ],
)
def test_the_backfill_phase_races_each_rule_then_continues_the_best(
    monkeypatch: pytest.MonkeyPatch, restarts: int, race: float, kinds: tuple[str, ...]
) -> None:
    from rar_opt.algorithms import backfill
    from rar_opt.instances.generate import paper
    from rar_opt.solvers import sums

    inst = paper(0, jobs=30, servers=4, preset="paper-split15")
    calls: list[tuple[str, str, int, bool]] = []
    found: list[int] = []
    ends: list[object] = []
    real = backfill.backfill_search

    def spy(instance, params, resume=None):
        result, state = real(instance, params, resume)
        calls.append((params.fit, params.start_splits, params.seed, resume is not None))
        found.append(_sum(instance, result, "total"))
        ends.append(state)
        if resume is not None:  # the continuation starts from the leader's best state
            leader = min(range(len(found) - 1), key=lambda k: found[k])
            assert resume == ends[leader] and calls[-1][:2] == calls[leader][:2]
        return result, state

    monkeypatch.setattr(sums, "BACKFILL_RESTARTS", restarts)
    monkeypatch.setattr(sums, "BACKFILL_RACE_SHARE", race)
    monkeypatch.setattr(sums, "BACKFILL_START_SPLITS", kinds)
    monkeypatch.setattr(sums, "IMPROVE_PROBE_SHARE", 1.0)  # improve never leads: the race's best goes on
    monkeypatch.setattr(backfill, "backfill_search", spy)
    # 6 s: the race's runs take at least 0.2 s each, and time must be left to continue
    res = solve(inst, "auto", time_limit=6, objective="total", seed=7)
    raced = [
        (fit, kind, run_seed(7, r), False) for fit in sums.BACKFILL_FITS for kind in kinds for r in range(restarts)
    ]
    assert calls[: len(raced)] == raced
    continued = calls[len(raced) :]
    assert continued == ([] if race == 1.0 else [(*continued[0][:2], run_seed(7, restarts), True)])
    phase = next(p for p in res.record.phases if p.name == "improve (backfill)")
    assert phase.objective == min(found)  # the best of the runs is the phase's answer
    assert res.objective is not None and res.objective <= min(found)


@pytest.mark.parametrize(
    ("drawn", "size", "preset", "leads"),
    # improve's probe leads by 0.4% on the first (its list schedules are good when splits
    # cost little); it trails by several per cent under heavy contention
    [(0, (64, 8), "paper-literal", "improve"), (1, (40, 4), "contention-heavy", "backfill")],
)
def test_after_the_race_the_search_that_leads_goes_on_from_its_best_state(
    monkeypatch: pytest.MonkeyPatch, drawn: int, size: tuple[int, int], preset: str, leads: str
) -> None:
    from rar_opt.algorithms import backfill, search
    from rar_opt.instances.generate import paper
    from rar_opt.solvers import sums

    inst = paper(drawn, jobs=size[0], servers=size[1], preset=preset)
    runs: list[tuple[str, int, object, object]] = []  # search, sum, resumed state, end state
    real = {"improve": search.improve_search, "backfill": backfill.backfill_search}

    def spy(name):
        def run(instance, params, resume=None):
            result, state = real[name](instance, params, resume)
            runs.append((name, _sum(instance, result, "total"), resume, state))
            return result, state

        return run

    monkeypatch.setattr(search, "improve_search", spy("improve"))
    monkeypatch.setattr(backfill, "backfill_search", spy("backfill"))
    res = solve(inst, "auto", time_limit=8, objective="total", seed=3)
    probe, race = runs[0], [r for r in runs[1:] if r[0] == "backfill" and r[2] is None]
    assert probe[0] == "improve" and probe[2] is None and len(race) == 2 * len(sums.BACKFILL_FITS)
    resumed = [r for r in runs if r[2] is not None]
    assert len(resumed) == 1  # one search goes on: the one with the best sum so far
    first = min([probe, *race], key=lambda r: (r[1], r[0] == "improve"))  # a tie: the race's first
    assert resumed[0][0] == leads == ("improve" if probe[1] < min(r[1] for r in race) else "backfill")
    assert resumed[0][2] == first[3]  # from the leader's best state
    assert res.objective is not None and res.objective <= resumed[0][1] <= first[1]
    assert ("improve (resumed)" in [p.name for p in res.record.phases]) == (leads == "improve")
