"""Formulation variants as data: the ``models/`` catalogue ("rar-opt/model", version 1).

A model spec names a formulation and its options, so that a variant used in a paper or
a sweep is a small JSON file rather than code::

    {"format": "rar-opt/model", "version": 1, "name": "compact-total",
     "formulation": "compact", "options": {"objective": "total", "symmetry": true},
     "doc": "the compact MILP minimising the sum of completion times"}

The options a spec may set are exactly the fields of the formulation's ``Options``
(:data:`rar_opt.formulations.FORMULATIONS`), validated by it: an option the formulation
does not take, a wrong type or a value out of range is an error naming
``options.<field>``. A relaxation is the option ``relaxation`` (docs/variants.md); a spec
may also say it at the top level, ``"relaxation": "lp"``, which is the same option.
:func:`build_model` turns a spec and an instance into a model (it never solves; a
relaxation is built as such); ``rar-opt export`` writes it as LP, MPS, GAMS or NL, with
the variant recorded in the file's header comment (LP, MPS and GAMS; the NL format has no
comments), and ``rar-opt solve --model`` solves it with every option of the spec.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyomo.environ as pyo

from rar_opt.errors import InputError
from rar_opt.formulations import formulation
from rar_opt.formulations.base import objective_reading
from rar_opt.instance import Instance
from rar_opt.support import jsonio as jio
from rar_opt.support.provenance import full_version, versions

MODEL_FORMAT = "rar-opt/model"
MODEL_VERSION = 1
EXPORT_FORMATS = ("lp", "mps", "gms", "nl")
COMMENT = {"lp": "\\ ", "mps": "* ", "gms": "* "}
"""How each format starts a comment line (the NL format has none)."""


@dataclass(frozen=True)
class ModelSpec:
    """A named formulation with options (validated against the formulation's ``Options``)."""

    name: str
    formulation: str
    options: dict[str, Any] = field(default_factory=dict, hash=False)
    doc: str = ""

    def __post_init__(self) -> None:
        if not jio.check_str(self.name, "name").strip():
            raise InputError("must name the variant, got an empty or blank name", where="name")
        jio.check_str(self.doc, "doc")
        formulation(self.formulation).make_options(self.options)  # raises, naming the option

    def make_options(self) -> Any:
        """The formulation's validated ``Options`` for this spec."""
        return formulation(self.formulation).make_options(self.options)

    @property
    def relaxation(self) -> str:
        """The relaxation the spec asks for (``"none"``: the exact model)."""
        return str(self.options.get("relaxation", "none"))

    def variant(self) -> dict[str, Any]:
        """Every option of the variant, defaults included (what an export's header records)."""
        return {"formulation": self.formulation, **dataclasses.asdict(self.make_options())}

    @classmethod
    def read(cls, path: str | Path) -> ModelSpec:
        """Read a spec file; every error names the file and the field."""
        try:
            raw = jio.load_json(path)
            jio.expect_kind(raw, MODEL_FORMAT)
            d = jio.expect_object(
                raw,
                required=("format", "version", "name", "formulation"),
                optional=("options", "doc", "relaxation"),
            )
            jio.expect_header(d, MODEL_FORMAT, MODEL_VERSION)
            options = dict(jio.check_meta(d.get("options", {}), "options"))
            if "relaxation" in d:  # the top-level spelling of the option
                if options.get("relaxation", d["relaxation"]) != d["relaxation"]:
                    raise InputError("contradicts options.relaxation", where="relaxation")
                options["relaxation"] = d["relaxation"]
            return cls(d["name"], d["formulation"], options, jio.check_str(d.get("doc", ""), "doc"))
        except InputError as exc:
            raise exc.in_file(str(path)) from None


def build_model(spec: ModelSpec, instance: Instance) -> Any:
    """The model of ``spec`` for ``instance`` (validated options; never solved): a Pyomo
    model, or a CP-SAT model for the ``cpsat`` formulation and the contention-free relaxation."""
    return formulation(spec.formulation).build_any(spec.make_options(), instance)


def header(spec: ModelSpec, instance: Instance, fmt: str, reading: dict[str, Any] | None = None) -> str:
    """The comment lines an export starts with: the variant, the instance, what reading the
    objective's value needs (``reading``: the weights' scale K, ...) and the versions."""
    lines = [
        f"rar-opt model spec {spec.name!r}: {spec.doc}".rstrip(": "),
        "variant: " + json.dumps(spec.variant(), sort_keys=True),
        f"instance: {instance.name} ({instance.num_jobs} jobs, {instance.num_servers} servers, T = {instance.horizon})",
        "versions: " + json.dumps(versions(), sort_keys=True),
        "written with: " + full_version(),
        f"instance data sha256: {instance.data_digest()}",
    ]
    if reading:
        lines.insert(2, "objective reading: " + json.dumps(reading, sort_keys=True))
    if spec.relaxation != "none":
        lines.insert(2, f"relaxation: {spec.relaxation} (its optimum is a lower bound on OPT, not a schedule)")
    # a doc of several lines stays a comment, line by line (an uncommented line would be
    # read as part of the model)
    return "".join(f"{COMMENT[fmt]}{part}\n" for line in lines for part in line.splitlines() or [""])


def export_model(spec: ModelSpec, instance: Instance, path: str | Path, fmt: str) -> dict[str, int]:
    """Write the model as ``fmt`` ("lp", "mps", "gms" or "nl") atomically, the variant in its
    header comment (not NL, which has no comments); returns its size."""
    if fmt not in EXPORT_FORMATS:
        raise InputError(f"unknown format {fmt!r} ({', '.join(EXPORT_FORMATS)})", where="format")
    if formulation(spec.formulation).problem == "cp":
        raise InputError(
            f"the {spec.formulation} model is a CP-SAT model, not a Pyomo one: it cannot be written as {fmt}",
            where="format",
        )
    if formulation(spec.formulation).problem == "minlp" and fmt not in ("nl", "gms"):
        raise InputError(
            f"the {spec.formulation} model has products and cannot be written as LP or MPS; use nl or gms",
            where="format",
        )
    if spec.relaxation == "contention-free":
        raise InputError(
            f"the contention-free relaxation is a CP-SAT model, not a Pyomo one: it cannot be written as {fmt}",
            where="format",
        )
    model = build_model(spec, instance)
    # the temporary file ends in ".<fmt>", from which Pyomo takes the format; passing
    # format="lp" as well made it warn that the name "likely does not match" (its LP enum
    # is not the string "lp")
    with jio.atomic_target(path, suffix=f".{fmt}") as tmp:
        model.write(str(tmp), io_options={"symbolic_solver_labels": True})
        for extra in (".col", ".row"):  # the NL writer's name files: not part of the export
            tmp.with_suffix(extra).unlink(missing_ok=True)
        if fmt in COMMENT:
            tmp.write_text(header(spec, instance, fmt, objective_reading(model)) + tmp.read_text())
    # what is counted (docs/formats.md, "Model sizes"): every variable the Pyomo model
    # declares, fixed ones included (HiGHS receives those as columns with equal bounds, so
    # solve's model_size.cols is the same number); the LP and MPS writers substitute the
    # fixed ones, so such a file holds variables - fixed_variables columns (plus one
    # constant column when the objective has a constant term)
    variables = list(model.component_data_objects(pyo.Var))
    n_cons = sum(1 for _ in model.component_data_objects(pyo.Constraint, active=True))
    return {
        "variables": len(variables),
        "fixed_variables": sum(bool(v.fixed) for v in variables),
        "constraints": n_cons,
    }
