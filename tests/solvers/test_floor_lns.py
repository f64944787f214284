"""The mode restriction (formulations/modes.py) and the search towards the floor on it
(solvers/floor_lns.py): every mode is a placement the instance allows, with the execution
time the simulator gives a job alone there; the search hands on checked schedules whose
true completions are the model's, never later than its start, and the same ones for the
same seed."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rar_opt import Cluster, Instance, Job, Schedule, check, simulate
from rar_opt.errors import InputError
from rar_opt.formulations import modes
from rar_opt.solvers import floor_lns
from tests.strategies import tiny_instances


def _alone(instance: Instance, j: int, placement: tuple[int, ...]) -> int:
    """Job j's completion when it starts at 0 on ``placement`` and every other job waits
    until it is done (started far later on one GPU of the first server that fits it)."""
    far = 10 * int(instance.bounds.rho_max.sum()) + 10
    starts, rows = [], []
    for i in range(len(instance.jobs)):
        if i == j:
            starts.append(0)
            rows.append(placement)
            continue
        starts.append(far * (i + 1))
        rows.append(modes.table(instance).modes[i][0].placement)
    schedule = Schedule.from_arrays(instance.name, starts, rows)
    return int(simulate(instance, schedule).completion[j])


@given(tiny_instances(max_jobs=3, max_servers=3))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_every_mode_is_an_allowed_placement_with_its_time_alone(instance):
    table = modes.table(instance)
    capacity = tuple(int(c) for c in instance.time_model.capacity)
    assert sum(len(own) for own in table.modes) <= modes.count_modes(instance)
    for j, own in enumerate(table.modes):
        assert own, f"job {j} has no mode"
        assert len({m.placement for m in own}) == len(own)
        for mode in own:
            assert sum(mode.placement) == instance.jobs[j].gpus
            assert all(0 <= y <= c for y, c in zip(mode.placement, capacity, strict=True))
            assert mode.split == (sum(1 for y in mode.placement if y) > 1)
            assert mode.duration == _alone(instance, j, mode.placement)


def test_count_modes_counts_the_vectors():
    inst = Instance(
        name="c",
        horizon=400,
        cluster=Cluster(servers=(1, 2, 4), b_inter=1.0, b_intra=10.0, reduce_speed=50.0, alpha=0.3, xi1=1.0, xi2=0.0),
        jobs=tuple(
            Job(f"j{g}", g, 10, 0.01, 8, 0.001, 0.1)
            for g in (1, 2, 3, 4)  # vectors: 3, 5, 6, 6 (y1 <= 1, y2 <= 2, y3 <= 4)
        ),
    )
    assert modes.count_modes(inst) == 3 + 5 + 6 + 6
    assert [len(own) for own in modes.table(inst).modes] == [3, 5, 6, 6]


def _contended() -> tuple[Instance, Schedule]:
    """Two 2-GPU jobs, each split one GPU per server over two 2-GPU servers, at once: a
    schedule of the instance that the restriction does not hold."""
    cluster = Cluster(servers=(2, 2), b_inter=1.0, b_intra=10.0, reduce_speed=50.0, alpha=0.5, xi1=1.0, xi2=0.01)
    jobs = tuple(Job(f"j{k}", 2, 10, 0.05, 8, 0.001, 0.1) for k in range(2))
    inst = Instance(name="two", horizon=200, cluster=cluster, jobs=jobs)
    return inst, Schedule.from_arrays("two", [0, 0], [[1, 1], [1, 1]])


def test_a_start_with_split_jobs_sharing_a_server_is_refused():
    inst, start = _contended()
    assert check(inst, start).feasible
    outcome = floor_lns.search(inst, start, 1, seed=0)
    assert outcome.schedule is None and outcome.refused is not None and "share a server" in outcome.refused


def test_with_sharing_a_start_whose_contention_costs_nothing_is_taken():
    # tiny-24x8x150-s3's optimum puts two split jobs on one server, neither of which loses a
    # slot at contention 2: the sharing restriction holds it, the contention-free one does not
    from pathlib import Path

    frontier = Path(__file__).resolve().parents[2] / "instances" / "frontier"
    inst = Instance.read(frontier / "tiny-24x8x150-s3.json")
    start = Schedule.read(frontier / "schedules" / "tiny-24x8x150-s3.schedule.json")
    shared = floor_lns.search(inst, start, 55, seed=0, params=floor_lns.Params(sharing=True))
    assert shared.refused is None and shared.makespan == 55 and shared.past == 0 and shared.steps == 0
    assert shared.schedule is not None and simulate(inst, shared.schedule).makespan == 55
    plain = floor_lns.search(inst, start, 55, seed=0)
    assert plain.schedule is None and "share a server" in (plain.refused or "")


def test_too_many_modes_is_refused(monkeypatch):
    inst, start = _contended()
    monkeypatch.setattr(modes, "MAX_MODES", 1)
    outcome = floor_lns.search(inst, start, 1, seed=0)
    assert outcome.schedule is None and "modes" in (outcome.refused or "")


@pytest.fixture(scope="module")
def frontier_like() -> tuple[Instance, Schedule]:
    """Ten jobs on four servers, started one after another, each on its first mode: a
    schedule the restriction holds (nothing overlaps), far from the optimum."""
    from rar_opt.instances.generate import generate

    base = generate("tiny", seed=5, jobs=10, servers=4)
    table = modes.table(base)
    first = [own[0] for own in table.modes]
    ends = np.cumsum([m.duration for m in first])
    inst = dataclasses.replace(base, horizon=int(ends[-1]) + 1)
    return inst, Schedule.from_arrays(inst.name, [0, *ends[:-1]], [m.placement for m in first])


def test_search_hands_on_checked_schedules_whose_completions_are_the_models(frontier_like):
    inst, start = frontier_like
    table = modes.table(inst)
    first = table.solution_of(start)
    params = floor_lns.Params(steps=30, step_work=0.05)
    floor = int(inst.bounds.rho_min.max())
    outcome = floor_lns.search(inst, start, floor, seed=3, params=params)
    assert first is not None and outcome.refused is None and outcome.schedule is not None
    report = check(inst, outcome.schedule)
    assert report.feasible, report
    solution = table.solution_of(outcome.schedule)
    sim = simulate(inst, outcome.schedule)
    assert [int(c) for c in sim.completion] == [table.end(j, a) for j, a in enumerate(solution)]
    assert sim.makespan == outcome.makespan < table.makespan(first)  # 30 steps shorten a serial schedule
    assert outcome.past == table.past(solution, floor) <= table.past(first, floor)
    assert outcome.steps <= 30 and outcome.progress[0][0] == 0


def test_the_same_seed_gives_the_same_schedule(frontier_like):
    inst, start = frontier_like
    params = floor_lns.Params(steps=10, step_work=0.05)
    runs = [floor_lns.search(inst, start, 1, seed=7, params=params) for _ in range(2)]
    assert runs[0].refused is None and runs[0].schedule is not None
    assert runs[0].schedule.to_dict() == runs[1].schedule.to_dict()
    assert runs[0].progress == runs[1].progress and runs[0].steps == runs[1].steps == 10


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("steps", 0),
        ("steps", True),
        ("step_work", 0.0),
        ("step_work", float("inf")),
        ("free_min", 0),
        ("max_extra", -1),
        ("free_max", 1),
        ("sharing", 1),
    ],
)
def test_params_are_validated(field, value):
    with pytest.raises(InputError) as error:
        floor_lns.Params(**{field: value})
    assert error.value.where == field


@pytest.mark.parametrize(
    ("field", "value"), [("seed", -1), ("seed", 2**40), ("time_limit", 0.0), ("time_limit", float("nan"))]
)
def test_the_search_checks_its_seed_and_time_limit(field, value):
    inst, start = _contended()
    with pytest.raises(InputError) as error:
        floor_lns.search(inst, start, 1, **{"seed": 0, field: value})
    assert error.value.where == field


@given(st.integers(0, 3))
@settings(max_examples=4, deadline=None)
def test_a_target_at_the_start_ends_at_once(seed):
    inst, _ = _contended()
    start = Schedule.from_arrays("two", [0, 0], [[2, 0], [0, 2]])  # each job whole on a server
    span = int(simulate(inst, start).makespan)
    outcome = floor_lns.search(inst, start, span, seed=seed)
    assert outcome.steps == 0 and outcome.past == 0 and outcome.makespan == span


@pytest.mark.parametrize("start", ["best", "search"])
def test_the_stage_starts_where_the_plan_says(start):
    # the best schedule has two split jobs on a server at once (the restriction refuses it as a
    # start); the searches' schedule has none: only lns_start "search" gets to search
    from rar_opt.solvers import Budget
    from rar_opt.solvers.context import Context, Incumbent
    from rar_opt.solvers.plan import AUTO

    inst, contended = _contended()
    held = Schedule.from_arrays("two", [0, 0], [[2, 0], [0, 2]])
    plan = dataclasses.replace(AUTO, stages=("lns", "full"), lns_share=0.5, lns_start=start)
    ctx = Context(inst, plan, Budget.start(2.0), inst.horizon, True, ("ff",))
    best = Incumbent(schedule=contended, span=int(simulate(inst, contended).makespan), bound=1.0)
    best.offer_searched(held, int(simulate(inst, held).makespan))
    (found,) = floor_lns.stage(ctx, best)
    assert ("refused" in found.record.name) == (start == "best")
    assert (found.schedule is not None) == (start == "search")


def test_a_plan_names_a_known_start():
    from rar_opt.solvers.plan import AUTO

    with pytest.raises(InputError) as error:
        dataclasses.replace(AUTO, stages=("lns", "full"), lns_share=0.5, lns_start="pack")
    assert error.value.where == "lns_start"
