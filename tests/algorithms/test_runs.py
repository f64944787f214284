"""``pack``'s run index (rar_opt/algorithms/runs.py) gives the decisions of the scans it
replaced: the earliest slot at which some server holds g GPUs for d slots and the same
server there, and for the split search the servers open over a window, on profiles that
change under it (whole and split takes), grow, and hold servers too small for the job."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rar_opt.algorithms.runs import FAR, OPEN, RunIndex

from ..strategies import tiny_instances, with_releases

NEVER = 2**62


def _scan(free: np.ndarray, capacity: np.ndarray, g: int, d: int, lo: int, latest: int) -> tuple[int, int]:
    """The placement rule as pack read it before the index (every host, every slot of the window)."""
    stop = latest + d
    rows = np.flatnonzero(capacity >= g)
    ok = free[rows, lo:stop] >= g
    count = np.zeros((len(rows), ok.shape[1] + 1), dtype=np.int32)
    np.cumsum(ok, axis=1, out=count[:, 1:])
    fits = (count[:, d:] - count[:, :-d]) == d
    first = np.where(fits.any(axis=1), fits.argmax(axis=1), NEVER)
    t = int(first.min())
    tied = rows[first == t]
    t += lo
    return t, int(tied[np.lexsort((capacity[tied], free[tied, t]))[0]])


def _first_bad(bad: np.ndarray) -> np.ndarray:
    """For every row and slot t: the first bad slot >= t, FAR when none (by brute force)."""
    out = np.full(bad.shape, FAR, dtype=np.int64)
    for s in range(bad.shape[0]):
        for t in range(bad.shape[1]):
            later = np.flatnonzero(bad[s, t:])
            if len(later):
                out[s, t] = t + later[0]
    return out


class _Profile:
    """A bare profile with the index beside it: take GPUs (whole or split), grow, ask."""

    def __init__(self, capacity: np.ndarray, slots: int) -> None:
        self.capacity = capacity
        self.free = np.repeat(capacity[:, None].astype(np.int32), slots, axis=1)
        self.held = np.zeros(self.free.shape, dtype=bool)
        self.busy_until = 0
        self.runs = RunIndex(self.free, capacity, self.held)

    def room(self, slots: int) -> None:
        have = self.free.shape[1]
        if slots > have:
            extra = max(slots - have, have)
            self.free = np.hstack([self.free, np.repeat(self.capacity[:, None].astype(np.int32), extra, axis=1)])
            self.held = np.hstack([self.held, np.zeros((len(self.capacity), extra), dtype=bool)])
            self.runs.grow(self.free, self.held)

    def take(self, s: int, t: int, d: int, y: int, held: bool = False) -> None:
        self.room(t + d)
        before = self.free[s, t : t + d].copy()
        self.free[s, t : t + d] -= y
        if held:
            self.held[s, t : t + d] = True
        self.runs.update(s, t, t + d, y, before, held)
        self.busy_until = max(self.busy_until, t + d)

    def check_tables(self) -> None:
        for g, end in self.runs.end.items():
            assert (end == _first_bad(self.free < g if g != OPEN else (self.free < 1) | self.held)).all(), g
            block = self.runs.block
            for b in range(len(self.runs.heads)):
                assert (self.runs.top[g][b] == end[b * block : (b + 1) * block].max(axis=0)).all()
        assert (self.runs.table(OPEN)[0] == _first_bad((self.free < 1) | self.held)).all()


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from([1, 2, 3, 4, 8]), min_size=1, max_size=70),
    st.integers(1, 12),
    st.lists(st.tuples(st.integers(1, 8), st.integers(1, 9), st.integers(0, 15)), min_size=1, max_size=60),
)
def test_the_index_places_every_job_where_the_scan_does(
    capacity: list[int], slots: int, jobs: list[tuple[int, int, int]]
) -> None:
    cap = np.array(capacity, dtype=np.int64)
    prof = _Profile(cap, slots)
    prof.runs.table(OPEN)  # kept up to date from the start, as the split search asks it
    for g, d, lo in jobs:
        if g > cap.max():
            continue  # no host: pack splits such a job, never asks the index
        latest = max(prof.busy_until, lo)
        prof.room(latest + d)
        want = _scan(prof.free, cap, g, d, lo, latest)
        assert prof.runs.earliest(g, d, lo, latest) == want
        t, s = want
        prof.take(s, t, d, g)
        if d % 3 == 0:  # a split-like take: one GPU of every other open server at once
            prof.room(t + d)
            for other in range(0, len(cap), 2):
                if prof.free[other, t : t + d].min() > 0 and not prof.held[other, t : t + d].any():
                    prof.take(other, t, d, 1, held=True)
    if prof.free.shape[0] * prof.free.shape[1] <= 3000:
        prof.check_tables()


@pytest.mark.parametrize("servers", [1, 5, 33, 100])
def test_the_index_tables_equal_the_profile_after_many_takes(servers: int) -> None:
    rng = np.random.default_rng(servers)
    cap = rng.choice([4, 8, 16, 32], size=servers).astype(np.int64)
    prof = _Profile(cap, 20)
    for k in range(300):
        g = int(rng.choice([1, 2, 4, 8, 16]))
        if g > cap.max():
            continue  # no host
        d, lo = int(rng.integers(1, 30)), int(rng.integers(0, 40))
        latest = max(prof.busy_until, lo)
        prof.room(latest + d)
        t, s = prof.runs.earliest(g, d, lo, latest)
        prof.take(s, t, d, g, held=k % 7 == 0)
        if k == 150:
            prof.runs.table(OPEN)  # built from the profile halfway, then kept up to date
    prof.check_tables()


def _pack(inst, **options):
    from rar_opt.algorithms import run_policy

    result = run_policy(inst, "pack", time_limit=1000.0, lanes=0.0, **options)
    return result.schedule.to_dict()["jobs"]


@settings(max_examples=30, deadline=None)
@given(
    st.one_of(tiny_instances(max_jobs=8, max_servers=4), with_releases(tiny_instances(max_jobs=6))),
    st.sampled_from(["must", "may", "both"]),
)
def test_pack_places_every_job_alike_with_the_index_the_scan_or_no_room_for_tables(inst, rule: str) -> None:
    from rar_opt.algorithms import profile, runs

    scanned = _pack(inst, iterations=2, split=rule)  # a small cluster: scanned
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(profile, "INDEX_SERVERS", 1)
        assert _pack(inst, iterations=2, split=rule) == scanned  # the index
        mp.setattr(runs, "TABLE_CELLS", 2 * inst.num_servers * (inst.horizon + 1))
        assert _pack(inst, iterations=2, split=rule) == scanned  # tables for one or two counts, then none


def test_pack_at_paper_scale_alike_with_the_index_and_the_scan() -> None:
    from rar_opt.algorithms import profile
    from rar_opt.instances.generate import paper

    inst = paper(1, jobs=160, servers=20, preset="contention-heavy")
    scanned = _pack(inst, iterations=1, split="both")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(profile, "INDEX_SERVERS", 1)
        assert _pack(inst, iterations=1, split="both") == scanned
