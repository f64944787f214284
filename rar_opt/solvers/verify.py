"""Results of uncertified backends (SCIP on the non-convex model): their bound is set apart
as unproven, and an "optimal" or "infeasible" they claim is checked by the compact MILP on
HiGHS before it is reported (docs/exactness.md). A claim that cannot be checked is
``unverified``, never proven.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from rar_opt.errors import InputError
from rar_opt.instance import Instance
from rar_opt.solvers.budget import Budget
from rar_opt.solvers.result import SolveResult, restamp
from rar_opt.solvers.status import Status

Compact = Callable[[Instance, int, Budget], SolveResult]
"""Solves the compact MILP over a horizon within a budget (the check of a claim)."""


def distrust_bound(result: SolveResult) -> SolveResult:
    """An uncertified backend's result with its own bound moved out of ``bound`` (which holds
    proven bounds only) into the record's ``solver_bound``: studies and ratios take
    ``bound`` as a proof, and SCIP has been wrong on the non-convex model (docs/exactness.md).
    A check by the compact MILP (:func:`verify`) may then prove a bound of its own."""
    if result.bound is None:
        return result
    record = dataclasses.replace(result.record, solver_bound=result.bound)
    return restamp(result, record=record, bound=None)


def verify(instance: Instance, claim: SolveResult, budget: Budget, compact: Compact) -> SolveResult:
    """Check an uncertified "optimal" or "infeasible" with the compact MILP and HiGHS over the
    same horizon and objective, in the time left (``compact`` solves it: the dispatcher's
    :func:`.solve.solve_formulation`); what cannot be checked is ``unverified``."""
    horizon = claim.options["horizon"]
    said = f"{claim.solver.get('name', 'the solver')} said {claim.status}"
    try:
        check_run = compact(instance, horizon, dataclasses.replace(budget.share(1.0), threads=1))
    except InputError as exc:  # too large for the compact MILP
        return _relabel(claim, Status.UNVERIFIED, f"{claim.status} not verified: {exc.message}", None)
    if check_run.status == Status.INFEASIBLE:
        if claim.status == Status.INFEASIBLE:
            return _relabel(claim, Status.INFEASIBLE, f"{said}; confirmed by the compact MILP (HiGHS)", check_run)
        return _relabel(claim, Status.ERROR, f"{said} with a schedule, but the compact MILP proves none", check_run)
    if check_run.status != Status.OPTIMAL or check_run.makespan is None:
        return _relabel(claim, Status.UNVERIFIED, f"{said}; the compact MILP check ended {check_run.status}", check_run)
    best = check_run.makespan
    if claim.status == Status.INFEASIBLE:
        message = f"{said}, wrongly: the compact MILP finds a schedule of makespan {best} within horizon {horizon}"
        return _relabel(claim, Status.NO_SOLUTION, message, check_run)
    if claim.makespan == best:
        return _relabel(claim, Status.OPTIMAL, f"{said}; confirmed by the compact MILP (HiGHS): {best}", check_run)
    message = f"{said} at {claim.makespan}, wrongly: the compact MILP proves the optimum {best}"
    return _relabel(claim, Status.FEASIBLE, message, check_run)


def _relabel(claim: SolveResult, status: Status, message: str, check_run: SolveResult | None) -> SolveResult:
    """The claim with our verdict; its bound is the check's proof when it has one, else None
    (the claim's own bound was set apart by :func:`distrust_bound`)."""
    record = dataclasses.replace(
        claim.record, verification=True, verified_by=None if check_run is None else "compact+highs"
    )
    proved = check_run is not None and check_run.status == Status.OPTIMAL and status != Status.INFEASIBLE
    bound = check_run.objective if proved and check_run is not None else None
    return restamp(
        claim,
        status=status,
        record=record,
        bound=bound,
        message="; ".join(m for m in (claim.message, message) if m),
    )
