"""Formulation variants (docs/variants.md): every exact variant (each linearization, each GDP
transformation, each objective) reaches the brute-force optimum on random micro instances;
every relaxation's bound is at most the optimum, and the LP bound at most the root bound."""

from __future__ import annotations

import dataclasses
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rar_opt import InputError, Instance, Schedule, check
from rar_opt.formulations import compact
from rar_opt.formulations.base import weight_coefficients
from rar_opt.formulations.specs import ModelSpec
from rar_opt.solvers import Status, solve
from rar_opt.studies.variants import BOUND, EXACT, RELAXATION, VariantRow, disagreements, measure

from ..bruteforce import brute_force, placements_of
from ..helpers import policy_makespans
from ..strategies import micro_instances, reference_simulate, reference_violations

EXACT_VARIANTS = [
    ("compact", {"linearization": "onehot"}),
    ("gdp", {"transformation": "bigm"}),
    ("gdp", {"transformation": "hull"}),
    ("gdp", {"transformation": "mbigm"}),
]


def all_schedules(inst: Instance, upper: int):
    """Every feasible schedule with starts < ``upper`` and its completion times (the reference's)."""
    options = [placements_of(inst, j) for j in range(inst.num_jobs)]
    for starts in itertools.product(range(upper), repeat=inst.num_jobs):
        for ys in itertools.product(*options):
            sched = Schedule.from_arrays(inst.name, starts, ys)
            if check(inst, sched).feasible:
                yield sched, reference_simulate(inst, sched)["completion"]


@settings(max_examples=12)
@given(micro_instances(), st.sampled_from(EXACT_VARIANTS))
def test_every_exact_variant_equals_brute_force(inst: Instance, variant) -> None:
    formulation, options = variant
    bf = brute_force(inst, min(policy_makespans(inst).values()))
    assert bf is not None
    res = solve(inst, formulation, **options)
    assert res.status == Status.OPTIMAL and res.schedule is not None, res.message
    assert reference_violations(inst, res.schedule) == set()
    assert max(reference_simulate(inst, res.schedule)["completion"]) == res.makespan == round(res.objective) == bf[0]


@settings(max_examples=10)
@given(micro_instances(), st.lists(st.sampled_from([0.5, 1.0, 2.0, 3.0, 1.25]), min_size=3, max_size=3))
def test_weighted_objective_equals_brute_force(inst: Instance, weights: list[float]) -> None:
    jobs = tuple(dataclasses.replace(job, weight=w) for job, w in zip(inst.jobs, weights, strict=False))
    inst = dataclasses.replace(inst, jobs=jobs)
    coefficients, scale = weight_coefficients([job.weight for job in jobs])
    rho = [int(r) for r in inst.bounds.rho_min]
    # with W the optimum the model claims,
    # C_j <= (W - sum_{i != j} w_i rho_i) / w_j, so every better schedule starts before `upper`
    serial = solve(inst, objective="weighted", symmetry=False)  # the model's optimum, checked below
    assert serial.status == Status.OPTIMAL
    bound = serial.objective / scale
    upper = max(
        int((bound - sum(w * r for w, r in zip(weights, rho, strict=False)) + weights[j] * rho[j]) / weights[j])
        - rho[j]
        + 1
        for j in range(inst.num_jobs)
    )
    best = min(
        sum(job.weight * c for job, c in zip(jobs, completion, strict=True))
        for _, completion in all_schedules(inst, max(upper, 1))
    )
    assert serial.schedule is not None and reference_violations(inst, serial.schedule) == set()
    achieved = sum(
        job.weight * c for job, c in zip(jobs, reference_simulate(inst, serial.schedule)["completion"], strict=True)
    )
    assert achieved == pytest.approx(best) == pytest.approx(bound)
    assert round(serial.objective) == sum(
        c * x for c, x in zip(coefficients, reference_simulate(inst, serial.schedule)["completion"], strict=True)
    )


