"""SJF-BCO's claims checked on a run: Lemma 2, Lemma 3 and Theorem 5 (paper, section 5).

Theorem 5 bounds SJF-BCO's makespan by n_g varphi u / l times the optimum. Where the
optimum is unknown, the check is made against a lower bound on it and can then only hold
or be inconclusive, never fail falsely.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rar_opt.algorithms.result import PolicyResult
from rar_opt.instance import Instance


@dataclass(frozen=True)
class ClaimCheck:
    """One claim checked on one run: whether it held, and the slack of its inequality.

    ``holds`` is the verdict. ``margin`` is how far the run is from the claim's boundary:
    positive inside, negative outside, and 0 on it, which holds for a claim with ``<=``
    and fails for Lemma 2's strict ``theta - 1 < max load``. ``detail`` states the
    inequality as the run gave it, with ``>`` where a ``<=`` failed."""

    claim: str
    holds: bool | None  # None: inconclusive (compared with a lower bound only)
    margin: float
    detail: str


def varphi_bound(instance: Instance) -> float:
    """An upper bound on varphi = max_j max_{k1,k2} rho_j(y^k1) / rho_j(y^k2) (Lemma 4):
    every execution time of job j lies in [rho_min_j, rho_max_j], so varphi <=
    max_j rho_max_j / rho_min_j. Using it makes the evaluated bound an upper bound of the
    paper's n_g varphi u / l (the check is then weaker, never falsely failed)."""
    b = instance.bounds
    return float(np.max(b.rho_max / b.rho_min))


def theorem5_bound(instance: Instance, lower: float, upper: float) -> float:
    """n_g * varphi * u / l (Theorem 5) with varphi from :func:`varphi_bound`."""
    return int(instance.arrays.gpus.max()) * varphi_bound(instance) * upper / lower


def check_sjf_bco_claims(
    instance: Instance,
    makespan: int,
    run: PolicyResult,
    optimum: int | None = None,
    lower_bound: int | None = None,
) -> list[ClaimCheck]:
    """Lemma 2, Lemma 3 and Theorem 5 on one SJF-BCO run (``makespan`` from the simulator).

    The lemmas are statements about SJF-BCO's bisection, so a run of another policy is
    refused (ValueError), as is a makespan below 1 or a bound or optimum below 1."""
    if run.policy != "sjf-bco":
        raise ValueError(f"the claims are SJF-BCO's (Lemmas 2-3, Theorem 5); this run is of {run.policy!r}")
    for name, value in (("makespan", makespan), ("optimum", optimum), ("lower_bound", lower_bound)):
        if value is not None and (isinstance(value, bool) or not value >= 1):
            raise ValueError(f"{name} = {value!r}: a makespan is at least 1 slot")
    n_g = int(instance.arrays.gpus.max())
    if run.theta is None or run.exceeds_horizon:
        return [ClaimCheck("within_horizon", False, 0.0, "no trial ended within T: the lemmas do not apply")]
    theta, load = int(run.theta), float(run.max_load)
    out = [
        ClaimCheck(
            "load_within_theta",
            load <= theta + 1e-9,
            theta - load,
            f"max load {load:.6g} {_le(load, theta)} theta {theta}",
        ),
        # Lemma 2: the largest estimated load equals the tightest theta (on the integer grid of theta)
        ClaimCheck(
            "lemma2",
            theta - 1 < load <= theta + 1e-9,
            (load - (theta - 1)) if load <= theta else theta - load,
            f"theta {theta}, max load {load:.6g} (the lemma: theta - 1 < max load <= theta)",
        ),
        ClaimCheck(
            "lemma3",
            makespan <= n_g * load + 1e-9,
            n_g * load - makespan,
            f"makespan {makespan} {_le(makespan, n_g * load)} n_g {n_g} x max load {load:.6g}",
        ),
    ]
    bound = theorem5_bound(instance, run.lower, run.upper)
    if optimum is not None:
        out.append(
            ClaimCheck(
                "theorem5",
                makespan <= bound * optimum + 1e-9,
                bound * optimum - makespan,
                f"makespan {makespan} {_le(makespan, bound * optimum)} {bound:.4g} x OPT {optimum}",
            )
        )
    elif lower_bound is not None:
        ok = makespan <= bound * lower_bound + 1e-9
        out.append(
            ClaimCheck(
                "theorem5",
                True if ok else None,
                bound * lower_bound - makespan,
                f"makespan {makespan} {_le(makespan, bound * lower_bound)} {bound:.4g} x lower bound {lower_bound}"
                + ("" if ok else ": inconclusive without OPT"),
            )
        )
    return out


def _le(left: float, right: float) -> str:
    """``<=`` where ``left <= right`` (to the checks' tolerance), else ``>``."""
    return "<=" if left <= right + 1e-9 else ">"
