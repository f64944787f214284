"""Size guards of the CP-SAT formulations that bounds build, without importing CP-SAT.

A guard says, from the instance alone, why a model would be too large to build (or None);
the bounds registry asks it before it builds anything (docs/exactness.md, "Size guards of
the solver bounds"). The guards live here rather than beside their models so that asking
one costs no import of the solver (about 1.3 s for OR-Tools): at 100x the paper every
CP-SAT bound is over its guard, and ``rar-opt bounds`` never needs the solver.
:mod:`rar_opt.formulations.cfree` and :mod:`rar_opt.formulations.gpubins` export these
under their own names (``MAX_CELLS``, ``count_cells``, ``too_large``).
"""

from __future__ import annotations

from rar_opt.instance import Instance

NOT_BUILT = "not built: "
"""How the note of a model skipped by its size guard begins (then the guard's reason)."""

CFREE_MAX_CELLS = 100_000
"""The largest contention-free model built, in jobs x servers cells (about 4 s and 150 MB to
build, some 350 MB with the solve; the paper's 160 x 20 is 3,200)."""

GPUBINS_MAX_CELLS = 20_000
"""The largest GPU-bins model built by default, in jobs x GPUs cells (the frontier's are 340 at most)."""


def cfree_cells(instance: Instance) -> int:
    """The contention-free model's size measure: jobs x servers."""
    return instance.num_jobs * instance.num_servers


def cfree_too_large(instance: Instance, max_cells: int = CFREE_MAX_CELLS) -> str | None:
    """Why the contention-free model of ``instance`` is not built, or None."""
    cells = cfree_cells(instance)
    return f"{cells:,} job x server cells (limit {max_cells:,})" if cells > max_cells else None


def gpubins_cells(instance: Instance) -> int:
    """The GPU-bins model's size measure: jobs x GPUs."""
    return instance.num_jobs * instance.cluster.num_gpus


def gpubins_too_large(instance: Instance, max_cells: int = GPUBINS_MAX_CELLS) -> str | None:
    """Why the GPU-bins model of ``instance`` is not built, or None."""
    cells = gpubins_cells(instance)
    return f"{cells:,} job x GPU cells (limit {max_cells:,})" if cells > max_cells else None
