"""The compact MILP's MIP start: every variable set from a schedule (:mod:`.compact`).

The schedule is first put in the canonical order of the compact model's symmetry rows
(identical consecutive jobs by start, identical consecutive servers by a weighted key);
activity, iterations and contention come from the simulator (:mod:`.values`), so the
start satisfies every row of the model it is given to.
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo

from rar_opt.formulations.base import model_data
from rar_opt.formulations.compact import CompactData, same_job
from rar_opt.formulations.links import set_link_start
from rar_opt.formulations.values import slot_values
from rar_opt.instance import Instance
from rar_opt.schedule import Schedule


def set_start(model: pyo.ConcreteModel, instance: Instance, schedule: Schedule) -> None:
    """Set every variable of ``model`` to the values of ``schedule`` (a complete MIP start).

    The schedule is first put in the canonical order of the symmetry rows; activity,
    iterations and contention come from the simulator, so the start satisfies every row.
    """
    schedule = canonical(instance, schedule)
    horizon = model_data(model).horizon
    sv = slot_values(instance, schedule, horizon)
    a, y = schedule.start_array, schedule.placement_array
    for (j, t), var in model.x.items():
        var.set_value(int(a[j] == t))
    for (j, s), var in model.y.items():
        var.set_value(int(y[j, s]))
        model.z[j, s].set_value(int(y[j, s] > 0))
    for (j, n), var in model.v.items():
        var.set_value(int(sv.spans[j] == n))
    if hasattr(model, "started"):
        for (j, t), var in model.started.items():
            var.set_value(int(a[j] <= t))
    for (j, t), var in model.u.items():
        var.set_value(int(sv.active[t, j]))
        model.Q[j, t].set_value(float(sv.cumulative[t, j]))
        model.D[j, t].set_value(int(sv.done[t, j]))
    for (j, t, k), var in getattr(model, "g", {}).items():  # every slot: the contention rows always hold
        var.set_value(int(sv.level[t, j] >= k))
    for (j, t, k), var in getattr(model, "e", {}).items():
        var.set_value(int(max(sv.level[t, j], 1) == k))
    for (j, s, t), var in model.h.items():
        var.set_value(int(sv.active[t, j] and sv.spans[j] >= 2 and y[j, s] > 0))
    for (j, s, t), var in model.r.items():
        var.set_value(float(y[j, s]) if sv.active[t, j] else 0.0)
    model.makespan.set_value(sv.makespan)
    link_level = CompactData.of(instance, horizon).link_level if hasattr(model, "w") else None
    if link_level is not None and instance.time_model.links is not None:  # a topology (docs/model.md 3.8)
        set_link_start(model, instance.time_model.links.inner_side, link_level, y, sv.active)


def _runs(n: int, same: object) -> list[list[int]]:
    """Maximal runs of consecutive indices i, i+1, ... with same(i, i+1)."""
    runs = [[0]]
    for i in range(1, n):
        if same(i - 1, i):  # type: ignore[operator]
            runs[-1].append(i)
        else:
            runs.append([i])
    return runs


def canonical(instance: Instance, schedule: Schedule) -> Schedule:
    """The same schedule with identical jobs and servers permuted as the symmetry rows ask:
    identical consecutive jobs by start slot, identical consecutive servers by the key
    sum_j (j+1) y[j,s], largest first. Completion times are unchanged up to the permutation."""
    a = np.array(schedule.start_array)
    y = np.array(schedule.placement_array)
    for run in _runs(instance.num_jobs, lambda j, k: same_job(instance, j, k)):
        order = sorted(run, key=lambda j: (a[j], j))
        a[run], y[run] = a[order], y[order]
    weights = np.arange(1, instance.num_jobs + 1)
    cap = instance.cluster.servers
    for run in _runs(instance.num_servers, lambda s, r: cap[s] == cap[r]):
        keys = weights @ y[:, run]
        order = [run[i] for i in np.argsort(-keys, kind="stable")]
        y[:, run] = y[:, order]
    return Schedule.from_arrays(instance.name, a, y, meta=schedule.meta)
