"""Policies side by side (rar_opt.studies.compare), against values derived by hand on wait-beats-start."""

from __future__ import annotations

import dataclasses

import pytest

from rar_opt import Instance
from rar_opt.algorithms import POLICIES
from rar_opt.solvers import PhaseKind, Status
from rar_opt.studies.compare import compare

NO_SHARED_SPLITS = ("pack", "backfill")
"""The policies that never run two split jobs on one server at once."""


def test_against_the_optimum(wait_beats_start: Instance) -> None:
    # OPT 6 (one job after the other), every list heuristic 8 (both at once, sharing a
    # server); pack and backfill never let split jobs share a server, so they find the 6
    cmp = compare(wait_beats_start, exact=True)
    assert (cmp.reference, cmp.reference_kind) == (6, "optimum")
    assert [r.policy for r in cmp.rows] == list(POLICIES)
    for row in cmp.rows:
        expected = (6, 4.5, True) if row.policy in NO_SHARED_SPLITS else (8, 8.0, True)
        assert (row.makespan, row.avg_jct, row.within_horizon) == expected
        assert row.ratio == pytest.approx(expected[0] / 6)
    assert cmp.theorem5_bound == pytest.approx(64 / 3)  # n_g 3 x varphi 8/3 / l (3/8)
    claims = {c.claim: c for c in cmp.claims}
    assert claims["theorem5"].holds and claims["theorem5"].margin == pytest.approx(64 / 3 * 6 - 8)
    assert cmp.solve is not None and cmp.solve["status"] == "optimal"


def test_against_a_lower_bound(wait_beats_start: Instance) -> None:
    # without a solve: the best lower bound, 6. The longest job alone and the work bound give
    # 3 (18 GPU-slots / 6 GPUs); the structural floor split_pairs gives 6: both jobs must
    # split and share a server when they overlap, so one after the other is fastest
    cmp = compare(wait_beats_start, ["ff"])
    assert (cmp.reference, cmp.reference_kind, cmp.solve) == (6, "lower bound", None)
    assert (cmp.bounds["longest"], cmp.bounds["work"], cmp.bounds["split_pairs"]) == (3, 3, 6)
    # SJF-BCO always, for its claims; the classical baselines always, for both metrics
    assert [r.policy for r in cmp.rows] == ["sjf-bco", "ff", "lpt", "sjf-oblivious"]
    assert [r.ratio for r in cmp.rows] == [pytest.approx(8 / 6)] * 4
    assert cmp.to_dict()["baselines"] == {"makespan": "lpt", "avg_jct": "sjf-oblivious"}
    claims = {c.claim: c for c in cmp.claims}
    assert claims["theorem5"].holds is True  # 8 <= 64/3 x 6 proves it even without OPT


def test_a_horizon_no_heuristic_fits_is_reported(wait_beats_start: Instance) -> None:
    # T = 7 leaves room for the optimum (6) but not for starting both jobs at once (8)
    short = dataclasses.replace(wait_beats_start, horizon=7)
    cmp = compare(short, exact=True)
    assert (cmp.reference, cmp.reference_kind) == (6, "optimum")
    assert all(r.makespan == 8 and not r.within_horizon for r in cmp.rows if r.policy not in NO_SHARED_SPLITS)
    assert [c.claim for c in cmp.claims] == ["within_horizon"] and cmp.claims[0].holds is False  # SJF-BCO's
    data = cmp.to_dict()
    fits = [p["within_horizon"] for p in data["policies"]]
    assert data["reference"] == 6 and fits == [name in NO_SHARED_SPLITS for name in POLICIES]


