"""Scheduling algorithms: plain functions ``(instance, params) -> PolicyResult`` behind one registry.

Each entry maps a policy name to its function and its frozen params dataclass. Every
policy runs on the list-scheduling engine (:mod:`.engine`) and returns a
:class:`~.result.PolicyResult`: the schedule beside what the run chose (theta, kappa,
trials, loads, seed). The simulator, not the algorithm, is the judge of its makespan.

Adding a policy: a function in a module of this package plus one line in
:data:`POLICIES`; the command line, ``compare`` and the experiments pick it up.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from rar_opt.algorithms.backfill import BackfillParams, backfill_policy
from rar_opt.algorithms.baselines import (
    BaselineParams,
    BisectedParams,
    LsParams,
    OrderedParams,
    RandParams,
    consolidate_policy,
    first_fit_policy,
    list_scheduling_policy,
    oblivious_sjf_policy,
    random_policy,
)
from rar_opt.algorithms.classical import PLACEMENTS, ClassicalParams, laf_policy, lpt_policy
from rar_opt.algorithms.engine import Progress, reporting
from rar_opt.algorithms.online import (
    OnlineParams,
    OnlineSjfBcoParams,
    online_consolidate,
    online_first_fit,
    online_least_loaded,
    online_longest_first,
    online_shortest_first,
    online_sjf_bco,
)
from rar_opt.algorithms.packing import PackParams, pack_policy
from rar_opt.algorithms.result import PolicyResult
from rar_opt.algorithms.search import SearchParams, improve_policy
from rar_opt.algorithms.sjf_bco import SjfBcoParams, sjf_bco
from rar_opt.errors import InputError, ParameterError
from rar_opt.instance import Instance


@dataclass(frozen=True)
class Policy:
    """One registered policy: its function, its params type and a one-line summary."""

    name: str
    run: Callable[[Instance, Any], PolicyResult]
    params: type
    summary: str

    @property
    def seeded(self) -> bool:
        """Whether the policy draws random numbers (its params then have a ``seed``)."""
        return any(f.name == "seed" for f in dataclasses.fields(self.params))

    def option_names(self) -> tuple[str, ...]:
        """The options the policy takes (its params' fields)."""
        return tuple(f.name for f in dataclasses.fields(self.params))


POLICIES: dict[str, Policy] = {
    p.name: p
    for p in (
        Policy("sjf-bco", sjf_bco, SjfBcoParams, "the paper's SJF-BCO (Alg. 1-3)"),
        Policy("ff", first_fit_policy, BisectedParams, "First-Fit with its own bisected theta"),
        Policy("ls", list_scheduling_policy, LsParams, "List-Scheduling (least load), bisected theta"),
        Policy("rand", random_policy, RandParams, "random idle GPUs, seeded, theta = T"),
        Policy("consolidate", consolidate_policy, OrderedParams, "fewest servers (Tiresias-style)"),
        Policy("sjf-oblivious", oblivious_sjf_policy, BaselineParams, "shortest estimated job first, first fit"),
        Policy("lpt", lpt_policy, ClassicalParams, "longest estimated job first (Graham's LPT), theta = T"),
        Policy("laf", laf_policy, ClassicalParams, "largest area (GPUs x estimated time) first, theta = T"),
        Policy("improve", improve_policy, SearchParams, "seeded iterated greedy from the best lpt/laf schedule"),
        Policy("pack", pack_policy, PackParams, "unsplit where possible, backfilled, forward-backward improved"),
        Policy("backfill", backfill_policy, BackfillParams, "backfilling on the servers, searched for the average JCT"),
        # online: decisions at arrivals and completions, later jobs unseen (algorithms/online.py)
        Policy("online-sjf-bco", online_sjf_bco, OnlineSjfBcoParams, "online SJF-BCO: smallest first, FA-FFP/LBSGF"),
        Policy("online-ff", online_first_fit, OnlineParams, "online first come first served, first fit"),
        Policy("online-ll", online_least_loaded, OnlineParams, "online first come first served, least loaded"),
        Policy(
            "online-consolidate", online_consolidate, OnlineParams, "online first come first served, fewest servers"
        ),
        Policy("online-lf", online_longest_first, OnlineParams, "online longest estimated job first, first fit"),
        Policy("online-sf", online_shortest_first, OnlineParams, "online shortest estimated job first, first fit"),
    )
}


BASELINES: dict[str, str] = {"makespan": "lpt", "avg_jct": "sjf-oblivious"}
"""The classical baseline of each metric (docs/algorithms.md, section 5): longest first
(Graham's LPT) for the makespan, shortest first (by estimated uncontended time, first fit)
for the average JCT. Every verdict about a policy has them beside it: ``compare``, the
studies and the experiments always run them (:func:`with_baselines`)."""


def with_baselines(names: Iterable[str]) -> list[str]:
    """The policies ``names`` followed by the classical baselines (:data:`BASELINES`) they lack."""
    out = list(names)
    return out + [b for b in dict.fromkeys(BASELINES.values()) if b not in out]


QUICK: dict[str, dict[str, Any]] = {"pack": {"iterations": 0, "lanes": 0.0}}
"""Options under which a policy is a construction only: ``pack`` without its restarts and
its lanes search. The exact methods' heuristics (makespan and sums) run the policies so,
and leave the searches to their improvement phases."""


def run_policy(
    instance: Instance, name: str, *, seed: int = 0, progress: Progress | None = None, **options: Any
) -> PolicyResult:
    """Run the policy ``name`` with validated params; ``seed`` reaches seeded policies only.

    Returns the :class:`PolicyResult`; its ``schedule`` is the solution. An unknown policy,
    an option the policy does not take, or a value out of range is an
    :class:`~rar_opt.errors.InputError`. ``progress``, if given, hears from every trial
    (:data:`~.engine.Progress`: trial number, jobs placed, jobs); silent by default.
    """
    if not isinstance(instance, Instance):
        raise ParameterError(f"must be an Instance, got {type(instance).__name__}", where="instance")
    if name not in POLICIES:
        raise InputError(f"unknown policy {name!r} (known: {', '.join(POLICIES)})", where="policy")
    policy = POLICIES[name]
    known = policy.option_names()
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise InputError(
            f"{name} does not take {', '.join(unknown)} (its options: {', '.join(sorted(known)) or 'none'})",
            where="policy options",
        )
    if policy.seeded:
        options = {"seed": seed, **options}
    try:
        params = policy.params(**options)
    except ParameterError:  # names the option (the command line: its flag)
        raise
    except (TypeError, ValueError) as exc:
        raise InputError(str(exc), where="policy options") from None
    with reporting(progress):
        return policy.run(instance, params)


__all__ = [
    "BASELINES",
    "PLACEMENTS",
    "POLICIES",
    "QUICK",
    "BackfillParams",
    "BaselineParams",
    "BisectedParams",
    "ClassicalParams",
    "LsParams",
    "OrderedParams",
    "PackParams",
    "Policy",
    "PolicyResult",
    "Progress",
    "RandParams",
    "SearchParams",
    "SjfBcoParams",
    "run_policy",
    "sjf_bco",
    "with_baselines",
]
