"""Each job's fastest execution time by mode: unsplit on one server, or split over several.

Every lower bound that looks at the servers (rar_opt.bounds), the ``pack`` policy and the
GPU-bins relaxation start from these times, so they are computed here once per instance
(:attr:`rar_opt.instance.Instance.modes` caches them).

On one server a job sees no contention and spans one server, so it runs at its best
unsplit rate phi_j(0, 1). Split, it spans at least max(2, n_min_j) servers and sees at
least itself as a contender, so its best rate is phi_j(1, max(2, n_min_j)) (docs/model.md
section 3). Neither time is ever below rho_min_j, the job's best time over all placements.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rar_opt.cluster.timemodel import NEVER, TimeModel


@dataclass(frozen=True)
class Modes:
    """Per job: GPUs, best time unsplit (``single``), best time split (``split``), rho_min.

    ``single`` is NEVER when the job fits on no server; ``split`` is NEVER when it cannot
    span two servers (one GPU, or a one-server cluster). ``rho`` = min(single, split) =
    ``instance.bounds.rho_min``. ``n_min``: the fewest servers the job can span;
    ``capacity``: the GPUs of every server.
    """

    gpus: np.ndarray
    single: np.ndarray
    split: np.ndarray
    rho: np.ndarray
    n_min: np.ndarray
    capacity: np.ndarray

    @property
    def num_gpus(self) -> int:
        """N, the cluster's GPUs."""
        return int(self.capacity.sum())


def job_modes(tm: TimeModel, rho_min: np.ndarray) -> Modes:
    """The fastest execution time of each job in each mode, from the time model ``tm`` and
    the jobs' best times over every placement ``rho_min`` (``TimeModel.job_bounds``)."""
    n_jobs = len(tm.gpus)
    n_min, n_max = tm.span_range()
    ones = np.ones(n_jobs, dtype=np.int64)
    # one server: no contention, span 1 (the same on every server that fits the job)
    single = np.where(n_min == 1, tm.execution_slots(tm.phi(np.zeros(n_jobs), ones)), NEVER)
    # split: level 1 is the fastest share (uncontended on the star), at the fewest servers
    can_split = n_max >= 2
    split_phi = tm.phi(ones, np.maximum(n_min, 2))
    split = np.where(can_split, tm.execution_slots(np.maximum(split_phi, 1)), NEVER)
    rho = rho_min.astype(np.int64)
    # never below rho_min (they agree on the star; on a topology level 1 may be optimistic)
    single = np.where(single < NEVER, np.maximum(single, rho), NEVER)
    split = np.where(split < NEVER, np.maximum(split, rho), NEVER)
    return Modes(tm.gpus.astype(np.int64), single, split, rho, n_min.astype(np.int64), tm.capacity.astype(np.int64))
