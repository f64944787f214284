"""The GPU-bins relaxation: it never refutes a makespan that a schedule reaches (brute
force, the library, the counterexamples, the frontier's optima), its relaxed solutions are
what the model says, and it refutes what the structural floors cannot."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from rar_opt import Cluster, Instance, Job
from rar_opt.bounds import every_bound, registry
from rar_opt.errors import InputError
from rar_opt.formulations import gpubins
from rar_opt.instances.library import instance_path
from rar_opt.solvers import Status, gpu_bins_bound
from rar_opt.solvers.backend import SolveOptions
from rar_opt.solvers.cpsat import Cpsat

from ..bruteforce import brute_force
from ..helpers import COUNTEREXAMPLE_NAMES, load_counterexample, policy_makespans
from ..strategies import communication_heavy_instances, micro_instances


def structural_bounds(inst):  # {name: (value, seconds)} of the structural family
    names = {b.name for b in registry.entries("makespan", families=("structural",))}
    return {b.name: (b.value, b.seconds) for b in registry.cheap(inst) if b.name in names}


BOUNDS = [b.name for b in registry.entries("makespan", families=("structural",))]
structural_floor = registry.floor


def _ask(inst: Instance, makespan: int, time_limit: float = 20.0, symmetry: bool = True):
    model = gpubins.build(inst, gpubins.Options(makespan=makespan, symmetry=symmetry))
    raw = Cpsat().solve(model, SolveOptions(time_limit=time_limit, params=gpubins.PARAMS))
    return model, raw


def _holds(inst: Instance, model, makespan: int) -> None:
    """A relaxed solution: every job in G_j distinct bins, one server unless it may split,
    and every bin's items within the makespan."""
    m = inst.modes
    assert model.bins is not None
    for j in range(inst.num_jobs):
        where = [b for b, jobs in enumerate(model.bins) if j in jobs]
        assert len(where) == m.gpus[j]
    for jobs in model.bins:
        lengths = []
        for j in jobs:
            servers = {model.servers[b] for b, held in enumerate(model.bins) if j in held}
            lengths.append(int(m.split[j]) if len(servers) >= 2 else int(m.single[j]))
        assert sum(lengths) <= makespan


@settings(max_examples=15, deadline=None)
@given(micro_instances())
def test_the_bins_never_refute_the_brute_force_optimum(inst: Instance) -> None:
    bf = brute_force(inst, min(policy_makespans(inst).values()))
    assert bf is not None
    model, raw = _ask(inst, bf[0])
    assert raw.status != Status.INFEASIBLE and raw.has_solution  # micro: decided at once
    _holds(inst, model, bf[0])


@settings(max_examples=5, deadline=None)
@given(communication_heavy_instances())
def test_the_bins_never_refute_the_optimum_where_contention_decides(inst: Instance) -> None:
    from rar_opt.solvers import solve

    res = solve(inst, "compact")
    assert res.status == Status.OPTIMAL
    for symmetry in (True, False):
        model, raw = _ask(inst, res.makespan, symmetry=symmetry)
        assert raw.status != Status.INFEASIBLE
        if raw.has_solution:
            _holds(inst, model, res.makespan)


def test_the_bins_never_refute_a_known_optimum(library) -> None:
    cases = [(k.instance, k.optimum) for k in library]
    cases += [(c.instance, c.optimum) for c in map(load_counterexample, COUNTEREXAMPLE_NAMES)]
    for name in ("heavy-16x8x100-s1", "tiny-20x8x120-s0"):  # frontier optima, from their records
        frontier = Instance.read(instance_path(name))
        cases.append((frontier, int(frontier.meta["known_optimum"])))
    for inst, optimum in cases:
        _, raw = _ask(inst, optimum, time_limit=2.0)  # undecided is allowed; a "no" is a bug
        assert raw.status != Status.INFEASIBLE, inst.name


def test_the_bins_refute_what_the_floors_cannot() -> None:
    # heavy-20x8x120-s0: every structural floor says 57, the optimum is 58 (instances/frontier);
    # three one-GPU servers that only split jobs and two short one-GPU jobs can fill
    inst = Instance.read(instance_path("heavy-20x8x120-s0"))
    assert inst.meta["known_optimum"] == 58 and structural_floor(inst) == 57
    # through the bound-only API (`rar-opt bounds`): asked upward from the best floor
    found = {b.name: b for b in every_bound(inst, time_limits={"server_bins": 120.0})}
    assert found["server_bins"].value == 58 and "57: infeasible" in found["server_bins"].note
    assert max(b.value for b in found.values() if b.value is not None) == 58


def test_a_job_that_cannot_end_in_time_is_refuted_and_a_large_model_refused() -> None:
    times = {"grad_size": 0.01, "fwd_time": 0.1, "bwd_time": 0.1}
    inst = Instance("one", 60, Cluster(servers=(2, 2)), (Job("a", gpus=2, iterations=9, **times),))
    longest = int(inst.bounds.rho_min.max())
    assert _ask(inst, longest - 1)[1].status == Status.INFEASIBLE
    model, raw = _ask(inst, longest)
    assert raw.has_solution
    _holds(inst, model, longest)
    with pytest.raises(InputError, match="job x GPU cells"):
        gpubins.build(inst, gpubins.Options(makespan=longest, max_cells=3))
    assert gpu_bins_bound(inst, longest - 1).bound == longest  # refuted below, a solution at it
    assert gpu_bins_bound(inst, longest).asked == ((longest, "feasible"),)
    for field, bad in (("makespan", 0), ("symmetry", "yes"), ("max_cells", -1)):
        with pytest.raises(InputError, match=field):
            gpubins.Options(**{"makespan": longest, field: bad})
