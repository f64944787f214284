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
import time
from typing import Any

import pyomo.environ as pyo

from ..check import check
from ..errors import InputError
from ..formulations import formulation as get_formulation
from ..formulations import model_data
from ..formulations.base import require_star, resolve_horizon
from ..instance import Instance
from ..processes import TimeUp, alarm_at
from ..schedule import Schedule
from .backend import RawOutcome, SolveOptions, solve_settings
from .decompose import PLANS
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


SPAN_OBJECTIVES = ("makespan",)
"""Objectives for which a heuristic's makespan becomes the modelled horizon. The
lexicographic optimum also ends by it, but that objective's weight M = J T + 1 is taken
from the modelled horizon, so a shorter horizon would change its reported value."""


def solve(
    instance: Instance,
    formulation: str = "auto",
    *,
    backend: str | None = None,
    time_limit: float | None = None,
    threads: int = 1,
    seed: int = 0,
    warm_start: str | None = None,
    mip_start: bool = True,
    heuristic_horizon: bool = True,
    start: Schedule | None = None,
    lower_bound: float | None = None,
    **options: Any,
) -> SolveResult:
    """Solve ``instance`` exactly with a formulation and a backend.

    ``options`` are the formulation's own (``objective``, ``symmetry``, ``horizon``, ...: see
    its ``Options``); one it does not take is an :class:`~rar_opt.errors.InputError`.
    ``backend`` defaults to HiGHS for MILPs, SCIP for the non-convex model and CP-SAT for the
    ``cpsat`` model. Two names are methods over several models (:mod:`.decompose`):
    ``"decompose"``, the contention-free decomposition, and ``"auto"`` (the default), which
    adds heuristics and a floor to it; ``auto`` hands the request to the compact MILP when it
    asks for what only that model answers (another objective, a MILP option or backend).
    ``time_limit`` (seconds) bounds the whole call: the heuristic, the build, the hand-off
    to the solver, the solve and the checks; the solver gets what is left.
    ``warm_start`` names a policy (``sjf-bco``, ``ls``, ...) whose schedule is handed over
    as a complete MIP start (unless ``mip_start`` is False or the backend cannot take one);
    with ``heuristic_horizon`` (default) and the makespan objective, the model then has only
    as many slots as that schedule's makespan. ``start`` is a schedule given directly, used
    the same way (it replaces ``warm_start``). ``lower_bound``, a proven lower bound on the
    makespan (e.g. the contention-free relaxation's), becomes a row ``objective >= bound``.
    """
    from ..algorithms import run_policy

    wall0 = time.perf_counter()
    if formulation == "auto":
        formulation, why = _auto_choice(instance, backend, options)
        if formulation == "compact":
            log.info("auto: the compact MILP, because %s", why)
            result = solve(
                instance,
                "compact",
                backend=backend,
                time_limit=time_limit,
                threads=threads,
                seed=seed,
                warm_start=warm_start,
                mip_start=mip_start,
                heuristic_horizon=heuristic_horizon,
                start=start,
                lower_bound=lower_bound,
                **options,
            )
            return dataclasses.replace(result, options={**result.options, "method": "auto", "auto_choice": why})
    if formulation in PLANS:  # a method over several models, not one formulation
        from .decompose import decompose

        extra = set(options) - {"horizon", "objective", "symmetry"}
        if extra or options.get("objective", "makespan") != "makespan" or backend not in (None, "cpsat"):
            raise InputError(
                f"the {formulation} method takes a time limit, threads, a seed, a warm start, a horizon "
                "and symmetry on or off (makespan objective, CP-SAT backend) only",
                where="formulation",
            )
        symmetry = get_formulation("cpsat").make_options({"symmetry": options.get("symmetry", True)}).symmetry
        solve_settings(time_limit, threads, seed)
        require_star(instance, f"the {formulation} method (its CP-SAT models)")
        horizon = options.get("horizon")
        if horizon is not None:  # the same checks as every formulation's horizon
            resolve_horizon(get_formulation("cpsat").make_options({"horizon": horizon}).horizon, instance)
        return decompose(
            instance,
            time_limit=time_limit,
            seed=seed,
            threads=threads,
            plan=PLANS[formulation],
            warm_start=warm_start,
            horizon=horizon,
            start=start,
            lower_bound=lower_bound,
            symmetry=symmetry,
        )
    form = get_formulation(formulation)
    engine = get_backend(backend or DEFAULT_BACKEND[form.problem])
    if (form.problem == "cp") != (engine.name == "cpsat"):
        raise InputError(f"the {form.name} formulation cannot be solved by the {engine.name} backend", where="backend")
    if form.problem == "minlp" and not engine.capabilities.nonconvex:
        raise InputError(
            f"the {form.name} formulation has products of variables; the {engine.name} backend cannot solve it",
            where="backend",
        )
    settings = solve_settings(time_limit, threads, seed)
    if threads != 1 and not engine.capabilities.threads:
        raise InputError(f"= {threads}: the {engine.name} backend runs on one thread only", where="threads")
    opts = form.make_options(options)
    if getattr(opts, "relaxation", "none") != "none":  # a bound, never a schedule
        if warm_start or start is not None or lower_bound is not None:
            raise InputError("a relaxation takes no start and no lower bound", where="options.relaxation")
        return _solve_relaxation(instance, form.name, opts, settings, wall0)
    if start is not None and warm_start:
        raise InputError("give a start schedule or a warm-start policy, not both", where="warm_start")
    warm_start = None if start is not None else warm_start or form.default_warm_start
    if lower_bound is not None and getattr(opts, "objective", "makespan") != "makespan":
        raise InputError("is a bound on the makespan; the objective is not the makespan", where="lower_bound")
    if warm_start:
        run = run_policy(instance, warm_start)
        if run.exceeds_horizon:  # its schedule ends after T: no start, no horizon from it
            log.warning("warm start from %s skipped: its schedule ends after the horizon", warm_start)
        else:
            start = run.schedule
    # a heuristic's makespan caps every optimum's makespan
    if start is not None and heuristic_horizon and getattr(opts, "objective", "makespan") in SPAN_OBJECTIVES:
        span = check(instance, start).result.makespan
        if span is not None and span <= instance.horizon and (opts.horizon is None or span < opts.horizon):
            opts = dataclasses.replace(opts, horizon=span)
    build0 = time.perf_counter()
    use_start = False
    try:  # a build that would outlast the time limit is stopped at it (Python code: interruptible)
        with alarm_at(None if time_limit is None else wall0 + time_limit * (1 - FINISH_RESERVE)):
            model = form.build(instance, opts)
            if lower_bound is not None:
                _add_floor(model, lower_bound)
            if start is not None and mip_start and form.set_start is not None and engine.capabilities.mip_start:
                use_start = True
                try:
                    form.set_start(model, instance, start)
                except ValueError as exc:  # the start does not fit the modelled horizon
                    log.warning("warm start from %s not used: %s", warm_start, exc)
                    use_start = False
    except TimeUp:
        return _stopped_in_build(instance, form, engine.name, opts, start, wall0, time.perf_counter() - build0)
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
        "warm_start": warm_start if start is None else start.meta.get("method", "given"),
        "mip_start": use_start,
        "lower_bound": lower_bound,
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


