"""The flow LP's certified bounds on sum_j C_j and sum_j (C_j - r_j)
(rar_opt.formulations.flowlp, rar_opt.solvers.flowlp; docs/exactness.md, "The flow LP"): never above the
optimum (brute force, the exact CP-SAT model, the library), the same LP in every form and
by every solver, at least the bounds they are theorems over, and a valid answer whatever
the time limit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from rar_opt import Cluster, Instance, Job
from rar_opt.formulations import flowlp
from rar_opt.instances.library import instance_path
from rar_opt.solvers import Status, solve
from rar_opt.solvers.flowlp import flow_lp_bound, lagrangian_bound

from .bruteforce import brute_force
from .strategies import micro_instances, tiny_instances, with_releases

LIBRARY = (
    "tiny-2x1-s11",
    "tiny-3x2-s12",
    "tiny-4x2-s13",
    "tiny-4x3-s14",
    "tiny-5x4-s15",
    "tiny-6x3-s16",
    "tiny-6x4-s17",
    "tiny-7x4-s18",
    "tiny-8x2-s20",
    "tiny-8x4-s19",
    "wait-beats-start",
    "wait-beats-start-plus",
    "topology-two-rack",  # a two-rack network: the compact model proves the optimum
    "topology-6x4-two-rack",
)


def _job(name: str, gpus: int, slots: int, release: int = 0) -> Job:
    return Job(name, gpus, 10 * slots, bwd_time=0.1, release=release)  # 10 iterations per slot


def _optimal_total(inst: Instance) -> int:
    res = solve(inst, "cpsat" if inst.time_model.links is None else "compact", objective="total")
    assert res.status == Status.OPTIMAL, res.message
    return round(res.objective)


def test_by_hand_one_machine_with_releases() -> None:
    # one 2-GPU server; a (2 slots) at 0, three more like it at 3: every job needs the whole
    # server, the LP is then the time-indexed LP of one machine, and its optimum is the
    # schedule a, b0, b1, b2 back to back: C = 2, 5, 7, 9
    crowd = Instance("crowd", 12, Cluster(servers=(2,)), (_job("a", 2, 2), *(_job(f"b{i}", 2, 2, 3) for i in range(3))))
    b = flow_lp_bound(crowd, time_limit=None)
    assert (b.total, b.flow, b.method, b.proven) == (23, 14, "lp", True)
    assert b.mean_completion == 23 / 4 and b.mean_flow == 14 / 4
    assert _optimal_total(crowd) == 23


def test_the_lagrangian_at_zero_prices_is_the_per_job_bound() -> None:
    inst = Instance("two", 20, Cluster(servers=(2,)), (_job("a", 1, 3, 1), _job("b", 2, 4)))
    lp = flowlp.build(inst)
    ceil, value = lagrangian_bound(lp, np.zeros((lp.num_resources, lp.slots)))
    assert ceil == value == (1 + 3) + (0 + 4)


@settings(max_examples=8, deadline=None)
@given(with_releases(micro_instances(), max_release=3))
def test_never_above_brute_force(inst: Instance) -> None:
    total = _optimal_total(inst)
    upper = max(j.release for j in inst.jobs) + total - int(inst.bounds.rho_min.sum()) + 1
    bf = brute_force(inst, upper, objective="total")
    assert bf is not None and bf[0] == total
    for classes in (False, True):
        b = flow_lp_bound(inst, time_limit=None, classes=classes)
        assert b.total <= total and b.flow <= total - int(inst.releases.sum())


@settings(max_examples=15, deadline=None)
@given(with_releases(tiny_instances(max_jobs=5, max_servers=3), max_release=4))
def test_never_above_the_exact_optimum(inst: Instance) -> None:
    total = _optimal_total(inst)
    for classes in (False, True):
        b = flow_lp_bound(inst, time_limit=None, classes=classes)
        assert b.total <= total
        assert b.total >= int((inst.releases + inst.bounds.rho_min).sum())  # every column costs r_j + rho_j at least


@pytest.mark.parametrize("name", LIBRARY)
def test_never_above_the_library_optimum(name: str) -> None:
    inst = Instance.read(instance_path(name))
    total = _optimal_total(inst)
    for classes in (False, True):
        assert flow_lp_bound(inst, time_limit=None, classes=classes).total <= total


@settings(max_examples=20, deadline=None)
@given(with_releases(tiny_instances(max_jobs=5, max_servers=4), max_release=3))
def test_one_lp_in_every_form_and_by_every_solver(inst: Instance) -> None:
    # the event form is the dense form rewritten, column generation solves the full LP, and
    # the Lagrangian value at the optimal prices is the LP's optimum
    for classes in (False, True):
        found = [
            flow_lp_bound(inst, time_limit=None, classes=classes, solver=s, form=f)
            for s in ("full", "colgen")
            for f in ("dense", "events")
        ]
        assert all(b.proven and b.method == "lp" for b in found)
        assert len({b.total for b in found}) == 1
        values = [b.lp_value for b in found]
        assert max(values) - min(values) <= 1e-6 * max(1.0, abs(values[0]))
    # the classes add rows and never shorten a job: the LP can only rise
    plain = flow_lp_bound(inst, time_limit=None, classes=False, solver="full")
    strong = flow_lp_bound(inst, time_limit=None, classes=True, solver="full")
    assert strong.lp_value >= plain.lp_value - 1e-6


def test_a_time_limit_still_answers_with_a_bound(paper_instance: Instance) -> None:
    b = flow_lp_bound(paper_instance, time_limit=0.0)
    assert b.method == "lagrangian" and not b.proven and b.note == "time limit"
    assert b.total >= int(paper_instance.bounds.rho_min.sum())
    assert b.time_limit == 0.0 and b.seed == 0 and b.classes


def test_a_larger_floor_is_kept() -> None:
    inst = Instance("two", 20, Cluster(servers=(2,)), (_job("a", 1, 3), _job("b", 2, 4)))
    b = flow_lp_bound(inst, time_limit=None)
    kept = flow_lp_bound(inst, time_limit=None, floor=b.total + 5)
    assert (kept.total, kept.method, kept.floor) == (b.total + 5, "floor", b.total + 5)
    assert flow_lp_bound(inst, time_limit=None, floor=0).total == b.total


def test_same_seed_same_result(tiny_8x4_s19: Instance) -> None:
    a = flow_lp_bound(tiny_8x4_s19, time_limit=None, seed=3)
    b = flow_lp_bound(tiny_8x4_s19, time_limit=None, seed=3)
    assert (a.total, a.lp_value, a.iterations, a.columns) == (b.total, b.lp_value, b.iterations, b.columns)


def test_bad_arguments_are_refused() -> None:
    inst = Instance("one", 10, Cluster(servers=(2,)), (_job("a", 1, 3),))
    with pytest.raises(ValueError, match="solver"):
        flow_lp_bound(inst, solver="simplex")
    with pytest.raises(ValueError, match="form"):
        flow_lp_bound(inst, form="sparse")
    for bad in (-1.0, float("nan"), float("inf"), "10"):
        with pytest.raises(ValueError, match="time_limit"):
            flow_lp_bound(inst, time_limit=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="per_kind"):
        flow_lp_bound(inst, per_kind=0)


def test_classes_and_kinds_of_a_mixed_cluster() -> None:
    # servers of 2 and 4 GPUs: a 4-GPU job fits unsplit only on the 4-GPU server (class O>=4)
    cluster = Cluster(servers=(2, 4))
    inst = Instance("mixed", 40, cluster, (_job("big", 4, 3), _job("small", 1, 2)))
    lp = flowlp.build(inst)
    assert lp.resource_names == ("pool", "O>=4") and list(lp.capacity) == [6, 4]
    big = [k for k in range(lp.num_kinds) if lp.job[k] == 0]
    single = [k for k in big if lp.kind_names[k] == "single"]
    assert all(lp.usage[k, 1] == 4 for k in single)
    assert all(lp.usage[k, 1] == 0 for k in big if lp.kind_names[k] == "split")
    assert [lp.kind_names[k] for k in range(lp.num_kinds) if lp.job[k] == 1] == ["rho"]


@settings(max_examples=10, deadline=None)
@given(with_releases(tiny_instances(max_jobs=5, max_servers=3), max_release=4))
def test_mean_starts_of_the_lp_optimum(inst: Instance) -> None:
    b = flow_lp_bound(inst, time_limit=None)
    assert b.proven and b.mean_starts is not None and len(b.mean_starts) == inst.num_jobs
    assert all(m >= r - 1e-9 for m, r in zip(b.mean_starts, inst.releases.tolist(), strict=True))
    # the LP's objective is sum_j (mean start + duration of the kinds used) >= sum_j (mean start + rho_min_j)
    assert b.lp_value >= sum(b.mean_starts) + float(inst.bounds.rho_min.sum()) - 1e-6


def test_any_prices_give_a_valid_bound(tiny_4x2_s13: Instance) -> None:
    # the Lagrangian bound holds at every lambda >= 0: random, huge, negative or non-finite
    # prices (negatives and non-finite read as 0) never lift it above the optimum
    lp = flowlp.build(tiny_4x2_s13)
    optimum = _optimal_total(tiny_4x2_s13)
    rng = np.random.default_rng(0)
    shape = (lp.num_resources, lp.slots)
    for prices in (
        rng.random(shape),
        10 * rng.random(shape),
        np.full(shape, 1e30),
        -rng.random(shape),
        np.full(shape, np.nan),
        np.full(shape, np.inf),
    ):
        ceil, value = lagrangian_bound(lp, prices)
        assert ceil <= optimum and np.isfinite(value)


def _packs(capacity: list[int], sizes: list[int]) -> bool:
    """Brute force: some assignment of every job to one server keeps each server's load within it."""
    if not sizes:
        return True
    loads = [0] * len(capacity)

    def place(i: int) -> bool:
        if i == len(sizes):
            return True
        for s, o in enumerate(capacity):
            if loads[s] + sizes[i] <= o:
                loads[s] += sizes[i]
                if place(i + 1):
                    return True
                loads[s] -= sizes[i]
        return False

    return place(0)


