"""Shared fixtures: the hypothesis profiles, and instances named after what they show.

The instance library (instances/*.json with proven optima, their optimal schedules in
instances/optimal/, the counterexamples in instances/counterexamples/) is read once per
session: one fixture per instance a test names, ``library`` for all of them, and the
parametrised ``known`` / ``counterexample`` fixtures that run a test once per file.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from rar_opt import Cluster, Instance, Job
from rar_opt.instances.generate import paper

from .helpers import (
    COUNTEREXAMPLE_NAMES,
    LIBRARY_NAMES,
    Counterexample,
    Known,
    load_counterexample,
    load_known,
)

settings.register_profile(
    "ci",
    max_examples=30,  # 60 until 2026-12-06: the suite had grown past CI's 20 minutes on a slower machine
    deadline=None,
    derandomize=True,  # CI is reproducible; the "thorough" profile searches afresh
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
settings.register_profile("thorough", max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck))
settings.load_profile("ci")

# A shell without job control starts background jobs with SIGINT ignored, and an ignored
# signal stays ignored in every process they start: then Python never installs its Ctrl-C
# handler and the tests that send SIGINT to a real rar-opt process see nothing happen.
# Catching it here gives the processes the tests start the default disposition again.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def _sigpipe_as_it_was() -> Iterator[None]:
    """The command line's ``main`` sets SIGPIPE to its default for good (a closed pipe then
    ends a ``rar-opt ... | head`` quietly, at exit too); the tests that call it in this
    process hand the next test in the worker the disposition they found."""
    before = signal.getsignal(signal.SIGPIPE)
    yield
    signal.signal(signal.SIGPIPE, before)


@pytest.fixture
def benchmark_scripts(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """benchmarks/ importable for one test (``import frontier``), and every module imported
    from it forgotten afterwards: their plain names (``common``, ``frontier``) must not stay
    in the process for the tests that run next in the same worker."""
    folder = Path(__file__).resolve().parents[1] / "benchmarks"
    monkeypatch.syspath_prepend(str(folder))
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        if str(getattr(sys.modules[name], "__file__", "") or "").startswith(str(folder)):
            del sys.modules[name]


# -- generated and hand-built instances -------------------------------------------------
@pytest.fixture(scope="session")
def paper_instance() -> Instance:
    """The paper's setting, seed 0 (160 jobs, 20 servers, T = 1200)."""
    return paper(0)


@pytest.fixture(scope="session")
def two_server_contention() -> Instance:
    """Two split jobs sharing two servers: each slows the other down.

    By hand (docs/model.md section 3.4), per iteration: on one server tau = 2(0.1)(1/2)/10
    + 0.1(1/2)/50 + 0.01 + 8(0.01) + 0.1 = 0.201, so phi = 4 and 10 iterations take 3
    slots; split and alone (p = 1, f = 1) tau = 0.1 + 0.001 + 0.02 + 0.18 = 0.301, phi = 3;
    split together (p = 2, f(2) = 2 + 0.5 = 2.5) tau = 0.25 + 0.201 = 0.451, phi = 2, 5 slots.
    """
    cluster = Cluster(servers=(2, 2), b_inter=1.0, b_intra=10.0, reduce_speed=50.0, alpha=0.5, xi1=1.0, xi2=0.01)
    jobs = (
        Job("a", gpus=2, iterations=10, grad_size=0.1, batch_size=8, fwd_time=0.01, bwd_time=0.1),
        Job("b", gpus=2, iterations=10, grad_size=0.1, batch_size=8, fwd_time=0.01, bwd_time=0.1),
    )
    return Instance(name="two-server-contention", horizon=20, cluster=cluster, jobs=jobs)


# -- the instance library ---------------------------------------------------------------
@pytest.fixture(scope="session")
def library() -> list[Known]:
    """Every library instance with its proven optimum and stored optimal schedule."""
    return [load_known(name) for name in LIBRARY_NAMES]


@pytest.fixture(scope="session", params=LIBRARY_NAMES)
def known(request: pytest.FixtureRequest) -> Known:
    """One library instance per test run (the test is repeated for every file)."""
    return load_known(request.param)


