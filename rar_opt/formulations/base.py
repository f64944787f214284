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
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pyomo.environ as pyo

from ..errors import InputError
from ..instance import Instance
from ..schedule import Schedule

OBJECTIVES = ("makespan", "total")
"""Objectives a formulation may offer: max_j C_j, or sum_j C_j."""


@dataclass(frozen=True)
class ModelData:
    """What a built model remembers about how it was built (``model.rar``)."""

    formulation: str
    instance: str
    horizon: int  # slots modelled
    options: Any  # the formulation's Options
    extra: Mapping[str, Any] = dataclasses.field(default_factory=dict)


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
    if isinstance(value, bool) or not isinstance(value, int) or value < lo:
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
