"""What every formulation provides, and the checks its options share.

A formulation is a module with

* ``Options``: a frozen dataclass; every field is an option a model spec or ``solve`` may
  set, validated on construction (an :class:`~rar_opt.errors.InputError` names the field
  as ``options.<name>``);
* ``build(instance, options) -> ConcreteModel``: the model, never solved here; the model
  carries a typed :class:`ModelData` as ``model.rar``;
* ``read_schedule(model, instance) -> Schedule``: the schedule at the model's values;
* ``set_start(model, instance, schedule)`` where the formulation can take a start.

:class:`Formulation` bundles them for the registry in :mod:`rar_opt.formulations`.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import pyomo.environ as pyo

from rar_opt.errors import InputError
from rar_opt.instance import Instance
from rar_opt.schedule import Schedule
from rar_opt.support.checks import is_int

OBJECTIVES = ("makespan", "total", "flow")
"""Objectives every formulation with an objective option offers: max_j C_j, sum_j C_j, or
the total flow time sum_j (C_j - r_j) (docs/arrivals.md). Flow is the total less the
constant sum_j r_j: the same optima, and the objective value is reported as flow."""

RICH_OBJECTIVES = (*OBJECTIVES, "weighted", "lexicographic")
"""The compact MILP's objectives: also sum_j w_j C_j (the jobs' ``weight``) and makespan
first, then the sum of completion times (docs/variants.md)."""

RELAXATIONS = ("none", "lp", "preemptive", "contention-free")
"""Relaxations a model spec may ask for (docs/variants.md): each gives a bound, never a schedule."""

WEIGHT_DENOMINATOR = 1000
"""Weights are written as fractions with denominators up to this, so that the weighted
objective has integer coefficients (docs/variants.md, "The axes": why integer coefficients)."""


@dataclass(frozen=True)
class ModelData:
    """What a built model remembers about how it was built (``model.rar``)."""

    formulation: str
    instance: str
    horizon: int  # slots modelled
    options: Any  # the formulation's Options
    extra: Mapping[str, Any] = dataclasses.field(default_factory=dict)


OBJECTIVE_READING = ("objective_scale", "lexicographic_multiplier", "flow_offset")
"""The keys of ``ModelData.extra`` that turn a model's objective value into the schedule's
numbers: the weights' scale K (the value is K sum_j w_j C_j), the lexicographic multiplier
M (M max_j C_j + sum_j C_j) and the releases subtracted from the flow time."""


def objective_reading(model: Any) -> dict[str, Any]:
    """What reading ``model``'s objective value needs (:data:`OBJECTIVE_READING`), for the
    records and the export headers; empty for a model that was not built here."""
    data = getattr(model, "rar", None)
    extra = data.extra if isinstance(data, ModelData) else {}
    return {key: extra[key] for key in OBJECTIVE_READING if key in extra}


def model_data(model: pyo.ConcreteModel) -> ModelData:
    """The :class:`ModelData` of a model built by one of our formulations."""
    data = getattr(model, "rar", None)
    if not isinstance(data, ModelData):
        raise TypeError("this model was not built by a rar-opt formulation")
    return data


@dataclass(frozen=True)
class Formulation:
    """One registered formulation: its options type and its functions."""

    name: str
    summary: str
    options: type  # a frozen dataclass; its fields are the formulation's options
    build: Callable[[Instance, Any], pyo.ConcreteModel]
    read_schedule: Callable[[pyo.ConcreteModel, Instance], Schedule]
    set_start: Callable[[pyo.ConcreteModel, Instance, Schedule], None] | None
    problem: str = "milp"  # "milp" (linear, integer) or "minlp" (products: needs a nonconvex solver)
    default_warm_start: str | None = None  # a policy whose makespan sets the horizon unless told otherwise
    relax: Callable[[Instance, Any], Any] | None = None  # builds the relaxation its option ``relaxation`` names

    def build_any(self, options: Any, instance: Instance) -> Any:
        """The model of ``options``: the relaxation it names (a bound only), else the exact model."""
        if self.relax is not None and getattr(options, "relaxation", "none") != "none":
            return self.relax(instance, options)
        return self.build(instance, options)

    def option_names(self) -> tuple[str, ...]:
        """The options this formulation takes, in declaration order."""
        return tuple(f.name for f in dataclasses.fields(self.options))

    def make_options(self, values: Mapping[str, Any] | None = None) -> Any:
        """Validated ``Options`` from a mapping; an option it does not take is an InputError."""
        values = dict(values or {})
        names = self.option_names()
        unknown = sorted(set(values) - set(names))
        if unknown:
            raise InputError(
                f"the {self.name} formulation does not take {unknown[0]!r} (its options: {', '.join(names)})",
                where=f"options.{unknown[0]}",
            )
        return self.options(**values)


# -- shared option checks (each names the field as options.<name>) ----------------------
def check_choice(value: Any, name: str, choices: tuple[str, ...]) -> None:
    """``value`` must be one of ``choices``."""
    if not isinstance(value, str) or value not in choices:
        raise InputError(f"must be one of {', '.join(choices)}, got {value!r}", where=f"options.{name}")


def check_flag(value: Any, name: str) -> None:
    """``value`` must be a bool."""
    if not isinstance(value, bool):
        raise InputError(f"must be true or false, got {value!r}", where=f"options.{name}")


def check_count(value: Any, name: str, *, optional: bool = False, lo: int = 1) -> None:
    """``value`` must be an integer >= ``lo`` (or None when ``optional``)."""
    if value is None and optional:
        return
    if not is_int(value) or value < lo:
        raise InputError(f"must be an integer >= {lo}, got {value!r}", where=f"options.{name}")


def resolve_horizon(horizon: int | None, instance: Instance) -> int:
    """The slots to model: ``horizon`` if given (at most the instance's T), else T."""
    if horizon is None:
        return instance.horizon
    if horizon > instance.horizon:
        raise InputError(
            f"= {horizon} exceeds the instance's horizon T = {instance.horizon} "
            "(a model may use fewer slots than the instance, never more)",
            where="options.horizon",
        )
    return horizon


def lexicographic_multiplier(num_jobs: int, horizon: int) -> int:
    """M of the lexicographic objective M max_j C_j + sum_j C_j over ``horizon`` slots:
    J T + 1 exceeds any sum of completion times, so no makespan is traded for a shorter sum
    (docs/variants.md)."""
    return int(num_jobs) * int(horizon) + 1


def weight_coefficients(weights: Sequence[float]) -> tuple[list[int], int]:
    """Integer coefficients c_j = K w_j of the weighted objective, and the scale K.

    Our solves stop at an absolute gap below 1, which proves an integral objective exact;
    so the weights are written as fractions (denominators up to :data:`WEIGHT_DENOMINATOR`)
    and scaled by the least common multiple K of their denominators. Integer weights (the
    default 1) give K = 1. A weight that is not such a fraction is rounded to the nearest
    one, with a warning naming it.
    """
    fractions = [Fraction(w).limit_denominator(WEIGHT_DENOMINATOR) for w in weights]
    scale = math.lcm(*(f.denominator for f in fractions))
    coefficients = [int(f * scale) for f in fractions]
    for j, (w, c) in enumerate(zip(weights, coefficients, strict=True)):
        if abs(c - scale * w) > 1e-9 * scale * w:
            warnings.warn(f"jobs[{j}].weight {w!r} rounded to {c}/{scale} for the weighted objective", stacklevel=2)
    return coefficients, scale


def require_star(instance: Instance, what: str) -> None:
    """Refuse an instance whose network is not the paper's star (docs/model.md section 3.8):
    ``what`` (e.g. "the cpsat formulation") counts contention per server only."""
    if instance.time_model.links is not None:
        raise InputError(
            f"{what} counts contention per server only; this cluster's network is not "
            "a star: only the compact formulation models its links (rar-opt solve --formulation compact, "
            "or solve's default auto, which hands such an instance to it)",
            where="cluster.topology",
        )