def _stopped_in_build(
    instance: Instance, form: Any, backend: str, opts: Any, start: Schedule | None, wall0: float, build_s: float
) -> SolveResult:
    """The result when the time limit ends the model's build: the heuristic's schedule, if
    one was run, is the incumbent (``feasible``); otherwise there is no schedule."""
    message = f"the time limit ran out after {build_s:.2f} s of building the model; the solver never started"
    span = None if start is None else check(instance, start).result.makespan
    raw = RawOutcome(
        Status.NO_SOLUTION if span is None else Status.FEASIBLE,
        has_solution=span is not None,
        objective=None if span is None else float(span),
        termination="time limit during the build",
        message=message,
    )
    record = {"formulation": form.name, "backend": backend, **dataclasses.asdict(opts), "stopped": "build"}
    result = finish(instance, form, None, raw, options=record, build_s=build_s, wall_s=0.0, incumbent=start)
    return dataclasses.replace(result, wall_s=time.perf_counter() - wall0)


def _solve_relaxation(instance: Instance, name: str, opts: Any, settings: SolveOptions, wall0: float) -> SolveResult:
    """Solve the relaxation ``opts.relaxation`` of a formulation (docs/variants.md): status
    ``bound`` with its optimum as the bound when it is solved, ``no_solution`` with the
    solver's bound on it when a limit stops it, ``infeasible`` when even it has no point
    (then neither has the instance within the horizon). Never a schedule."""
    from ..formulations import relax

    build0 = time.perf_counter()
    model = relax.build(instance, opts)
    build_s = time.perf_counter() - build0
    engine = get_backend("highs" if isinstance(model, pyo.ConcreteModel) else "cpsat")
    if settings.time_limit is not None:
        left = max(settings.time_limit - (time.perf_counter() - wall0), MIN_SOLVER_SECONDS)
        settings = dataclasses.replace(settings, time_limit=left)
    raw = engine.solve(model, settings)
    if raw.status == Status.OPTIMAL:
        status, bound = Status.BOUND, raw.objective
    elif raw.status == Status.INFEASIBLE:
        status, bound = Status.INFEASIBLE, None
    else:
        status, bound = (Status.ERROR if raw.status == Status.ERROR else Status.NO_SOLUTION), raw.bound
    record = {
        "formulation": name,
        "backend": engine.name,
        **dataclasses.asdict(opts),
        "horizon": model_data(model).horizon,
        **settings.to_dict(),
    }
    return SolveResult(
        status=status,
        schedule=None,
        objective=None,
        bound=bound,
        gap=None,
        makespan=None,
        avg_jct=None,
        completion=None,
        build_s=build_s,
        solver_s=raw.solver_s,
        wall_s=time.perf_counter() - wall0,
        formulation=name,
        solver=raw.solver,
        options=record,
        model_size=raw.model_size,
        handoff_s=raw.handoff_s,
        termination=raw.termination,
        message=f"the {opts.relaxation} relaxation: its value bounds the optimum from below; no schedule",
    )


