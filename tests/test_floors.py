"""The structural floors (rar_opt.bounds.structural): never above an optimum, at least the trivial
bounds where they say so, values by hand on instances built to show each one, and cheap.

By hand (b_inter 1, b_intra 10, C 50, alpha 0, xi2 0; a 3-GPU job with m = 0.15,
dB = 0.19 has ring volume 0.2, tau = 0.02 + 0.002 + 0.19 = 0.212 on one server, 4
iterations per slot, and tau = 0.2 + 0.002 + 0.19 = 0.392 split, 2 iterations per slot; with F = 40
that is 10 slots unsplit and 20 split, so a split costs 3 x 10 = 30 more GPU-slots):

Below C = 20 no job can split at all (20 slots split), so every job stays unsplit:

* ``big-on-one``: servers (4, 2, 2), two such jobs. Only the 4-GPU server takes them
  unsplit, and not both at once (3 + 3 > 4). Classes: their 60 GPU-slots on 4 GPUs need
  C >= 15 (the trivial floor is 10). Halves: one host, 10 + 10 <= C: 20, the optimum.
* ``three-on-two``: servers (4, 4), three such jobs: at most one per server at a time,
  and all three longer than C / 2 for C < 20: halves 20 (the trivial floor is 12), the
  optimum (two at once, then the third).
* ``four-on-two``: servers (4, 4, 2, 2), four such jobs (N = 12, trivial floor 10).
  Classes: 120 GPU-slots on the two 4-GPU servers, C >= 15; halves: four jobs longer
  than C / 2 on two hosts, 20.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import assume, given, settings

from rar_opt import Cluster, Instance, Job, check, run_policy
from rar_opt.bounds import lower_bounds, registry
from rar_opt.bounds.structural import trivial_floor
from rar_opt.instances.generate import generate

from .bruteforce import brute_force, placements_of
from .helpers import (
    COUNTEREXAMPLE_NAMES,
    INSTANCES,
    LIBRARY_NAMES,
    load_counterexample,
    load_known,
    policy_makespans,
    with_known_optimum,
)
from .strategies import micro_instances, reference_simulate, tiny_instances


def structural_bounds(inst):  # {name: (value, seconds)} of the structural family
    names = {b.name for b in registry.entries("makespan", families=("structural",))}
    return {b.name: (b.value, b.seconds) for b in registry.cheap(inst) if b.name in names}


BOUNDS = [b.name for b in registry.entries("makespan", families=("structural",))]
structural_floor = registry.floor

FRONTIER = with_known_optimum(INSTANCES / "frontier")  # the open ones have no optimum to hold a floor to


def _with_optimum() -> list[tuple[str, Path | None]]:
    return (
        [(n, None) for n in LIBRARY_NAMES]
        + [(f"counterexamples/{n}", None) for n in COUNTEREXAMPLE_NAMES]
        + [(f"frontier/{p.stem}", p) for p in FRONTIER]
    )


def _load(name: str, path: Path | None) -> tuple[Instance, int]:
    if path is not None:
        inst = Instance.read(path)
        return inst, int(inst.meta["known_optimum"])
    if name.startswith("counterexamples/"):
        cx = load_counterexample(name.split("/", 1)[1])
        return cx.instance, cx.optimum
    known = load_known(name)
    return known.instance, known.optimum


@pytest.mark.parametrize(("name", "path"), _with_optimum(), ids=[n for n, _ in _with_optimum()])
def test_every_floor_is_at_most_the_known_optimum(name: str, path: Path | None) -> None:
    inst, optimum = _load(name, path)
    found = structural_bounds(inst)
    assert set(found) == set(BOUNDS)
    for bound, (value, seconds) in found.items():
        assert value <= optimum, f"{bound} = {value} above OPT {optimum} on {name}"
        assert seconds >= 0
    assert trivial_floor(inst) <= structural_floor(inst) <= optimum


def test_the_floors_reach_the_optimum_where_the_trivial_bounds_did_not() -> None:
    # wait-beats-start: two jobs that must split and would share a server: 3 + 3
    wbs = load_known("wait-beats-start")
    assert trivial_floor(wbs.instance) == 3 and structural_bounds(wbs.instance)["split_pairs"][0] == 6 == wbs.optimum
    plus = load_known("wait-beats-start-plus")
    assert structural_floor(plus.instance) == 6 == plus.optimum
    assert structural_bounds(plus.instance)["energetic"][0] == 5  # above the work bound 4
    # tiny-7x4-s18: energetic reasoning alone lifts 7 to the optimum 8
    t7 = load_known("tiny-7x4-s18")
    assert (trivial_floor(t7.instance), structural_bounds(t7.instance)["energetic"][0], t7.optimum) == (7, 8, 8)


def _job(name: str, gpus: int = 3) -> Job:
    return Job(name, gpus=gpus, iterations=40, grad_size=0.15, bwd_time=0.19)


def _cluster(servers: tuple[int, ...]) -> Cluster:
    return Cluster(servers=servers, b_inter=1.0, b_intra=10.0, reduce_speed=50.0, alpha=0.0, xi2=0.0)


def test_classes_and_halves_by_hand() -> None:
    one = Instance("big-on-one", 200, _cluster((4, 2, 2)), (_job("a"), _job("b")))
    m = one.modes
    assert list(m.single) == [10, 10] and list(m.split) == [20, 20]
    assert trivial_floor(one) == 10
    found = {k: v for k, (v, _) in structural_bounds(one).items()}
    assert found["classes"] == 15 and found["halves"] == 20
    assert structural_floor(one) == 20 == min(policy_makespans(one).values())
    two = Instance("three-on-two", 200, _cluster((4, 4)), (_job("a"), _job("b"), _job("c")))
    assert trivial_floor(two) == 12  # 3 x 3 x 10 / 8 = 11.25
    assert structural_bounds(two)["halves"][0] == 20 == min(policy_makespans(two).values())


def test_classes_count_the_energy_of_jobs_only_large_servers_take() -> None:
    inst = Instance("four-on-two", 400, _cluster((4, 4, 2, 2)), tuple(_job(n) for n in "abcd"))
    assert trivial_floor(inst) == 10
    assert structural_bounds(inst)["classes"][0] == 15
    assert structural_bounds(inst)["halves"][0] == 20
    assert structural_floor(inst) <= min(policy_makespans(inst).values())


def test_gpu_bins_by_hand() -> None:
    # three one-GPU jobs of 8 slots on two one-GPU servers: the work bound says 12, but
    # some GPU runs two of them in a row, so 16 (the optimum)
    inst = Instance("three-on-two-gpus", 200, _cluster((1, 1)), tuple(_job(n, 1) for n in "abc"))
    assert list(inst.modes.rho) == [8, 8, 8] and trivial_floor(inst) == 12
    assert structural_bounds(inst)["gpu_bins"][0] == 16 == min(policy_makespans(inst).values())


def test_gpu_bins_lifts_the_bound_at_paper_scale() -> None:
    # paper-160x20 seeds 3 and 6: the long jobs' GPU-lengths do not add up to the work
    # bound on every GPU; the lifted bound stays below pack's schedule
    from rar_opt.algorithms import run_policy

    for seed in (3, 6):
        inst = generate("paper", seed, jobs=160, servers=20, preset="paper-literal")
        found = {k: v for k, (v, _) in structural_bounds(inst).items()}
        others = max(v for k, v in found.items() if k not in ("gpu_bins", "gpu_bins_lp"))  # the LP starts from it
        assert found["gpu_bins"] > max(others, trivial_floor(inst))
        made = run_policy(inst, "pack", iterations=0).schedule
        assert found["gpu_bins"] <= max(reference_simulate(inst, made)["completion"])


def _l2_bins(items: list[int], c: int) -> int:
    """Martello and Toth's L2 for ``items`` in bins of size ``c``, written out from its
    definition (Discrete Appl. Math. 28(1), 1990), one threshold k at a time."""
    best = 0
    for k in range(c // 2 + 1):
        j1 = [x for x in items if x > c - k]
        j2 = [x for x in items if c / 2 < x <= c - k]
        j3 = [x for x in items if k <= x <= c / 2]
        spill = math.ceil((sum(j3) - (len(j2) * c - sum(j2))) / c)
        best = max(best, len(j1) + len(j2) + max(0, spill))
    return best


def _is_l2_floor(inst: Instance, c: int) -> bool:
    """Whether ``c`` is the least C from the trivial floor on whose L2 fits the GPU-lengths
    into N bins (L2 never grows with C: asking at c and at c - 1 settles it)."""
    items = [int(r) for r, g in zip(inst.modes.rho, inst.modes.gpus, strict=True) for _ in range(int(g))]
    fits = _l2_bins(items, c) <= inst.cluster.num_gpus
    return fits and (c == trivial_floor(inst) or _l2_bins(items, c - 1) > inst.cluster.num_gpus)


def test_the_bin_packing_lp_lifts_gpu_bins_at_paper_scale() -> None:
    # paper-160x20 seeds 6 and 8: L2 allows a makespan that the Gilmore-Gomory LP refutes
    # (certified by Farley's bound; 282 and 288 on 2026-12-04); the lifted bound stays below
    # pack's schedule
    from rar_opt.algorithms import run_policy

    for seed in (6, 8):
        inst = generate("paper", seed, jobs=160, servers=20, preset="paper-literal")
        found = {k: v for k, (v, _) in structural_bounds(inst).items()}
        assert _is_l2_floor(inst, found["gpu_bins"]) and not _is_l2_floor(inst, found["gpu_bins"] + 1)
        assert found["gpu_bins"] < found["gpu_bins_lp"]  # the LP refutes what L2 allows
        made = run_policy(inst, "pack", iterations=0).schedule
        assert found["gpu_bins_lp"] <= max(reference_simulate(inst, made)["completion"])


def test_disjunctive_pairs() -> None:
    # a 5-GPU and a 4-GPU job on 8 GPUs can never overlap: 10 + 10
    inst = Instance("clash", 200, _cluster((4, 4)), (_job("a", 5), _job("b", 4)))
    r = inst.modes.rho
    assert structural_bounds(inst)["disjunctive"][0] == int(r.sum())


@given(tiny_instances())
def test_floors_dominate_what_they_claim_and_stay_below_every_heuristic(inst: Instance) -> None:
    found = {k: v for k, (v, _) in structural_bounds(inst).items()}
    trivial = trivial_floor(inst)
    assert trivial == max(lower_bounds(inst, structural=False).best, 0)
    # energetic, classes and halves start from the trivial floor and only rise
    for name in ("energetic", "classes", "halves"):
        assert found[name] >= trivial
    m = inst.modes
    big = 2 * m.gpus > m.num_gpus
    if big.any():  # the jobs over half the cluster one after the other, so at least the longest of them
        assert found["disjunctive"] >= int(m.rho[big].max())
    if found["split_pairs"]:  # a pair's span is at least each of its jobs alone
        assert found["split_pairs"] >= int(m.split[m.n_min >= 2].min())
    assert lower_bounds(inst).best == max(trivial, *found.values())
    assert max(found.values()) <= min(policy_makespans(inst).values())


def _schedules(inst: Instance, starts: int) -> int:
    return starts**inst.num_jobs * math.prod(len(placements_of(inst, j)) for j in range(inst.num_jobs))


@settings(max_examples=40, deadline=None)
@given(micro_instances())
def test_no_schedule_beats_a_floor_by_brute_force(inst: Instance) -> None:
    floor = structural_floor(inst)
    assume(floor >= 2 and _schedules(inst, floor - 1) <= 20_000)
    # a schedule ending by floor - 1 starts every job before floor - 1: brute force sees it
    found = brute_force(inst, floor - 1)
    assert found is None or found[0] >= floor


def test_floors_run_at_paper_scale() -> None:
    # their cost is measured in benchmarks/floors.py, not asserted here
    for jobs, servers in ((160, 20), (640, 20)):
        inst = generate("paper", 0, jobs=jobs, servers=servers, preset="contention-heavy")
        found = structural_bounds(inst)
        assert set(found) == set(BOUNDS)
        # every bound is below a schedule's makespan (longest first, the cheapest policy here)
        span = check(inst, run_policy(inst, "lpt").schedule).result.makespan
        assert structural_floor(inst) <= span
