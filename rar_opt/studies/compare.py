"""Policies side by side on one instance, against the optimum or the best lower bound.

The reference is OPT when ``exact`` is asked for and the exact method (``auto``) proves it
within the time limit; otherwise the best lower bound of :mod:`rar_opt.bounds`, including
the contention-free relaxation's when ``bound_time_limit`` gives it time (so a ratio
against a lower bound overstates the true ratio to OPT). The flow LP's bound on the total
completion time, behind the average JCT's ratio, gets the same seconds. A solve that
recorded a relaxation phase would give the relaxation's bound instead of a second solve of
it, but ``auto`` runs no such phase, so with ``exact`` too the relaxation is solved on its
own, outside the solve's time limit. SJF-BCO's run also reports
whether Lemma 2, Lemma 3 and Theorem 5 held, and by what margin. SJF-BCO and the classical
baselines (longest first for the makespan, shortest first for the average JCT:
:data:`rar_opt.algorithms.BASELINES`) run whatever policies are asked.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from rar_opt.algorithms import BASELINES, POLICIES, with_baselines
from rar_opt.bounds import ClaimCheck
from rar_opt.instance import Instance
from rar_opt.studies.evaluation import evaluate
from rar_opt.support.provenance import provenance


@dataclass(frozen=True)
class PolicyRow:
    """One policy's makespan, average JCT, ratio to the reference and wall time."""

    policy: str
    makespan: int
    avg_jct: float
    ratio: float
    wall_s: float
    within_horizon: bool = True  # False: no trial fitted in T; the schedule ends after it
    contention_share: float = 0.0  # realized extra time (rar_opt.shares)
    overhead_share: float = 0.0
    theta_binding: bool = False
    jct_ratio: float | None = None  # average JCT over the best lower bound on it (>= ALG / OPT)
    jct_ratio_best: float | None = None  # average JCT over the best one known (<= ALG / OPT)


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
    jct_reference: float | None = None  # the best lower bound on the average JCT
    jct_best: float | None = None  # the best average JCT known within T (a policy's or the solve's)
    jct_bounds: dict[str, Any] | None = None  # every lower bound on the total completion time, by name
    # what the numbers depend on besides the instance: the seed of the seeded policies and
    # solvers, whether OPT was solved for and in how many seconds, the relaxation's seconds
    seed: int = 0
    exact: bool = False
    time_limit: float | None = None  # the exact solve's seconds (None: no solve)
    bound_time_limit: float | None = None  # each solver bound's seconds (None: the cheap bounds only)
    jct_total_bound: int | None = None  # the best lower bound on the total completion time (jct_reference x J)
    baselines: dict[str, str] = field(default_factory=lambda: dict(BASELINES))  # always among the rows

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
            "jct_reference": self.jct_reference,
            "jct_best": self.jct_best,
            "jct_total_bound": self.jct_total_bound,
            "jct_bounds": self.jct_bounds,
            "seed": self.seed,
            "exact": self.exact,
            "time_limit": self.time_limit,
            "bound_time_limit": self.bound_time_limit,
            "baselines": self.baselines,
            "provenance": provenance(),
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
    """Run ``policies`` on ``instance``, with SJF-BCO and the classical baselines always
    (:data:`rar_opt.algorithms.BASELINES`: longest first for the makespan, shortest first
    for the average JCT); compare with OPT (``exact``) or the best lower bound (with
    ``bound_time_limit`` seconds for the contention-free relaxation and the flow LP each). The evaluation is
    :func:`rar_opt.studies.evaluation.evaluate`, shared with the studies."""
    names = list(policies or POLICIES)
    if "sjf-bco" not in names:
        names.insert(0, "sjf-bco")
    names = with_baselines(names)
    ev = evaluate(
        instance,
        tuple(names),
        method="auto" if exact else None,
        time_limit=time_limit,
        seed=seed,
        warm_start="sjf-bco",
        bound_time_limit=bound_time_limit,
        progress=True,
    )
    reference = ev.reference
    rows = tuple(
        PolicyRow(
            name,
            run.makespan,
            run.avg_jct,
            run.makespan / reference,
            run.wall_s,
            not run.result.exceeds_horizon,
            run.shares.contention,
            run.shares.overhead,
            run.result.theta_binding,
            ev.jct_ratios(name)["jct_ratio_high"],
            ev.jct_ratios(name)["jct_ratio_low"],
        )
        for name, run in ev.runs.items()
    )
    theorem5, claims = ev.sjf_bco_claims() or (float("nan"), ())
    solve_summary = None
    if ev.solve is not None:
        solve_summary = {k: v for k, v in ev.solve.summary().items() if k != "completion"}
    return Comparison(
        instance.name,
        int(reference),
        "optimum" if ev.optimum is not None else "lower bound",
        rows,
        theorem5,
        claims,
        solve_summary,
        ev.bounds.to_dict(),
        ev.jct_lower,
        ev.jct_best,
        None if ev.jct_bounds is None else ev.jct_bounds.to_dict(),
        seed=seed,
        exact=exact,
        time_limit=time_limit if exact else None,
        bound_time_limit=bound_time_limit,
        jct_total_bound=None if ev.jct_bounds is None else int(ev.jct_bounds.best),
    )
