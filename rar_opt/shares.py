"""Where a schedule's time goes: the realized shares of contention, overhead and splitting.

For every job and every slot it runs, the simulator knows its span n_j and contention
count p_j, hence (through the time model, eq. (6)-(8)) its per-iteration time tau(p, n).
Against the job's best per-iteration time tau_min (fewest servers, no other contender):

* **contention** = tau(p, n) - tau(p_free, n), what other split jobs cost it, where
  p_free is what the job alone would see (1 if split, 0 on one server);
* **overhead** = xi2 (n - n_min), the per-server overhead of spanning more servers than
  it must;
* **split** = the rest of tau(p_free, n) - tau_min: its ring crossing the slower
  inter-server link instead of staying inside a server.

Each part is summed over all iterations the schedule runs (every iteration of job j in
that slot costs that much) and divided by the same sum of tau_min: the share of extra time
over an ideal, uncontended, least-spread run. This is what docs/experiments.md reports per
policy and preset.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rar_opt.instance import Instance
from rar_opt.schedule import Schedule
from rar_opt.simulate import SimResult, simulate


@dataclass(frozen=True)
class TimeShares:
    """Extra time over the best per-iteration time, as shares of it (summed over iterations)."""

    contention: float
    overhead: float
    split: float

    def to_dict(self) -> dict[str, float]:
        """JSON-ready values."""
        return {"contention": self.contention, "overhead": self.overhead, "split": self.split}


def realized_shares(instance: Instance, schedule: Schedule, sim: SimResult | None = None) -> TimeShares:
    """The shares of contention, overhead and splitting in ``schedule`` (see the module
    docstring); ``sim``, the schedule's simulation when the caller has it already (from
    :func:`~rar_opt.check.check`), saves simulating it again."""
    tm, b = instance.time_model, instance.bounds
    rows = schedule.sparse
    positive = rows.counts > 0
    entry_job, entry_server = rows.jobs()[positive], rows.servers[positive]
    n = np.bincount(entry_job, minlength=instance.num_jobs)
    p_free = np.where(n >= 2, 1, 0)
    jobs = np.arange(instance.num_jobs)
    tau_free = tm.tau(p_free, n, jobs)
    tau_min = b.tau_min
    overhead_each = instance.cluster.xi2 * (n - b.n_min)
    split_each = tau_free - tau_min - overhead_each
    iterations = np.zeros(instance.num_jobs)
    contention = 0.0
    if tm.links is not None:  # on a topology a job alone still has its own links' shares
        tau_free = _alone_on_links(instance, entry_job, entry_server, n, tau_free)
        split_each = tau_free - tau_min - overhead_each
    for seg in (simulate(instance, schedule) if sim is None else sim).segments:
        length = seg.last - seg.first + 1
        run = seg.active & (seg.iterations > 0)
        idx = np.flatnonzero(run)
        if not len(idx):
            continue
        if tm.links is None:  # a split job's share: the largest c_s over its servers
            split = n >= 2
            mine = split[entry_job] & run[entry_job]
            worst = np.zeros(instance.num_jobs, dtype=np.int64)
            np.maximum.at(worst, entry_job[mine], seg.contention[entry_server[mine]])
            p = np.where(split[idx], worst[idx], 0)
            tau = tm.tau(p, n[idx], idx)
        else:
            tau = _tau_on_links(instance, entry_job, entry_server, n, seg.active, tau_free)[idx]
        count = seg.iterations[idx] * length
        iterations[idx] += count
        contention += float(np.sum(count * (tau - tau_free[idx])))
    base = float(np.sum(iterations * tau_min))
    if base <= 0:
        return TimeShares(0.0, 0.0, 0.0)
    return TimeShares(
        contention=contention / base,
        overhead=float(np.sum(iterations * overhead_each)) / base,
        split=float(np.sum(iterations * split_each)) / base,
    )


def _tau_on_links(
    instance: Instance,
    entry_job: np.ndarray,
    entry_server: np.ndarray,
    n: np.ndarray,
    active: np.ndarray,
    tau_free: np.ndarray,
) -> np.ndarray:
    """Every job's per-iteration time in a slot with the ``active`` set, on a topology
    (single-server jobs and inactive jobs keep ``tau_free``). ``entry_job``,
    ``entry_server``: the (job, server) pairs of the placements' positive entries, by job
    and then server (compressed rows: no dense J x S array)."""
    split_now = (active & (n >= 2))[entry_job]
    pair_job, pair_server = entry_job[split_now], entry_server[split_now]
    tau = tau_free.copy()
    if len(pair_job):
        _, _, bw = instance.time_model.link_bandwidths(n, pair_job, pair_server, instance.num_servers)
        split = np.unique(pair_job)
        tau[split] = instance.time_model.tau_at_bandwidth(bw[split], n[split], split)
    return tau


def _alone_on_links(
    instance: Instance, entry_job: np.ndarray, entry_server: np.ndarray, n: np.ndarray, tau_free: np.ndarray
) -> np.ndarray:
    """Each split job's per-iteration time when it runs alone on a topology (the pairs as
    in :func:`_tau_on_links`)."""
    out = tau_free.copy()
    first = np.searchsorted(entry_job, np.arange(len(n) + 1))  # job j's pairs: first[j]:first[j + 1]
    for j in np.flatnonzero(n >= 2):
        servers = entry_server[first[j] : first[j + 1]]
        jobs = np.full(len(servers), j)
        _, _, bw = instance.time_model.link_bandwidths(n, jobs, servers, instance.num_servers)
        out[j] = instance.time_model.tau_at_bandwidth(bw[[j]], n[[j]], np.array([j]))[0]
    return out
