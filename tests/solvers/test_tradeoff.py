"""The trade-off the other way round (rar_opt.solvers.tradeoff): the best makespan with the
average JCT capped. The answer passes the checker and meets its flow cap; its bound is at
most the capped optimum (brute force on micro instances); a cap never shortens the
makespan; with a cap that binds nothing the answer is the uncapped optimum."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rar_opt import Instance, check
from rar_opt.algorithms import run_policy
from rar_opt.algorithms.engine import Trial
from rar_opt.algorithms.search import score
from rar_opt.errors import ParameterError
from rar_opt.instances.library import instance_path
from rar_opt.solvers import Status, solve
from rar_opt.solvers.record import PhaseKind
from rar_opt.solvers.sum_best import SPAN_POLICIES, SUM_POLICIES

from ..bruteforce import brute_force
from ..strategies import micro_instances, with_releases


def _flow(inst: Instance, res) -> int:
    report = check(inst, res.schedule)
    assert report.feasible, [str(v) for v in report.violations]
    return int(report.result.completion.sum()) - int(inst.releases.sum())


MICRO = st.one_of(micro_instances(), with_releases(micro_instances()))
"""Micro instances (2-3 jobs), with and without releases."""


@settings(max_examples=8, deadline=None)
@given(MICRO.filter(lambda inst: inst.num_jobs == 2), st.sampled_from([1.0, 1.15]))
def test_the_capped_makespan_is_the_brute_force_one(inst: Instance, factor: float) -> None:
    res = solve(inst, "auto", time_limit=30, jct_within=factor)
    options = res.record.options
    cap, reference = options["jct_cap"], options["jct_reference"]
    assert options["jct_within"] == factor and cap == math.floor(factor * reference + 1e-9)
    assert res.schedule is not None and res.makespan == res.objective
    assert _flow(inst, res) <= cap  # the answer meets the cap
    capped = brute_force(inst, res.makespan, flow_cap=cap)  # every schedule ending by it starts before it
    free = brute_force(inst, res.makespan)
    assert capped is not None and free is not None
    assert res.bound is not None and res.bound <= capped[0] <= res.makespan  # the bound is valid
    assert capped[0] >= free[0]
    if res.status == Status.OPTIMAL:
        assert res.makespan == capped[0]


@settings(max_examples=10, deadline=None)
@given(MICRO, st.sampled_from([1.0, 1.1, 1.5]))
def test_a_cap_never_shortens_the_makespan(inst: Instance, factor: float) -> None:
    free = solve(inst, "auto", time_limit=30)
    res = solve(inst, "auto", time_limit=30, jct_within=factor)
    assert res.schedule is not None and res.makespan is not None and res.bound is not None
    assert _flow(inst, res) <= res.record.options["jct_cap"]
    assert res.bound <= res.makespan
    assert free.status == Status.OPTIMAL and free.makespan is not None
    assert res.makespan >= free.makespan
    assert all(p.bound is None or p.bound <= res.makespan for p in res.record.phases)


def test_a_cap_that_binds_nothing_gives_the_uncapped_optimum(wait_beats_start: Instance) -> None:
    # the list policies start both jobs at once (8); the optimum runs them in turn (6)
    free = solve(wait_beats_start, "auto", time_limit=20)
    loose = solve(wait_beats_start, "auto", time_limit=20, jct_within=1e6)
    assert free.status == loose.status == Status.OPTIMAL
    assert loose.makespan == free.makespan == 6
    assert loose.record.phases[0].tried is not None and loose.record.phases[0].tried["sjf-bco"] == 8


def test_a_tight_cap_costs_makespan_and_buys_jct() -> None:
    inst = Instance.read(instance_path("tiny-4x2-s13"))
    free = solve(inst, "auto", time_limit=20)
    tight = solve(inst, "auto", time_limit=20, jct_within=1.0)
    assert free.status == tight.status == Status.OPTIMAL
    assert free.makespan is not None and tight.makespan is not None and tight.makespan > free.makespan
    assert free.avg_jct is not None and tight.avg_jct is not None and tight.avg_jct < free.avg_jct
    assert _flow(inst, tight) <= tight.record.options["jct_cap"] < _flow(inst, free)
    assert tight.record.proved_by is not None


def test_the_reference_is_the_heuristics_best_flow(wait_beats_start_plus: Instance) -> None:
    inst = wait_beats_start_plus
    res = solve(inst, "auto", time_limit=20, jct_within=1.0)
    flows = []
    for name in SUM_POLICIES + SPAN_POLICIES:
        options = {"iterations": 0, "lanes": 0.0} if name == "pack" else {}
        report = check(inst, run_policy(inst, name, **options).schedule)
        if report.feasible:
            flows.append(int(report.result.completion.sum()) - int(inst.releases.sum()))
    assert res.record.options["jct_reference"] == min(flows)
    heuristics = res.record.phases[0]
    assert heuristics.kind == PhaseKind.HEURISTICS
    assert set(heuristics.tried or {}) == set(SUM_POLICIES + SPAN_POLICIES)
    assert all(p.bound is None or p.bound <= res.makespan for p in res.record.phases)


@pytest.mark.parametrize("factor", [0.5, float("nan"), float("inf"), -1.0, True])
def test_bad_jct_factors_are_refused(wait_beats_start: Instance, factor: float) -> None:
    with pytest.raises(ParameterError, match="factor >= 1") as caught:
        solve(wait_beats_start, "auto", time_limit=5, jct_within=factor)
    assert caught.value.where == "jct_within"


@pytest.mark.parametrize(
    "ask",
    [
        {"objective": "total"},
        {"objective": "flow"},
        {"formulation": "compact"},
        {"makespan_within": 1.2},
        {"symmetry": False},
    ],
)
def test_a_jct_cap_with_the_wrong_request_is_refused(wait_beats_start: Instance, ask: dict) -> None:
    formulation = ask.pop("formulation", "auto")
    with pytest.raises(ParameterError, match="average-JCT cap") as caught:
        solve(wait_beats_start, formulation, time_limit=5, jct_within=1.2, **ask)
    assert caught.value.where == "jct_within"


def test_the_search_scores_the_excess_over_a_total_cap_first() -> None:
    completion = np.array([3, 9])
    trial = Trial(np.zeros(2, dtype=np.int64), ((), ()), completion, int(completion.max()), 1.0)
    assert score(trial) == (9, 12)
    assert score(trial, total_cap=10) == (2, 9, 12)
    assert score(trial, total_cap=20) == (0, 9, 12)
    assert score(trial, "total", cap=5) == (4, 12, 9)


def test_the_search_with_a_total_cap_meets_it_where_a_start_does() -> None:
    inst = Instance.read(instance_path("tiny-20x8x120-s0"))
    free = run_policy(inst, "improve", iterations=0)
    sjf = run_policy(inst, "improve", objective="total", iterations=0)
    cap = int(check(inst, sjf.schedule).result.completion.sum())
    capped = run_policy(inst, "improve", total_cap=cap, iterations=20)
    total = int(check(inst, capped.schedule).result.completion.sum())
    assert total <= cap < int(check(inst, free.schedule).result.completion.sum())
    with pytest.raises(Exception, match="total_cap"):
        run_policy(inst, "improve", objective="total", total_cap=cap)
    with pytest.raises(Exception, match="makespan_cap"):
        run_policy(inst, "improve", makespan_cap=100)


def test_the_command_line_answers_with_the_cap_recorded(tmp_path, capsys) -> None:
    import json

    from rar_opt import Schedule
    from rar_opt.cli import main

    out = tmp_path / "s.json"
    assert main(["solve", "tiny-4x2-s13", "--jct-within", "1.0", "--time-limit", "20", "--json", "-o", str(out)]) == 0
    data = json.loads(capsys.readouterr().out)
    inst = Instance.read(instance_path("tiny-4x2-s13"))
    report = check(inst, Schedule.read(out))
    assert report.feasible and report.result.makespan == data["makespan"] == data["objective"]
    options = data["options"]
    assert options["jct_within"] == 1.0 and options["objective"] == "makespan"
    assert int(report.result.completion.sum()) <= options["jct_cap"] == options["jct_reference"]


@pytest.mark.parametrize("factor", [5.0, 1e308])
def test_a_huge_factor_caps_at_what_the_horizon_allows(factor) -> None:
    from rar_opt.solvers.sums import factor_cap

    inst = Instance.read(instance_path("tiny-4x2-s13"))
    most = int((inst.horizon - inst.releases).sum())
    assert factor_cap(factor, 5, inst.horizon) == min(25, inst.horizon)  # 5 x 5, or more
    assert factor_cap(1e308, 11, most) == most and factor_cap(1.0, 11, most) == 11
    capped = solve(inst, "auto", objective="total", makespan_within=factor, time_limit=20)
    assert capped.record.options["makespan_cap"] == inst.horizon == capped.record.options["horizon"]
    assert capped.schedule is not None and capped.makespan <= inst.horizon
    other = solve(inst, "auto", jct_within=factor, time_limit=20)
    assert other.record.options["jct_cap"] == min(factor * other.record.options["jct_reference"], most)
