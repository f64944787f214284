"""The backfilling builder and the ``backfill`` policy (rar_opt/algorithms/backfill.py):
checked schedules whose completions the builder knows, splits that never share a server,
jobs that start out of list order, determinism, the search's floor and its time limit."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rar_opt import Cluster, Instance, Job, check, simulate
from rar_opt.algorithms import run_policy
from rar_opt.algorithms.backfill import (
    FITS,
    SPLITS,
    BackfillParams,
    Builder,
    BuildRules,
    NoTimeToBuild,
    Plan,
    _flippable,
    _score,
    backfill_schedule,
    backfill_search,
)
from rar_opt.algorithms.order_search import Choice, choice_move, move, walk_orders
from rar_opt.algorithms.orders import SUM_ORDERS
from rar_opt.errors import InputError
from rar_opt.instances.generate import paper

from ..helpers import BEYOND_HORIZON
from ..strategies import reference_simulate, reference_violations, tiny_instances, with_releases
from ..topology_strategies import micro_topology_instances, reference_topology_simulate

rules = st.builds(BuildRules, st.sampled_from(FITS), st.booleans(), st.sampled_from(SPLITS), st.booleans())


@given(st.one_of(tiny_instances(), with_releases(tiny_instances())), rules, st.data())
def test_every_schedule_passes_the_checker_and_ends_when_planned(inst: Instance, how: BuildRules, data) -> None:
    order = data.draw(st.permutations(range(inst.num_jobs)))
    sched = backfill_schedule(inst, order, how)
    # the builder ignores the horizon: ending after T is the only violation allowed
    assert check(inst, sched).names() <= BEYOND_HORIZON
    assert reference_violations(inst, sched) <= BEYOND_HORIZON
    plan = Builder(inst, how).plan(list(order))
    assert plan is not None
    assert reference_simulate(inst, sched)["completion"] == plan.completion.tolist()
    assert all(plan.starts >= inst.releases)


@given(tiny_instances(max_jobs=6, max_servers=4), rules, st.data())
def test_no_server_ever_carries_two_split_rings(inst: Instance, how: BuildRules, data) -> None:
    sched = backfill_schedule(inst, data.draw(st.permutations(range(inst.num_jobs))), how)
    for segment in simulate(inst, sched).segments:
        assert segment.contention.max(initial=0) <= 1


@settings(max_examples=30)
@given(micro_topology_instances(), rules, st.data())
def test_on_a_topology_one_split_ring_at_a_time_and_planned_ends(inst: Instance, how: BuildRules, data) -> None:
    order = list(data.draw(st.permutations(range(inst.num_jobs))))
    sched = backfill_schedule(inst, order, how)
    assert check(inst, sched).names() <= BEYOND_HORIZON
    plan = Builder(inst, how).plan(order)
    assert plan is not None
    assert reference_topology_simulate(inst, sched)["completion"] == plan.completion.tolist()
    split = [j for j, u in enumerate(plan.used) if len(u) > 1]
    for a in split:
        for b in split:
            if a < b:  # never at the same time
                assert plan.completion[a] <= plan.starts[b] or plan.completion[b] <= plan.starts[a]


def _blocked() -> Instance:
    """One 4-GPU server: a 4-GPU job listed after a 2-GPU one (running 6 slots), and a
    short 2-GPU job listed last. The list engine keeps the wide job waiting for the first
    one and the short job behind it; backfilling starts the short job at once."""
    cluster = Cluster(servers=(4,), b_inter=1.0, b_intra=10.0)
    jobs = (
        Job("long", gpus=2, iterations=6, bwd_time=1.0),
        Job("wide", gpus=4, iterations=2, bwd_time=1.0),
        Job("short", gpus=2, iterations=2, bwd_time=1.0),
    )
    return Instance("blocked", 40, cluster, jobs)


def test_a_later_job_starts_before_an_earlier_one_that_waits() -> None:
    inst = _blocked()
    plan = Builder(inst, BuildRules(reserve=False)).plan([0, 1, 2])
    assert plan is not None
    assert plan.starts.tolist() == [0, 6, 0]  # the short job fills the room the wide one cannot use
    # with the reservation the wide job keeps the server from slot 6: the short job ends by then
    reserved = Builder(inst, BuildRules(reserve=True)).plan([0, 1, 2])
    assert reserved is not None and reserved.starts.tolist() == [0, 6, 0]


@pytest.mark.parametrize(
    ("capacity", "first_gpus", "wide_gpus", "option", "starts_off", "starts_on"),
    [
        # a 4-GPU server: job a (2 GPUs) runs; the wide job (4 GPUs) waits for slot 3;
        # without the reservation the long job starts at once and delays it to 10
        pytest.param(4, 2, 4, "reserve", [0, 10, 0], [0, 3, 5], id="the-reservation-keeps-a-long-job-off"),
        # an 8-GPU server: job a (4 GPUs) runs; the wide job (6 GPUs) waits for slot 3,
        # when 8 are free: 2 to spare, which the long job may take at once
        pytest.param(8, 4, 6, "spare", [0, 3, 3], [0, 3, 0], id="a-later-job-takes-the-spare-gpus"),
    ],
)
def test_the_reservation_and_its_spare_gpus(
    capacity: int, first_gpus: int, wide_gpus: int, option: str, starts_off: list[int], starts_on: list[int]
) -> None:
    # one server: job a (3 slots) runs, the wide job waits for it, the long job (2 GPUs,
    # 10 slots) is listed last; the option off, then on (the other rules at their defaults)
    cluster = Cluster(servers=(capacity,), b_inter=1.0, b_intra=10.0)
    jobs = (
        Job("a", gpus=first_gpus, iterations=3, bwd_time=1.0),
        Job("wide", gpus=wide_gpus, iterations=2, bwd_time=1.0),
        Job("long", gpus=2, iterations=10, bwd_time=1.0),
    )
    inst = Instance("held", 40, cluster, jobs)
    for value, starts in ((False, starts_off), (True, starts_on)):
        plan = Builder(inst, BuildRules(**{option: value})).plan([0, 1, 2])
        assert plan is not None
        assert plan.starts.tolist() == starts


def test_the_walk_stops_when_its_values_run_out_and_keeps_the_best_order() -> None:
    # orders valued by sum_i i * order[i] (smallest: the largest job index first); the
    # evaluation runs out (None: out of time) after 8 values
    seen: list[int] = []

    def value(order: list[int]) -> int | None:
        if len(seen) == 8:
            return None
        seen.append(sum(i * j for i, j in enumerate(order)))
        return seen[-1]

    start = list(range(6))
    walk = walk_orders(np.random.default_rng(0), start, 55, value, lambda v: (v,), 100, move)
    assert walk.capped and walk.moves == 8
    assert walk.value == min([55, *seen]) == sum(i * j for i, j in enumerate(walk.order))
    assert sorted(walk.order) == start and walk.improvements <= 8


@given(tiny_instances(max_jobs=5), st.integers(0, 2**31 - 1))
def test_same_seed_same_result(inst: Instance, seed: int) -> None:
    first = run_policy(inst, "backfill", seed=seed, iterations=30)
    assert first == run_policy(inst, "backfill", seed=seed, iterations=30)
    assert first.search is not None and not first.search["capped"]


@given(st.integers(0, 2**31 - 1), st.integers(2, 12))
def test_moves_without_focus_are_the_moves_before_it(seed: int, n: int) -> None:
    # focus 0 draws no extra random number: the same seed walks the same orders as before
    weights = np.arange(1.0, n + 1.0)
    a, b = np.random.default_rng(seed), np.random.default_rng(seed)
    order = list(range(n))
    for _ in range(20):
        order, other = move(a, order), move(b, order, weights, 0.0)
        assert order == other


@given(st.integers(0, 2**31 - 1), st.lists(st.booleans(), min_size=2, max_size=12))
def test_focused_moves_take_only_weighted_jobs(seed: int, weighted: list[bool]) -> None:
    # with focus 1, jobs of weight 0 are never the ones taken out: their relative order holds
    n = len(weighted)
    weights = np.array([float(w) for w in weighted])
    rng = np.random.default_rng(seed)
    order = rng.permutation(n).tolist()
    idle = [j for j in order if not weighted[j]]
    for _ in range(30):
        if weights.sum() == 0:
            break
        after = move(rng, order, weights, 1.0)
        assert sorted(after) == list(range(n))
        moved_idle = [j for j in after if not weighted[j]]
        # a swap may move an idle neighbour of a weighted job by one place, never past another idle job
        assert moved_idle == idle
        order = after


def test_focused_moves_favour_heavy_jobs() -> None:
    # job 0 carries 9/10 of the weight: it is the one shifted in most focused shift moves
    rng = np.random.default_rng(5)
    weights = np.array([9.0, 0.25, 0.25, 0.25, 0.25])
    first = sum(move(rng, [1, 2, 0, 3, 4], weights, 1.0).index(0) != 2 for _ in range(400))
    second = sum(move(rng, [0, 2, 1, 3, 4], weights, 1.0).index(1) != 2 for _ in range(400))
    assert first > 2 * second


@given(tiny_instances(max_jobs=5), st.integers(0, 2**31 - 1))
def test_same_seed_same_result_with_focus(inst: Instance, seed: int) -> None:
    first = run_policy(inst, "backfill", seed=seed, iterations=30, split="choose", focus=0.5)
    assert first == run_policy(inst, "backfill", seed=seed, iterations=30, split="choose", focus=0.5)
    assert check(inst, first.schedule).names() <= BEYOND_HORIZON


@settings(max_examples=25)
@given(st.one_of(tiny_instances(), with_releases(tiny_instances())), st.integers(0, 1000))
def test_the_search_is_never_worse_than_its_starts(inst: Instance, seed: int) -> None:
    result = run_policy(inst, "backfill", seed=seed, iterations=40)
    total = int(check(inst, result.schedule).result.completion.sum())
    builder = Builder(inst)
    for make in SUM_ORDERS.values():
        start = builder.plan(make(inst, "best").tolist())
        assert start is not None and total <= start.total
    assert result.search is not None and total <= result.search["start_total_completion"]


@given(tiny_instances(max_jobs=6, max_servers=4), st.sampled_from(FITS), st.data())
def test_jobs_held_unsplit_split_only_when_no_server_holds_them(inst: Instance, fit: str, data) -> None:
    order = list(data.draw(st.permutations(range(inst.num_jobs))))
    unsplit = frozenset(data.draw(st.sets(st.sampled_from(range(inst.num_jobs)))))
    builder = Builder(inst, BuildRules(fit=fit))
    plan = builder.plan(order, unsplit=unsplit)
    assert plan is not None
    widest = max(builder.cap)
    for j in unsplit:
        assert len(plan.used[j]) == 1 or builder.gpus[j] > widest
    # holding every job unsplit is the "must" rule
    must = Builder(inst, BuildRules(fit=fit, split="must")).plan(order)
    assert must is not None
    everyone = builder.plan(order, unsplit=frozenset(range(inst.num_jobs)))
    assert everyone is not None and everyone.used == must.used and everyone.starts.tolist() == must.starts.tolist()


@settings(max_examples=25)
@given(st.one_of(tiny_instances(), with_releases(tiny_instances())), st.integers(0, 1000))
def test_choosing_who_splits_is_never_worse_than_may_or_must_from_the_starts(inst: Instance, seed: int) -> None:
    result = run_policy(inst, "backfill", split="choose", seed=seed, iterations=40)
    assert check(inst, result.schedule).names() <= BEYOND_HORIZON
    total = int(check(inst, result.schedule).result.completion.sum())
    for split in ("may", "must"):
        builder = Builder(inst, BuildRules(split=split))
        for make in SUM_ORDERS.values():
            start = builder.plan(make(inst, "best").tolist())
            assert start is not None and total <= start.total
    assert result == run_policy(inst, "backfill", split="choose", seed=seed, iterations=40)


@settings(max_examples=25)
@given(st.one_of(tiny_instances(), with_releases(tiny_instances())), st.integers(0, 1000))
def test_starts_without_splits_by_choice_begin_the_walk_from_the_must_schedules(inst: Instance, seed: int) -> None:
    params = BackfillParams(split="choose", start_splits="none", seed=seed, iterations=0)
    result, state = backfill_search(inst, params)
    builder = Builder(inst, params.rules())
    assert state.unsplit == frozenset(_flippable(builder))  # no walk: the best start itself
    must = Builder(inst, BuildRules(split="must"))
    starts = [must.plan(make(inst, "best").tolist()) for make in SUM_ORDERS.values()]
    chosen = builder.plan(state.order, unsplit=state.unsplit)
    assert chosen is not None and _score(chosen, inst.horizon) == min(_score(p, inst.horizon) for p in starts if p)
    total = int(check(inst, result.schedule).result.completion.sum())
    assert total == chosen.total
    walked, _ = backfill_search(inst, dataclasses.replace(params, iterations=40))
    assert int(check(inst, walked.schedule).result.completion.sum()) <= total  # the walk keeps its start
    assert walked == run_policy(inst, "backfill", split="choose", start_splits="none", seed=seed, iterations=40)


@settings(max_examples=25)
@given(st.one_of(tiny_instances(), with_releases(tiny_instances())), st.integers(0, 1000), st.integers(0, 1000))
def test_a_resumed_search_is_never_worse_than_the_state_it_resumes(inst: Instance, seed: int, other: int) -> None:
    params = BackfillParams(split="choose", seed=seed, iterations=20)
    _, state = backfill_search(inst, params)
    again, end = backfill_search(inst, dataclasses.replace(params, seed=other), resume=state)
    before = _score(Builder(inst, params.rules()).plan(state.order, unsplit=state.unsplit), inst.horizon)
    after = _score(Builder(inst, params.rules()).plan(end.order, unsplit=end.unsplit), inst.horizon)
    assert after <= before
    assert int(check(inst, again.schedule).result.completion.sum()) == after[2]
    with pytest.raises(ValueError, match="resume"):
        backfill_search(inst, params, resume=Choice(state.order[:-1], frozenset()))


def test_choose_flips_a_jobs_leave_to_split_or_moves_the_order() -> None:
    rng = np.random.default_rng(3)
    state = Choice(list(range(6)), frozenset())
    flips = moves = 0
    for _ in range(400):
        after = choice_move(rng, state, [1, 4])
        if after.unsplit != state.unsplit:
            flips += 1
            assert after.order == state.order and len(after.unsplit ^ state.unsplit) == 1
            assert after.unsplit <= {1, 4}
        else:
            moves += 1
            assert sorted(after.order) == list(range(6))
        state = after
    assert 0.1 < flips / 400 < 0.3  # FLIP_SHARE = 0.2
    # nothing to flip: every move is an order move
    assert all(choice_move(rng, state, []).unsplit == state.unsplit for _ in range(50))


@settings(max_examples=25)
@given(tiny_instances(), st.integers(0, 1000))
def test_the_search_keeps_within_the_horizon_when_a_start_does(inst: Instance, seed: int) -> None:
    # the horizon cut to the shortest start's makespan: the sum alone might prefer a longer one
    builder = Builder(inst)
    plans = [builder.plan(make(inst, "best").tolist()) for make in SUM_ORDERS.values()]
    tight = dataclasses.replace(inst, horizon=min(p.makespan for p in plans if p is not None))
    result = run_policy(tight, "backfill", seed=seed, iterations=40)
    assert not result.exceeds_horizon
    assert check(tight, result.schedule).feasible


def _plan(completion: list[int]) -> Plan:
    return Plan(np.zeros(len(completion), dtype=np.int64), np.asarray(completion, dtype=np.int64), ())


@given(
    st.lists(st.integers(1, 40), min_size=1, max_size=8),
    st.lists(st.integers(1, 40), min_size=1, max_size=8),
    st.integers(1, 40),
)
def test_the_score_ranks_by_the_last_end_then_the_slots_past_the_cap_then_the_sum(
    a: list[int], b: list[int], cap: int
) -> None:
    # the score of docs/algorithms.md section 5.5, point 4, recomputed here from its words
    def words(c: list[int]) -> tuple[int, int, int]:
        return max(0, max(c) - cap), sum(max(0, x - cap) for x in c), sum(c)

    assert _score(_plan(a), cap) == words(a)
    assert (_score(_plan(a), cap) < _score(_plan(b), cap)) == (words(a) < words(b))
    if max(a) <= cap:  # within the cap the sum decides alone
        assert _score(_plan(a), cap)[:2] == (0, 0)


def test_of_two_schedules_past_the_cap_the_one_nearer_it_ranks_first() -> None:
    # the same last end and a larger sum, but one job past the cap instead of three
    assert _score(_plan([12, 12, 1, 1]), 10) > _score(_plan([12, 9, 9, 9]), 10)


def test_the_policy_at_paper_scale_searches_and_keeps_its_floor() -> None:
    inst = paper(0, jobs=60, servers=6, preset="contention-heavy")
    result = run_policy(inst, "backfill", iterations=60)
    search = result.search
    assert search is not None and search["iterations"] == 60 and search["rules"] == "best+reserve"
    total = int(check(inst, result.schedule).result.completion.sum())
    assert total <= search["start_total_completion"]
    assert result.schedule.meta["method"] == "backfill"


def test_the_time_limit_stops_the_search_and_a_build() -> None:
    inst = paper(0, jobs=60, servers=6)
    # a move budget far beyond the limit: the clock stops the search, which answers
    result = run_policy(inst, "backfill", iterations=10**9, time_limit=0.3)
    assert result.search is not None and result.search["capped"]
    assert check(inst, result.schedule).feasible
    # a deadline already passed stops a build: no plan, and the policy says so
    builder = Builder(inst)
    assert builder.plan(list(range(inst.num_jobs)), deadline=0.0) is None
    with pytest.raises(NoTimeToBuild, match="time limit"):
        run_policy(inst, "backfill", time_limit=1e-9)


def test_bad_parameters_are_input_errors() -> None:
    inst = _blocked()
    bad = (
        ("fit", "worst"),
        ("reserve", 1),
        ("spare", "yes"),
        ("split", "both"),
        ("iterations", -1),
        ("focus", 1.5),
        ("focus", -0.1),
        ("focus", float("nan")),
        ("focus", "half"),
        ("start_splits", "some"),
        ("start_splits", None),
    )
    for option, value in bad:
        with pytest.raises(InputError, match=option):
            run_policy(inst, "backfill", **{option: value})
    with pytest.raises(InputError, match="start_order"):
        run_policy(inst, "backfill", start_order=(0, 0, 1))
    with pytest.raises(ValueError, match="every job"):
        backfill_schedule(inst, [0, 1])


def test_a_job_wider_than_every_server_splits_even_under_must() -> None:
    cluster = Cluster(servers=(2, 2, 2), b_inter=1.0, b_intra=10.0)
    jobs = (Job("wide", gpus=3, iterations=2, bwd_time=0.5), Job("one", gpus=1, iterations=2, bwd_time=0.5))
    inst = Instance("wide", 40, cluster, jobs)
    plan = Builder(inst, BuildRules(split="must")).plan([0, 1])
    assert plan is not None and len(plan.used[0]) == 2 and len(plan.used[1]) == 1
    assert np.array_equal(plan.starts, [0, 0])