@pytest.fixture(scope="session")
def wait_beats_start() -> Instance:
    """Two 3-GPU jobs on three 2-GPU servers (docs/model.md section 3.6): alone each needs
    3 slots, together they share a server and need 8; the optimum (6) runs them one after
    the other, every policy but pack and backfill starts both at once (8)."""
    return load_known("wait-beats-start").instance


@pytest.fixture(scope="session")
def wait_beats_start_plus() -> Instance:
    """wait-beats-start with two 1-GPU jobs that fill the gaps (optimum 6)."""
    return load_known("wait-beats-start-plus").instance


@pytest.fixture(scope="session")
def tiny_3x2_s12() -> Instance:
    """3 jobs on servers of 3 and 2 GPUs, horizon 5, optimum 2."""
    return load_known("tiny-3x2-s12").instance


@pytest.fixture(scope="session")
def tiny_4x2_s13() -> Instance:
    """4 jobs on two 4-GPU servers, horizon 17, optimum 5."""
    return load_known("tiny-4x2-s13").instance


@pytest.fixture(scope="session")
def tiny_8x2_s20() -> Instance:
    """8 jobs on servers of 4 and 2 GPUs, horizon 25, optimum 6 (SCIP once called it infeasible)."""
    return load_known("tiny-8x2-s20").instance


@pytest.fixture(scope="session")
def tiny_8x4_s19() -> Instance:
    """The library's largest: 8 jobs on 4 servers, horizon 43, optimum 6 (HiGHS needs about a second)."""
    return load_known("tiny-8x4-s19").instance


# -- counterexamples to the paper's claims ----------------------------------------------
@pytest.fixture(scope="session", params=COUNTEREXAMPLE_NAMES)
def counterexample(request: pytest.FixtureRequest) -> Counterexample:
    """One kept counterexample per test run."""
    return load_counterexample(request.param)


@pytest.fixture(scope="session")
def theorem5_list_order() -> Counterexample:
    """Four 1-GPU jobs on 3 GPUs, no contention: Theorem 5's bound is 1, SJF-BCO 3, OPT 2."""
    return load_counterexample("theorem5-list-order")


@pytest.fixture(scope="session")
def theorem5_p_cmax() -> Counterexample:
    """Five 1-GPU jobs on one 2-GPU server (P2||Cmax): bound 1, SJF-BCO 5, OPT 4."""
    return load_counterexample("theorem5-p-cmax")


@pytest.fixture(scope="session")
def lemma3_underestimate() -> Counterexample:
    """Two 2-GPU jobs on servers of 1 and 3 GPUs: the split job runs 5 slots, charged 2."""
    return load_counterexample("lemma3-underestimate")


QUICK_MODULES = (
    "tests/test_instance.py",
    "tests/test_schedule.py",
    "tests/test_check.py",
    "tests/test_timemodel.py",
    "tests/test_floors.py",
    "tests/test_readme.py",
    "tests/test_architecture.py",
    "tests/solvers/test_phases.py",
    "tests/algorithms/test_golden.py",
    "tests/cli/test_input_errors.py",
)
"""The modules of the quick tier (``pytest -m quick``, about two minutes on two cores): what a first-time
user's install must get right. The full tier is ``-m "not slow"`` (CI)."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the tests of :data:`SLOW_IN_CI` ``slow``, and those of :data:`QUICK_MODULES`
    ``quick`` (unless they are also ``slow``)."""
    for item in items:
        if item.nodeid.split("[")[0] in SLOW_IN_CI:
            item.add_marker(pytest.mark.slow)
        path = item.nodeid.split("::", 1)[0]
        if path in QUICK_MODULES and item.get_closest_marker("slow") is None:
            item.add_marker(pytest.mark.quick)


