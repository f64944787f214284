"""Pyomo formulations of RAR-DDLS. Each builds a ``ConcreteModel`` and reads schedules back;
none of them solves (that is :mod:`rar_opt.solvers`).

* :mod:`.compact`: the exact time-indexed MILP (model.md section 6).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pyomo.environ as pyo

from ..instance import Instance
from ..schedule import Schedule
from . import compact


@dataclass(frozen=True)
class Formulation:
    """What the solver layer needs of a MILP formulation."""

    name: str
    build: Callable[..., pyo.ConcreteModel]
    read_schedule: Callable[[pyo.ConcreteModel, Instance], Schedule]
    set_start: Callable[[pyo.ConcreteModel, Instance, Schedule], None]


def _build_compact(instance: Instance, **kw: Any) -> pyo.ConcreteModel:
    return compact.build(instance, compact.CompactOptions(**kw))


FORMULATIONS: dict[str, Formulation] = {
    "compact": Formulation("compact", _build_compact, compact.read_schedule, compact.set_start),
}
