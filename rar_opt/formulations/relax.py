"""Relaxations of RAR-DDLS: models whose optimum is a lower bound on OPT, never a schedule
(docs/variants.md). A model spec asks for one with the compact MILP's option
``relaxation``:

* ``lp``: the compact MILP with every integer variable made continuous (Pyomo's
  ``core.relax_integer_vars``). Every point of the MILP is a point of the LP with the same
  objective, so min LP <= min MILP = OPT.
* ``preemptive``: the compact MILP without its no-preemption rows (``active_until_done``,
  eq. (4)): a job may pause after its start and resume later, on the same placement, and
  a paused job neither holds GPUs nor counts in any contention. Every non-preemptive
  schedule is still a point (pausing is allowed, not required), so its optimum is <= OPT.
* ``contention-free``: every job at its uncontended rate, the CP-SAT model of
  :mod:`.cfree` (the same one the decomposition uses for its bound): phi is non-increasing
  in the contention count, so no schedule runs faster than there; makespan only.

:func:`build` returns the relaxed model (a Pyomo model, or a CP-SAT model for
``contention-free``); :func:`lp_relaxation` relaxes any built MILP (the variants table's
"LP bound" of every exact variant).
"""

from __future__ import annotations

from typing import Any

import pyomo.environ as pyo

from rar_opt.formulations import cfree, compact
from rar_opt.instance import Instance

__all__ = ["build", "lp_relaxation", "relax_integers"]


def relax_integers(model: pyo.ConcreteModel) -> pyo.ConcreteModel:
    """Make every integer and binary variable of ``model`` continuous within its bounds, in place."""
    pyo.TransformationFactory("core.relax_integer_vars").apply_to(model)
    return model


def lp_relaxation(model: pyo.ConcreteModel) -> pyo.ConcreteModel:
    """A copy of ``model`` with its integer variables relaxed (``model`` is unchanged)."""
    relaxed = model.clone()
    relaxed.rar = model.rar  # the build record, not a Pyomo component: kept as it is
    return relax_integers(relaxed)


def build(instance: Instance, options: compact.Options) -> Any:
    """The relaxation ``options.relaxation`` of the compact MILP with ``options`` (see the module docstring)."""
    if options.relaxation == "contention-free":
        return cfree.build(instance, cfree.Options(restrict=False, horizon=options.horizon))
    model = compact.assemble(instance, options, name=f"{options.relaxation}-relaxation")
    if options.relaxation == "lp":
        relax_integers(model)
    return model
