"""Pyomo formulations of RAR-DDLS, one registry. Each builds a ``ConcreteModel`` and reads
schedules back; none of them solves (that is :mod:`rar_opt.solvers`).

* ``compact``: the exact time-indexed MILP (docs/model.md section 6, docs/exactness.md);
* ``enumerative``: the paper's ILP (10)-(13) over enumerated schedules (and (14)-(16));
* ``nonconvex``: RAR-DDLS (1)-(9) as the non-convex MINLP it is (SCIP solves it);
* ``gdp``: the compact model with its indicators and rate table as Pyomo.GDP disjunctions,
  transformed into a MILP by ``gdp.bigm``, ``gdp.hull`` or ``gdp.mbigm``;
* ``cpsat``: an exact constraint-programming model for OR-Tools CP-SAT.

The compact MILP's ``relaxation`` option names a relaxation (:mod:`.relax`), built by
:meth:`Formulation.build_any`; ``build`` itself refuses it (a relaxation gives a bound).

Adding a formulation: a module with ``Options``, ``build``, ``read_schedule`` (and
``set_start`` if it takes a start), plus one entry below; model specs, ``solve`` and the
command line pick it up from :data:`FORMULATIONS`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rar_opt.formulations.base import Formulation, ModelData, model_data

FORMULATIONS: dict[str, Formulation]  # built on first use (module __getattr__ below)

_FROM_BASE = ("Formulation", "ModelData", "model_data")  # also on first use: base imports Pyomo


def _catalogue() -> dict[str, Formulation]:
    """Every formulation by name. Built when first asked for, so that importing one module
    of the package (a size guard) does not import every model, Pyomo and the solvers."""
    from rar_opt.formulations import compact, compact_start, cpsat, enumerative, gdp, nonconvex, relax
    from rar_opt.formulations.base import Formulation

    return {
        f.name: f
        for f in (
            Formulation(
                "compact",
                "the exact time-indexed MILP",
                compact.Options,
                compact.build,
                compact.read_schedule,
                compact_start.set_start,
                relax=relax.build,
            ),
            Formulation(
                "enumerative",
                "the paper's ILP (10)-(13) over every feasible schedule (tiny instances)",
                enumerative.Options,
                enumerative.build,
                enumerative.read_schedule,
                enumerative.set_start,
            ),
            Formulation(
                "nonconvex",
                "RAR-DDLS (1)-(9) as stated, a non-convex MINLP (SCIP; tiny instances)",
                nonconvex.Options,
                nonconvex.build,
                nonconvex.read_schedule,
                None,
                problem="minlp",
                default_warm_start="sjf-bco",  # the horizon T makes the MINLP far larger than needed
            ),
            Formulation(
                "gdp",
                "the compact model as Pyomo.GDP disjunctions, transformed by bigm, hull or mbigm (small instances)",
                gdp.Options,
                gdp.build,
                gdp.read_schedule,
                None,
            ),
            Formulation(
                "cpsat",
                "an exact constraint-programming model for OR-Tools CP-SAT (the full model of auto)",
                cpsat.Options,
                cpsat.build,
                cpsat.read_schedule,
                cpsat.set_start,
                problem="cp",
            ),
        )
    }


def __getattr__(name: str) -> Any:
    if name == "FORMULATIONS":  # once: the built dict then shadows this hook
        if "FORMULATIONS" not in globals():
            globals()["FORMULATIONS"] = _catalogue()
        return globals()["FORMULATIONS"]
    if name in _FROM_BASE:
        from rar_opt.formulations import base

        return getattr(base, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def formulation(name: str) -> Formulation:
    """The registered formulation ``name``; an unknown name is an InputError listing the known."""
    from rar_opt.errors import InputError

    known: dict[str, Formulation] = __getattr__("FORMULATIONS")
    if name not in known:
        raise InputError(f"unknown formulation {name!r} (known: {', '.join(known)})", where="formulation")
    return known[name]


__all__ = ["FORMULATIONS", "Formulation", "ModelData", "formulation", "model_data"]
