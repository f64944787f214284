"""The dispatcher: formulation x backend, warm start, one result.

``solve(instance)`` builds the chosen formulation with validated options, optionally runs
a heuristic first (its schedule becomes a complete MIP start where the backend takes one,
and its makespan the modelled horizon for the makespan objective: every optimal schedule
fits in it), hands the model to the backend, and finishes the outcome the same way for
every backend (:func:`.result.finish`).
"""

from __future__ import annotations

import dataclasses
import logging
import math
import os
import time
from typing import Any

import pyomo.environ as pyo

from ..check import check
from ..errors import InputError
from ..formulations import formulation as get_formulation
from ..formulations import model_data
from ..instance import Instance
from .backend import RawOutcome, SolveOptions
from .registry import DEFAULT_BACKEND
from .registry import backend as get_backend
from .result import SolveResult, finish, gap
from .status import Status

log = logging.getLogger(__name__)

HANDOFF_PER_BUILD = 2.0
"""Pyomo's hand-off of a compact model to HiGHS, per second of build (measured 1.6-2.1
at 12 x 4 x 80 and 16 x 8 x 100): a limit too short for it is reported at once."""

FINISH_RESERVE = 0.03
"""Share of a time limit kept for reading the schedule back and checking it."""

MIN_SOLVER_SECONDS = 0.05
"""The least time a solver is given, even when the build used up the limit."""

INTEGRAL_ABS_GAP = 0.99
"""Absolute gap for our objectives (makespan, sum of completion times), which are integral:
an incumbent within 0.99 of the bound is optimal, exactly."""


def solve(
    instance: Instance,
    formulation: str = "compact",
    *,
    backend: str | None = None,
    time_limit: float | None = None,
    threads: int = 1,
    seed: int = 0,
    warm_start: str | None = None,
    mip_start: bool = True,
    heuristic_horizon: bool = True,
    **options: Any,
) -> SolveResult:
    """Solve ``instance`` exactly with a formulation and a backend.

    ``options`` are the formulation's own (``objective``, ``symmetry``, ``horizon``, ...: see
    its ``Options``); one it does not take is an :class:`~rar_opt.errors.InputError`.
    ``backend`` defaults to HiGHS for MILPs, SCIP for the non-convex model and CP-SAT for the
    ``cpsat`` model. ``formulation="decompose"`` runs the contention-free decomposition
    (:mod:`.decompose`) instead of one formulation.
    ``time_limit`` (seconds) bounds the whole call: the heuristic, the build, the hand-off
    to the solver, the solve and the checks; the solver gets what is left.
    ``warm_start`` names a policy (``sjf-bco``, ``ls``, ...) whose schedule is handed over
    as a complete MIP start (unless ``mip_start`` is False or the backend cannot take one);
    with ``heuristic_horizon`` (default) and the makespan objective, the model then has only
    as many slots as that schedule's makespan.
    """
    from ..algorithms import run_policy

    wall0 = time.perf_counter()
    if formulation == "decompose":  # a method over several models, not one formulation
        from .decompose import decompose

        if options or warm_start or backend not in (None, "cpsat"):
            raise InputError("the decompose method takes only a time limit, threads and a seed", where="formulation")
        _settings(time_limit, threads, seed)
        return decompose(instance, time_limit=time_limit, seed=seed, threads=threads)
    form = get_formulation(formulation)
    engine = get_backend(backend or DEFAULT_BACKEND[form.problem])
    if (form.problem == "cp") != (engine.name == "cpsat"):
        raise InputError(f"the {form.name} formulation cannot be solved by the {engine.name} backend", where="backend")
    if form.problem == "minlp" and not engine.capabilities.nonconvex:
        raise InputError(
            f"the {form.name} formulation has products of variables; the {engine.name} backend cannot solve it",
            where="backend",
        )
    settings = _settings(time_limit, threads, seed)
    if threads != 1 and not engine.capabilities.threads:
        raise InputError(f"= {threads}: the {engine.name} backend runs on one thread only", where="threads")
    opts = form.make_options(options)
    warm_start = warm_start or form.default_warm_start
    start = None
    if warm_start:
        run = run_policy(instance, warm_start)
        if run.exceeds_horizon:  # its schedule ends after T: no start, no horizon from it
            log.warning("warm start from %s skipped: its schedule ends after the horizon", warm_start)
        else:
            start = run.schedule
    if start is not None and heuristic_horizon and getattr(opts, "objective", "makespan") == "makespan":
        span = check(instance, start).result.makespan
        if span is not None and span <= instance.horizon and (opts.horizon is None or span < opts.horizon):
            opts = dataclasses.replace(opts, horizon=span)
    build0 = time.perf_counter()
    model = form.build(instance, opts)
    use_start = False
    if start is not None and mip_start and form.set_start is not None and engine.capabilities.mip_start:
        use_start = True
        try:
            form.set_start(model, instance, start)
        except ValueError as exc:  # the start does not fit the modelled horizon
            log.warning("warm start from %s not used: %s", warm_start, exc)
            use_start = False
    build_s = time.perf_counter() - build0
    settings = dataclasses.replace(settings, warm_start=use_start, abs_gap=INTEGRAL_ABS_GAP)
    if time_limit is not None:
        # the backend must be back by the deadline, hand-off included; a little is kept for
        # reading the schedule back, checking it and freeing the model
        deadline = wall0 + time_limit * (1 - FINISH_RESERVE)
        left = max(deadline - time.perf_counter(), MIN_SOLVER_SECONDS)
        settings = dataclasses.replace(settings, time_limit=left, deadline=time.perf_counter() + left)
    handoff = HANDOFF_PER_BUILD if engine.name == "highs" else 0.0  # Pyomo's translation for HiGHS
    if settings.time_limit is not None and handoff * build_s > settings.time_limit:
        # the hand-off alone would overrun the limit, and it cannot be interrupted
        message = (
            f"time limit: {settings.time_limit:.2f} s left after the build, and handing the model to "
            f"{engine.name} takes about {handoff * build_s:.2f} s; not started"
        )
        raw = _start_only(model, use_start, "time limit before the solver", message)
    else:
        raw = engine.solve(model, settings)
    record = {
        "formulation": form.name,
        "backend": engine.name,
        **dataclasses.asdict(opts),
        "horizon": model_data(model).horizon,
        "warm_start": warm_start,
        "mip_start": use_start,
        **settings.to_dict(),
        "time_limit": time_limit,  # the caller's limit for the whole call
        "solver_time_limit": settings.time_limit,  # what the solver was given of it
    }
    result = finish(instance, form, model, raw, options=record, build_s=build_s, wall_s=0.0)
    del model  # freeing a large model takes a while: inside the measured (and limited) time
    if not engine.capabilities.certified and result.status in (Status.OPTIMAL, Status.INFEASIBLE):
        remaining = None if time_limit is None else max(time_limit - (time.perf_counter() - wall0), MIN_SOLVER_SECONDS)
        result = _verify(instance, result, dataclasses.replace(settings, time_limit=remaining, deadline=None))
    return dataclasses.replace(result, wall_s=time.perf_counter() - wall0)