@settings(max_examples=10)
@given(micro_instances(), st.sampled_from([("compact", {}), ("gdp", {"transformation": "bigm"})]))
def test_lexicographic_objective_equals_brute_force(inst: Instance, variant) -> None:
    formulation, options = variant
    opt = brute_force(inst, min(policy_makespans(inst).values()))
    assert opt is not None
    # every schedule of optimal makespan starts its jobs before that makespan
    best = min((max(c), sum(c)) for _, c in all_schedules(inst, opt[0]))
    res = solve(inst, formulation, objective="lexicographic", **options)
    assert res.status == Status.OPTIMAL and res.schedule is not None
    completion = reference_simulate(inst, res.schedule)["completion"]
    assert (max(completion), sum(completion)) == best
    multiplier = inst.num_jobs * inst.horizon + 1
    assert round(res.objective) == multiplier * best[0] + best[1]


@settings(max_examples=8)
@given(micro_instances(), st.sampled_from(["makespan", "total"]))
def test_relaxation_bounds_are_at_most_the_optimum(inst: Instance, objective: str) -> None:
    exact = measure(ModelSpec("exact", "compact", {"objective": objective}), inst)
    assert exact.status == "optimal" and exact.objective is not None
    assert exact.lp_bound is not None and exact.root_bound is not None
    assert exact.lp_bound <= exact.root_bound + 1e-6 <= exact.objective + 2e-6
    relaxations = ["lp", "preemptive"] + (["contention-free"] if objective == "makespan" else [])
    for relaxation in relaxations:
        row = measure(ModelSpec(relaxation, "compact", {"objective": objective, "relaxation": relaxation}), inst)
        assert row.kind == RELAXATION and row.status == BOUND, row
        assert row.objective is None and row.makespan is None  # a bound, never a schedule
        assert row.bound is not None and row.bound <= exact.objective + 1e-6


def test_a_relaxation_is_not_solved_as_a_schedule(wait_beats_start: Instance) -> None:
    res = solve(wait_beats_start, relaxation="lp")  # a bound, never a schedule
    assert res.status == "bound" and res.schedule is None and res.bound <= 6
    with pytest.raises(InputError, match=r"options\.relaxation: = 'lp': a relaxation gives a bound"):
        compact.build(wait_beats_start, compact.Options(relaxation="lp"))
    with pytest.raises(InputError, match=r"options\.relaxation: the contention-free relaxation bounds the makespan"):
        solve(wait_beats_start, objective="total", relaxation="contention-free")


def test_weight_coefficients_are_exact_integers() -> None:
    assert weight_coefficients([1.0, 1.0]) == ([1, 1], 1)
    assert weight_coefficients([0.5, 1.25, 2.0]) == ([2, 5, 8], 4)
    with pytest.warns(UserWarning, match=r"jobs\[0\]\.weight"):
        coefficients, scale = weight_coefficients([1 / 3 + 1e-7, 1.0])
    assert coefficients == [1, 3] and scale == 3


def _row(spec: str, kind: str, objective: float | None, bound: float | None = None) -> VariantRow:
    return VariantRow(
        "i",
        spec,
        "compact",
        kind,
        "makespan",
        objective=objective,
        bound=bound,
        status="optimal" if kind == EXACT else BOUND,
    )


def test_disagreements_are_flagged() -> None:
    rows, messages = disagreements([_row("a", EXACT, 6.0), _row("b", EXACT, 6.0), _row("r", RELAXATION, None, 5.0)])
    assert messages == [] and all(r.flag == "" for r in rows)
    rows, messages = disagreements([_row("a", EXACT, 6.0), _row("b", EXACT, 7.0), _row("r", RELAXATION, None, 6.5)])
    assert [r.flag for r in rows] == ["DISAGREE", "DISAGREE", "BOUND ABOVE OPTIMUM"]
    assert any("disagree" in m for m in messages) and any("exceeds the proven optimum 6.0" in m for m in messages)
