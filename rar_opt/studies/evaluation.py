"""One evaluation of policies on one instance: every policy judged by the simulator, the
reference they are measured against (the optimum when proven, else the best lower bound
and the best schedule known), their ratios, and SJF-BCO's claims.

:func:`compare <rar_opt.studies.compare.compare>`, the studies' tasks
(:mod:`rar_opt.studies.tasks`) and the experiments (:mod:`rar_opt.studies.experiments`) all go
through here, so a ratio means the same thing wherever it is printed:

* ``ratio`` = ALG / OPT, when the exact method proved OPT (None otherwise);
* ``ratio_low`` = ALG / best makespan known (a policy's or the solver's): at most ALG / OPT;
* ``ratio_high`` = ALG / best lower bound: at least ALG / OPT.

With OPT proven the three agree. The average JCT is measured the same way, against the
best average JCT known and the best lower bound on the total completion time over J
(``jct_ratio_low``, ``jct_ratio_high``); the bounds registry's solver bounds on the total
get ``bound_time_limit`` seconds each. The lower bound is the best of :mod:`rar_opt.bounds`
(with the contention-free relaxation's when it is given time, taken from the exact solve's
own relaxation phase when that ran one) and the exact method's proven bound, rounded up.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

from rar_opt.algorithms import run_policy
from rar_opt.algorithms.result import PolicyResult
from rar_opt.bounds import ClaimCheck, LowerBounds, NamedBound, check_sjf_bco_claims, lower_bounds, theorem5_bound
from rar_opt.bounds.registry import entries
from rar_opt.bounds.rounding import ceil_bound, ceil_bound_or_none
from rar_opt.check import check
from rar_opt.instance import Instance
from rar_opt.shares import TimeShares, realized_shares

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PolicyRun:
    """One policy's schedule on one instance, as the simulator judges it."""

    policy: str
    result: PolicyResult
    makespan: int
    avg_jct: float
    min_jct: int | None
    shares: TimeShares  # realized extra time (rar_opt.shares)
    wall_s: float
    feasible: bool = True  # the checker's verdict: False for a schedule that ends after T
    avg_flow: float = 0.0  # the mean of C_j - r_j (SimResult.avg_flow); avg_jct without releases


def judge(instance: Instance, policy: str, seed: int = 0, **options: Any) -> PolicyRun:
    """Run ``policy`` on ``instance`` and judge its schedule with the simulator."""
    began = time.perf_counter()
    result = run_policy(instance, policy, seed=seed, **options)
    wall = time.perf_counter() - began
    report = check(instance, result.schedule)
    sim = report.result
    if sim.makespan is None:  # a policy's schedule always completes; this would be a bug
        raise RuntimeError(f"{policy} returned a schedule that does not complete on {instance.name}")
    shares = realized_shares(instance, result.schedule)
    avg = float(sim.avg_jct or 0.0)
    flow = float(sim.avg_flow(instance.releases) or 0.0)
    return PolicyRun(policy, result, int(sim.makespan), avg, sim.min_jct, shares, wall, report.feasible, flow)


def makespan_ratios(span: int, optimum: int | None, best: int, lower: int) -> dict[str, float | None]:
    """A makespan ``span`` against an instance's references: ALG / OPT (None unless proven),
    ALG / the best makespan known (at most ALG / OPT), ALG / the best lower bound (at least)."""
    return {
        "ratio": span / optimum if optimum else None,
        "ratio_low": span / best,  # <= ALG/OPT
        "ratio_high": span / lower,  # >= ALG/OPT
    }


def jct_ratios(avg: float, best: float | None, lower: float | None) -> dict[str, float | None]:
    """An average JCT ``avg`` (of a schedule that ends within T) over the best average JCT
    known (at most ALG / OPT) and over the best lower bound (at least); None where the
    reference is missing."""
    return {"jct_ratio_low": None if not best else avg / best, "jct_ratio_high": None if not lower else avg / lower}


def total_bounds(instance: Instance, bound_time_limit: float | None = None, seed: int = 0) -> LowerBounds:
    """The registry's lower bounds on the total completion time sum_j C_j (the average JCT's
    bound is their best over J): the cheap ones, and with ``bound_time_limit`` (seconds,
    positive) every solver bound on the total (the flow LP) given that many seconds."""
    solver_total = {b.name: bound_time_limit for b in entries("total", families=("solver",))}
    return lower_bounds(instance, objective="total", time_limits=solver_total if bound_time_limit else None, seed=seed)


