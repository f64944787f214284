"""GPU bins: a time-free relaxation of RAR-DDLS that asks "can the jobs fit in C slots?"

Drop time from a schedule that ends by slot C and keep only who ran on which GPU:

* on each server, jobs can keep the same GPUs from start to end (hand out GPUs in order of
  start: a job that starts finds at least its y_js GPUs free there), so every GPU runs a
  set of jobs one after another, and their durations add up to at most C;
* a job of G_j GPUs holds G_j distinct GPUs at once: G_j different bins;
* unsplit, its GPUs are all on one server with O_s >= G_j, and it runs at least
  ``single_j`` slots (:attr:`Instance.modes <rar_opt.instance.Instance.modes>`); split, they are on two servers or
  more, and it runs at least ``split_j`` slots (no contention, the fewest servers).

So if no such assignment of jobs to GPUs exists, no schedule ends by slot C: OPT >= C + 1.
This is bin packing with one bin of size C per GPU (the ``gpu_bins`` floors of
:mod:`rar_opt.bounds.structural`) plus what those floors cannot see: which bins belong to which
server, that a job's parts need distinct bins, and what splitting costs. No contention,
no releases and no order in time, so it is a relaxation only, never a schedule. It is
valid on every network: ``modes`` never overstates a job's time.

The model (CP-SAT, no objective; docs/exactness.md, "GPU bins"):

* x[j, b]: job j has a GPU in bin b; sum_b x[j, b] = G_j;
* exactly one mode per job: u[j, s] (unsplit on server s, only where it fits in time and
  GPUs) or split[j] (only where it may span two servers and fits in time);
* a bin of server s holds j only if j is unsplit on s or split; a split job uses at
  least two servers;
* each bin's load, single_j for every job it holds plus split_j - single_j for each of
  them that is split, is at most C;
* symmetry: the GPUs of one server are interchangeable, so its bins are ordered by the
  first job (in job order) each holds.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from ortools.sat.python import cp_model

from rar_opt.cluster.timemodel import NEVER
from rar_opt.errors import InputError
from rar_opt.formulations.base import ModelData, check_count, check_flag
from rar_opt.formulations.sizes import GPUBINS_MAX_CELLS as MAX_CELLS
from rar_opt.formulations.sizes import gpubins_too_large as too_large
from rar_opt.instance import Instance

PARAMS: tuple[tuple[str, Any], ...] = (("linearization_level", 2),)
"""CP-SAT settings for this model: it is a bin packing, where the linear relaxation is what
proves (heavy-20x8x120-s0 at 57: 4.1-4.8 s with level 2, 15 s with CP-SAT's default
level 1, undecided after 100 s with no relaxation; docs/exactness.md)."""


@dataclass(frozen=True)
class Options:
    """Options of the GPU-bins model."""

    makespan: int  # C: does everything fit in C slots per GPU?
    symmetry: bool = True  # order each server's bins by their first job
    max_cells: int = MAX_CELLS  # refuse more jobs x GPUs cells

    def __post_init__(self) -> None:
        check_count(self.makespan, "makespan")
        check_flag(self.symmetry, "symmetry")
        check_count(self.max_cells, "max_cells")


@dataclass
class GpuBinsModel:
    """A built GPU-bins model; ``bins`` holds each GPU's jobs once solved (a relaxed
    solution, not a schedule)."""

    model: cp_model.CpModel
    x: dict[tuple[int, int], Any]
    servers: tuple[int, ...]  # the server of each bin
    rar: ModelData
    bins: tuple[tuple[int, ...], ...] | None = None

    def load(self, value: Any) -> None:
        """Keep the solution that ``value`` (the solver's ``value`` of a variable) gives."""
        n_bins = len(self.servers)
        self.bins = tuple(tuple(j for (j, b), v in self.x.items() if b == k and value(v)) for k in range(n_bins))


def build(instance: Instance, options: Options) -> GpuBinsModel:
    """The GPU-bins model of ``instance`` for ``options.makespan`` slots (module docstring)."""
    why = too_large(instance, options.max_cells)
    if why is not None:
        raise InputError(f"the GPU-bins model would have {why}")
    c = options.makespan
    mo = instance.modes
    cap = [int(o) for o in mo.capacity]
    servers = tuple(s for s, o in enumerate(cap) for _ in range(o))
    on = {s: [b for b, t in enumerate(servers) if t == s] for s in range(len(cap))}
    m = cp_model.CpModel()
    x = {(j, b): m.new_bool_var(f"x{j}_{b}") for j in range(instance.num_jobs) for b in range(len(servers))}
    load: list[list[Any]] = [[] for _ in servers]
    for j in range(instance.num_jobs):
        gpus, single, split = int(mo.gpus[j]), int(mo.single[j]), int(mo.split[j])
        m.add(sum(x[j, b] for b in range(len(servers))) == gpus)
        unsplit = {s: m.new_bool_var(f"u{j}_{s}") for s in on if cap[s] >= gpus and single <= c}
        splits = gpus >= 2 and split < NEVER and split <= c and len(cap) >= 2
        mode = m.new_bool_var(f"split{j}") if splits else None
        m.add_exactly_one([*unsplit.values(), *([mode] if mode is not None else [])])
        for s, bins in on.items():
            allowed = [lit for lit in (unsplit.get(s), mode) if lit is not None]
            for b in bins:
                m.add_bool_or(allowed).only_enforce_if(x[j, b])
        if mode is not None:  # a split job uses two servers or more
            used = []
            for s, bins in on.items():
                z = m.new_bool_var(f"z{j}_{s}")
                m.add_max_equality(z, [x[j, b] for b in bins])
                used.append(z)
            m.add(sum(used) >= 2).only_enforce_if(mode)
        base = single if single < NEVER else split  # the length of j's item when unsplit
        for b in range(len(servers)):
            load[b].append(base * x[j, b])
            if mode is not None and split != base:  # w = x and split: the item is split_j long
                w = m.new_bool_var(f"w{j}_{b}")
                m.add_bool_and([x[j, b], mode]).only_enforce_if(w)
                m.add_bool_or([~x[j, b], ~mode, w])
                load[b].append((split - base) * w)
    for b in range(len(servers)):
        m.add(sum(load[b]) <= c)
    if options.symmetry:
        _order_bins(m, x, on, instance.num_jobs)
    data = ModelData("gpubins", instance.name, c, options, {"bins": len(servers)})
    return GpuBinsModel(m, x, servers, data)


def _order_bins(m: cp_model.CpModel, x: dict[tuple[int, int], Any], on: dict[int, list[int]], n_jobs: int) -> None:
    """Each server's bins in order of the first job each holds (an empty bin counts as
    after every job): the bins of one server are interchangeable."""
    for bins in on.values():
        first = []
        for b in bins:
            f = m.new_int_var(0, n_jobs, f"first{b}")
            m.add_min_equality(f, [n_jobs - (n_jobs - j) * x[j, b] for j in range(n_jobs)])
            first.append(f)
        for f, g in itertools.pairwise(first):
            m.add(f <= g)
