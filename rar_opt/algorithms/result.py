"""What a policy run returns: the schedule (the solution) beside the run's own data.

As in PyJobShop and PyVRP, the result of a run is kept apart from the solution: a
:class:`PolicyResult` holds the :class:`~rar_opt.schedule.Schedule` and what the run chose
(load limit theta, kappa, trials, the largest GPU load, the estimator's l and u). The
schedule's ``meta`` carries the same record as read-only provenance, so a schedule file
says how it was made. The makespan is not here: the simulator is the judge of that.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from rar_opt._version import __version__
from rar_opt.algorithms.engine import Trial
from rar_opt.algorithms.estimators import Estimate
from rar_opt.check import CheckReport, check
from rar_opt.instance import Instance
from rar_opt.schedule import Schedule


@dataclass(frozen=True)
class PolicyResult:
    """One run of a policy on one instance."""

    policy: str
    schedule: Schedule
    params: Any  # the policy's frozen params
    theta: int | None  # the load limit of the returned trial (None: beyond the horizon)
    max_load: float  # the largest estimated load U_g over the GPUs (<= theta)
    trials: int  # list-scheduling trials actually run
    trials_requested: int  # (theta, kappa) pairs asked for (reused trials included)
    thetas_tried: int  # bisection steps
    estimator: str
    lower: float  # the estimator's error bounds l and u: l rho <= rho_hat <= u rho
    upper: float
    kappa: int | None = None  # SJF-BCO: the kappa of the returned trial
    seed: int | None = None  # seeded policies only
    exceeds_horizon: bool = False  # no trial fitted in T: the schedule ends after it
    theta_binding: bool = False  # the load limit refused at least one idle GPU in the returned trial
    search: dict[str, Any] | None = None  # improvement searches only: their start and what they did

    def to_dict(self) -> dict[str, Any]:
        """The policy and the run's choices as JSON-ready values (the one name every result
        type has; :meth:`record` gives the choices alone, as a schedule's meta holds them)."""
        return {"policy": self.policy, **self.record()}

    def record(self) -> dict[str, Any]:
        """The run as JSON-ready values (what the schedule's meta and result files hold)."""
        return {
            "method": self.policy,
            "params": dataclasses.asdict(self.params),
            "theta": self.theta,
            "kappa": self.kappa,
            "max_load": self.max_load,
            "trials": self.trials,
            "trials_requested": self.trials_requested,
            "thetas_tried": self.thetas_tried,
            "estimator": {"name": self.estimator, "l": self.lower, "u": self.upper},
            "seed": self.seed,
            "exceeds_horizon": self.exceeds_horizon,
            "theta_binding": self.theta_binding,
        } | ({} if self.search is None else {"search": dict(self.search)})


def policy_result(
    instance: Instance,
    policy: str,
    trial: Trial,
    params: Any,
    est: Estimate,
    *,
    theta: int | None,
    trials: int,
    trials_requested: int,
    thetas_tried: int,
    kappa: int | None = None,
    seed: int | None = None,
    exceeds_horizon: bool = False,
    search: dict[str, Any] | None = None,
) -> PolicyResult:
    """Build the result of a run whose chosen trial is ``trial`` (the schedule records it)."""
    result = PolicyResult(
        policy=policy,
        schedule=trial.to_schedule(instance, {}),
        params=params,
        theta=theta,
        max_load=trial.max_load,
        trials=trials,
        trials_requested=trials_requested,
        thetas_tried=thetas_tried,
        estimator=est.name,
        lower=est.lower,
        upper=est.upper,
        kappa=kappa,
        seed=seed,
        exceeds_horizon=exceeds_horizon,
        theta_binding=theta is not None and bool(np.isfinite(trial.valid_below)),
        search=search,
    )
    meta = {**result.record(), "rar_opt": __version__}
    return dataclasses.replace(result, schedule=result.schedule.with_meta(meta))


def searched_result(
    instance: Instance,
    policy: str,
    trial: Trial,
    params: Any,
    est: Estimate,
    runs: int,
    search: dict[str, Any],
) -> tuple[PolicyResult, CheckReport]:
    """The result of a seeded improvement search (``improve``, ``pack``) whose best is
    ``trial``, after ``runs`` schedules built, with the checker's report on its schedule.
    A violation other than running past T would be a bug, and raises."""
    beyond = trial.makespan > instance.horizon
    result = policy_result(
        instance,
        policy,
        trial,
        params,
        est,
        theta=None if beyond else instance.horizon,
        trials=runs,
        trials_requested=runs,
        thetas_tried=1,
        seed=params.seed,
        exceeds_horizon=beyond,
        search=search,
    )
    report = check(instance, result.schedule)
    allowed = {"start_in_horizon", "completion_in_horizon"} if beyond else set()
    if not report.names() <= allowed:
        raise RuntimeError(f"{policy} produced a schedule the checker refuses: {sorted(report.names())}")
    return result, report