@dataclass(frozen=True)
class Evaluation:
    """Policies on one instance against the best reference known."""

    instance: Instance
    runs: dict[str, PolicyRun]
    bounds: LowerBounds  # the cheap (and, if given time, the relaxation's) lower bounds
    lower: int  # the best proven lower bound on OPT (the solve's included), rounded up
    best: int  # the best makespan known (a policy's or the solver's)
    optimum: int | None  # OPT, when proven: by the exact method, or by a bound that a schedule meets
    solve: Any = None  # the exact method's SolveResult, when one ran
    solve_s: float | None = None
    jct_bounds: LowerBounds | None = None  # the lower bounds on the total completion time

    @property
    def jct_lower(self) -> float | None:
        """The best proven lower bound on the average JCT (the total's bound over J)."""
        return None if self.jct_bounds is None else self.jct_bounds.best / self.instance.num_jobs

    @property
    def jct_best(self) -> float | None:
        """The best average JCT known among feasible schedules: the policies' that the checker
        accepts (a schedule that ends after T is no answer, however short its JCTs) and the
        exact solve's. None when no schedule known ends within T."""
        known = [r.avg_jct for r in self.runs.values() if r.feasible]
        if self.solve is not None and self.solve.schedule is not None and self.solve.avg_jct is not None:
            known.append(float(self.solve.avg_jct))  # the solver layer returns checked schedules only
        return min(known, default=None)

    def jct_ratios(self, policy: str) -> dict[str, float | None]:
        """The policy's average JCT over the best known (at most ALG / OPT; None when no
        feasible schedule is known) and over the best lower bound (at least ALG / OPT); the
        optimal average JCT is not proven here. Both None for a schedule that ends after T:
        it is no answer, its average JCT may be below every feasible one (its jobs run past
        T), and the bounds hold for the schedules that end within T."""
        run = self.runs[policy]
        if not run.feasible:
            return {"jct_ratio_low": None, "jct_ratio_high": None}
        return jct_ratios(run.avg_jct, self.jct_best, self.jct_lower)

    @property
    def reference(self) -> int:
        """What ratios are taken against: OPT when proven, else the best lower bound."""
        return self.optimum if self.optimum is not None else self.lower

    def ratios(self, policy: str) -> dict[str, float | None]:
        """ALG / OPT (None unless proven), ALG / best makespan known, ALG / best lower bound."""
        return makespan_ratios(self.runs[policy].makespan, self.optimum, self.best, self.lower)

    def sjf_bco_claims(self) -> tuple[float, tuple[ClaimCheck, ...]] | None:
        """Theorem 5's bound and the checks of Lemma 2, Lemma 3 and Theorem 5 on SJF-BCO's
        run (against OPT when proven, else against the best lower bound), if it ran."""
        sjf = self.runs.get("sjf-bco")
        if sjf is None:
            return None
        claims = check_sjf_bco_claims(
            self.instance,
            sjf.makespan,
            sjf.result,
            optimum=self.optimum,
            lower_bound=None if self.optimum else self.lower,
        )
        return theorem5_bound(self.instance, sjf.result.lower, sjf.result.upper), tuple(claims)


def evaluate(
    instance: Instance,
    policies: tuple[str, ...],
    *,
    method: str | None = None,
    time_limit: float | None = None,
    seed: int = 0,
    warm_start: str | None = None,
    bound_time_limit: float | None = None,
    progress: bool = False,
) -> Evaluation:
    """Judge every policy of ``policies`` on ``instance``; with ``method`` (``auto``, ...)
    also solve it exactly within ``time_limit`` seconds (``warm_start`` for the solve);
    ``bound_time_limit`` gives the contention-free relaxation that many seconds for its
    bound (from the solve's own relaxation phase when it ran one: not solved twice), and
    the solver bounds on the total completion time (the flow LP) as many each.
    ``progress`` logs each step at INFO as it ends (``compare -v``; the studies, which
    evaluate thousands of instances, leave it off)."""
    say = log.info if progress else log.debug
    runs = {}
    for name in policies:
        runs[name] = run = judge(instance, name, seed=seed)
        say("%s: makespan %s, average JCT %.2f, %.2f s", name, run.makespan, run.avg_jct, run.wall_s)
    res = solve_s = None
    if method is not None:
        from rar_opt.solvers import solve

        say("the exact solve (%s), within %s s", method, time_limit)
        began = time.perf_counter()
        res = solve(instance, method, time_limit=time_limit, threads=1, seed=seed, warm_start=warm_start)
        solve_s = time.perf_counter() - began
    relaxed = None if res is None or not bound_time_limit else res.record.relaxation_bound()
    say("the lower bounds (the solver bounds within %s s each)", bound_time_limit)
    bounds = lower_bounds(instance, relaxation_time_limit=None if relaxed else bound_time_limit, seed=seed)
    if relaxed is not None:
        note = "the relaxation phase of the solve" + ("" if relaxed[1] else " (the solver's bound on it)")
        bounds = bounds.replaced(NamedBound("relaxation", ceil_bound(relaxed[0]), 0.0, note, relaxed[1]))
    jct_bounds = total_bounds(instance, bound_time_limit, seed)
    lower, optimum = bounds.best, None
    spans = [r.makespan for r in runs.values() if r.feasible]  # a schedule past T is no answer
    if res is not None:
        from rar_opt.solvers import Status

        proven = ceil_bound_or_none(res.bound)  # a proven bound on an integral makespan
        if proven is not None:
            lower = max(lower, proven)
        if res.makespan is not None:
            spans.append(res.makespan)
        if res.status == Status.OPTIMAL and res.makespan is not None:
            optimum = int(res.makespan)
    # with no schedule within T known, the best makespan known is the shortest of those past
    # T: still at least OPT (which is at most T), so ratio_low stays at most ALG / OPT
    known = spans or [r.makespan for r in runs.values()]
    if not known:
        raise ValueError("nothing to evaluate: no policy and no schedule from the exact method")
    best = min(known)
    if optimum is None and spans and lower == best:  # a proven bound met by a feasible schedule: optimal
        optimum = best
    if optimum is not None:
        lower = best = optimum
    return Evaluation(instance, runs, bounds, int(lower), int(best), optimum, res, solve_s, jct_bounds)
