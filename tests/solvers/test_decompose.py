"""The contention-free decomposition: exact, with a valid relaxation and restriction."""

from __future__ import annotations

from hypothesis import given, settings

from rar_opt import Instance
from rar_opt.formulations import cfree
from rar_opt.formulations.cpsat import read_schedule
from rar_opt.solvers import Status, solve
from rar_opt.solvers.backend import SolveOptions
from rar_opt.solvers.cpsat import Cpsat

from ..bruteforce import brute_force
from ..helpers import policy_makespans
from ..strategies import communication_heavy_instances, micro_instances, reference_simulate


def _optimum(inst: Instance) -> int:
    res = solve(inst, "decompose")
    assert res.status == Status.OPTIMAL, res.message
    assert max(reference_simulate(inst, res.schedule)["completion"]) == res.makespan
    return res.makespan


def _solve_cfree(inst: Instance, restrict: bool):
    model = cfree.build(inst, cfree.Options(restrict=restrict))
    raw = Cpsat().solve(model, SolveOptions())
    return model, raw


@settings(max_examples=25)
@given(micro_instances())
def test_decomposition_equals_brute_force(inst: Instance) -> None:
    upper = min(policy_makespans(inst).values())
    bf = brute_force(inst, upper)
    assert bf is not None and _optimum(inst) == bf[0]


@settings(max_examples=20)
@given(communication_heavy_instances())
def test_relaxation_below_and_restriction_above_the_optimum(inst: Instance) -> None:
    opt = solve(inst).makespan  # the compact MILP
    _, relaxed = _solve_cfree(inst, restrict=False)
    assert relaxed.status == Status.OPTIMAL and relaxed.objective <= opt
    model, restricted = _solve_cfree(inst, restrict=True)
    assert restricted.status == Status.OPTIMAL and restricted.objective >= opt
    # the restriction's makespan is its schedule's true makespan (contention is always 1)
    schedule = read_schedule(model, inst)
    assert max(reference_simulate(inst, schedule)["completion"]) == restricted.objective
    assert _optimum(inst) == opt


def test_where_contention_decides_the_full_model_carries_the_proof(wait_beats_start: Instance) -> None:
    res = solve(wait_beats_start, "decompose")
    assert res.status == Status.OPTIMAL and res.makespan == wait_beats_start.meta["known_optimum"]
    assert res.options["proved_by"] == "full cp-sat"
    assert [p["phase"] for p in res.options["phases"]] == ["relaxation", "restriction", "full cp-sat"]


def test_every_library_optimum(library) -> None:
    for known in library:
        assert _optimum(known.instance) == known.optimum, known.instance.name