# -- the CI budget ------------------------------------------------------------------------
# CI must end within 20 minutes. These tests took 6.5 s or more each in a full run
# (pytest --durations, 2026-12-02); they carry the ``slow`` marker, so CI's
# ``-m "not slow"`` leaves them out and ``pytest -m slow`` runs them with the other long
# runs. Each checks a property another, faster test checks on smaller inputs, or a fault
# path of the studies covered by the faster ones beside it.
SLOW_IN_CI = (
    "tests/algorithms/test_lanes.py::test_pack_keeps_a_lanes_start_only_when_it_is_better",
    "tests/algorithms/test_packing.py::test_pack_is_never_better_than_the_optimum",
    "tests/cli/test_commands.py::test_schedule_solve_compare_by_hand",
    "tests/cli/test_interrupts.py::test_a_study_never_stores_an_interrupted_task",
    "tests/cli/test_interrupts.py::test_ctrl_c_in_a_highs_solve_keeps_the_incumbent",
    "tests/cli/test_interrupts.py::test_one_signal_stops_auto_and_keeps_its_best",
    "tests/experiments/test_sweeps.py::test_every_experiment_runs_and_is_deterministic",
    "tests/formulations/test_compact.py::test_optimum_is_at_most_every_heuristic",
    "tests/formulations/test_cpsat.py::test_cpsat_equals_brute_force",
    "tests/formulations/test_cpsat_objectives.py::test_cpsat_flow_equals_compact_where_contention_matters",
    "tests/formulations/test_gpubins.py::test_the_bins_refute_what_the_floors_cannot",
    "tests/formulations/test_releases.py::test_enumerative_with_releases_equals_compact",
    "tests/formulations/test_symmetry.py::test_cpsat_with_symmetry_rows_equals_brute_force_on_twins",
    "tests/solvers/test_decompose.py::test_auto_equals_the_compact_milp_where_contention_decides",
    "tests/solvers/test_decompose.py::test_decomposition_and_auto_equal_brute_force",
    "tests/solvers/test_highs_deadline.py::test_the_next_solve_waits_for_the_run_left_behind",
    "tests/solvers/test_phases.py::test_the_gpu_bins_phase_raises_the_floor_where_the_floors_stop",
    "tests/solvers/test_probe.py::test_probe_command_answers_and_writes_the_schedule",
    "tests/solvers/test_probe.py::test_probes_bracket_the_brute_force_optimum",
    "tests/solvers/test_probe.py::test_probes_bracket_the_optimum_where_contention_decides",
    "tests/solvers/test_scip.py::test_scip_solves_the_nonconvex_model_to_the_proven_optimum",
    "tests/solvers/test_solve.py::test_auto_at_paper_scale_returns_the_best_schedule_and_bound",
    "tests/solvers/test_sums.py::test_the_backfill_phase_never_makes_the_answer_worse_on_the_library",
    "tests/studies/test_arrival_families.py::test_a_study_run_of_an_arrival_family_reports_flow",
    "tests/studies/test_arrival_families.py::test_flow_ratios_against_the_flow_optimum",
    "tests/studies/test_faults.py::test_a_full_disk_says_so_and_keeps_the_rows",
    "tests/studies/test_faults.py::test_an_interrupted_creator_leaves_the_store_another_run_is_filling",
    "tests/studies/test_faults.py::test_flipped_bytes_in_the_rows_are_refused_naming_the_file",
    "tests/studies/test_faults.py::test_two_runs_started_together_on_a_new_store_both_succeed",
    "tests/studies/test_provenance_report.py::test_a_worst_case_store_warns",
    "tests/studies/test_run.py::test_a_lost_scheduler_is_one_line_and_the_rows_are_kept",
    "tests/studies/test_run.py::test_a_study_killed_mid_way_resumes_to_the_same_rows_and_report",
    "tests/studies/test_run.py::test_the_same_rows_serially_on_local_dask_and_through_a_scheduler",
    "tests/studies/test_store.py::test_the_command_line_refuses_bad_stores_with_exit_2",
    "tests/test_floors.py::test_gpu_bins_lifts_the_bound_at_paper_scale",
    "tests/test_floors.py::test_the_bin_packing_lp_lifts_gpu_bins_at_paper_scale",
)
