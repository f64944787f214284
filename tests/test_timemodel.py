"""The time model (docs/model.md section 3) against the hand-written reference and hand-derived values."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rar_opt import Cluster, Instance, Job
from rar_opt.cluster.timemodel import (
    CONTENTION_FUNCTIONS,
    Contention,
    linear_contention,
    register_contention,
    robust_floor_inverse,
    unregister_contention,
)
from rar_opt.errors import InputError

from .strategies import reference_phi, reference_rho_range, reference_spans, reference_tau, tiny_instances


@given(st.integers(1, 500))
def test_robust_floor_counts_exact_fractions(k: int) -> None:
    # 1/k is not exact in binary; the floor must still give k, and a hair more gives k-1
    assert robust_floor_inverse(np.array([1.0 / k]))[0] == k
    assert robust_floor_inverse(np.array([(1.0 / k) * (1 + 1e-6)]))[0] == k - 1


@given(st.integers(1, 500), st.sampled_from([1e-10, 1e-9, 1e-8]))
def test_robust_floor_tolerates_rounding_only(k: int, excess: float) -> None:
    # a tau truly above 1/k, by far more than rounding error, loses its k-th iteration;
    # a tau a few ulps off 1/k keeps it
    assert robust_floor_inverse(np.array([(1.0 / k) * (1 + excess)]))[0] == k - 1
    assert robust_floor_inverse(np.array([(1.0 / k) * (1 + 4e-16)]))[0] == k


@given(tiny_instances())
def test_tau_matches_handwritten_formula_everywhere(inst: Instance) -> None:
    tm = inst.time_model
    for j in range(inst.num_jobs):
        for n in range(1, inst.num_servers + 1):
            for p in range(0, 5):
                got = tm.tau(np.array([p]), np.array([n]), np.array([j]))[0]
                assert got == pytest.approx(reference_tau(inst, j, p, n), rel=1e-12)


@given(tiny_instances())
def test_tau_grows_with_contention(inst: Instance) -> None:
    tm, b = inst.time_model, inst.bounds
    for j in range(inst.num_jobs):
        for n in range(int(b.n_min[j]), int(b.n_max[j]) + 1):
            p_range = np.arange(1, b.p_worst + 1) if n >= 2 else np.array([0])
            tau = tm.tau(p_range, np.full(len(p_range), n), np.full(len(p_range), j))
            assert np.all(np.diff(tau) >= 0)
            assert np.all(tau >= b.tau_min[j] - 1e-15) and np.all(tau <= b.tau_max[j] + 1e-15)


@given(tiny_instances())
def test_job_bounds_match_the_reference_extremes(inst: Instance) -> None:
    # spans, worst contention and execution-time ranges of section 3.7, recomputed by hand
    b = inst.bounds
    assert b.p_worst == min(inst.num_jobs, max(inst.cluster.servers))
    for j, job in enumerate(inst.jobs):
        spans = reference_spans(inst.cluster.servers, job.gpus)
        assert (b.n_min[j], b.n_max[j]) == (spans.start, spans.stop - 1)
        assert (b.rho_min[j], b.rho_max[j]) == reference_rho_range(inst, j)
        best = min(reference_tau(inst, j, 1 if n >= 2 else 0, n) for n in spans)
        worst = max(reference_tau(inst, j, b.p_worst if n >= 2 else 0, n) for n in spans)
        assert b.tau_min[j] == pytest.approx(best, rel=1e-12)
        assert b.tau_max[j] == pytest.approx(worst, rel=1e-12)


@given(tiny_instances())
def test_phi_table_matches_the_reference(inst: Instance) -> None:
    # the exact formulations' coefficients: phi[j, p, n] = floor(1 / tau) on feasible spans,
    # p = 0 read as 1 for split spans, and 0 for n = 0 and spans the job cannot have
    table = inst.time_model.phi_table()
    p_max = min(inst.num_jobs, max(inst.cluster.servers))
    assert table.shape == (inst.num_jobs, p_max + 1, inst.num_servers + 1)
    for j, job in enumerate(inst.jobs):
        spans = reference_spans(inst.cluster.servers, job.gpus)
        for p in range(p_max + 1):
            for n in range(inst.num_servers + 1):
                expect = reference_phi(reference_tau(inst, j, max(p, 1) if n >= 2 else 0, n)) if n in spans else 0
                assert table[j, p, n] == expect, (j, p, n)


def test_single_server_jobs_feel_no_contention(two_server_contention: Instance) -> None:
    # job a on server 0 alone (tau 0.201, phi 4), job b split over both servers: only b
    # counts on each server, so p_b = 1 (tau 0.301, phi 3); see the fixture's docstring
    tm = two_server_contention.time_model
    spans = np.array([[True, False], [True, True]])
    c, phi = tm.slot_rates(np.array([True, True]), spans, spans.sum(axis=1))
    assert list(c) == [1, 1]
    assert list(phi) == [4, 3]


def test_contention_slows_split_jobs(two_server_contention: Instance) -> None:
    # both split over both servers: p = 2, f(2) = 2.5, tau 0.451, phi 2; one alone: phi 3
    tm = two_server_contention.time_model
    spans = np.ones((2, 2), dtype=bool)
    n = spans.sum(axis=1)
    c_both, both = tm.slot_rates(np.array([True, True]), spans, n)
    c_one, one = tm.slot_rates(np.array([True, False]), spans, n)
    assert list(c_both) == [2, 2] and list(both) == [2, 2]
    assert list(c_one) == [1, 1] and list(one) == [3, 0]


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
    # by hand, the 4-GPU job on both servers at p = 2: f(2) = 4 gives tau = 0.3 + 0.00075
    # + 0.1, 2 iterations per slot; the linear f(2) = 2.5 gives tau = 0.28825, 3 per slot
    assert remote[0][2][2] == 2
    linear = Instance("q", 100, Cluster(servers=(2, 2), xi2=0.0), inst.jobs)
    assert linear.time_model.phi_table(p_max=4)[0, 2, 2] == 3