def _add_floor(model: Any, lower_bound: float) -> None:
    """The row ``makespan >= ceil(lower_bound)`` in a Pyomo or a CP-SAT model."""
    floor = math.ceil(lower_bound - 1e-9)
    if isinstance(model, pyo.ConcreteModel):
        model.floor = pyo.Constraint(expr=model.obj.expr >= floor, doc="a proven lower bound on the makespan")
    else:
        model.model.add(model.makespan >= floor)


def _auto_choice(instance: Instance, backend: str | None, options: dict[str, Any]) -> tuple[str, str]:
    """What ``auto`` runs: the CP-SAT decomposition for the makespan, unless the request is one
    only the compact MILP answers (a network that is not a star, another objective, a MILP
    option, a MILP backend)."""
    if instance.time_model.links is not None:
        return "compact", (
            "the cluster has a network topology (racks or uplinks of several bandwidths); "
            "the CP-SAT models count contention per server at one bandwidth"
        )
    if options.get("objective", "makespan") != "makespan":
        return "compact", f"the objective is {options['objective']!r}, which the CP-SAT models do not optimise"
    milp_only = sorted(set(options) - {"objective", "horizon", "symmetry"})
    if milp_only:
        return "compact", f"option(s) {', '.join(milp_only)} belong to the compact MILP"
    if backend not in (None, "cpsat"):
        return "compact", f"the {backend} backend was asked for"
    return "auto", "the makespan on CP-SAT: heuristics, relaxation, restriction, full model"


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
