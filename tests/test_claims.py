"""The paper's claims (Lemmas 2-3, Theorem 5), checked rather than assumed.

The verdicts of ``check_sjf_bco_claims`` are compared with the claims evaluated from the
slot-by-slot reference (execution times, loads, makespan) on instances where SJF-BCO and
the optimum part ways; the counterexamples found to the claims are kept in
instances/counterexamples/ and asserted to still be counterexamples, with their optima
proven by brute force.
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import find, given, settings, target

from rar_opt import Instance, check
from rar_opt.algorithms import PolicyResult, run_policy, sjf_bco
from rar_opt.bounds import check_sjf_bco_claims, lower_bounds, theorem5_bound
from rar_opt.solvers import Status, solve

from .bruteforce import brute_force
from .helpers import INSTANCES, Counterexample
from .strategies import (
    communication_heavy_instances,
    contended_instances,
    micro_instances,
    reference_rho_range,
    reference_simulate,
)


def reference_claims(inst: Instance, run: PolicyResult) -> dict[str, float]:
    """What the claims are about, from the reference: SJF-BCO's makespan, its largest GPU
    load (every GPU of job j charged rho_hat_j / u with the default estimate rho_hat =
    rho_min, so u = 1), n_g, and Theorem 5's bound n_g varphi u / l with varphi <=
    max_j rho_max_j / rho_min_j and l = min_j rho_min_j / rho_max_j."""
    rho = [reference_rho_range(inst, j) for j in range(inst.num_jobs)]
    loads: Counter = Counter()
    for j, ids in enumerate(run.schedule.gpu_ids or ()):
        for g in ids or ():
            loads[g] += rho[j][0]
    n_g = max(job.gpus for job in inst.jobs)
    varphi = max(hi / lo for lo, hi in rho)
    lower = min(1.0, min(lo / hi for lo, hi in rho))
    return {
        "makespan": max(reference_simulate(inst, run.schedule)["completion"]),
        "load": max(loads.values()),
        "n_g": n_g,
        "bound": n_g * varphi / lower,
    }


@given(contended_instances())
def test_claims_against_the_optimum_match_the_reference(inst: Instance) -> None:
    run = sjf_bco(inst)
    ref = reference_claims(inst, run)
    makespan = int(ref["makespan"])
    opt = solve(inst, warm_start="sjf-bco")
    assert opt.status == Status.OPTIMAL and opt.makespan <= makespan
    # steer towards runs far from OPT and towards breaking Lemma 3 and Theorem 5
    target(float(makespan - opt.makespan), label="SJF-BCO - OPT")
    target(makespan - ref["n_g"] * ref["load"], label="makespan - n_g x load (Lemma 3)")
    target(makespan / (ref["bound"] * opt.makespan), label="makespan / (bound x OPT) (Theorem 5)")
    claims = {c.claim: c for c in check_sjf_bco_claims(inst, makespan, run, optimum=opt.makespan)}
    if run.exceeds_horizon:  # no trial fitted in T: the lemmas are about trials that did
        assert list(claims) == ["within_horizon"] and claims["within_horizon"].holds is False
        return
    assert run.max_load == pytest.approx(ref["load"])
    assert claims["load_within_theta"].holds and ref["load"] <= run.theta + 1e-9  # by construction
    assert claims["lemma2"].holds == (run.theta - 1 < ref["load"] <= run.theta + 1e-9)
    assert claims["lemma3"].holds == (makespan <= ref["n_g"] * ref["load"] + 1e-9)
    assert claims["theorem5"].holds == (makespan <= ref["bound"] * opt.makespan + 1e-9)
    assert claims["theorem5"].margin == pytest.approx(ref["bound"] * opt.makespan - makespan)


def test_claims_against_a_lower_bound_are_inconclusive_when_they_fail(theorem5_p_cmax: Counterexample) -> None:
    # without OPT, Theorem 5 is checked against the best lower bound (4 here, by hand:
    # 8 GPU-slots of work on 2 GPUs); 5 > 1 x 4 proves nothing, so "holds" is None
    inst = theorem5_p_cmax.instance
    run = sjf_bco(inst)
    (t5,) = [c for c in check_sjf_bco_claims(inst, 5, run, lower_bound=4) if c.claim == "theorem5"]
    assert t5.holds is None and t5.margin == pytest.approx(4 - 5)
    (t5,) = [c for c in check_sjf_bco_claims(inst, 5, run, lower_bound=5) if c.claim == "theorem5"]
    assert t5.holds is True


def test_kept_counterexamples_still_break_their_claim(counterexample: Counterexample) -> None:
    inst = counterexample.instance
    run = sjf_bco(inst)
    ref = reference_claims(inst, run)
    assert ref["makespan"] == counterexample.sjf_bco_makespan
    # the recorded optimum, proven twice: exhaustively (every schedule with a makespan of
    # at most OPT starts its jobs before OPT) and by the MILP
    best = brute_force(inst, counterexample.optimum)
    assert best is not None and best[0] == counterexample.optimum
    assert solve(inst).makespan == counterexample.optimum
    claims = {c.claim: c for c in check_sjf_bco_claims(inst, int(ref["makespan"]), run, optimum=best[0])}
    assert claims[counterexample.claim].holds is False
    if counterexample.claim == "theorem5":
        assert ref["makespan"] > ref["bound"] * counterexample.optimum
    else:
        assert ref["makespan"] > ref["n_g"] * ref["load"]


def _violates(claim: str):
    """A predicate: SJF-BCO's run on the instance breaks ``claim`` (against OPT for Thm 5)."""

    def predicate(inst: Instance) -> bool:
        run = sjf_bco(inst)
        makespan = check(inst, run.schedule).result.makespan
        if claim == "lemma3":
            checks = check_sjf_bco_claims(inst, makespan, run)
        else:
            bound = theorem5_bound(inst, run.lower, run.upper)
            if makespan <= bound * lower_bounds(inst).best:  # cannot break it: OPT >= the lower bound
                return False
            opt = solve(inst)
            if opt.status != Status.OPTIMAL:
                return False
            checks = check_sjf_bco_claims(inst, makespan, run, optimum=opt.makespan)
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
    # confirmed independently: reference makespan and loads, brute-force optimum
    run = sjf_bco(found)
    ref = reference_claims(found, run)
    if claim == "theorem5":
        best = brute_force(found, int(ref["makespan"]))
        assert best is not None and ref["makespan"] > ref["bound"] * best[0]
    else:
        assert ref["makespan"] > ref["n_g"] * ref["load"]


def test_claims_refuse_what_they_are_not_about() -> None:
    # the lemmas are SJF-BCO's: a run of another policy (online ones have no theta) is
    # refused rather than given false verdicts, and so is a makespan below one slot
    inst = Instance.read(INSTANCES / "tiny-4x2-s13.json")
    for policy in ("online-ff", "lpt", "rand"):
        other = run_policy(inst, policy, seed=0)
        with pytest.raises(ValueError, match=f"this run is of '{policy}'"):
            check_sjf_bco_claims(inst, 5, other)
    run = run_policy(inst, "sjf-bco")
    with pytest.raises(ValueError, match=r"makespan = -5"):
        check_sjf_bco_claims(inst, -5, run)
    with pytest.raises(ValueError, match=r"optimum = 0"):
        check_sjf_bco_claims(inst, 5, run, optimum=0)
