"""Policies side by side on one instance, against the optimum or the best lower bound.

The reference is OPT when ``exact`` is asked for and the exact method (``auto``) proves it
within the time limit; otherwise the best lower bound of :mod:`rar_opt.bounds`, including
the contention-free relaxation's when ``bound_time_limit`` gives it time (so a ratio
against a lower bound overstates the true ratio to OPT). With ``exact``, that bound comes
from the exact solve's own relaxation phase (within the solve's time limit) instead of a
second solve of the relaxation. SJF-BCO's run also reports
whether Lemma 2, Lemma 3 and Theorem 5 held, and by what margin.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, replace
from typing import Any

from .algorithms import POLICIES, run_policy
from .analysis import realized_shares
from .bounds import ClaimCheck, check_sjf_bco_claims, lower_bounds, theorem5_bound
from .check import check
from .instance import Instance
from .integral import ceil_bound


@dataclass(frozen=True)
class PolicyRow:
    """One policy's makespan, average JCT, ratio to the reference and wall time."""

    policy: str
    makespan: int
    avg_jct: float
    ratio: float
    wall_s: float
    within_horizon: bool = True  # False: no trial fitted in T; the schedule ends after it
    contention_share: float = 0.0  # realized extra time (rar_opt.analysis)
    overhead_share: float = 0.0
    theta_binding: bool = False


@dataclass(frozen=True)
class Comparison:
    """Every policy on one instance against one reference (OPT or a lower bound)."""

    instance: str
    reference: int
    reference_kind: str  # "optimum" or "lower bound"
    rows: tuple[PolicyRow, ...]
    theorem5_bound: float
    claims: tuple[ClaimCheck, ...]
    solve: dict[str, Any] | None
    bounds: dict[str, Any] | None = None  # every lower bound computed, by name

    def to_dict(self) -> dict[str, Any]:
        """The comparison as JSON-ready values."""
        return {
            "instance": self.instance,
            "reference": self.reference,
            "reference_kind": self.reference_kind,
            "theorem5_bound": self.theorem5_bound,
            "policies": [asdict(r) for r in self.rows],
            "sjf_bco_claims": [asdict(c) for c in self.claims],
            "solve": self.solve,
            "bounds": self.bounds,
        }


def compare(
    instance: Instance,
    policies: list[str] | None = None,
    *,
    exact: bool = False,
    time_limit: float = 60.0,
    seed: int = 0,
    bound_time_limit: float | None = None,
) -> Comparison:
    """Run ``policies`` (SJF-BCO always) on ``instance``; compare with OPT (``exact``) or the
    best lower bound (with ``bound_time_limit`` seconds for the contention-free relaxation)."""
    names = list(policies or POLICIES)
    if "sjf-bco" not in names:
        names.insert(0, "sjf-bco")
    runs, walls = {}, {}
    for name in names:
        began = time.perf_counter()
        runs[name] = run_policy(instance, name, seed=seed)
        walls[name] = time.perf_counter() - began
    results = {name: check(instance, r.schedule).result for name, r in runs.items()}
    solve_summary = optimum = res = None
    if exact:
        from .solvers import solve

        res = solve(instance, warm_start="sjf-bco", time_limit=time_limit, seed=seed)
        solve_summary = {k: v for k, v in res.summary().items() if k != "completion"}
    # the exact solve's relaxation phase, when it ran one, is the relaxation's bound: not solved twice
    relaxed = None if res is None or not bound_time_limit else res.record.relaxation_bound()
    lb = lower_bounds(instance, relaxation_time_limit=None if relaxed else bound_time_limit, seed=seed)
    if relaxed is not None:
        lb = replace(lb, relaxation=ceil_bound(relaxed[0]), relaxation_proven=relaxed[1])
    reference, kind = lb.best, "lower bound"
    if res is not None:
        from .solvers import Status

        if res.status == Status.OPTIMAL and res.makespan is not None:
            reference, kind, optimum = res.makespan, "optimum", res.makespan
        elif res.bound is not None:
            reference = max(reference, ceil_bound(res.bound))  # a proven bound, rounded up
    spans = {name: _complete(results[name].makespan) for name in names}
    shares = {name: realized_shares(instance, runs[name].schedule) for name in names}
    rows = tuple(
        PolicyRow(
            name,
            spans[name],
            float(results[name].avg_jct or 0.0),
            spans[name] / reference,
            walls[name],
            not runs[name].exceeds_horizon,
            shares[name].contention,
            shares[name].overhead,
            runs[name].theta_binding,
        )
        for name in names
    )
    sjf = runs["sjf-bco"]
    claims = check_sjf_bco_claims(
        instance,
        spans["sjf-bco"],
        sjf,
        optimum=optimum,
        lower_bound=None if optimum else reference,
    )
    return Comparison(
        instance.name,
        int(reference),
        kind,
        rows,
        theorem5_bound(instance, sjf.lower, sjf.upper),
        tuple(claims),
        solve_summary,
        asdict(lb),
    )


def _complete(makespan: int | None) -> int:
    if makespan is None:  # a policy's schedule always completes; this would be a bug
        raise RuntimeError("a policy returned a schedule that does not complete")
    return int(makespan)