def _start_only(model: pyo.ConcreteModel, use_start: bool, termination: str, message: str) -> RawOutcome:
    """The outcome of a solve that never ran: the warm start is the incumbent if there is one
    (the model's variables hold it), else there is no schedule."""
    if not use_start:
        return RawOutcome(Status.NO_SOLUTION, termination=termination, message=message)
    objective = float(pyo.value(model.obj))
    return RawOutcome(Status.FEASIBLE, has_solution=True, objective=objective, termination=termination, message=message)


def _verify(instance: Instance, claim: SolveResult, settings: SolveOptions) -> SolveResult:
    """Check an uncertified "optimal" or "infeasible" with the compact MILP and HiGHS over the
    same horizon and objective; what cannot be checked is labelled ``unverified``."""
    horizon = claim.options["horizon"]
    try:
        check_run = solve(instance, "compact", horizon=horizon, time_limit=settings.time_limit, seed=settings.seed)
    except InputError as exc:  # too large for the compact MILP
        return _relabel(claim, Status.UNVERIFIED, f"{claim.status} not verified: {exc.message}", None)
    said = f"{claim.solver.get('name', 'the solver')} said {claim.status}"
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
    """The claim with our verdict; the check's proof becomes the bound when it has one."""
    options = {**claim.options, "verified_by": None if check_run is None else "compact+highs"}
    bound = claim.bound
    if check_run is not None and check_run.status == Status.OPTIMAL:
        bound = check_run.objective
    if status == Status.INFEASIBLE:
        bound = None
    meta_status = {"status": str(status)}
    schedule = claim.schedule
    if schedule is not None:
        schedule = schedule.with_meta({**schedule.meta, **meta_status, "options": options})
    return dataclasses.replace(
        claim,
        status=status,
        schedule=schedule,
        bound=bound,
        gap=gap(claim.objective, bound),
        options=options,
        message="; ".join(m for m in (claim.message, message) if m),
    )


def solve_model(
    model: pyo.ConcreteModel, backend: str = "highs", *, time_limit: float | None = None, **settings: Any
) -> RawOutcome:
    """Solve an already built model with a backend (for auxiliary models such as the load
    ILP (14)-(16)); the incumbent, if any, is loaded into the model."""
    return get_backend(backend).solve(model, SolveOptions(time_limit=time_limit, **settings))


def _settings(time_limit: float | None, threads: int, seed: int) -> SolveOptions:
    if time_limit is not None and not (isinstance(time_limit, int | float) and math.isfinite(time_limit)):
        raise InputError(f"must be a finite number of seconds, got {time_limit!r}", where="time_limit")
    if time_limit is not None and not time_limit > 0:
        raise InputError(f"must be positive, got {time_limit!r}", where="time_limit")
    if threads < 0 or seed < 0:
        raise InputError(
            f"threads ({threads}) and seed ({seed}) must be >= 0 (threads 0: the solver decides)",
            where="solver options",
        )
    cpus = os.cpu_count() or 1
    if threads > cpus:
        raise InputError(f"= {threads} exceeds the {cpus} CPUs of this machine", where="threads")
    return SolveOptions(time_limit=time_limit, threads=threads, seed=seed)
