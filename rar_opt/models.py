"""Formulation variants as data: the ``models/`` catalogue ("rar-opt/model", version 1).

A model spec names a formulation and its options, so that a variant used in a paper or
a sweep is a small JSON file rather than code::

    {"format": "rar-opt/model", "version": 1, "name": "compact-total",
     "formulation": "compact", "options": {"objective": "total", "symmetry": true},
     "doc": "the compact MILP minimising the sum of completion times"}

The options a spec may set are exactly the fields of the formulation's ``Options``
(:data:`rar_opt.formulations.FORMULATIONS`), validated by it: an option the formulation
does not take, a wrong type or a value out of range is an error naming
``options.<field>``. :func:`build_model` turns a spec and an instance into a Pyomo model
(it never solves); ``rar-opt export`` writes it as LP, MPS or NL, and ``rar-opt solve
--model`` solves it with every option of the spec.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyomo.environ as pyo

from . import jsonio as jio
from .errors import InputError
from .formulations import formulation
from .instance import Instance

MODEL_FORMAT = "rar-opt/model"
MODEL_VERSION = 1
EXPORT_FORMATS = ("lp", "mps", "nl")


@dataclass(frozen=True)
class ModelSpec:
    """A named formulation with options (validated against the formulation's ``Options``)."""

    name: str
    formulation: str
    options: dict[str, Any] = field(default_factory=dict, hash=False)
    doc: str = ""

    def __post_init__(self) -> None:
        jio.check_str(self.name, "name")
        formulation(self.formulation).make_options(self.options)  # raises, naming the option

    def make_options(self) -> Any:
        """The formulation's validated ``Options`` for this spec."""
        return formulation(self.formulation).make_options(self.options)

    @classmethod
    def read(cls, path: str | Path) -> ModelSpec:
        """Read a spec file; every error names the file and the field."""
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
    """The Pyomo model of ``spec`` for ``instance`` (validated options; never solved)."""
    return formulation(spec.formulation).build(instance, spec.make_options())


def export_model(spec: ModelSpec, instance: Instance, path: str | Path, fmt: str) -> dict[str, int]:
    """Write the model as ``fmt`` ("lp", "mps" or "nl") atomically; returns its size."""
    if fmt not in EXPORT_FORMATS:
        raise InputError(f"unknown format {fmt!r} ({', '.join(EXPORT_FORMATS)})", where="format")
    if formulation(spec.formulation).problem == "cp":
        raise InputError(
            f"the {spec.formulation} model is a CP-SAT model, not a Pyomo one: it cannot be written as {fmt}",
            where="format",
        )
    if formulation(spec.formulation).problem == "minlp" and fmt != "nl":
        raise InputError(
            f"the {spec.formulation} model has products and cannot be written as LP or MPS; use nl", where="format"
        )
    model = build_model(spec, instance)
    # the temporary file ends in ".<fmt>", from which Pyomo takes the format; passing
    # format="lp" as well made it warn that the name "likely does not match" (its LP enum
    # is not the string "lp")
    with jio.atomic_target(path, suffix=f".{fmt}") as tmp:
        model.write(str(tmp), io_options={"symbolic_solver_labels": True})
        for extra in (".col", ".row"):  # the NL writer's name files: not part of the export
            tmp.with_suffix(extra).unlink(missing_ok=True)
    n_vars = sum(1 for _ in model.component_data_objects(pyo.Var))
    n_cons = sum(1 for _ in model.component_data_objects(pyo.Constraint, active=True))
    return {"variables": n_vars, "constraints": n_cons}
