"""Policies side by side (rar_opt.compare), against values derived by hand on wait-beats-start."""

from __future__ import annotations

import dataclasses

import pytest

from rar_opt import Instance
from rar_opt.algorithms import POLICIES
from rar_opt.compare import compare
from rar_opt.solvers import PhaseKind, Status


def test_against_the_optimum(wait_beats_start: Instance) -> None:
    # OPT 6 (one job after the other), every heuristic 8 (both at once, sharing a server)
    cmp = compare(wait_beats_start, exact=True)
    assert (cmp.reference, cmp.reference_kind) == (6, "optimum")
    assert [r.policy for r in cmp.rows] == list(POLICIES)
    for row in cmp.rows:
        assert (row.makespan, row.avg_jct, row.within_horizon) == (8, 8.0, True)
        assert row.ratio == pytest.approx(8 / 6)
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
    assert [r.policy for r in cmp.rows] == ["sjf-bco", "ff"]  # SJF-BCO always, for its claims
    assert [r.ratio for r in cmp.rows] == [pytest.approx(8 / 6)] * 2
    claims = {c.claim: c for c in cmp.claims}
    assert claims["theorem5"].holds is True  # 8 <= 64/3 x 6 proves it even without OPT


def test_a_horizon_no_heuristic_fits_is_reported(wait_beats_start: Instance) -> None:
    # T = 7 leaves room for the optimum (6) but not for starting both jobs at once (8)
    short = dataclasses.replace(wait_beats_start, horizon=7)
    cmp = compare(short, exact=True)
    assert (cmp.reference, cmp.reference_kind) == (6, "optimum")
    assert all(r.makespan == 8 and not r.within_horizon for r in cmp.rows)
    assert [c.claim for c in cmp.claims] == ["within_horizon"] and cmp.claims[0].holds is False
    data = cmp.to_dict()
    assert data["reference"] == 6 and [p["within_horizon"] for p in data["policies"]] == [False] * len(POLICIES)


def test_an_exact_compare_solves_the_relaxation_once(wait_beats_start: Instance, monkeypatch) -> None:
    # the relaxation's bound comes from the exact solve's own relaxation phase
    import rar_opt.solvers

    def refuse(*_a, **_k):
        raise AssertionError("the relaxation was solved a second time")

    monkeypatch.setattr(rar_opt.solvers, "relaxation_bound", refuse)
    cmp = compare(wait_beats_start, ["ff"], exact=True, bound_time_limit=10)
    (phase,) = [p for p in cmp.solve["options"]["phases"] if p["kind"] == PhaseKind.RELAXATION]
    # each job alone takes 3 slots without contention: the relaxation's optimum
    assert phase["status"] == Status.OPTIMAL and phase["objective"] == 3
    assert (cmp.bounds["relaxation"], cmp.bounds["relaxation_proven"]) == (3, True)
    cheap = compare(wait_beats_start, ["ff"], exact=True, bound_time_limit=None)  # cheap bounds only, as asked
    assert cheap.bounds["relaxation"] is None and cheap.reference == 6
    monkeypatch.undo()
    alone = compare(wait_beats_start, ["ff"], bound_time_limit=10)  # without a solve it is solved on its own
    assert (alone.bounds["relaxation"], alone.bounds["relaxation_proven"]) == (3, True)
