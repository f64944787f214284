"""``pack``: exact timing in its class, the split rule, justification, releases, topologies."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from rar_opt import Instance
from rar_opt.algorithms import run_policy
from rar_opt.instances.generate import paper

from ..bruteforce import brute_force
from ..helpers import read_instance
from ..strategies import micro_instances, reference_simulate, reference_violations, tiny_instances, with_releases
from ..topology_strategies import micro_topology_instances


def _split_overlaps(inst: Instance, starts: np.ndarray, y: np.ndarray, end: np.ndarray) -> bool:
    """Whether two split jobs ever hold GPUs of one server in the same slot."""
    split = np.flatnonzero((y > 0).sum(axis=1) >= 2)
    for a in split:
        for b in split[split > a]:
            share = bool(((y[a] > 0) & (y[b] > 0)).any())
            if share and starts[a] < end[b] and starts[b] < end[a]:
                return True
    return False


def _judged(inst: Instance, **options: object):
    result = run_policy(inst, "pack", **options)
    sched = result.schedule
    ref = reference_simulate(inst, sched)
    allowed = {"completion_in_horizon", "start_in_horizon"} if result.exceeds_horizon else set()
    assert reference_violations(inst, sched) <= allowed
    return result, sched, np.asarray(ref["completion"])


@settings(max_examples=60, deadline=None)
@given(
    st.one_of(tiny_instances(max_jobs=6), with_releases(tiny_instances(max_jobs=5))),
    st.integers(0, 3),
    st.sampled_from(["must", "may", "both"]),
)
def test_pack_is_checked_and_never_shares_a_server_between_split_jobs(inst: Instance, seed: int, rule: str) -> None:
    result, sched, completion = _judged(inst, seed=seed, iterations=3, split=rule)
    starts, y = sched.start_array, sched.placement_array
    assert not _split_overlaps(inst, starts, y, completion)
    assert (starts >= inst.releases).all()  # never before a release
    single = (y > 0).sum(axis=1) == 1
    fits = inst.cluster.capacity.max() >= inst.arrays.gpus
    assert not (single & ~fits).any()  # a job no server holds is always split
    if rule == "must":
        assert (single == fits).all()  # a job that fits on one server is never split
    assert result.search is not None and result.search["split_jobs"] == int((~fits).sum())
    assert result.search["split"] == int((~single).sum())


@settings(max_examples=30, deadline=None)
@given(tiny_instances(max_jobs=6))
def test_both_split_rules_give_the_better_of_the_two(inst: Instance) -> None:
    spans = {
        rule: max(reference_simulate(inst, run_policy(inst, "pack", iterations=0, split=rule).schedule)["completion"])
        for rule in ("must", "may", "both")
    }
    assert spans["both"] == min(spans["must"], spans["may"])


def test_splitting_by_choice_beats_keeping_every_job_whole_on_a_frontier_instance() -> None:
    # 20 jobs on 8 servers of 1-4 GPUs (the frontier's tiny family, seed 0): whole jobs
    # queue for the few large servers; split over idle small ones they end far earlier
    from rar_opt.instances.generate import generate

    inst = generate("tiny", 0, jobs=20, servers=8)
    spans = {
        rule: max(reference_simulate(inst, run_policy(inst, "pack", iterations=0, split=rule).schedule)["completion"])
        for rule in ("must", "may")
    }
    assert spans["may"] < spans["must"]


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 4), st.integers(2, 12), st.integers(1, 9), st.integers(0, 2**31 - 1))
def test_the_window_search_sees_the_same_idle_gpus_as_slot_by_slot(servers: int, slots: int, d: int, seed: int) -> None:
    from rar_opt.algorithms.profile import Profile, jobs_of
    from rar_opt.algorithms.runs import RunIndex

    rng = np.random.default_rng(seed)
    inst = paper(seed % 7, jobs=6, servers=servers)
    profile = Profile(jobs_of(inst), slots + d, may_split=True)
    cap = inst.cluster.capacity
    profile.free[:] = rng.integers(0, cap[:, None] + 1, profile.free.shape)
    profile.split_busy = rng.random(profile.free.shape) < 0.2
    cand = np.unique(rng.integers(0, slots, 4))
    _check_windows(profile, cand, d, servers, cap)  # every server read (a small cluster)
    profile.runs = RunIndex(profile.free, cap, profile.split_busy)  # the index, on the profile set by hand
    _check_windows(profile, cand, d, servers, cap)


def _check_windows(profile, cand: np.ndarray, d: int, servers: int, cap: np.ndarray) -> None:
    for most in sorted({1, servers}):  # the spans tried never pass ``most``: its first rows
        _, top, total = profile._windows(cand, d, most)
        for k, t in enumerate(cand.tolist()):
            idle = profile.free[:, t : t + d].min(axis=1).astype(np.int64)
            idle[profile.split_busy[:, t : t + d].any(axis=1)] = 0
            assert top[:, k].tolist() == sorted(idle.tolist(), reverse=True)[:most]
            assert total[:, k].tolist() == np.cumsum(sorted(idle.tolist(), reverse=True))[:most].tolist()
    # asked for spans of ``fewest`` servers or more, a start fits a span n exactly as before
    for fewest in range(1, servers + 1):
        _, top, total = profile._windows(cand, d, servers, fewest)
        for k, t in enumerate(cand.tolist()):
            idle = profile.free[:, t : t + d].min(axis=1).astype(np.int64)
            idle[profile.split_busy[:, t : t + d].any(axis=1)] = 0
            ranked = np.array(sorted(idle.tolist(), reverse=True))
            for n in range(fewest, servers + 1):
                for g in range(1, int(cap.sum()) + 1):
                    want = ranked[n - 1] >= 1 and ranked[:n].sum() >= g
                    assert (top[n - 1, k] >= 1 and total[n - 1, k] >= g) == want


@settings(max_examples=25, deadline=None)
@given(micro_topology_instances())
def test_pack_times_split_jobs_exactly_on_a_topology(inst: Instance) -> None:
    _, sched, completion = _judged(inst, iterations=2)
    y = sched.placement_array
    split = np.flatnonzero((y > 0).sum(axis=1) >= 2)
    for a in split:  # on a topology: one split job at a time, anywhere
        for b in split[split > a]:
            assert not (sched.start_array[a] < completion[b] and sched.start_array[b] < completion[a])


@settings(max_examples=40, deadline=None)
@given(micro_instances())
def test_pack_is_never_better_than_the_optimum(inst: Instance) -> None:
    result = run_policy(inst, "pack", iterations=2)
    span = max(reference_simulate(inst, result.schedule)["completion"])
    best = brute_force(inst, span)  # the optimum among schedules ending by span
    assert best is not None and best[0] <= span


@settings(max_examples=30, deadline=None)
@given(tiny_instances(max_jobs=6))
def test_justification_never_lengthens_the_schedule(inst: Instance) -> None:
    plain = run_policy(inst, "pack", iterations=0, justify=False)
    justified = run_policy(inst, "pack", iterations=0)
    spans = [max(reference_simulate(inst, r.schedule)["completion"]) for r in (plain, justified)]
    assert spans[1] <= spans[0]


def test_restarts_never_lengthen_the_schedule() -> None:
    inst = paper(3, jobs=60, servers=6)
    spans = [run_policy(inst, "pack", iterations=k, time_limit=60.0).schedule for k in (0, 4)]
    made = [max(reference_simulate(inst, s)["completion"]) for s in spans]
    assert made[1] <= made[0]


def test_pack_finds_the_wait_of_wait_beats_start() -> None:
    # two jobs that must split share a server: starting both at once makes them contend
    # (8 slots); one after the other is the optimum, 6; pack's split rule finds it
    inst = read_instance("wait-beats-start")
    result = run_policy(inst, "pack")
    assert max(reference_simulate(inst, result.schedule)["completion"]) == 6


def test_a_pack_record_says_what_the_search_did() -> None:
    inst = paper(1, jobs=40, servers=5)
    result = run_policy(inst, "pack", iterations=3, seed=7)
    meta = result.schedule.meta
    assert meta["method"] == "pack" and meta["seed"] == 7
    search = meta["search"]
    assert search["start"] in ("fewest-hosts", "longest-first", "largest-area-first")
    assert search["iterations"] == 3 and search["justified"] is True and search["capped"] is False
    assert isinstance(search["split_by_choice"], bool) and search["split"] >= search["split_jobs"]
    assert result.trials == result.trials_requested >= 3 + 3


def test_the_time_limit_covers_the_starts() -> None:
    # a limit shorter than any plan: the first start's first plan is built (a schedule is
    # always returned), then nothing more begins: no other start, no justification
    # round, no restart; with time to spare every start runs
    inst = paper(2, jobs=40, servers=5)
    short = run_policy(inst, "pack", time_limit=1e-9, iterations=5)
    search = short.schedule.meta["search"]
    assert search["starts"] == 1 and search["capped"] is True and search["iterations"] == 0
    assert short.trials == 1
    assert not reference_violations(inst, short.schedule)
    full = run_policy(inst, "pack", iterations=0, lanes=0.0).schedule.meta["search"]
    assert full["starts"] == 6 and full["capped"] is False


def test_a_stop_request_ends_the_restarts_and_keeps_the_best(monkeypatch) -> None:
    # Ctrl-C during auto's improvement phase: the searches stop at their next restart
    import rar_opt.algorithms.packing as packing
    import rar_opt.algorithms.search as search

    inst = paper(2, jobs=40, servers=5)
    for module, name in ((packing, "pack"), (search, "improve")):
        monkeypatch.setattr(module, "stop_requested", lambda: 2)
        result = run_policy(inst, name, iterations=50, time_limit=60.0)
        assert result.search["iterations"] == 0 and result.search["capped"] is True
        assert max(reference_simulate(inst, result.schedule)["completion"]) == result.search["start_makespan"]


def test_a_stop_request_during_pack_s_starts_keeps_the_first(monkeypatch) -> None:
    # Ctrl-C while auto's heuristics build pack's six starts: it ends after the first
    import rar_opt.algorithms.packing as packing

    inst = paper(2, jobs=40, servers=5)
    whole = run_policy(inst, "pack", iterations=0)
    monkeypatch.setattr(packing, "stop_requested", lambda: 2)
    stopped = run_policy(inst, "pack", iterations=0)
    assert stopped.search["capped"] is True and whole.search["capped"] is False
    assert stopped.search["start"] == "fewest-hosts" and stopped.search["split_by_choice"] is False
    assert stopped.trials < whole.trials
    assert max(reference_simulate(inst, stopped.schedule)["completion"]) == stopped.search["start_makespan"]
