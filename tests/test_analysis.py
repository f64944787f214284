"""Realized shares of contention and overhead, and the readings of the baselines."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings

from rar_opt import Instance, check
from rar_opt.algorithms import POLICIES, run_policy
from rar_opt.instances.generate import paper
from rar_opt.shares import realized_shares

from .strategies import reference_simulate, reference_spans, reference_tau, tiny_instances


def _reference_shares(inst: Instance, schedule) -> tuple[float, float]:
    """Contention and overhead shares recomputed slot by slot from the reference simulator."""
    y = schedule.placement_array
    sim = reference_simulate(inst, schedule)
    contention = overhead = base = 0.0
    for cont, its in sim["trace"].values():
        for j, count in enumerate(its):
            if count == 0:
                continue
            servers = [s for s in range(inst.num_servers) if y[j][s] > 0]
            n = len(servers)
            p = max(cont[s] for s in servers) if n >= 2 else 0
            spans = list(reference_spans(inst.cluster.servers, inst.jobs[j].gpus))
            best = min(reference_tau(inst, j, 1 if m >= 2 else 0, m) for m in spans)
            alone = reference_tau(inst, j, 1 if n >= 2 else 0, n)
            contention += count * (reference_tau(inst, j, p, n) - alone)
            overhead += count * inst.cluster.xi2 * (n - min(spans))
            base += count * best
    return contention / base, overhead / base


@settings(max_examples=30)
@given(tiny_instances())
def test_shares_equal_what_the_slot_by_slot_trace_implies(inst: Instance) -> None:
    for name in ("ff", "rand", "consolidate"):
        schedule = run_policy(inst, name, seed=1).schedule
        shares = realized_shares(inst, schedule)
        contention, overhead = _reference_shares(inst, schedule)
        assert shares.contention == pytest.approx(contention, rel=1e-9, abs=1e-12)
        assert shares.overhead == pytest.approx(overhead, rel=1e-9, abs=1e-12)
        assert shares.contention >= -1e-12 and shares.overhead >= -1e-12 and shares.split >= -1e-12


def test_a_schedule_without_splits_has_no_contention(two_server_contention: Instance) -> None:
    # two 2-GPU jobs on two 2-GPU servers: consolidate puts each on a server of its own
    serial = run_policy(two_server_contention, "consolidate").schedule
    assert (serial.placement_array > 0).sum(axis=1).max() == 1  # no job split: the premise holds
    assert realized_shares(two_server_contention, serial).contention == 0.0


def _mean_servers(inst: Instance, schedule) -> float:
    return float(((schedule.placement_array > 0).sum(axis=1) * (np.asarray(inst.arrays.gpus) == 8)).sum()) / float(
        (np.asarray(inst.arrays.gpus) == 8).sum()
    )


def test_ls_with_random_ties_spreads_jobs_more_than_ff() -> None:
    """On an empty cluster LS with ties by index is first fit; with random ties it spreads."""
    inst = paper(0)
    ff = _mean_servers(inst, run_policy(inst, "ff").schedule)
    ls_index = _mean_servers(inst, run_policy(inst, "ls").schedule)
    ls_random = _mean_servers(inst, run_policy(inst, "ls", tie_break="random", seed=0).schedule)
    assert ls_random > ff + 1.0 and ls_random > ls_index + 1.0


def test_rand_modes_and_job_orders_give_feasible_schedules() -> None:
    inst = paper(2, jobs=60, servers=8)
    for options in ({"mode": "servers"}, {"order": "input"}, {"mode": "servers", "order": "input"}):
        schedule = run_policy(inst, "rand", seed=3, **options).schedule
        assert check(inst, schedule).feasible
    gpu_draw = run_policy(inst, "rand", seed=3).schedule
    server_draw = run_policy(inst, "rand", seed=3, mode="servers").schedule
    spread = [float((s.placement_array > 0).sum(axis=1).mean()) for s in (gpu_draw, server_draw)]
    assert spread[1] < spread[0]  # whole servers first: fewer servers per job than GPUs drawn anywhere


def test_theta_binding_is_reported() -> None:
    inst = paper(0)
    for name in POLICIES:
        run = run_policy(inst, name)
        assert run.theta_binding == run.schedule.meta["theta_binding"]
        assert run.max_load <= (run.theta or np.inf) + 1e-9
    # theta = T never refuses a GPU: the load of a GPU is at most the makespan estimate sum
    assert not run_policy(inst, "consolidate").theta_binding


@settings(max_examples=25, deadline=None)
@given(tiny_instances())
def test_on_links_that_never_bind_the_shares_are_the_stars(inst: Instance) -> None:
    """One server per rack behind a rack link far faster than any uplink: every ring's
    tightest link is its servers' uplink, as on the star, so the topology path of the
    analysis must give the star's shares."""
    import dataclasses

    racks = {"racks": [[s] for s in range(inst.num_servers)], "rack_link": 1e9}
    if inst.num_servers < 2:
        return
    fat = dataclasses.replace(inst, cluster=dataclasses.replace(inst.cluster, topology=racks))
    assert fat.time_model.links is not None  # the topology path, not the star's
    schedule = run_policy(inst, "ls").schedule
    star, links = realized_shares(inst, schedule), realized_shares(fat, schedule)
    assert links.contention == pytest.approx(star.contention, abs=1e-9)
    assert links.split == pytest.approx(star.split, abs=1e-9)
    assert links.overhead == pytest.approx(star.overhead, abs=1e-9)
