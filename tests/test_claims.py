"""The paper's claims (Lemmas 2-3, Theorem 5), checked rather than assumed.

What holds by construction for our implementation is asserted on random instances; the
counterexamples found to the rest are kept in instances/counterexamples/ and asserted to
still be counterexamples.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import find, given, settings

from rar_opt import Instance, check
from rar_opt.algorithms import sjf_bco
from rar_opt.bounds import check_sjf_bco_claims, lower_bounds, theorem5_bound
from rar_opt.solvers import Status, solve

from .strategies import communication_heavy_instances, micro_instances, tiny_instances

CX = Path(__file__).resolve().parent.parent / "instances" / "counterexamples"


@given(tiny_instances())
def test_load_never_exceeds_theta_and_lower_bounds_hold(inst: Instance) -> None:
    sched = sjf_bco(inst)
    makespan = check(inst, sched.schedule).result.makespan
    claims = {c.claim: c for c in check_sjf_bco_claims(inst, makespan, sched)}
    assert claims["load_within_theta"].holds
    lb = lower_bounds(inst)
    assert lb.longest <= makespan and lb.work <= makespan


@settings(max_examples=20)
@given(micro_instances())
def test_claims_against_the_optimum_are_reported_with_margins(inst: Instance) -> None:
    sched = sjf_bco(inst)
    makespan = check(inst, sched.schedule).result.makespan
    opt = solve(inst, warm_start="sjf-bco")
    assert opt.status == Status.OPTIMAL and opt.makespan <= makespan
    claims = {c.claim: c for c in check_sjf_bco_claims(inst, makespan, sched, optimum=opt.makespan)}
    t5 = claims["theorem5"]
    bound = theorem5_bound(inst, sched.lower, sched.upper)
    assert t5.holds == (makespan <= bound * opt.makespan + 1e-9)
    assert t5.margin == pytest.approx(bound * opt.makespan - makespan)


@pytest.mark.parametrize("path", sorted(CX.glob("*.json")), ids=lambda p: p.stem)
def test_kept_counterexamples_still_break_their_claim(path: Path) -> None:
    inst = Instance.read(path)
    sched = sjf_bco(inst)
    makespan = check(inst, sched.schedule).result.makespan
    assert makespan == inst.meta["sjf_bco_makespan"]
    opt = solve(inst)
    assert opt.status == Status.OPTIMAL and opt.makespan == inst.meta["known_optimum"]
    claims = {c.claim: c for c in check_sjf_bco_claims(inst, makespan, sched, optimum=opt.makespan)}
    assert claims[inst.meta["claim"]].holds is False


def _violates(claim: str):
    """A predicate: SJF-BCO's run on the instance breaks ``claim`` (against OPT for Thm 5)."""

    def predicate(inst: Instance) -> bool:
        sched = sjf_bco(inst)
        makespan = check(inst, sched.schedule).result.makespan
        if claim == "lemma3":
            checks = check_sjf_bco_claims(inst, makespan, sched)
        else:
            bound = theorem5_bound(inst, sched.lower, sched.upper)
            if makespan <= bound * lower_bounds(inst).best:  # cannot break it: OPT >= the lower bound
                return False
            opt = solve(inst)
            if opt.status != Status.OPTIMAL:
                return False
            checks = check_sjf_bco_claims(inst, makespan, sched, optimum=opt.makespan)
        return any(c.claim == claim and c.holds is False for c in checks)

    return predicate


@pytest.mark.parametrize("claim", ["theorem5", "lemma3"])
def test_hypothesis_finds_counterexamples(claim: str) -> None:
    # the search the kept counterexamples came from, redone by hypothesis on every run
    found = find(
        micro_instances() if claim == "theorem5" else communication_heavy_instances(),
        _violates(claim),
        settings=settings(max_examples=2000, database=None, derandomize=True, deadline=None),
    )
    assert _violates(claim)(found)
