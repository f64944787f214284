"""Slot-by-slot values of a schedule, for setting a formulation's variables (MIP starts,
fixing a model at a schedule to evaluate it). Everything comes from the simulator and the
time model; nothing here recomputes the model."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyomo.environ as pyo

from rar_opt.instance import Instance
from rar_opt.schedule import Schedule
from rar_opt.simulate import simulate


@dataclass(frozen=True)
class SlotValues:
    """Per slot t in 0..horizon-1 (rows) and job j or server s (columns)."""

    active: np.ndarray  # (T, J) bool
    iterations: np.ndarray  # (T, J) iterations done in slot t (0 when inactive)
    cumulative: np.ndarray  # (T, J) iterations done in slots 0..t
    done: np.ndarray  # (T, J) bool: completed by the end of slot t
    contention: np.ndarray  # (T, S) c_s[t], eq. (6)
    level: np.ndarray  # (T, J) max of c_s[t] over j's servers if j is split, else 0
    spans: np.ndarray  # (J,) n_j
    makespan: int


def slot_values(instance: Instance, schedule: Schedule, horizon: int) -> SlotValues:
    """Per-slot values of ``schedule`` over ``horizon`` slots, from the simulator (ValueError if it ends later)."""
    res = simulate(instance, schedule)
    if res.makespan is None or res.makespan > horizon:
        raise ValueError(f"the schedule does not complete within {horizon} slots")
    trace = res.trace()
    n_jobs, n_servers = instance.num_jobs, instance.num_servers
    active = np.zeros((horizon, n_jobs), dtype=bool)
    its = np.zeros((horizon, n_jobs), dtype=np.int64)
    cont = np.zeros((horizon, n_servers), dtype=np.int64)
    lo, hi = max(trace.origin, 0), min(trace.origin + len(trace.active), horizon)
    active[lo:hi] = trace.active[lo - trace.origin : hi - trace.origin]
    its[lo:hi] = trace.iterations[lo - trace.origin : hi - trace.origin]
    cont[lo:hi] = trace.contention[lo - trace.origin : hi - trace.origin]
    y = schedule.placement_array
    spans = (y > 0).sum(axis=1)
    on = (y > 0)[None, :, :]  # (1, J, S)
    level = np.where(spans[None, :] >= 2, (cont[:, None, :] * on).max(axis=2), 0)
    done = np.arange(horizon)[:, None] >= res.end_slot[None, :]
    return SlotValues(active, its, np.cumsum(its, axis=0), done, cont, level, spans, res.makespan)


def violated(model: pyo.ConcreteModel, tol: float = 1e-6) -> list[str]:
    """Names of the active constraints the model's current values violate."""
    out = []
    for con in model.component_data_objects(pyo.Constraint, active=True):
        body = pyo.value(con.body)
        if (con.lower is not None and body < pyo.value(con.lower) - tol) or (
            con.upper is not None and body > pyo.value(con.upper) + tol
        ):
            out.append(con.name)
    return out
