"""A deliberately simple exact method for the tests: try every start and placement.

Starts range over 0..H-1, where H is any upper bound on the optimal makespan (every job
of an optimal schedule starts before the makespan); each combination is judged by the
checker (which simulates it). Exponential, so only for micro instances. Job j's starts
begin at its release r_j (the checker refuses earlier ones anyway); objectives are the
makespan, the total completion time and the total flow time sum_j (C_j - r_j).
"""

from __future__ import annotations

import itertools

from rar_opt import Instance, Schedule, check


def placements_of(instance: Instance, j: int) -> list[tuple[int, ...]]:
    """Every y with sum_s y_s = G_j and 0 <= y_s <= O_s."""
    caps = instance.cluster.servers
    need = instance.jobs[j].gpus
    return [y for y in itertools.product(*(range(o + 1) for o in caps)) if sum(y) == need]


def brute_force(
    instance: Instance, upper: int, objective: str = "makespan", flow_cap: int | None = None
) -> tuple[int, Schedule] | None:
    """The best objective over all schedules with starts < ``upper`` (and, with ``flow_cap``,
    total flow time sum_j (C_j - r_j) at most it), and a schedule for it."""
    options = [placements_of(instance, j) for j in range(instance.num_jobs)]
    best: tuple[int, Schedule] | None = None
    offset = int(instance.releases.sum()) if objective == "flow" else 0
    for starts in itertools.product(*(range(job.release, upper) for job in instance.jobs)):
        for ys in itertools.product(*options):
            sched = Schedule.from_arrays(instance.name, starts, ys)
            report = check(instance, sched)
            if not report.feasible:
                continue
            total = int(report.result.completion.sum()) - offset
            if flow_cap is not None and int(report.result.completion.sum()) - int(instance.releases.sum()) > flow_cap:
                continue
            value = report.result.makespan if objective == "makespan" else total
            if best is None or value < best[0]:
                best = (value, sched)
    return best
