"""The dispatcher: formulation x backend, warm start, one result.

``solve(instance)`` builds the chosen formulation with validated options, optionally runs
a heuristic first (its schedule becomes a complete MIP start where the backend takes one,
and its makespan the modelled horizon for the makespan objective: every optimal schedule
fits in it), hands the model to the backend, and finishes the outcome the same way for
every backend (:func:`.result.finish`). A checked start that the solver does not better
stays the incumbent on every way out (:mod:`.warm`).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pyomo.environ as pyo

from rar_opt.bounds.rounding import ceil_bound
from rar_opt.check import check
from rar_opt.errors import InputError, ParameterError
from rar_opt.formulations import formulation as get_formulation
from rar_opt.formulations import model_data
from rar_opt.formulations.base import objective_reading, require_star, resolve_horizon
from rar_opt.instance import Instance
from rar_opt.schedule import Schedule
from rar_opt.solvers.backend import RawOutcome, SolveOptions
from rar_opt.solvers.budget import Budget
from rar_opt.solvers.decompose import PLANS, run_plan
from rar_opt.solvers.plan import AUTO
from rar_opt.solvers.record import PhaseRecord, SolveRecord
from rar_opt.solvers.registry import DEFAULT_BACKEND
from rar_opt.solvers.registry import backend as get_backend
from rar_opt.solvers.result import SolveResult, finish, restamp
from rar_opt.solvers.status import Status
from rar_opt.solvers.sum_best import SUM_POLICIES
from rar_opt.solvers.sums import SUM_OBJECTIVES, check_factor, solve_sum
from rar_opt.solvers.tradeoff import solve_span_within
from rar_opt.solvers.verify import distrust_bound, verify
from rar_opt.solvers.warm import best_start, keep_start, policy_start, start_only, stopped_in_build
from rar_opt.support.checks import is_finite
from rar_opt.support.processes import TimeUp, alarm_at

log = logging.getLogger(__name__)

HANDOFF_PER_BUILD = 2.0
"""Pyomo's hand-off of a compact model to HiGHS, per second of build (measured 1.6-2.2
at 12 x 4 x 80 and 16 x 8 x 100): a limit too short for it is reported at once."""

HANDOFF_PER_ELEMENT = 80e-6
"""The same hand-off per variable and constraint, in seconds: measured 43-72 us for the
compact MILP (12 x 4 x 80, 16 x 8 x 100; five to six nonzeros per element) and 20 us for the
enumerative ILP (two), whose build is mostly the enumeration and says nothing of the
hand-off (wait-beats-start: 10 s of build, 0.75 s of hand-off)."""

INTEGRAL_ABS_GAP = 0.99
"""Absolute gap for our objectives (makespan, sum of completion times), which are integral:
an incumbent within 0.99 of the bound is optimal, exactly."""


SPAN_OBJECTIVES = ("makespan",)
"""Objectives for which a heuristic's makespan becomes the modelled horizon. The
lexicographic optimum also ends by it, but that objective's weight M = J T + 1 is taken
from the modelled horizon, so a shorter horizon would change its reported value."""

PLAN_OPTIONS = ("horizon", "objective", "symmetry")
"""The formulation options a method over several models takes (makespan objective only)."""


@dataclass(frozen=True)
class Request:
    """What a caller asks of :func:`solve` besides the instance, the formulation and the time."""

    backend: str | None = None
    warm_start: str | None = None
    mip_start: bool = True
    heuristic_horizon: bool = True
    start: Schedule | None = None
    lower_bound: float | None = None
    options: Mapping[str, Any] = field(default_factory=dict)  # the formulation's own


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
    makespan_within: float | None = None,
    jct_within: float | None = None,
    work_limit: float | None = None,
    **options: Any,
) -> SolveResult:
    """Solve ``instance`` exactly with a formulation and a backend.

    ``options`` are the formulation's own (``objective``, ``symmetry``, ``horizon``, ...: see
    its ``Options``); one it does not take is an :class:`~rar_opt.errors.InputError`.
    ``backend`` defaults to HiGHS for MILPs, SCIP for the non-convex model and CP-SAT for the
    ``cpsat`` model. Two names are methods over several models (:mod:`.decompose`):
    ``"decompose"``, the contention-free decomposition, and ``"auto"`` (the default), which
    adds heuristics and a floor to it; ``auto`` hands the request to the compact MILP when it
    asks for what only that model answers (another objective, a MILP option or backend, a
    network with racks), and the total completion or flow time to the CP-SAT model
    (:data:`CPSAT_OBJECTIVES`), in both cases started from the best of its heuristics'
    schedules, so that its answer is never worse than theirs.
    ``time_limit`` (seconds) bounds the whole call: the heuristic, the build, the hand-off
    to the solver, the solve and the checks; the solver gets what is left.
    ``warm_start`` names a policy (``sjf-bco``, ``ls``, ...) whose schedule is handed over
    as a complete MIP start (unless ``mip_start`` is False or the backend cannot take one);
    with ``heuristic_horizon`` (default) and the makespan objective, the model then has only
    as many slots as that schedule's makespan. ``start`` is a schedule given directly, used
    the same way (it replaces ``warm_start``). ``lower_bound``, a proven lower bound on the
    makespan (e.g. the contention-free relaxation's), becomes a row ``objective >= bound``.
    ``makespan_within`` (a factor >= 1, with ``objective="total"`` or ``"flow"`` under
    ``auto``) asks for the best sum among the schedules whose makespan is within that factor
    of the shortest the heuristics find (:func:`.sums.solve_sum`). ``jct_within`` (a factor
    >= 1, with the makespan objective under ``auto``) is the other way round: the shortest
    schedule whose flow time (the average JCT times J) is within that factor of the
    smallest the heuristics find (:func:`.tradeoff.solve_span_within`).
    ``work_limit`` replaces ``time_limit`` by units of work (CP-SAT's deterministic time and
    the counted searches' steps, :mod:`.budget`), for the makespan under ``auto`` and the
    other plans on one thread: the same seed then gives the same result on any machine.
    """
    _check_arguments(instance, start, lower_bound)
    if formulation != "auto" and formulation not in PLANS:
        try:
            get_formulation(formulation)
        except InputError:  # the methods over several models are choices too
            from rar_opt.formulations import FORMULATIONS

            known = ", ".join([*PLANS, *FORMULATIONS])
            raise InputError(f"unknown method {formulation!r} (known: {known})", where="formulation") from None
    budget = Budget.start(time_limit, threads, seed, work_limit=work_limit)
    request = Request(backend, warm_start, mip_start, heuristic_horizon, start, lower_bound, options)
    if budget.meter is not None and (
        formulation not in PLANS
        or jct_within is not None
        or makespan_within is not None
        or compact_only(instance, request) is not None
    ):
        raise ParameterError(
            "a work limit applies to the makespan under auto and the other plans on CP-SAT (no other "
            "objective, option or backend, no cap); give a time limit instead",
            where="work_limit",
        )
    if jct_within is not None:
        check_factor(jct_within, "jct_within")
        if makespan_within is not None or formulation != "auto" or not _span_method(instance, request):
            raise ParameterError(
                "an average-JCT cap applies to the makespan under auto (on a star network, with no other "
                "option, backend or bound, and without a makespan cap)",
                where="jct_within",
            )
        start = request.start if request.start is not None else policy_start(instance, request.warm_start)
        return solve_span_within(instance, budget, jct_within, start)
    if formulation == "auto" and _sum_method(instance, request):
        start = request.start if request.start is not None else policy_start(instance, request.warm_start)
        objective = request.options["objective"]
        return solve_sum(instance, objective, budget, start, _full_sum_model, makespan_within)
    if makespan_within is not None:
        raise ParameterError(
            "a makespan cap applies to the total completion or flow time under auto (on a star network)",
            where="makespan_within",
        )
    if formulation == "auto":
        _refuse_unknown_options("auto", request)
        why = compact_only(instance, request)
        if why is not None:
            target = "cpsat" if cpsat_answers(instance, request) else "compact"
            if target == "cpsat":
                objective = request.options["objective"]
                why = f"the objective is {objective!r}: the CP-SAT model optimises it (the plans answer the makespan)"
            else:  # what keeps it from the CP-SAT model, if not the objective alone
                rest = {k: v for k, v in request.options.items() if k != "objective"}
                why = compact_only(instance, dataclasses.replace(request, options=rest)) or why
            log.info("auto: the %s model, because %s", target, why)
            request, heuristics = _auto_start(instance, target, request, budget)
            result = solve_formulation(instance, target, request, budget)
            phases = (*(() if heuristics is None else (heuristics,)), *result.record.phases)
            return restamp(result, record=dataclasses.replace(result.record, auto_choice=why, phases=phases))
    if formulation in PLANS:  # a method over several models, not one formulation
        return _solve_plan(instance, formulation, request, budget)
    return solve_formulation(instance, formulation, request, budget)


def _sum_method(instance: Instance, request: Request) -> bool:
    """Whether ``auto`` answers with the method for sums (:mod:`.sums`): the total
    completion or flow time on a star network, with no option but the objective, no other
    backend and no makespan bound asked for."""
    return (
        request.options.get("objective") in SUM_OBJECTIVES
        and set(request.options) == {"objective"}
        and request.backend in (None, "cpsat")
        and request.lower_bound is None
        and instance.time_model.links is None
    )


def _span_method(instance: Instance, request: Request) -> bool:
    """Whether ``auto`` answers the makespan with an average-JCT cap (:mod:`.tradeoff`): the
    makespan objective on a star network, no option but the objective, no other backend
    and no makespan bound asked for."""
    return (
        request.options.get("objective", "makespan") == "makespan"
        and set(request.options) <= {"objective"}
        and request.backend in (None, "cpsat")
        and request.lower_bound is None
        and instance.time_model.links is None
    )


def _auto_start(
    instance: Instance, target: str, request: Request, budget: Budget
) -> tuple[Request, PhaseRecord | None]:
    """``request`` for the one model ``auto`` hands it to (``target``), starting from the
    best schedule of the heuristics ``auto`` runs first (:data:`.plan.AUTO`'s for the
    makespan and the MILP's own objectives, those of the plan for sums for the total and
    flow time), or from the caller's start or warm-start policy where that is better: the
    model alone may end without a schedule, and ``auto`` answers with the best one found.
    The record of that phase comes with it; None where the model takes no start (a
    relaxation, or a start and a policy both given, which the model refuses)."""
    if request.start is not None and request.warm_start:
        return request, None
    opts = get_formulation(target).make_options(dict(request.options))
    if getattr(opts, "relaxation", "none") != "none":
        return request, None
    objective, horizon = getattr(opts, "objective", "makespan"), resolve_horizon(opts.horizon, instance)
    given = request.start if request.start is not None else policy_start(instance, request.warm_start)
    policies = SUM_POLICIES if objective in SUM_OBJECTIVES else AUTO.heuristics
    best, phase = best_start(instance, policies, objective, horizon, budget, given)
    if best is None:
        return request, phase
    return dataclasses.replace(request, start=best, warm_start=None), phase


def _full_sum_model(
    instance: Instance, objective: str, start: Schedule | None, budget: Budget, options: dict[str, Any]
) -> SolveResult:
    """The CP-SAT model for a sum objective from ``start`` (``options``: e.g. a horizon
    that caps the makespan), for :func:`.sums.solve_sum`."""
    request = Request(start=start, heuristic_horizon=False, options={"objective": objective, **options})
    return solve_formulation(instance, "cpsat", request, budget)


def compact_only(instance: Instance, request: Request) -> str | None:
    """Why only the compact MILP can answer ``request`` (a network that is not a star,
    another objective, a MILP option, a MILP backend), or None when the CP-SAT methods can."""
    if instance.time_model.links is not None:
        return (
            "the cluster has a network topology (racks or uplinks of several bandwidths); "
            "the CP-SAT models count contention per server at one bandwidth"
        )
    objective = request.options.get("objective", "makespan")
    if objective != "makespan":
        models = "methods over several models" if objective in CPSAT_OBJECTIVES else "models"
        return f"the objective is {objective!r}, which the CP-SAT {models} do not optimise"
    beyond = sorted(set(request.options) - set(PLAN_OPTIONS))
    if beyond:
        unknown = [k for k in beyond if k not in get_formulation("compact").option_names()]
        if unknown:
            return f"option(s) {', '.join(unknown)} taken by neither these methods nor the compact MILP"
        return f"option(s) {', '.join(beyond)} belong to the compact MILP"
    if request.backend not in (None, "cpsat"):
        return f"the {request.backend} backend was asked for"
    return None


CPSAT_OBJECTIVES = ("total", "flow")
"""Objectives other than the makespan that ``auto`` hands to the CP-SAT model rather than
to the compact MILP: on tiny to 16 x 8 instances with and without releases CP-SAT proved
every flow optimum the MILP proved, 3 to 10 times faster, and one more; where neither
proved within the limit it held the better schedule (``benchmarks/flow_models.py``;
docs/arrivals.md, "Objectives")."""


def cpsat_answers(instance: Instance, request: Request) -> bool:
    """Whether the single CP-SAT model answers a request that the methods over several
    models do not: the total completion or flow time on a star network, with only options
    the CP-SAT model takes and no other backend asked for."""
    if instance.time_model.links is not None or request.lower_bound is not None:
        return False
    if request.options.get("objective") not in CPSAT_OBJECTIVES:
        return False
    taken = set(get_formulation("cpsat").option_names())
    return set(request.options) <= taken and request.backend in (None, "cpsat")


def _refuse_unknown_options(name: str, request: Request) -> None:
    """An option that neither the method ``name`` (over several models) nor the compact
    MILP takes is refused, told by its own name (``auto`` hands the MILP's options to it)."""
    milp = set(get_formulation("compact").option_names()) - set(PLAN_OPTIONS)
    unknown = sorted(set(request.options) - set(PLAN_OPTIONS) - milp)
    if unknown:
        hands = f", and it hands the compact MILP's to it ({', '.join(sorted(milp))})" if name == "auto" else ""
        raise InputError(
            f"{name} takes no option {unknown[0]!r}: its own are {', '.join(PLAN_OPTIONS)}{hands}",
            where=f"options.{unknown[0]}",
        )


def _solve_plan(instance: Instance, name: str, request: Request, budget: Budget) -> SolveResult:
    """A method over several models (``decompose``, ``auto``) on CP-SAT, for the makespan."""
    require_star(instance, f"the {name} method (its CP-SAT models)")
    _refuse_unknown_options(name, request)
    refused = compact_only(instance, request)
    if refused is not None:
        raise ParameterError(
            f"the {name} method takes a time limit, threads, a seed, a warm start, a horizon and symmetry on "
            f"or off (makespan objective, CP-SAT backend) only: {refused}",
            where="formulation",
        )
    cpsat_form = get_formulation("cpsat")
    symmetry = cpsat_form.make_options({"symmetry": request.options.get("symmetry", True)}).symmetry
    horizon = request.options.get("horizon")
    if horizon is not None:  # the same checks as every formulation's horizon
        resolve_horizon(cpsat_form.make_options({"horizon": horizon}).horizon, instance)
    plan = PLANS[name]
    return run_plan(instance, plan, budget, request.warm_start, horizon, request.start, request.lower_bound, symmetry)


def _check_arguments(instance: Any, start: Any, lower_bound: Any) -> None:
    """Refuse arguments of the wrong kind by name, before any work."""
    if not isinstance(instance, Instance):
        hint = " (a file: Instance.read(path); a bundled name: rar_opt.instances.library.load_instance(name))"
        raise ParameterError(f"must be an Instance, got {type(instance).__name__}" + hint, where="instance")
    if start is not None and not isinstance(start, Schedule):
        raise ParameterError(f"must be a Schedule or None, got {type(start).__name__}", where="start")
    if lower_bound is not None and not (is_finite(lower_bound) and lower_bound >= 0):
        raise ParameterError(f"must be a finite number >= 0, got {lower_bound!r}", where="lower_bound")


def solve_formulation(instance: Instance, name: str, request: Request, budget: Budget) -> SolveResult:
    """One formulation on one backend within ``budget``: build, start, solve, finish."""
    form = get_formulation(name)
    engine = _engine_for(form, request, budget)
    opts = form.make_options(dict(request.options))
    if getattr(opts, "relaxation", "none") != "none":  # a bound, never a schedule
        if request.warm_start or request.start is not None or request.lower_bound is not None:
            raise InputError("a relaxation takes no start and no lower bound", where="options.relaxation")
        return _solve_relaxation(instance, form.name, opts, budget)
    if request.start is not None and request.warm_start:
        raise ParameterError("give a start schedule or a warm-start policy, not both", where="warm_start")
    if request.lower_bound is not None and getattr(opts, "objective", "makespan") != "makespan":
        raise ParameterError("is a bound on the makespan; the objective is not the makespan", where="lower_bound")
    warm_start = None if request.start is not None else request.warm_start or form.default_warm_start
    start = request.start if request.start is not None else policy_start(instance, warm_start)
    named = warm_start if request.start is None else request.start.meta.get("method", "given")  # for the record
    # a heuristic's makespan caps every optimum's makespan
    if start is not None and request.heuristic_horizon and getattr(opts, "objective", "makespan") in SPAN_OBJECTIVES:
        span = check(instance, start).result.makespan
        if span is not None and span <= instance.horizon and (opts.horizon is None or span < opts.horizon):
            opts = dataclasses.replace(opts, horizon=span)
    objective, horizon = getattr(opts, "objective", "makespan"), resolve_horizon(opts.horizon, instance)
    solver_budget = budget.reserving()  # the backend must be back by then, hand-off included
    build0 = time.perf_counter()
    use_start = start is not None and request.mip_start and form.set_start is not None
    use_start = use_start and engine.capabilities.mip_start
    try:  # a build that would outlast the time limit is stopped at it (Python code: interruptible)
        with alarm_at(solver_budget.deadline):
            model = form.build(instance, opts)
            if request.lower_bound is not None:
                _add_floor(model, request.lower_bound)
            if use_start and start is not None:
                use_start = _set_start(form, model, instance, start, warm_start)
    except TimeUp:
        build_s = time.perf_counter() - build0
        return stopped_in_build(instance, form, engine.name, opts, (start, named), horizon, budget, build_s)
    build_s = time.perf_counter() - build0
    settings = dataclasses.replace(solver_budget.settings(), warm_start=use_start, abs_gap=INTEGRAL_ABS_GAP)
    handoff = 0.0 if engine.name != "highs" else _handoff_seconds(model, build_s, settings.time_limit)
    if settings.time_limit is not None and handoff > settings.time_limit:
        # the hand-off alone would overrun the limit, and it cannot be interrupted
        message = (
            f"time limit: {settings.time_limit:.2f} s left after the build, and handing the model to "
            f"{engine.name} takes about {handoff:.2f} s; not started"
        )
        raw = start_only(model, use_start, "time limit before the solver", message)
    else:
        raw = engine.solve(model, settings)
    options = {
        **dataclasses.asdict(opts),
        "horizon": model_data(model).horizon,
        **objective_reading(model),  # the weights' scale K, the lexicographic M (docs/variants.md)
        "warm_start": named,
        "mip_start": use_start,
        "lower_bound": request.lower_bound,
        **settings.to_dict(),
        "time_limit": budget.limit,  # the caller's limit for the whole call
        "solver_time_limit": settings.time_limit,  # what the solver was given of it
    }
    record = SolveRecord(form.name, engine.name, options)
    result = finish(instance, form, model, raw, record=record, build_s=build_s, wall_s=0.0)
    del model  # freeing a large model takes a while: inside the measured (and limited) time
    if not engine.capabilities.certified:  # first: its bound is then recorded apart, whatever follows
        result = distrust_bound(result)
    # a checked start the solver did not better (or never reached) is the incumbent, whatever the exit
    result = keep_start(instance, form, result, start, objective, options["horizon"])
    if not engine.capabilities.certified and result.status in (Status.OPTIMAL, Status.INFEASIBLE):
        result = verify(instance, result, budget, _compact)
    return dataclasses.replace(result, wall_s=budget.elapsed())


def _compact(instance: Instance, horizon: int, budget: Budget) -> SolveResult:
    """The compact MILP over ``horizon`` on its default backend (HiGHS): the check of a claim."""
    return solve_formulation(instance, "compact", Request(options={"horizon": horizon}), budget)


def missing_backend(method: str, backend: str | None = None) -> str | None:
    """Why ``method`` (a formulation, ``auto`` or another method over several models) cannot
    be solved on this install with ``backend`` (None: its default): the package that backend
    needs and how to install it (SCIP for the non-convex model), or None when it can. A
    solve without it ends with the status ``error``; the commands and the studies ask first
    and refuse before any work. An unknown method or backend is an InputError."""
    if method == "auto" or method in PLANS:
        return get_backend(backend or "cpsat").unavailable()  # auto hands a MILP backend's request on
    return _backend_of(get_formulation(method), backend).unavailable()


def _backend_of(form: Any, backend: str | None) -> Any:
    """The backend named, else the default for the formulation's problem kind."""
    return get_backend(backend or DEFAULT_BACKEND[form.problem])


def _engine_for(form: Any, request: Request, budget: Budget) -> Any:
    """The backend that solves ``form``: the one asked for, else the formulation's default;
    refused (naming the parameter) when it cannot solve that formulation with those threads."""
    engine = _backend_of(form, request.backend)
    if (form.problem == "cp") != (engine.name == "cpsat"):
        raise ParameterError(
            f"the {form.name} formulation cannot be solved by the {engine.name} backend", where="backend"
        )
    if form.problem == "minlp" and not engine.capabilities.nonconvex:
        raise ParameterError(
            f"the {form.name} formulation has products of variables; the {engine.name} backend cannot solve it",
            where="backend",
        )
    if budget.threads != 1 and not engine.capabilities.threads:
        raise ParameterError(f"= {budget.threads}: the {engine.name} backend runs on one thread only", where="threads")
    return engine


def _set_start(form: Any, model: Any, instance: Instance, start: Schedule, warm_start: str | None) -> bool:
    """Hand ``start`` to ``model``; False (logged) when it does not fit the modelled horizon."""
    try:
        form.set_start(model, instance, start)
    except ValueError as exc:
        log.warning("warm start from %s not used: %s", warm_start, exc)
        return False
    return True


def _solve_relaxation(instance: Instance, name: str, opts: Any, budget: Budget) -> SolveResult:
    """Solve the relaxation ``opts.relaxation`` of a formulation (docs/variants.md): status
    ``bound`` with its optimum as the bound when it is solved, ``no_solution`` with the
    solver's bound on it when a limit stops it, ``infeasible`` when even it has no point
    (then neither has the instance within the horizon). Never a schedule."""
    from rar_opt.formulations import relax

    build0 = time.perf_counter()
    model = relax.build(instance, opts)
    build_s = time.perf_counter() - build0
    engine = get_backend("highs" if isinstance(model, pyo.ConcreteModel) else "cpsat")
    settings = budget.settings()
    raw = engine.solve(model, settings)
    if raw.status == Status.OPTIMAL:
        status, bound = Status.BOUND, raw.objective
    elif raw.status == Status.INFEASIBLE:
        status, bound = Status.INFEASIBLE, None
    else:
        status, bound = (Status.ERROR if raw.status == Status.ERROR else Status.NO_SOLUTION), raw.bound
    options = {**dataclasses.asdict(opts), "horizon": model_data(model).horizon, **settings.to_dict()}
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
        wall_s=budget.elapsed(),
        formulation=name,
        solver=raw.solver,
        record=SolveRecord(name, engine.name, options),
        model_size=raw.model_size,
        handoff_s=raw.handoff_s,
        termination=raw.termination,
        message=f"the {opts.relaxation} relaxation: its value bounds the optimum from below; no schedule",
    )


def _handoff_seconds(model: Any, build_s: float, left: float | None) -> float:
    """How long Pyomo's hand-off of ``model`` to HiGHS will take: :data:`HANDOFF_PER_BUILD`
    times the build, and where that is more than the ``left`` seconds, the lesser of it and
    :data:`HANDOFF_PER_ELEMENT` times the model's variables and constraints (counted only
    then: a walk over the model of a few hundredths of a second at 16 x 8 x 100)."""
    by_build = HANDOFF_PER_BUILD * build_s
    if left is None or by_build <= left:
        return by_build
    import pyomo.environ as pyo

    elements = sum(1 for _ in model.component_data_objects(pyo.Var))
    elements += sum(1 for _ in model.component_data_objects(pyo.Constraint, active=True))
    return min(by_build, HANDOFF_PER_ELEMENT * elements)


def _add_floor(model: Any, lower_bound: float) -> None:
    """The row ``makespan >= ceil(lower_bound)`` in a Pyomo or a CP-SAT model."""
    floor = ceil_bound(lower_bound)
    if isinstance(model, pyo.ConcreteModel):
        model.floor = pyo.Constraint(expr=model.obj.expr >= floor, doc="a proven lower bound on the makespan")
    else:
        model.model.add(model.makespan >= floor)


def solve_model(
    model: pyo.ConcreteModel, backend: str = "highs", *, time_limit: float | None = None, **settings: Any
) -> RawOutcome:
    """Solve an already built model with a backend (for auxiliary models such as the load
    ILP (14)-(16)); the incumbent, if any, is loaded into the model."""
    return get_backend(backend).solve(model, SolveOptions(time_limit=time_limit, **settings))