def test_an_exact_compare_solves_the_relaxation_once(wait_beats_start: Instance, monkeypatch) -> None:
    # the relaxation's bound comes from the exact solve's own relaxation phase when it ran one
    import math

    import rar_opt.solvers

    real = rar_opt.solvers.relaxation_bound
    calls: list[str] = []

    def counted(instance, *a, **k):
        calls.append(instance.name)
        return real(instance, *a, **k)

    def refuse(*_a, **_k):
        raise AssertionError("the relaxation was solved a second time")

    monkeypatch.setattr(rar_opt.solvers, "relaxation_bound", refuse)
    from rar_opt.instances.generate import generate
    from rar_opt.studies.evaluation import evaluate

    # decompose runs the relaxation as its first phase: evaluate reads it from there (auto
    # leaves the contention-free phases out since stop 27, docs/exactness.md)
    inst = generate("tiny", 21, jobs=8, servers=4)
    ev = evaluate(inst, ("ff",), method="decompose", bound_time_limit=10)
    phase = ev.solve.record.phase(PhaseKind.RELAXATION)
    assert phase is not None and phase.status == Status.OPTIMAL
    relaxed = ev.bounds.get("relaxation")
    assert relaxed is not None and (relaxed.value, relaxed.exact) == (math.ceil(phase.objective), True)
    # auto runs no relaxation (and on wait-beats-start pack meets the floor before any
    # model): the relaxation is solved once, by compare
    monkeypatch.setattr(rar_opt.solvers, "relaxation_bound", counted)
    closed = compare(wait_beats_start, ["ff"], exact=True, bound_time_limit=10)
    assert not [p for p in closed.solve["options"]["phases"] if p["kind"] == PhaseKind.RELAXATION]
    # each job alone takes 3 slots without contention: the relaxation's optimum
    assert calls == [wait_beats_start.name] and closed.bounds["relaxation"] == 3
    cheap = compare(wait_beats_start, ["ff"], exact=True, bound_time_limit=None)  # cheap bounds only, as asked
    assert cheap.bounds["relaxation"] is None and cheap.reference == 6
    monkeypatch.undo()
    alone = compare(wait_beats_start, ["ff"], bound_time_limit=10)  # without a solve it is solved on its own
    assert (alone.bounds["relaxation"], alone.bounds["relaxation_proven"]) == (3, True)


def test_a_schedule_past_the_horizon_is_no_best_known() -> None:
    # heavy-20x8x120-s0 (T = 120): sjf-oblivious ends at 126 with the shortest average JCT
    # of all; it was taken as the best average JCT known, so ratios to it overstated ALG / OPT
    from rar_opt.instances.library import instance_path
    from rar_opt.studies.evaluation import evaluate

    inst = Instance.read(instance_path("heavy-20x8x120-s0"))
    ev = evaluate(inst, ("sjf-bco", "lpt", "sjf-oblivious"))
    past = ev.runs["sjf-oblivious"]
    assert not past.feasible and past.makespan > inst.horizon
    assert past.avg_jct < ev.jct_best  # the case the fix is about
    assert ev.jct_best == min(r.avg_jct for r in ev.runs.values() if r.feasible)
    assert ev.best == min(r.makespan for r in ev.runs.values() if r.feasible)
    # no ratio for it: below 1 against the best feasible one, and the bounds hold within T only
    assert ev.jct_ratios("sjf-oblivious") == {"jct_ratio_low": None, "jct_ratio_high": None}
    assert ev.jct_ratios("sjf-bco")["jct_ratio_low"] == pytest.approx(ev.runs["sjf-bco"].avg_jct / ev.jct_best)


def test_the_exact_solves_schedule_counts_for_the_best_average_jct(wait_beats_start: Instance) -> None:
    # T = 7: the heuristics that start both jobs at once end at 8, past T; the optimum's
    # schedule (6) is the only feasible one besides the policies that never share a server
    short = dataclasses.replace(wait_beats_start, horizon=7)
    cmp = compare(short, exact=True)
    assert cmp.solve is not None and cmp.solve["avg_jct"] is not None
    feasible = [r.avg_jct for r in cmp.rows if r.within_horizon]
    assert cmp.jct_best == pytest.approx(min([*feasible, cmp.solve["avg_jct"]]))
    for row in cmp.rows:  # a schedule past T is beside no reference
        expected = row.avg_jct / cmp.jct_best if row.within_horizon else None
        assert row.jct_ratio_best == pytest.approx(expected)
        assert (row.jct_ratio is None) == (not row.within_horizon)


def test_the_classical_baselines_are_always_compared(wait_beats_start: Instance) -> None:
    # --policies ff gave verdicts with no longest-first (makespan) or shortest-first (JCT) row
    for asked, expected in (
        (["ff"], ["sjf-bco", "ff", "lpt", "sjf-oblivious"]),
        (["lpt", "ff"], ["sjf-bco", "lpt", "ff", "sjf-oblivious"]),
        (["sjf-oblivious", "sjf-bco", "lpt"], ["sjf-oblivious", "sjf-bco", "lpt"]),
    ):
        assert [r.policy for r in compare(wait_beats_start, asked).rows] == expected
