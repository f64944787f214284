"""Exact neighbourhoods (rar_opt.formulations.neighbourhood, rar_opt.solvers.neighbourhoods):
every schedule they return passes the checker, is never worse than the start nor longer,
keeps each split job where it was or runs it unsplit, is reproducible from its seed, and the phase of
``auto`` for sums records it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rar_opt import Instance, check
from rar_opt.algorithms import run_policy
from rar_opt.formulations import neighbourhood as nb
from rar_opt.instances.generate import paper
from rar_opt.solvers import Status, neighbourhoods, solve

from ..strategies import tiny_instances


def _judged(inst: Instance, schedule) -> tuple[int, int]:
    report = check(inst, schedule)
    assert report.feasible, report.violations
    return int(report.result.completion.sum()), int(report.result.makespan)


@settings(max_examples=25, deadline=None)
@given(tiny_instances(), st.sampled_from(["ls", "ff", "sjf-bco"]), st.integers(0, 3), st.sampled_from([0.0, 1.0]))
def test_never_worse_never_longer_and_checked(inst: Instance, policy: str, seed: int, unsplit: float) -> None:
    start = run_policy(inst, policy).schedule
    first, span = _judged(inst, start)
    shipped = neighbourhoods.UNSPLIT_SHARE
    neighbourhoods.UNSPLIT_SHARE = unsplit  # 1.0: every step offers a split job (where any) to run unsplit
    try:
        found = neighbourhoods.search(inst, start, time_limit=30, seed=seed, steps=6)
    finally:
        neighbourhoods.UNSPLIT_SHARE = shipped
    total, makespan = _judged(inst, found.schedule)
    assert total == found.total <= first == found.first
    assert makespan <= span
    runs, after = nb.Runs.of(inst, start), nb.Runs.of(inst, found.schedule)
    assert not (after.split & ~runs.split).any()  # no job is newly split
    kept = runs.split & after.split  # a split job either stays exactly as it was or runs unsplit
    assert np.array_equal(after.start[kept], runs.start[kept])
    assert np.array_equal(after.placements[kept], runs.placements[kept])
    if unsplit == 0.0:
        assert np.array_equal(after.split, runs.split)


def test_an_unsplit_step_moves_a_split_job_onto_one_server(monkeypatch: pytest.MonkeyPatch) -> None:
    # ff splits job 9 of this instance over two servers; offered the chance, the search runs
    # it unsplit, and the schedule is the simulator's, better and no longer
    monkeypatch.setattr(neighbourhoods, "STEP_SECONDS", 60.0)
    monkeypatch.setattr(neighbourhoods, "UNSPLIT_SHARE", 1.0)
    inst = paper(0, jobs=24, servers=4, preset="contention-heavy")
    start = run_policy(inst, "ff").schedule
    runs = nb.Runs.of(inst, start)
    split = np.nonzero(runs.split)[0].tolist()
    assert split, "the start must have a split job for this test to say anything"
    first, span = _judged(inst, start)
    found = neighbourhoods.search(inst, start, time_limit=60, seed=1, steps=6)
    total, makespan = _judged(inst, found.schedule)
    after = nb.Runs.of(inst, found.schedule)
    assert not after.split[split].all()  # at least one split job now runs on one server
    assert total == found.total < first and makespan <= span


def test_improves_a_poor_schedule_and_is_reproducible(monkeypatch: pytest.MonkeyPatch) -> None:
    # only the deterministic-time cap may end a step, so that a loaded machine cannot
    # change the answer
    monkeypatch.setattr(neighbourhoods, "STEP_SECONDS", 60.0)
    inst = paper(0, jobs=24, servers=4, preset="contention-heavy")
    start = run_policy(inst, "lpt").schedule
    first, _ = _judged(inst, start)
    one = neighbourhoods.search(inst, start, time_limit=60, seed=1, steps=8)
    two = neighbourhoods.search(inst, start, time_limit=60, seed=1, steps=8)
    assert one.total < first  # longest first leaves room for the short jobs to end sooner
    assert one.kept >= 1 and one.steps == 8
    assert one.schedule.starts == two.schedule.starts
    assert list(map(tuple, one.schedule.placements)) == list(map(tuple, two.schedule.placements))


def test_one_neighbourhood_with_every_job_free_reads_back_what_the_simulator_says() -> None:
    # every job free on every server: the whole problem restricted to unsplit runs; the
    # model's optimum must be the simulated total of the schedule read back
    from rar_opt.solvers.backend import SolveOptions
    from rar_opt.solvers.cpsat import Cpsat

    inst = paper(3, jobs=6, servers=2, preset="paper-literal")
    start = run_policy(inst, "ls").schedule
    runs = nb.Runs.of(inst, start)
    free = nb.movable(runs)
    model = nb.build(runs, free, range(inst.num_servers), int(runs.end.max()))
    raw = Cpsat().solve(model, SolveOptions(time_limit=30))
    assert raw.status == Status.OPTIMAL and model.moves is not None
    moved = runs.moved(model.moves)
    total, _ = _judged(inst, moved.schedule())
    assert total == moved.total() == round(raw.objective)
    assert total <= runs.total()


def test_a_job_that_fits_none_of_the_servers_is_refused() -> None:
    inst = paper(0, jobs=24, servers=4, preset="contention-heavy")
    runs = nb.Runs.of(inst, run_policy(inst, "lpt").schedule)
    big = int(np.argmax(inst.modes.gpus))
    small = [s for s in range(inst.num_servers) if inst.modes.capacity[s] < inst.modes.gpus[big]]
    if not small:
        pytest.skip("every server holds the largest job")
    with pytest.raises(ValueError, match=f"job {big} fits none"):
        nb.build(runs, [big], small, int(runs.end.max()))


def test_the_phase_of_auto_for_sums_is_recorded_where_the_full_model_does_not_fit(monkeypatch) -> None:
    from rar_opt.solvers import sum_bounds

    inst = paper(0, jobs=40, servers=4, preset="contention-heavy")
    monkeypatch.setattr(sum_bounds, "why_no_model", lambda instance: "skipped: (test) the model does not fit")
    res = solve(inst, "auto", time_limit=6, objective="total")
    phases = {p.name: p for p in res.record.phases}
    assert "improve (neighbourhoods)" in phases
    assert "full cp-sat" not in phases
    searched = [p for p in res.record.phases if p.objective is not None and p.bound is None]
    assert res.objective is not None and res.objective <= min(p.objective for p in searched)
    assert res.objective == _judged(inst, res.schedule)[0]


def test_a_step_frees_at_most_max_free_jobs_with_consecutive_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    inst = paper(0, jobs=24, servers=4, preset="contention-heavy")
    start = run_policy(inst, "lpt").schedule
    freed: list[tuple[int, ...]] = []
    build = nb.build

    def spy(runs, free, servers, last, unsplit=()):
        free = tuple(free)
        movable = sorted((int(runs.start[j]), j) for j in nb.movable(runs) if runs.server[j] in servers)
        order = [j for _, j in movable]
        if free:
            at = min(order.index(j) for j in free)
            assert set(free) == set(order[at : at + len(free)])  # consecutive by start among the servers' jobs
            freed.append(free)
        return build(runs, free, servers, last, unsplit)

    monkeypatch.setattr(neighbourhoods, "MAX_FREE", 3)
    monkeypatch.setattr(nb, "build", spy)
    found = neighbourhoods.search(inst, start, time_limit=60, seed=2, steps=6)
    assert freed and max(len(f) for f in freed) == 3
    assert found.total <= found.first == _judged(inst, start)[0]
    assert found.total == _judged(inst, found.schedule)[0]