POWERS = st.sampled_from([1, 2, 4, 8])


@settings(max_examples=120, deadline=None)
@given(st.lists(POWERS, min_size=1, max_size=4), st.lists(POWERS, max_size=7))
def test_one_slots_rows_are_exactly_packing_for_powers_of_two(capacity: list[int], sizes: list[int]) -> None:
    # the lemma behind "What a slot-by-slot bound cannot see": with power-of-two sizes and
    # capacities, jobs fit unsplit on the servers iff the pool and class rows hold
    assert flowlp.rows_hold(np.array(capacity), np.array(sizes)) == _packs(capacity, sizes)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(1, 7), min_size=1, max_size=4), st.lists(st.integers(1, 7), max_size=6))
def test_one_slots_rows_are_necessary_for_any_sizes(capacity: list[int], sizes: list[int]) -> None:
    # whatever the sizes, a set that packs satisfies the rows (they are valid); the converse may fail
    if _packs(capacity, sizes):
        assert flowlp.rows_hold(np.array(capacity), np.array(sizes))


def test_rows_can_hold_where_nothing_packs() -> None:
    # 3-GPU jobs on two 4-GPU servers: 6 <= 8 GPUs, but a server holds one of them only
    assert flowlp.rows_hold(np.array([4, 4]), np.array([3, 3, 2]))
    assert not _packs([4, 4], [3, 3, 2])


