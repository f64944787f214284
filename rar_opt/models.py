"""Formulation variants as data: the ``models/`` catalogue ("rar-opt/model", version 1).

A model spec names a formulation and its options, so that a variant used in a paper or
a sweep is a small JSON file rather than code::

    {"format": "rar-opt/model", "version": 1, "name": "compact-total",
     "formulation": "compact", "options": {"objective": "total", "symmetry": true},
     "doc": "the compact MILP minimising the sum of completion times"}

Formulations and their options:

* ``compact``: ``objective`` ("makespan" | "total"), ``symmetry`` (bool), ``horizon`` (int)
* ``enumerative``: ``objective`` ("makespan" | "total"), ``max_start`` (int)
* ``nonconvex``: ``horizon`` (int)

:func:`build_model` turns a spec and an instance into a Pyomo model (it never solves);
``rar-opt export`` writes it as LP, MPS or NL.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyomo.environ as pyo

from . import jsonio as jio
from .errors import InputError
from .instance import Instance

MODEL_FORMAT = "rar-opt/model"
MODEL_VERSION = 1

OPTIONS: dict[str, dict[str, type | tuple[type, ...]]] = {
    "compact": {"objective": str, "symmetry": bool, "horizon": int},
    "enumerative": {"objective": str, "max_start": int},
    "nonconvex": {"horizon": int},
}


@dataclass(frozen=True)
class ModelSpec:
    name: str
    formulation: str
    options: dict[str, Any] = field(default_factory=dict, hash=False)
    doc: str = ""

    def __post_init__(self) -> None:
        jio.check_str(self.name, "name")
        if self.formulation not in OPTIONS:
            known = ", ".join(OPTIONS)
            raise InputError(f"unknown formulation {self.formulation!r} (known: {known})", where="formulation")
        allowed = OPTIONS[self.formulation]
        for key, value in self.options.items():
            if key not in allowed:
                raise InputError(
                    f"unknown option {key!r} for {self.formulation} (allowed: {', '.join(allowed)})",
                    where=f"options.{key}",
                )
            expected = allowed[key]
            if (isinstance(value, bool) and expected is not bool) or not isinstance(value, expected):
                raise InputError(f"has the wrong type {type(value).__name__}", where=f"options.{key}")
        if self.options.get("objective", "makespan") not in ("makespan", "total"):
            raise InputError("must be 'makespan' or 'total'", where="options.objective")

    @classmethod
    def read(cls, path: str | Path) -> ModelSpec:
        try:
            d = jio.expect_object(
                jio.load_json(path),
                required=("format", "version", "name", "formulation"),
                optional=("options", "doc"),
            )
            jio.expect_header(d, MODEL_FORMAT, MODEL_VERSION)
            return cls(
                d["name"],
                d["formulation"],
                dict(jio.check_meta(d.get("options", {}), "options")),
                jio.check_str(d.get("doc", ""), "doc"),
            )
        except InputError as exc:
            raise exc.in_file(str(path)) from None


def build_model(spec: ModelSpec, instance: Instance) -> pyo.ConcreteModel:
    """The Pyomo model of ``spec`` for ``instance``."""
    from .formulations import compact, enumerative, nonconvex

    opts = dict(spec.options)
    if spec.formulation == "compact":
        return compact.build(instance, compact.CompactOptions(**opts))
    if spec.formulation == "enumerative":
        listed = enumerative.enumerate_schedules(instance, max_start=opts.get("max_start", instance.horizon))
        return enumerative.build(instance, listed, opts.get("objective", "makespan"))
    return nonconvex.build(instance, horizon=opts.get("horizon"))


def export_model(spec: ModelSpec, instance: Instance, path: str | Path, fmt: str) -> dict[str, int]:
    """Write the model as ``fmt`` ("lp", "mps" or "nl") atomically; returns its size."""
    if fmt not in ("lp", "mps", "nl"):
        raise InputError(f"unknown format {fmt!r} (lp, mps, nl)", where="format")
    if spec.formulation == "nonconvex" and fmt != "nl":
        raise InputError("the nonconvex model has products and cannot be written as LP or MPS; use nl", where="format")
    model = build_model(spec, instance)
    with jio.atomic_target(path, suffix=f".{fmt}") as tmp:
        model.write(str(tmp), format=fmt, io_options={"symbolic_solver_labels": True})
        for extra in (".col", ".row"):  # the NL writer's name files: not part of the export
            tmp.with_suffix(extra).unlink(missing_ok=True)
    n_vars = sum(1 for _ in model.component_data_objects(pyo.Var))
    n_cons = sum(1 for _ in model.component_data_objects(pyo.Constraint, active=True))
    return {"variables": n_vars, "constraints": n_cons}
