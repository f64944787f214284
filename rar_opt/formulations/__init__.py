"""Pyomo formulations of RAR-DDLS. Each builds a ``ConcreteModel`` and reads schedules back;
none of them solves (that is :mod:`rar_opt.solvers`).

* :mod:`.compact`: the exact time-indexed MILP (model.md section 6);
* :mod:`.enumerative`: the paper's ILP (10)-(13) over enumerated schedules, and (14)-(16);
* :mod:`.nonconvex`: RAR-DDLS (1)-(9) as the non-convex MINLP it is (SCIP solves it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pyomo.environ as pyo

from ..instance import Instance
from ..schedule import Schedule
from . import compact, enumerative


@dataclass(frozen=True)
class Formulation:
    """What the solver layer needs of a MILP formulation."""

    name: str
    build: Callable[..., pyo.ConcreteModel]
    read_schedule: Callable[[pyo.ConcreteModel, Instance], Schedule]
    set_start: Callable[[pyo.ConcreteModel, Instance, Schedule], None]


def _build_compact(instance: Instance, **kw: Any) -> pyo.ConcreteModel:
    return compact.build(instance, compact.CompactOptions(**kw))


def _build_enumerative(
    instance: Instance,
    *,
    objective: str = "makespan",
    symmetry: bool = True,
    cuts: bool = False,
    horizon: int | None = None,
) -> pyo.ConcreteModel:
    # starts below the (heuristic) horizon: every schedule that could be optimal is listed
    enumerated = enumerative.enumerate_schedules(instance, max_start=horizon or instance.horizon)
    return enumerative.build(instance, enumerated, objective)


FORMULATIONS: dict[str, Formulation] = {
    "compact": Formulation("compact", _build_compact, compact.read_schedule, compact.set_start),
    "enumerative": Formulation("enumerative", _build_enumerative, enumerative.read_schedule, enumerative.set_start),
}