def _whole_servers_first(capacity: int, n_servers: int, sizes: list[int]) -> np.ndarray | None:
    """The construction of docs/exactness.md's lemma on homogeneous clusters: every job
    larger than a server on whole servers of its own, the rest first-fit largest first."""
    y = np.zeros((len(sizes), n_servers), dtype=np.int64)
    load = np.zeros(n_servers, dtype=np.int64)
    free = 0
    for j in sorted(range(len(sizes)), key=lambda j: -sizes[j]):
        if sizes[j] > capacity:
            whole = sizes[j] // capacity
            if free + whole > n_servers:
                return None
            y[j, free : free + whole] = capacity
            load[free : free + whole] = capacity
            free += whole
            continue
        fits = np.nonzero(load + sizes[j] <= capacity)[0]
        if not len(fits):
            return None
        y[j, fits[0]] += sizes[j]
        load[fits[0]] += sizes[j]
    return y


@settings(max_examples=40, deadline=None)
@given(
    st.integers(0, 10_000),
    st.sampled_from([2, 4, 8]),
    st.integers(2, 6),
    st.lists(st.sampled_from([1, 2, 4, 8, 16, 32]), min_size=1, max_size=9),
)
def test_no_slot_forces_contention_on_homogeneous_power_of_two_clusters(
    seed: int, capacity: int, n_servers: int, sizes: list[int]
) -> None:
    # the lemma behind "forced contention" in docs/exactness.md: on servers of one
    # power-of-two size, any set of power-of-two jobs within the pool row runs at once with
    # no server shared by two split jobs, each forced split on its fewest servers; the
    # simulator then runs every job at the LP's duration for its kind (single or split)
    within = [int(c) for c in np.cumsum(sizes) if c <= capacity * n_servers]
    sizes = sizes[: len(within)]  # the longest prefix within the pool row
    if not sizes:
        return
    rng = np.random.default_rng(seed)
    jobs = tuple(
        Job(
            name=f"j{j}",
            gpus=g,
            iterations=int(rng.integers(5, 60)),
            grad_size=float(rng.uniform(0.005, 0.05)) if g > 1 else 0.0,
            batch_size=32,
            fwd_time=float(rng.uniform(0.0005, 0.002)),
            bwd_time=float(rng.uniform(0.02, 0.1)),
        )
        for j, g in enumerate(sizes)
    )
    inst = Instance("homogeneous", 10_000, Cluster(servers=(capacity,) * n_servers), jobs)
    y = _whole_servers_first(capacity, n_servers, sizes)
    assert y is not None  # the pool row holds, so the construction always succeeds
    from rar_opt.schedule import Schedule
    from rar_opt.simulate import simulate

    schedule = Schedule.from_arrays(inst.name, np.zeros(len(sizes), dtype=np.int64), y)
    done = simulate(inst, schedule).completion
    m = inst.modes
    split = (y > 0).sum(axis=1) > 1
    event(f"forced splits: {int(split.sum())}")
    shared = ((y > 0) & split[:, None]).sum(axis=0)
    assert shared.max() <= 1  # no server holds two split jobs
    assert np.all(split == (m.n_min >= 2))  # only the jobs that must split are split
    assert np.array_equal(done, np.where(split, m.split, m.single))
