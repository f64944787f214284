"""Pictures of a schedule: a Gantt chart per GPU and the contention per server over time.

Needs matplotlib (``pip install 'rar-opt[plot]'``). Everything drawn comes from the
simulator's trace; GPU ids are assigned (lowest free ids) when the schedule has none.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .gpus import assign_gpu_ids
from .instance import Instance
from .jsonio import atomic_target
from .schedule import Schedule
from .simulate import simulate


def plot_schedule(instance: Instance, schedule: Schedule, path: str | Path) -> None:
    """Write a PNG: top, one row per GPU with the jobs it runs; bottom, c_s[t] per server."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    schedule.require_matches(instance)
    if schedule.gpu_ids is None:
        schedule = assign_gpu_ids(instance, schedule)
    res = simulate(instance, schedule)
    trace = res.trace()
    cap = instance.cluster.servers
    offset = np.concatenate([[0], np.cumsum(cap)[:-1]])
    colours = plt.get_cmap("tab20")
    fig, (gantt, cont) = plt.subplots(
        2, 1, figsize=(10, 3 + min(0.15 * sum(cap), 9)), sharex=True, gridspec_kw={"height_ratios": [3, 1]}
    )
    for j, ids in enumerate(schedule.gpu_ids or ()):
        start, end = int(schedule.starts[j]), int(res.completion[j])
        for s, g in ids or ():
            gantt.broken_barh([(start, end - start)], (offset[s] + g, 0.9), color=colours(j % 20))
        if ids:
            s, g = ids[0]
            gantt.text(start + 0.1, offset[s] + g + 0.45, str(j), va="center", fontsize=6)
    for edge in offset[1:]:
        gantt.axhline(edge - 0.05, color="grey", linewidth=0.5)
    gantt.set_ylabel("GPU (servers stacked)")
    gantt.set_title(f"{instance.name}: makespan {res.makespan}, average JCT {res.avg_jct:.1f}")
    slots = np.arange(trace.origin, trace.origin + len(trace.contention))
    for s in range(len(cap)):
        cont.step(slots, trace.contention[:, s], where="post", label=f"server {s}", linewidth=0.8)
    cont.set_ylabel("split jobs c_s")
    cont.set_xlabel("slot")
    if len(cap) <= 10:
        cont.legend(fontsize=6, ncol=min(len(cap), 5))
    fig.tight_layout()
    with atomic_target(path, suffix=".png") as tmp:
        fig.savefig(tmp, dpi=120, format="png")
    plt.close(fig)
