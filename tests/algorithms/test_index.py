"""The engine's index structures (rar_opt.algorithms.index) and the rules built on them
take the decisions of the scans they replace (docs/algorithms.md section 1): random
operation sequences against plain lists, and every fast rule against its scan on random
instances, orders, load limits and weights (so that theta binds often), with random
tie-breaks and seeds."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from rar_opt import Instance
from rar_opt.algorithms.baselines import consolidate, consolidate_rule, random_picker, random_rule
from rar_opt.algorithms.engine import (
    ClusterState,
    PlacementRule,
    Trial,
    eligible_rule,
    first_fit,
    first_fit_rule,
    least_loaded,
    least_loaded_rule,
    run_list,
)
from rar_opt.algorithms.index import CountTree, MinTree, SortedKeys
from rar_opt.algorithms.sjf_bco import fa_ffp, fa_ffp_scan, lbsgf, lbsgf_scan
from rar_opt.schedule import Schedule

from ..strategies import tiny_instances


@given(st.lists(st.tuples(st.booleans(), st.integers(0, 40)), max_size=300), st.integers(0, 45))
def test_sorted_keys_follow_a_sorted_list(ops: list[tuple[bool, int]], bound: int) -> None:
    keys, plain = SortedKeys([]), []
    for add, k in ops:
        if add and k not in plain:
            keys.add(k)
            plain.append(k)
        elif not add and k in plain:
            keys.remove(k)
            plain.remove(k)
        plain.sort()
        assert list(keys) == plain and len(keys) == len(plain)
    last, refused = keys.split(lambda k: k <= bound)
    assert last == max((k for k in plain if k <= bound), default=None)
    assert refused == min((k for k in plain if k > bound), default=None)
    assert keys.first(3) == plain[:3]


@given(st.lists(st.floats(0, 10), min_size=1, max_size=70), st.lists(st.tuples(st.integers(0, 69), st.floats(0, 10))))
def test_min_tree_lists_the_positions_within_a_bound(values: list[float], sets: list[tuple[int, float]]) -> None:
    tree = MinTree(values)
    for pos, v in sets:
        if pos < len(values):
            values[pos] = v
            tree.set(pos, v)
    for bound in (0.0, 2.5, 7.0, 10.0):
        assert list(tree.at_most(bound)) == [i for i, v in enumerate(values) if v <= bound]


@given(st.lists(st.booleans(), min_size=1, max_size=90), st.lists(st.integers(0, 89)))
def test_count_tree_finds_the_kth_set_flag(flags: list[bool], flips: list[int]) -> None:
    tree = CountTree([int(f) for f in flags])
    for i in flips:
        if i < len(flags):
            tree.add(i, -1 if flags[i] else +1)
            flags[i] = not flags[i]
    on = [i for i, f in enumerate(flags) if f]
    assert [tree.kth(k) for k in range(len(on))] == on


def _mixed(kappa: int, small: PlacementRule, large: PlacementRule) -> PlacementRule:
    def rule(state: ClusterState, job: int) -> np.ndarray | list[int] | None:
        return small(state, job) if state.gpus_needed[job] <= kappa else large(state, job)

    return rule


def _pairs(seed: int, lam: float, kappa: int) -> list[tuple[str, PlacementRule, PlacementRule]]:
    """(name, the fast rule, its scan): fresh rules, so seeded ones start their generators alike."""
    return [
        ("least loaded", least_loaded_rule, eligible_rule(least_loaded)),
        ("first fit", first_fit_rule, eligible_rule(first_fit)),
        ("consolidate", consolidate_rule, eligible_rule(consolidate)),
        ("rand gpus", random_rule(seed, "gpus"), eligible_rule(random_picker(seed, "gpus"))),
        ("rand servers", random_rule(seed, "servers"), eligible_rule(random_picker(seed, "servers"))),
        ("lbsgf", lbsgf(lam), lbsgf_scan(lam)),
        ("sjf-bco", _mixed(kappa, fa_ffp(False), lbsgf(lam)), _mixed(kappa, fa_ffp_scan(False), lbsgf_scan(lam))),
    ]


@given(
    tiny_instances(max_jobs=8, max_servers=5),
    st.data(),
    st.integers(0, 2**32 - 1),
    st.sampled_from([1.0, 1.5, 3.0]),
    st.integers(1, 4),
)
def test_every_fast_rule_decides_as_its_scan(
    inst: Instance, data: st.DataObject, seed: int, lam: float, kappa: int
) -> None:
    order = data.draw(st.permutations(range(inst.num_jobs)))
    weight = np.array(data.draw(st.lists(st.floats(0.0, 4.0), min_size=inst.num_jobs, max_size=inst.num_jobs)))
    theta = data.draw(st.one_of(st.integers(1, inst.horizon).map(float), st.just(np.inf)))
    within = data.draw(st.booleans())
    for name, fast, scan in _pairs(seed, lam, kappa):
        a = run_list(inst, order, fast, theta, weight, within_horizon=within)
        b = run_list(inst, order, scan, theta, weight, within_horizon=within)
        assert type(a) is type(b), name
        assert (a.valid_from, a.valid_below) == (b.valid_from, b.valid_below), name  # same theta range
        if isinstance(a, Trial) and isinstance(b, Trial):
            assert a.gpu_ids == b.gpu_ids and a.starts.tolist() == b.starts.tolist(), name
            assert (a.makespan, a.max_load) == (b.makespan, b.max_load), name
            sched = a.to_schedule(inst, {"k": 1})
            dense = Schedule.from_arrays(inst.name, a.starts, a.placements(inst.num_servers), gpu_ids=a.gpu_ids)
            assert sched == dense and sched.placement_array.tolist() == dense.placement_array.tolist()
            assert Schedule.from_dict(sched.to_dict()) == sched
