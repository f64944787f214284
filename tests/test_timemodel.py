from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rar_opt import Cluster, Instance, Job
from rar_opt.errors import InputError
from rar_opt.timemodel import (
    CONTENTION_FUNCTIONS,
    Contention,
    linear_contention,
    register_contention,
    robust_floor_inverse,
    unregister_contention,
)

from .strategies import reference_tau, tiny_instances


@given(st.integers(1, 500))
def test_robust_floor_counts_exact_fractions(k: int) -> None:
    # 1/k is not exact in binary; the floor must still give k, and a hair more gives k-1
    assert robust_floor_inverse(np.array([1.0 / k]))[0] == k
    assert robust_floor_inverse(np.array([(1.0 / k) * (1 + 1e-6)]))[0] == k - 1


@given(tiny_instances())
def test_tau_matches_handwritten_formula_everywhere(inst: Instance) -> None:
    tm = inst.time_model
    for j in range(inst.num_jobs):
        for n in range(1, inst.num_servers + 1):
            for p in range(0, 5):
                got = tm.tau(np.array([p]), np.array([n]), np.array([j]))[0]
                assert got == pytest.approx(reference_tau(inst, j, p, n), rel=1e-12)


@given(tiny_instances())
def test_tau_grows_with_contention_and_bounds_hold(inst: Instance) -> None:
    tm, b = inst.time_model, inst.bounds
    for j in range(inst.num_jobs):
        for n in range(int(b.n_min[j]), int(b.n_max[j]) + 1):
            p_range = np.arange(1, b.p_worst + 1) if n >= 2 else np.array([0])
            tau = tm.tau(p_range, np.full(len(p_range), n), np.full(len(p_range), j))
            assert np.all(np.diff(tau) >= 0)
            assert np.all(tau >= b.tau_min[j] - 1e-15) and np.all(tau <= b.tau_max[j] + 1e-15)
    assert np.all(b.rho_min <= b.rho_max)
    assert np.all(b.rho_min * b.phi_max >= inst.arrays.iterations)


@given(tiny_instances())
def test_phi_table_agrees_with_phi(inst: Instance) -> None:
    tm, b = inst.time_model, inst.bounds
    table = tm.phi_table()
    for j in range(inst.num_jobs):
        for n in range(int(b.n_min[j]), int(b.n_max[j]) + 1):
            for p in range(1, b.p_worst + 1):
                expect = tm.phi(np.array([p if n >= 2 else 0]), np.array([n]), np.array([j]))[0]
                assert table[j, p, n] == expect


def test_single_server_jobs_feel_no_contention(two_server_contention: Instance) -> None:
    tm = two_server_contention.time_model
    spans = np.array([[True, False], [True, True]])
    n = spans.sum(axis=1)
    c, phi = tm.slot_rates(np.array([True, True]), spans, n)
    assert list(c) == [1, 1]  # only the split job counts, on both of its servers
    alone = tm.phi(np.array([0]), np.array([1]), np.array([0]))[0]
    assert phi[0] == alone


def test_contention_slows_split_jobs(two_server_contention: Instance) -> None:
    tm = two_server_contention.time_model
    spans = np.ones((2, 2), dtype=bool)
    n = spans.sum(axis=1)
    _, both = tm.slot_rates(np.array([True, True]), spans, n)
    _, one = tm.slot_rates(np.array([True, False]), spans, n)
    assert both[0] < one[0]


def test_arrays_are_read_only(paper_instance: Instance) -> None:
    with pytest.raises(ValueError):
        paper_instance.arrays.gpus[0] = 3
    with pytest.raises(ValueError):
        paper_instance.cluster.capacity[0] = 3


def square_contention(k, alpha):
    """A custom contention function for the tests: f(k) = k^2 (module level: picklable)."""
    return k * k


def _custom_instance() -> Instance:
    cluster = Cluster(servers=(2, 2), xi2=0.0, contention=Contention("square-test", square_contention))
    return Instance("q", 100, cluster, (Job("a", 4, 5, grad_size=0.05, bwd_time=0.1),))


def test_custom_contention_is_a_value_on_the_cluster() -> None:
    inst = _custom_instance()
    tau2 = inst.time_model.tau(np.array([2]), np.array([2]), np.array([0]))[0]
    # hand-derived: ring 2 m (G-1)/G / (b_inter / f(2)) with f(2) = 4, plus reduction and backward
    assert tau2 == pytest.approx(2 * 0.05 * 0.75 * 4 + 0.05 * 0.75 / 50 + 0.1)
    with pytest.raises(ValueError, match="f\\(1\\) = 1"):
        Contention("bad", lambda k, a: k - 1)


def test_registered_name_reads_from_json_and_unregisters() -> None:
    inst = _custom_instance()
    data = inst.to_dict()
    assert data["cluster"]["contention"] == "square-test"
    with pytest.raises(InputError, match="unknown contention function 'square-test'"):
        Instance.from_dict(data)
    register_contention("square-test", square_contention)
    try:
        assert Instance.from_dict(data).cluster == inst.cluster
        with pytest.raises(ValueError, match="already registered"):
            register_contention("square-test", linear_contention)
    finally:
        unregister_contention("square-test")
    assert "square-test" not in CONTENTION_FUNCTIONS


def _phi_table_in_worker(inst: Instance) -> list:
    return inst.time_model.phi_table(p_max=4).tolist()


def test_custom_contention_survives_a_spawned_worker() -> None:
    """No registration in the worker: the function travels with the cluster."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    inst = _custom_instance()
    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
        remote = pool.submit(_phi_table_in_worker, inst).result()
    assert remote == inst.time_model.phi_table(p_max=4).tolist()
    # and the table really depends on the custom f: the linear model gives another one
    linear = Instance("q", 100, Cluster(servers=(2, 2), xi2=0.0), inst.jobs)
    assert remote != linear.time_model.phi_table(p_max=4).tolist()
