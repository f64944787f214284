"""The exact side against brute force, and the solver layer's statuses."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from hypothesis import given, settings

from rar_opt import Instance, check
from rar_opt.algorithms import POLICIES, run_policy
from rar_opt.formulations import compact
from rar_opt.formulations.values import violated
from rar_opt.generate import tiny
from rar_opt.solvers import Status, solve

from .bruteforce import brute_force
from .strategies import micro_instances


def _upper(inst: Instance) -> int:
    return min(check(inst, run_policy(inst, name).schedule).result.makespan for name in POLICIES)


@settings(max_examples=25)
@given(micro_instances())
def test_compact_milp_equals_brute_force(inst: Instance) -> None:
    upper = _upper(inst)
    bf = brute_force(inst, upper)
    assert bf is not None
    res = solve(inst)
    assert res.status == Status.OPTIMAL
    assert res.makespan == bf[0] == round(res.objective)
    assert check(inst, res.schedule).feasible
    # never worse than any heuristic
    assert res.makespan <= upper


@settings(max_examples=15)
@given(micro_instances())
def test_total_completion_objective_equals_brute_force(inst: Instance) -> None:
    # in a schedule with total completion <= U, job j starts by U - sum_i rho_min_i, since
    # C_j <= U - sum_{i != j} C_i and C_i >= rho_min_i: so this brute force is complete
    best_total = min(int(check(inst, run_policy(inst, name).schedule).result.completion.sum()) for name in POLICIES)
    last_start = best_total - int(inst.bounds.rho_min.sum())
    bf = brute_force(inst, last_start + 1, objective="total")
    res = solve(inst, objective="total")
    assert res.status == Status.OPTIMAL
    assert round(res.objective) == sum(res.completion) == bf[0]


@settings(max_examples=15)
@given(micro_instances())
def test_warm_start_symmetry_and_cuts_do_not_change_the_optimum(inst: Instance) -> None:
    plain = solve(inst, symmetry=False, cuts=True)
    warm = solve(inst, warm_start="sjf-bco")
    assert plain.status == warm.status == Status.OPTIMAL
    assert plain.makespan == warm.makespan


@settings(max_examples=20)
@given(micro_instances())
def test_warm_start_values_satisfy_every_row(inst: Instance) -> None:
    # the complete MIP start built from a heuristic schedule is feasible in the model
    sched = run_policy(inst, "ls").schedule
    model = compact.build(inst)
    compact.set_start(model, inst, sched)
    assert violated(model) == []
    assert compact.pyo.value(model.obj) == check(inst, sched).result.makespan


def test_every_component_has_a_doc() -> None:
    model = compact.build(tiny(1))
    for comp in model.component_objects((compact.pyo.Var, compact.pyo.Constraint, compact.pyo.Objective)):
        assert comp.doc, comp.name


LIBRARY = Path(__file__).resolve().parent.parent / "instances"


def test_time_limit_without_incumbent_is_a_status() -> None:
    # an 8-job instance HiGHS needs about a second for, stopped after a millisecond
    inst = Instance.read(LIBRARY / "tiny-8x4-s19.json")
    res = solve(inst, time_limit=0.001)
    assert res.status in (Status.NO_SOLUTION, Status.FEASIBLE)
    assert res.message == "" and res.termination
    if res.status == Status.NO_SOLUTION:
        assert res.schedule is None and res.makespan is None and res.objective is None


def test_time_limit_with_incumbent_keeps_the_warm_start() -> None:
    inst = Instance.read(LIBRARY / "tiny-8x4-s19.json")
    res = solve(inst, time_limit=0.001, warm_start="ls")
    assert res.status in (Status.FEASIBLE, Status.OPTIMAL)
    assert res.schedule is not None and check(inst, res.schedule).feasible
    assert res.makespan <= check(inst, run_policy(inst, "ls").schedule).result.makespan


def test_infeasible_horizon_is_a_status() -> None:
    # two jobs that each need the whole single server, and a horizon for only one of them
    inst = tiny(3)
    longest = int(inst.bounds.rho_min.max())
    short = dataclasses.replace(inst, horizon=longest)
    res = solve(short)
    assert res.status == Status.INFEASIBLE
    assert res.schedule is None


@pytest.mark.parametrize("seed", [0, 1, 4])
def test_bundled_tiny_instances_solve_and_beat_every_heuristic(seed: int) -> None:
    inst = tiny(seed)
    res = solve(inst, warm_start="sjf-bco")
    assert res.status == Status.OPTIMAL
    assert res.makespan == round(res.objective)
    for name in POLICIES:
        assert res.makespan <= check(inst, run_policy(inst, name).schedule).result.makespan


@settings(max_examples=20)
@given(micro_instances())
def test_nonconvex_model_evaluates_to_the_simulated_makespan(inst: Instance) -> None:
    from rar_opt.formulations import nonconvex

    optimal = solve(inst).schedule
    for sched in (optimal, run_policy(inst, "ls").schedule, run_policy(inst, "consolidate").schedule):
        model = nonconvex.build(inst)
        nonconvex.fix_to(model, inst, sched)
        assert violated(model) == []
        assert compact.pyo.value(model.obj) == check(inst, sched).result.makespan


@settings(max_examples=10)
@given(micro_instances())
def test_nonconvex_model_rejects_a_wrong_completion(inst: Instance) -> None:
    from rar_opt.formulations import nonconvex

    sched = run_policy(inst, "ls").schedule
    model = nonconvex.build(inst)
    nonconvex.fix_to(model, inst, sched)
    j = int(check(inst, sched).result.completion.argmax())
    last = check(inst, sched).result.end_slot[j]
    model.D[j, last].fix(0)  # claim the job is still running at its true completion slot
    assert violated(model)


@pytest.mark.parametrize("name", ["wait-beats-start", "tiny-3x2-s12", "tiny-4x2-s13"])
def test_scip_solves_the_nonconvex_model_to_the_proven_optimum(name: str) -> None:
    pytest.importorskip("pyscipopt")

    inst = Instance.read(LIBRARY / f"{name}.json")
    res = solve(inst, "nonconvex", warm_start="sjf-bco", time_limit=120)
    assert res.options["backend"] == "scip" and res.options["mip_start"] is False
    assert res.status == Status.OPTIMAL
    assert res.makespan == inst.meta["known_optimum"] == round(res.objective)
    assert check(inst, res.schedule).feasible


def test_missing_scip_is_a_status_not_a_crash(monkeypatch) -> None:
    from rar_opt.solvers import scip

    monkeypatch.setattr(scip, "scip_available", lambda: False)
    res = solve(tiny(1), "nonconvex", time_limit=1.0)
    assert res.status == Status.ERROR and "pip install" in res.message


@settings(max_examples=12)
@given(micro_instances())
def test_enumerative_ilp_agrees_and_load_bound_is_below_the_optimum(inst: Instance) -> None:
    from rar_opt.bounds import load_bound, lower_bounds

    upper = _upper(inst)
    exact = solve(inst)
    enum = solve(inst, formulation="enumerative", warm_start="sjf-bco")
    assert exact.status == enum.status == Status.OPTIMAL
    assert enum.makespan == exact.makespan == round(enum.objective)
    theta = load_bound(inst, max_start=upper)
    assert theta is not None and theta <= exact.makespan
    lb = lower_bounds(inst, load=theta)
    assert lb.longest <= exact.makespan and lb.work <= exact.makespan


def test_paper_scale_is_refused_before_building(paper_instance: Instance) -> None:
    from rar_opt import InputError

    with pytest.raises(InputError, match="job-server-slot cells"):
        solve(paper_instance)
