"""Exact neighbourhoods: a local search that re-optimises a few servers at a time.

From a schedule, each step picks 2-4 servers at random (or, in :data:`UNSPLIT_SHARE` of
the steps, a split job and servers that could hold it unsplit), frees the unsplit jobs on them
(:func:`rar_opt.formulations.neighbourhood.movable`; at most :data:`MAX_FREE` of them,
with consecutive starts) and asks CP-SAT for the placement of
those jobs on those servers, at any starts, that gives the least total completion time of
the whole schedule, every other job held where it is
(:mod:`rar_opt.formulations.neighbourhood`; docs/exactness.md, "Exact neighbourhoods").
An answer that improves is kept, and the next step starts from it. The search ends at its
time limit, after ``steps`` steps, or on a stop request; its schedule is re-simulated and
checked before it is returned.

Randomness comes from ``seed`` only; each step's CP-SAT solve is also capped in
deterministic time (:data:`STEP_WORK`), so with ``steps`` given and time to spare two runs
give the same schedule.
"""

from __future__ import annotations

import logging
import time

import numpy as np

from rar_opt.check import check
from rar_opt.formulations import neighbourhood as nb
from rar_opt.instance import Instance
from rar_opt.schedule import Schedule
from rar_opt.solvers.backend import SolveOptions
from rar_opt.solvers.cpsat import Cpsat
from rar_opt.solvers.record import Searched
from rar_opt.support.processes import stop_requested

log = logging.getLogger(__name__)

STEP_SECONDS = 0.1
"""Each step's CP-SAT time limit. Short steps win: many more of them run, and the gains
come from the first tenths of a second of each (measured: docs/exactness.md, "Exact
neighbourhoods", "How long a step")."""

STEP_WORK = 0.2
"""Each step's CP-SAT deterministic-time limit, which makes steps reproducible when the
wall-clock limit does not bind first."""

SERVERS_PER_STEP = (2, 4)
"""The fewest and the most servers a step frees."""

MAX_FREE = 30
"""The most jobs a step frees: where the servers drawn hold more unsplit jobs (160 jobs on
10 servers), the step frees this many of them with consecutive starts, from a random one
on (measured: docs/exactness.md, "Exact neighbourhoods")."""


UNSPLIT_SHARE = 0.1
"""The share of steps that offer a split job (one drawn at random, where the schedule has
any that can run unsplit) the choice of staying as it is or running unsplit on its own
servers or on 1-3 others that hold it, with the unsplit jobs of all of them freed
(measured: docs/exactness.md, "Exact neighbourhoods", "Unsplit steps")."""


def _unsplit_step(
    instance: Instance, runs: nb.Runs, splits: np.ndarray, rng: np.random.Generator
) -> tuple[list[int], np.ndarray]:
    """A split job drawn at random, its servers and 1-3 other servers that hold it unsplit."""
    j = int(rng.choice(splits))
    own = np.nonzero(runs.placements[j])[0]
    hosts = np.setdiff1d(np.nonzero(instance.modes.capacity >= instance.modes.gpus[j])[0], own)
    extra = rng.choice(hosts, min(len(hosts), int(rng.integers(1, 4))), replace=False) if len(hosts) else hosts
    return [j], np.concatenate([own, extra]).astype(np.int64)


def search(
    instance: Instance,
    schedule: Schedule,
    *,
    time_limit: float,
    seed: int = 0,
    steps: int | None = None,
) -> Searched:
    """Improve ``schedule``'s total completion time by exact neighbourhoods (module
    docstring) for ``time_limit`` seconds or ``steps`` steps; never returns a schedule worse
    than ``schedule``, nor one whose makespan is longer."""
    began = time.perf_counter()
    runs = nb.Runs.of(instance, schedule)
    first, last = runs.total(), int(runs.end.max())
    rng = np.random.default_rng(seed)
    n_servers = instance.num_servers
    done = improving = 0
    low, high = min(SERVERS_PER_STEP[0], n_servers), min(SERVERS_PER_STEP[1], n_servers)
    while time.perf_counter() - began < time_limit and (steps is None or done < steps):
        if stop_requested() is not None or n_servers < 2:
            break
        done += 1
        splits = np.nonzero(runs.split & (instance.modes.n_min == 1))[0]
        unsplit: list[int] = []
        if len(splits) and rng.random() < UNSPLIT_SHARE:
            unsplit, servers = _unsplit_step(instance, runs, splits, rng)
        else:
            servers = rng.choice(n_servers, int(rng.integers(low, high + 1)), replace=False)
        server = runs.server  # derived from the placements: once per step
        free = [int(j) for j in nb.movable(runs) if server[j] in servers]
        if len(free) > MAX_FREE:
            free.sort(key=lambda j: (int(runs.start[j]), j))
            first_freed = int(rng.integers(0, len(free) - MAX_FREE + 1))
            free = free[first_freed : first_freed + MAX_FREE]
        if not free and not unsplit:
            continue
        model = nb.build(runs, free, servers, last, unsplit)
        left = time_limit - (time.perf_counter() - began)
        options = SolveOptions(
            time_limit=max(0.0, min(STEP_SECONDS, left)),
            seed=int(rng.integers(1 << 30)),
            params=(("max_deterministic_time", STEP_WORK),),
        )
        raw = Cpsat().solve(model, options)
        if raw.has_solution and model.moves is not None:
            moved = runs.moved(model.moves)
            if any(j in model.moves for j in unsplit):  # the held split jobs may now run shorter
                moved = nb.Runs.of(instance, moved.schedule())
            if moved.total() < runs.total():
                runs, improving = moved, improving + 1
    found = runs.schedule({"method": "neighbourhoods"})
    report = check(instance, found)
    total = int(report.result.completion.sum()) if report.feasible else None
    if total is None or total != runs.total():  # a model that disagrees with the simulator: keep the start
        log.warning("exact neighbourhoods: the schedule found does not match the simulator; the start is kept")
        return Searched(schedule, first, first, done, 0, time.perf_counter() - began)
    return Searched(found, total, first, done, improving, time.perf_counter() - began)
