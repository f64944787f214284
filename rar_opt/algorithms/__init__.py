"""Scheduling algorithms: plain functions ``instance -> schedule`` behind one registry.

Each entry maps a policy name to its function and its frozen params dataclass. Every
policy runs on the list-scheduling engine (:mod:`.engine`) and returns a
:class:`~rar_opt.schedule.Schedule` whose ``meta`` records what the run chose (theta,
kappa, trials, seed); the simulator, not the algorithm, is the judge of its makespan.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import InputError
from ..instance import Instance
from ..schedule import Schedule
from .baselines import (
    BaselineParams,
    consolidate_policy,
    first_fit_policy,
    list_scheduling_policy,
    oblivious_sjf_policy,
    random_policy,
)
from .sjf_bco import SjfBcoParams, sjf_bco


@dataclass(frozen=True)
class Policy:
    name: str
    run: Callable[[Instance, Any], Schedule]
    params: type
    seeded: bool
    summary: str


POLICIES: dict[str, Policy] = {
    p.name: p
    for p in (
        Policy("sjf-bco", sjf_bco, SjfBcoParams, False, "the paper's SJF-BCO (Alg. 1-3)"),
        Policy("ff", first_fit_policy, BaselineParams, False, "First-Fit with its own bisected theta"),
        Policy("ls", list_scheduling_policy, BaselineParams, False, "List-Scheduling (least load), bisected theta"),
        Policy("rand", random_policy, BaselineParams, True, "random idle GPUs, seeded, theta = T"),
        Policy("consolidate", consolidate_policy, BaselineParams, False, "fewest servers (Tiresias-style)"),
        Policy("sjf-oblivious", oblivious_sjf_policy, BaselineParams, False, "shortest estimated job first, first fit"),
    )
}


def run_policy(instance: Instance, name: str, *, seed: int = 0, **options: Any) -> Schedule:
    """Run the policy ``name`` with validated params (``seed`` only for seeded policies)."""
    if name not in POLICIES:
        raise InputError(f"unknown policy {name!r} (known: {', '.join(POLICIES)})", where="policy")
    policy = POLICIES[name]
    if policy.params is BaselineParams:
        options = {"seed": seed, **options}
    known = {f.name for f in dataclasses.fields(policy.params)}
    unknown = sorted(set(options) - known)
    if unknown:
        raise InputError(
            f"{name} does not take {', '.join(unknown)} (its options: {', '.join(sorted(known))})",
            where="policy options",
        )
    try:
        params = policy.params(**options)
    except (TypeError, ValueError) as exc:
        raise InputError(str(exc), where="policy options") from None
    schedule = policy.run(instance, params)
    # every result file says what made it: the package version and the seed
    meta = {**schedule.meta, "rar_opt": _version(), "seed": seed if policy.seeded else None}
    return dataclasses.replace(schedule, meta=meta)


def _version() -> str:
    from .. import __version__

    return __version__


__all__ = ["POLICIES", "BaselineParams", "Policy", "SjfBcoParams", "run_policy", "sjf_bco"]
