"""Probes (does a schedule end by slot H?) against brute force, the library and the CLI."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings

from rar_opt import Instance, Schedule
from rar_opt.errors import InputError
from rar_opt.formulations import symmetry
from rar_opt.instances.library import instance_path
from rar_opt.solvers import Status
from rar_opt.solvers.cpsat import SEARCHES
from rar_opt.solvers.probe import probe

from ..bruteforce import brute_force
from ..helpers import COUNTEREXAMPLE_NAMES, load_counterexample, policy_makespans, run
from ..strategies import communication_heavy_instances, micro_instances, reference_simulate


def _answers(inst: Instance, opt: int, search: str = "no-lp") -> None:
    """Below OPT the answer is a proven no; at OPT a schedule that ends there."""
    below = probe(inst, opt - 1, search=search) if opt > 1 else None
    if below is not None:  # from CP-SAT, or from the longest job when it alone needs opt slots
        assert below.status == Status.INFEASIBLE and below.lower_bound == opt and below.schedule is None
    at = probe(inst, opt, search=search)
    assert at.record.search == search and at.record.cpsat_parameters == dict(SEARCHES[search])
    assert at.record.reversal_job == symmetry.reversal_job(inst)  # the time-reversal row is in
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
    for search in SEARCHES:  # every search of the same model gives the same answers
        _answers(inst, res.makespan, search)
    if res.makespan > 1:  # without the symmetry rows: the same proven no
        assert probe(inst, res.makespan - 1, symmetry=False).status == Status.INFEASIBLE


@settings(max_examples=10)
@given(communication_heavy_instances())
def test_a_hint_that_ends_later_changes_no_answer(inst: Instance) -> None:
    # the probes start from a worse schedule (the slowest policy's, which ends after the slot
    # asked): the answers at OPT - 1 and OPT are those of the probes without it
    from rar_opt.algorithms import POLICIES, run_policy
    from rar_opt.solvers import solve

    opt = solve(inst, "compact").makespan
    assert opt is not None

    def span(schedule: Schedule) -> int:
        return int(max(reference_simulate(inst, schedule)["completion"]))

    worst = max((run_policy(inst, name).schedule for name in POLICIES), key=span)
    assert span(worst) >= opt
    at = probe(inst, opt, hint=worst)
    assert at.status == Status.FEASIBLE and at.schedule_makespan == opt and at.record.hint is not None
    assert max(reference_simulate(inst, at.schedule)["completion"]) == opt
    if opt - 1 >= int(inst.bounds.rho_min.max()):  # else the shortcut answers without a model
        below = probe(inst, opt - 1, hint=worst)
        assert below.status == Status.INFEASIBLE and below.lower_bound == opt


def test_probes_bracket_every_library_optimum(library) -> None:
    for known in library:
        _answers(known.instance, known.optimum)


def test_cp_sat_itself_refutes_one_slot_below_the_optimum(library) -> None:
    # instances whose optimum exceeds the longest job's fastest time, so that the "no" one
    # slot below it comes from CP-SAT (with and without the symmetry rows), not the shortcut
    cases = [(k.instance, k.optimum) for k in library]
    cases += [(c.instance, c.optimum) for c in map(load_counterexample, COUNTEREXAMPLE_NAMES)]
    frontier = Instance.read(instance_path("tiny-20x8x120-s0"))  # a frontier optimum, 20 jobs, from its record
    cases.append((frontier, int(frontier.meta["known_optimum"])))
    asked = 0
    for inst, opt in cases:
        if opt - 1 < int(inst.bounds.rho_min.max()):
            continue
        for flag in (True, False):
            below = probe(inst, opt - 1, symmetry=flag, time_limit=120)
            assert (below.status, below.termination, below.lower_bound) == (Status.INFEASIBLE, "INFEASIBLE", opt)
            assert (below.record.reversal_job is not None) == (flag and symmetry.reversal_job(inst) is not None)
        asked += 1
    assert asked >= 2  # the test is not empty


def test_below_the_longest_job_no_solve_is_needed() -> None:
    inst = Instance.read(instance_path("paper-160x20-s0"))  # too large for the full model
    longest = int(inst.bounds.rho_min.max())
    answer = probe(inst, 3)
    assert (answer.status, answer.termination, answer.lower_bound) == (Status.INFEASIBLE, "longest job", longest)
    assert answer.summary()["model_size"] is None  # every answer has the key (docs/formats.md): no model here


def test_a_probe_out_of_time_is_undecided() -> None:
    # no schedule ends by 57 (the GPU bins refute it), but the probe's own refutation takes
    # longer than a minute: in the frontier benchmark it was still undecided after 50 s
    inst = Instance.read(instance_path("heavy-20x8x120-s0"))
    answer = probe(inst, 57, time_limit=1.0)
    assert (answer.status, answer.schedule, answer.lower_bound) == (Status.NO_SOLUTION, None, None)
    assert answer.summary()["time_limit"] == 1.0


def test_a_probe_whose_clock_is_spent_builds_no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    # the command line passes the least solver time when its start-up ate the limit: the probe
    # answers undecided at once rather than build a model that takes longer than the limit
    from rar_opt.formulations import cpsat as cpsat_model
    from rar_opt.solvers.backend import MIN_SOLVER_SECONDS

    inst = Instance.read(instance_path("heavy-20x8x120-s0"))
    built: list[int] = []
    real_build = cpsat_model.build
    monkeypatch.setattr(cpsat_model, "build", lambda *a, **k: built.append(1) or real_build(*a, **k))
    answer = probe(inst, 58, time_limit=MIN_SOLVER_SECONDS)
    assert (answer.status, answer.schedule, answer.lower_bound) == (Status.NO_SOLUTION, None, None)
    assert "spent before the model" in answer.termination and built == []
    probe(inst, 58, time_limit=2 * MIN_SOLVER_SECONDS)  # with a little more time the model is built
    assert built == [1]


def test_a_probe_names_a_bad_time_limit(wait_beats_start: Instance) -> None:
    for bad in (0, -1.0, float("nan"), float("inf"), "10"):
        with pytest.raises(InputError, match="time_limit"):
            probe(wait_beats_start, 6, time_limit=bad)


def test_a_probe_names_an_unknown_search(wait_beats_start: Instance) -> None:
    for bad in ("lp", "", None, ["no-lp"]):
        with pytest.raises(InputError, match="search"):
            probe(wait_beats_start, 6, search=bad)


def test_a_probe_names_a_bad_reversal_flag(wait_beats_start: Instance) -> None:
    for bad in (1, "yes", None):
        with pytest.raises(InputError, match="reversal"):
            probe(wait_beats_start, 6, reversal=bad)
    assert probe(wait_beats_start, 6, reversal=False).record.reversal_job is None


def test_a_probe_names_a_bad_makespan(wait_beats_start: Instance) -> None:
    for bad in (0, -3, 2.5, True, wait_beats_start.horizon + 1):
        with pytest.raises(InputError, match="makespan"):
            probe(wait_beats_start, bad)


def test_probe_command_answers_and_writes_the_schedule(tmp_path) -> None:
    out = run("probe", "wait-beats-start", "--makespan", "5", "--json")
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout)
    assert answer["status"] == "infeasible" and answer["proves_lower_bound"] == 6
    assert answer["versions"]["ortools"] and answer["seed"] == 0 and answer["search"] == "no-lp"
    out = run("probe", "wait-beats-start", "--makespan", "5", "--search", "default", "--json")
    assert out.returncode == 0 and json.loads(out.stdout)["search"] == "default"
    wait = Instance.read(instance_path("wait-beats-start"))
    assert json.loads(out.stdout)["reversal_job"] == symmetry.reversal_job(wait)
    out = run("probe", "wait-beats-start", "--makespan", "5", "--no-reversal", "--json")
    assert out.returncode == 0 and json.loads(out.stdout)["reversal_job"] is None
    assert json.loads(out.stdout)["pricing"] is True  # on by default
    out = run("probe", "wait-beats-start", "--makespan", "5", "--no-pricing", "--json")
    assert out.returncode == 0 and json.loads(out.stdout)["pricing"] is False
    assert json.loads(out.stdout)["status"] == "infeasible"  # the rows are redundant: the same answer
    target = tmp_path / "s.json"
    out = run("probe", "wait-beats-start", "--makespan", "6", "-o", str(target))
    assert out.returncode == 0 and "OPT <= 6" in out.stdout
    schedule = Schedule.read(target)
    inst = Instance.read(instance_path("wait-beats-start"))
    assert schedule.meta["method"] == "probe" and max(reference_simulate(inst, schedule)["completion"]) <= 6
    bad = run("probe", "wait-beats-start", "--makespan", "0")
    assert bad.returncode == 2 and "makespan" in bad.stderr and "Traceback" not in bad.stderr


def test_a_probe_is_a_result_like_the_others(wait_beats_start: Instance) -> None:
    from rar_opt.results import to_dict, to_rows

    answer = probe(wait_beats_start, 6)
    data = to_dict(answer)
    assert data == answer.summary() and data["status"] == "feasible" and data["search"] == answer.record.search
    assert to_rows(answer)[0]["solver.name"] == answer.record.solver["name"]
