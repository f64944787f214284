"""Probes (does a schedule end by slot H?) against brute force, the library and the CLI."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings

from rar_opt import Instance, Schedule
from rar_opt.errors import InputError
from rar_opt.library import instance_path
from rar_opt.solvers import Status
from rar_opt.solvers.probe import probe

from ..bruteforce import brute_force
from ..helpers import policy_makespans, run
from ..strategies import communication_heavy_instances, micro_instances, reference_simulate


def _answers(inst: Instance, opt: int) -> None:
    """Below OPT the answer is a proven no; at OPT a schedule that ends there."""
    below = probe(inst, opt - 1) if opt > 1 else None
    if below is not None:
        assert below.status == Status.INFEASIBLE and below.lower_bound == opt and below.schedule is None
    at = probe(inst, opt)
    assert at.status == Status.FEASIBLE and at.lower_bound is None
    assert max(reference_simulate(inst, at.schedule)["completion"]) == at.schedule_makespan == opt


@settings(max_examples=20)
@given(micro_instances())
def test_probes_bracket_the_brute_force_optimum(inst: Instance) -> None:
    bf = brute_force(inst, min(policy_makespans(inst).values()))
    assert bf is not None
    _answers(inst, bf[0])


@settings(max_examples=10)
@given(communication_heavy_instances())
def test_probes_bracket_the_optimum_where_contention_decides(inst: Instance) -> None:
    from rar_opt.solvers import solve

    res = solve(inst, "compact")  # the MILP as the cross-check
    assert res.status == Status.OPTIMAL
    _answers(inst, res.makespan)
    if res.makespan > 1:  # without the symmetry rows: the same proven no
        assert probe(inst, res.makespan - 1, symmetry=False).status == Status.INFEASIBLE


def test_probes_bracket_every_library_optimum(library) -> None:
    for known in library:
        _answers(known.instance, known.optimum)


def test_a_probe_out_of_time_is_undecided() -> None:
    from rar_opt.generate import tiny

    inst = tiny(jobs=8, servers=4, seed=19)
    answer = probe(inst, inst.horizon - 1, time_limit=1e-6)
    # too little time to decide anything, or decided at once: never a wrong answer
    assert answer.status in (Status.NO_SOLUTION, Status.FEASIBLE)
    assert (answer.schedule is None) == (answer.status == Status.NO_SOLUTION)


def test_a_probe_names_a_bad_makespan(wait_beats_start: Instance) -> None:
    for bad in (0, -3, 2.5, True, wait_beats_start.horizon + 1):
        with pytest.raises(InputError, match="makespan"):
            probe(wait_beats_start, bad)


def test_probe_command_answers_and_writes_the_schedule(tmp_path) -> None:
    out = run("probe", "wait-beats-start", "--makespan", "5", "--json")
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout)
    assert answer["status"] == "infeasible" and answer["proves_lower_bound"] == 6
    assert answer["versions"]["ortools"] and answer["seed"] == 0
    target = tmp_path / "s.json"
    out = run("probe", "wait-beats-start", "--makespan", "6", "-o", str(target))
    assert out.returncode == 0 and "OPT <= 6" in out.stdout
    schedule = Schedule.read(target)
    inst = Instance.read(instance_path("wait-beats-start"))
    assert schedule.meta["method"] == "probe" and max(reference_simulate(inst, schedule)["completion"]) <= 6
    bad = run("probe", "wait-beats-start", "--makespan", "0")
    assert bad.returncode == 2 and "makespan" in bad.stderr and "Traceback" not in bad.stderr
