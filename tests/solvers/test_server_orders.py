"""The server-orders search (rar_opt.solvers.server_orders): its serial schedule places each
job at the earliest slot a naive scan finds; every schedule it returns passes the checker, is
never worse than the start nor longer, holds every split job where it was, is reproducible
from its seed; and ``auto`` for sums records it as a phase."""

from __future__ import annotations

import logging
from itertools import permutations, product

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from rar_opt import Instance, check
from rar_opt.algorithms import run_policy
from rar_opt.formulations import neighbourhood as nb
from rar_opt.instances.generate import paper
from rar_opt.solvers import server_orders, solve

from ..strategies import tiny_instances, with_releases


def _judged(inst: Instance, schedule) -> tuple[int, int]:
    report = check(inst, schedule)
    assert report.feasible, report.violations
    return int(report.result.completion.sum()), int(report.result.makespan)


def _naive_serial(free, order, gpus, length, release, last):
    """Slot by slot: the first start from the release whose whole run fits."""
    free = list(free)
    total, starts = 0, {}
    for j in order:
        for t in range(release[j], last - length[j] + 1):
            if all(free[u] >= gpus[j] for u in range(t, t + length[j])):
                break
        else:
            return None
        for u in range(t, t + length[j]):
            free[u] -= gpus[j]
        starts[j] = t
        total += t + length[j]
    return total, starts


def test_serial_places_each_job_at_its_earliest_fitting_slot_by_hand() -> None:
    free = np.array([2, 2, 1, 1, 2, 2, 2, 2])
    gpus, length, release = [2, 2, 1, 1], [2, 3, 2, 1], [0, 0, 0, 5]
    # job 0 at 0; job 1 needs 2 GPUs for 3 slots: from 4; job 2 (one GPU) fits at 2;
    # job 3 is released at 5, where job 1 holds both GPUs until 7
    assert server_orders.serial(free, [0, 1, 2, 3], gpus, length, release, 8) == (
        2 + 7 + 4 + 8,
        {0: 0, 1: 4, 2: 2, 3: 7},
    )
    assert server_orders.serial(free, [0, 1, 2, 3], gpus, length, release, 7) is None  # job 3 cannot end by 7
    assert list(free) == [2, 2, 1, 1, 2, 2, 2, 2]  # the profile given is not changed


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 4), min_size=1, max_size=24),
    st.lists(st.tuples(st.integers(1, 4), st.integers(1, 6), st.integers(0, 10)), min_size=1, max_size=6),
    st.randoms(use_true_random=False),
)
def test_serial_agrees_with_a_naive_scan(profile: list[int], jobs: list[tuple[int, int, int]], rnd) -> None:
    free = np.array(profile, dtype=np.int64)
    gpus, length, release = (list(x) for x in zip(*jobs, strict=True))
    order = list(range(len(jobs)))
    rnd.shuffle(order)
    expected = _naive_serial(profile, order, gpus, length, release, len(profile))
    assert server_orders.serial(free, order, gpus, length, release, len(profile)) == expected


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(0, 3), min_size=2, max_size=9),
    st.lists(st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(0, 4)), min_size=1, max_size=4),
)
def test_the_best_list_is_the_best_placement_of_a_servers_jobs(profile: list[int], jobs) -> None:
    # the lists lose nothing on one server: the least sum over every list's serial schedule
    # is the least sum over every choice of starts that fits the free GPUs (brute force)
    free = np.array(profile, dtype=np.int64)
    last = len(profile)
    gpus, length, release = (list(x) for x in zip(*jobs, strict=True))
    by_lists = [
        server_orders.serial(free, list(p), gpus, length, release, last) for p in permutations(range(len(jobs)))
    ]
    best_list = min((placed[0] for placed in by_lists if placed is not None), default=None)
    best_starts = None
    for starts in product(*(range(release[j], last - length[j] + 1) for j in range(len(jobs)))):
        used = np.zeros(last, dtype=np.int64)
        for j, t in enumerate(starts):
            used[t : t + length[j]] += gpus[j]
        if (used <= free).all():
            value = sum(t + length[j] for j, t in enumerate(starts))
            best_starts = value if best_starts is None else min(best_starts, value)
    assert best_list == best_starts


@settings(max_examples=40, deadline=None)
@given(
    st.one_of(tiny_instances(), with_releases(tiny_instances(), max_release=6)),  # the checker refuses early starts
    st.sampled_from(["ls", "ff", "sjf-bco", "lpt"]),
    st.integers(0, 3),
)
def test_never_worse_never_longer_checked_and_split_jobs_held(inst: Instance, policy: str, seed: int) -> None:
    start = run_policy(inst, policy).schedule
    first, span = _judged(inst, start)
    heard: list[logging.LogRecord] = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = heard.append  # type: ignore[method-assign]
    logger = logging.getLogger(server_orders.__name__)
    logger.addHandler(handler)
    try:
        found = server_orders.search(inst, start, time_limit=30, seed=seed, moves=300)
    finally:
        logger.removeHandler(handler)
    assert not heard, heard[0].getMessage()  # its schedules are what the simulator says: no fallback
    total, makespan = _judged(inst, found.schedule)
    assert total == found.total <= first == found.first
    assert makespan <= span
    runs, after = nb.Runs.of(inst, start), nb.Runs.of(inst, found.schedule)
    held = np.ones(inst.num_jobs, dtype=bool)
    held[nb.movable(runs)] = False
    assert np.array_equal(after.start[held], runs.start[held])
    assert np.array_equal(after.placements[held], runs.placements[held])
    assert not after.split[~held].any()  # a job that moved runs on one server


def test_improves_a_poor_schedule_and_is_reproducible() -> None:
    inst = paper(0, jobs=40, servers=4, preset="contention-heavy")
    start = run_policy(inst, "lpt").schedule  # longest first: the short jobs wait
    first, _ = _judged(inst, start)
    one = server_orders.search(inst, start, time_limit=60, seed=3, moves=2000)
    two = server_orders.search(inst, start, time_limit=60, seed=3, moves=2000)
    assert one.total < first and one.steps == 2000 and one.kept >= 1
    assert one.total == _judged(inst, one.schedule)[0]
    assert one.schedule.starts == two.schedule.starts
    assert list(map(tuple, one.schedule.placements)) == list(map(tuple, two.schedule.placements))


def test_the_phase_of_auto_for_sums_is_recorded_before_the_neighbourhoods(monkeypatch) -> None:
    from rar_opt.solvers import sum_bounds

    inst = paper(0, jobs=40, servers=4, preset="contention-heavy")
    monkeypatch.setattr(sum_bounds, "why_no_model", lambda instance: "skipped: (test) the model does not fit")
    res = solve(inst, "auto", time_limit=8, objective="total")
    names = [p.name for p in res.record.phases]
    assert "improve (server-orders)" in names
    if "improve (neighbourhoods)" in names:
        assert names.index("improve (server-orders)") < names.index("improve (neighbourhoods)")
    assert res.objective == _judged(inst, res.schedule)[0]
