"""The compact MILP (docs/exactness.md): its optimum is the RAR-DDLS optimum.

Checked against brute force on micro instances (every option and warm start), and
against every heuristic on instances drawn so that heuristics and the optimum part ways.
Every optimal schedule is judged by the slot-by-slot reference, not by the package.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings, target
from hypothesis import strategies as st

from rar_opt import Instance
from rar_opt.algorithms import POLICIES, run_policy
from rar_opt.bounds import lower_bounds
from rar_opt.formulations import compact, compact_start
from rar_opt.formulations.values import violated
from rar_opt.instances.generate import tiny
from rar_opt.solvers import SolveResult, Status, solve

from ..bruteforce import brute_force
from ..helpers import makespan, policy_makespans
from ..strategies import contended_instances, micro_instances, reference_simulate, reference_violations

STARTED = list(compact.STARTED)


def assert_optimal(inst: Instance, res: SolveResult) -> int:
    """The solve proved optimality and its schedule is feasible with the claimed makespan,
    by the reference; returns that makespan."""
    assert res.status == Status.OPTIMAL, res.message
    assert res.schedule is not None and reference_violations(inst, res.schedule) == set()
    assert max(reference_simulate(inst, res.schedule)["completion"]) == res.makespan == round(res.objective)
    return res.makespan


@settings(max_examples=25)
@given(micro_instances(), st.sampled_from(STARTED))
def test_compact_milp_equals_brute_force(inst: Instance, started: str) -> None:
    upper = min(policy_makespans(inst).values())
    bf = brute_force(inst, upper)  # every schedule better than the heuristics starts before them
    assert bf is not None
    assert assert_optimal(inst, solve(inst, started=started)) == bf[0] <= upper


@settings(max_examples=15)
@given(
    micro_instances(),
    st.sampled_from(STARTED),
    st.booleans(),
    st.booleans(),
    st.sampled_from([None, *sorted(POLICIES)]),
)
def test_options_and_warm_starts_keep_the_optimum(
    inst: Instance, started: str, symmetry: bool, cuts: bool, warm: str | None
) -> None:
    bf = brute_force(inst, min(policy_makespans(inst).values()))
    assert bf is not None
    res = solve(inst, started=started, symmetry=symmetry, cuts=cuts, warm_start=warm)
    assert assert_optimal(inst, res) == bf[0]


@settings(max_examples=15)
@given(micro_instances(), st.sampled_from(STARTED))
def test_total_completion_objective_equals_brute_force(inst: Instance, started: str) -> None:
    # in a schedule with total completion <= U, job j starts by U - sum_i rho_min_i, since
    # C_j <= U - sum_{i != j} C_i and C_i >= rho_min_i: so this brute force is complete
    best_total = min(sum(reference_simulate(inst, run_policy(inst, name).schedule)["completion"]) for name in POLICIES)
    last_start = best_total - int(inst.bounds.rho_min.sum())
    bf = brute_force(inst, last_start + 1, objective="total")
    assert bf is not None
    res = solve(inst, objective="total", started=started)
    assert res.status == Status.OPTIMAL and res.schedule is not None
    assert reference_violations(inst, res.schedule) == set()
    assert round(res.objective) == sum(reference_simulate(inst, res.schedule)["completion"]) == bf[0]


@given(contended_instances())
def test_optimum_is_at_most_every_heuristic(inst: Instance) -> None:
    # the strongest check that the model cuts off no schedule: heuristics that wait, split,
    # pack and contend differently are all feasible points; the draws are steered towards
    # instances where the best of them is far from the optimum
    spans = policy_makespans(inst)
    opt = assert_optimal(inst, solve(inst))
    best = min(spans.values())
    target(float(best - opt), label="best heuristic - OPT")
    assert opt <= best, spans
    assert lower_bounds(inst).best <= opt


@settings(max_examples=20)
@given(micro_instances(), st.sampled_from(STARTED), st.sampled_from(sorted(POLICIES)))
def test_warm_start_values_satisfy_every_row(inst: Instance, started: str, policy: str) -> None:
    # the complete MIP start built from any heuristic schedule is feasible in the model
    sched = run_policy(inst, policy).schedule
    model = compact.build(inst, compact.Options(started=started))
    compact_start.set_start(model, inst, sched)
    assert violated(model) == []
    assert compact.pyo.value(model.obj) == max(reference_simulate(inst, sched)["completion"])


@pytest.mark.parametrize("started", STARTED)
def test_every_component_has_a_doc(started: str) -> None:
    model = compact.build(tiny(1), compact.Options(started=started, cuts=True))
    for comp in model.component_objects((compact.pyo.Var, compact.pyo.Constraint, compact.pyo.Objective)):
        assert comp.doc, comp.name


@pytest.mark.parametrize("seed", [0, 1, 4])
def test_bundled_tiny_instances_solve_and_beat_every_heuristic(seed: int) -> None:
    inst = tiny(seed)
    opt = assert_optimal(inst, solve(inst, warm_start="sjf-bco"))
    assert opt <= min(policy_makespans(inst).values())


def test_the_library_optimum_without_its_heuristic_horizon(wait_beats_start: Instance) -> None:
    # the full horizon T = 20 with no start, and the horizon cut to the optimum itself
    assert assert_optimal(wait_beats_start, solve(wait_beats_start)) == 6
    assert assert_optimal(wait_beats_start, solve(wait_beats_start, horizon=6)) == 6
    assert makespan(wait_beats_start, run_policy(wait_beats_start, "ls").schedule) == 8


@pytest.mark.parametrize("started", STARTED)
@pytest.mark.parametrize("name", ["wait_beats_start_plus", "tiny_8x2_s20"])
def test_library_optima_with_either_started_family(name: str, started: str, request: pytest.FixtureRequest) -> None:
    # 4 jobs on three 2-GPU servers, and 8 jobs on servers of 4 and 2 GPUs (both optimum 6)
    inst: Instance = request.getfixturevalue(name)
    assert assert_optimal(inst, solve(inst, warm_start="sjf-bco", started=started)) == inst.meta["known_optimum"]
