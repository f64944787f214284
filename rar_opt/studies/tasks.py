"""The pure task functions of a study: from inputs (generator arguments or an instance, the
policies, the exact method, the time limit, the seed) to one JSON-ready row.

A task reads nothing but its inputs and draws random numbers only from the seeds in them,
so the same inputs give the same outputs on any executor and any worker (timing is kept
apart, in :class:`TaskResult`). Each task solves its instance exactly with the best
method (``auto`` unless told otherwise, :func:`exact_method`), runs every policy, and records per
policy the makespan, the average JCT and ALG/OPT; for SJF-BCO also Theorem 5's bound and
the checks of Lemma 2, Lemma 3 and Theorem 5 (:mod:`rar_opt.bounds`).

When the optimum is not proven within the time limit, the row keeps the best proven lower
bound and the best schedule found (the solver's or a policy's): the true ratio lies between
ALG / best makespan and ALG / lower bound, and the row says ``proven: false``.

Families (:data:`FAMILIES`): the generators' own, and arrival families
(:data:`ARRIVAL_FAMILIES`: ``tiny-arrivals``, ``paper-arrivals``), whose instances are the
generator's with Poisson arrivals at the study's ``load`` (:func:`rar_opt.instances.generate.with_arrivals`,
seeded by the instance seed). A task on a generated instance (of any family) also solves
the total flow time sum_j (C_j - r_j) exactly, which without releases is the total
completion time, the average JCT times J, and records, per policy, its flow and ALG/OPT for
flow (``flow_ratio``; when the flow optimum is not proven, ``flow_ratio_low`` and
``flow_ratio_high`` against the best flow known and the best lower bound, which is the
larger of the solver's and :func:`rar_opt.bounds.completion_bounds`). So the report's
average JCT is against the proven optimum wherever the solve proves it, not only on the
arrival families. The worst-case search's candidate tasks (``instance_inputs``) solve the
makespan only.
"""

from __future__ import annotations

import hashlib
import math
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from rar_opt.algorithms import POLICIES
from rar_opt.bounds import completion_bounds
from rar_opt.bounds.rounding import ceil_bound_or_none
from rar_opt.errors import InputError, ParameterError
from rar_opt.instance import Instance
from rar_opt.instances.generate import GENERATORS, generate
from rar_opt.schedule import Schedule
from rar_opt.shares import realized_shares
from rar_opt.simulate import simulate
from rar_opt.studies.evaluation import Evaluation
from rar_opt.studies.evaluation import evaluate as shared_evaluate
from rar_opt.support.checks import SOLVER_MAX_SEED
from rar_opt.support.jsonio import canonical
from rar_opt.support.provenance import versions_and_revision as versions

EXACT_METHOD = "auto"
"""The exact method of the studies: the solver layer's default (docs/exactness.md)."""


ARRIVAL_FAMILIES: dict[str, str] = {"tiny-arrivals": "tiny", "paper-arrivals": "paper"}
"""Study families whose jobs arrive over time, by the generator they draw the jobs from."""

FAMILIES: tuple[str, ...] = (*GENERATORS, *ARRIVAL_FAMILIES)
"""Every family a study takes: a generator's name, or an arrival family."""

DEFAULT_LOAD = 1.0
"""The offered load of an arrival family unless the study gives one."""


def generator_of(family: str) -> str:
    """The generator that draws ``family``'s jobs; an unknown family is a ParameterError."""
    if family not in FAMILIES:
        raise ParameterError(f"unknown family {family!r} (known: {', '.join(FAMILIES)})", where="family")
    return ARRIVAL_FAMILIES.get(family, family)


def exact_method() -> str:
    """The exact method a study uses unless told otherwise: ``auto``."""
    return EXACT_METHOD


def task_key(inputs: dict[str, Any]) -> str:
    """A task's key in the store: a digest of its canonical inputs."""
    return hashlib.sha256(canonical(inputs).encode()).hexdigest()[:24]


@dataclass(frozen=True)
class TaskResult:
    """What a task returns: its key, its deterministic outputs and its timing."""

    key: str
    outputs: dict[str, Any]
    wall_s: float
    timing: dict[str, float] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)  # of the process that ran it


def generated_inputs(
    family: str,
    seed: int,
    *,
    jobs: int | None,
    servers: int | None,
    preset: str | None,
    policies: tuple[str, ...],
    method: str,
    time_limit: float,
    load: float | None = None,
) -> dict[str, Any]:
    """The inputs of one study task on a generated instance (``load``: an arrival family's)."""
    inputs = {
        "task": "generated",
        "family": family,
        "seed": seed,
        "jobs": jobs,
        "servers": servers,
        "preset": preset,
        "policies": list(policies),
        "method": method,
        "time_limit": time_limit,
    }
    if family in ARRIVAL_FAMILIES:  # other families' inputs (and so their keys) stay as they were
        inputs["load"] = DEFAULT_LOAD if load is None else load
    return inputs


def instance_inputs(
    instance: Instance, policies: tuple[str, ...], method: str, time_limit: float, seed: int
) -> dict[str, Any]:
    """The inputs of one task on a given instance (a worst-case search's candidate)."""
    return {
        "task": "instance",
        "instance": instance.to_dict(),
        "seed": seed,
        "policies": list(policies),
        "method": method,
        "time_limit": time_limit,
    }


def instance_of(inputs: dict[str, Any]) -> Instance:
    """The instance a task's inputs describe."""
    if inputs["task"] == "instance":
        return Instance.from_dict(inputs["instance"])
    family = inputs["family"]
    return generate(
        generator_of(family),
        inputs["seed"],
        jobs=inputs["jobs"],
        servers=inputs["servers"],
        preset=inputs["preset"],
        load=inputs["load"] if family in ARRIVAL_FAMILIES else None,
    )


def solver_seed(seed: int) -> int:
    """The seed a task's seeded policies and solvers get: its instance seed folded into their
    range 0..2**31-1 (the generators take seeds up to 2**63-1; below 2**31 the two are equal)."""
    return seed % (SOLVER_MAX_SEED + 1)


def run_task(inputs: dict[str, Any]) -> TaskResult:
    """Evaluate one task (a pure function of ``inputs``; only the timing varies)."""
    began = time.perf_counter()
    instance = instance_of(inputs)
    try:
        outputs, timing = evaluate(
            instance,
            tuple(inputs["policies"]),
            inputs["method"],
            float(inputs["time_limit"]),
            solver_seed(int(inputs["seed"])),
            flow=inputs["task"] == "generated",  # every family: without releases the flow time is the total
        )
    except InputError as exc:  # the method refuses this instance: say which one, and with which method
        where = f"{instance.name} (seed {inputs['seed']}, method {inputs['method']})"
        raise InputError(exc.message, where=where, file=exc.file) from None
    return TaskResult(task_key(inputs), outputs, time.perf_counter() - began, timing, versions())


def evaluate(
    instance: Instance, policies: tuple[str, ...], method: str, time_limit: float, seed: int, flow: bool = False
) -> tuple[dict[str, Any], dict[str, float]]:
    """Every policy on ``instance`` against its exact optimum (or the best bound and best
    schedule when the optimum is not proven): the outputs row and the timing. The
    evaluation itself is :func:`rar_opt.studies.evaluation.evaluate`, shared with ``compare``.
    With ``flow``, also against the optimal total flow time (:func:`flow_outputs`)."""
    ev = shared_evaluate(instance, policies, method=method, time_limit=time_limit, seed=seed)
    timing = {f"{name}_s": run.wall_s for name, run in ev.runs.items()}
    timing["solve_s"] = float(ev.solve_s or 0.0)
    res = ev.solve
    rows: dict[str, Any] = {}
    for name, run in ev.runs.items():
        ratios = ev.ratios(name)
        rows[name] = {
            "makespan": run.makespan,
            "avg_jct": run.avg_jct,
            **ratios,
            **ev.jct_ratios(name),
            "optimal": run.makespan == ev.optimum if ev.optimum else None,
            "exceeds_horizon": run.result.exceeds_horizon,
            "feasible": run.feasible,  # the checker's verdict: a schedule past T is in no statistic
            "contention_share": run.shares.contention,
            "overhead_share": run.shares.overhead,
        }
    out: dict[str, Any] = {
        "instance": instance.name,
        "jobs": instance.num_jobs,
        "servers": instance.num_servers,
        "gpus": instance.cluster.num_gpus,
        "max_job_gpus": int(instance.arrays.gpus.max()),
        "horizon": instance.horizon,
        "status": str(res.status),
        "proven": ev.optimum is not None,
        "optimum": ev.optimum,
        "lower_bound": ev.lower,
        "best_makespan": ev.best,
        "lower_bound_avg_jct": ev.jct_lower,  # the cheap bounds on the total completion time over J
        "best_avg_jct": ev.jct_best,
        "policies": rows,
        "solve": _solve_record(res),
        "optimum_schedule": _bare(res.schedule),
    }
    if res.schedule is not None:
        out["optimum_contention_share"] = realized_shares(instance, res.schedule).contention
    claims = ev.sjf_bco_claims()
    if claims is not None:
        out["theorem5_bound"], checks = claims
        out["claims"] = [asdict(c) for c in checks]
    if flow:
        began = time.perf_counter()
        out["flow"] = flow_outputs(instance, ev, method, time_limit, seed, rows)
        timing["flow_solve_s"] = time.perf_counter() - began
        ref = jct_reference_of(out)  # the flow solve's bound and schedule raise the reference
        if ref is not None and ref.lower:
            for row in filter(within_horizon, rows.values()):  # a run past T keeps no ratio (Evaluation.jct_ratios)
                row |= {"jct_ratio_low": row["avg_jct"] / ref.best, "jct_ratio_high": row["avg_jct"] / ref.lower}
    return out, timing


def within_horizon(policy_row: dict[str, Any]) -> bool:
    """Whether a policy's stored run is an answer: the checker accepted its schedule, which
    ends within T (rows written before ``feasible`` was stored: the policy's own
    ``exceeds_horizon``). A run past T counts in no ratio of the report, the export or the
    pictures; it is counted apart."""
    return bool(policy_row.get("feasible", not policy_row.get("exceeds_horizon", False)))


@dataclass(frozen=True)
class JctReference:
    """An instance's average-JCT reference: the best lower bound (the optimum when proven)
    and the best average JCT known, both per job."""

    lower: float | None
    best: float
    proven: bool


def jct_reference_of(out: dict[str, Any]) -> JctReference | None:
    """The reference for the average JCT of a task's outputs: the cheap bounds on the total
    completion time over J, raised by the flow solve's bound where the row has one (every
    generated row since the eleventh session: the total is the flow time plus the releases),
    and the proven optimum when the flow optimum is proven; the best average JCT known
    likewise. The policies' stored ``jct_ratio_low`` and ``jct_ratio_high`` and the report's
    and export's JCT columns all divide by it. None for outputs that carry no average JCT (a
    store written before they were recorded), and where no schedule known ends within T
    (then no ratio to a best known can be taken)."""
    lower, best = out.get("lower_bound_avg_jct"), out.get("best_avg_jct")
    flow = out.get("flow")
    if flow:
        jobs = int(out["jobs"])
        some = next(iter(out["policies"].values()))
        released = round(some["avg_jct"] * jobs) - int(some["flow"])  # sum_j r_j: total less flow, of any schedule
        if flow["proven"]:
            optimum = (flow["optimum"] + released) / jobs
            return JctReference(optimum, optimum, True)
        if flow.get("best") is not None:
            flow_best = (flow["best"] + released) / jobs
            best = flow_best if best is None else min(float(best), flow_best)
        flow_lower = (flow["lower_bound"] + released) / jobs
        lower = flow_lower if lower is None else max(lower, flow_lower)
    return None if best is None else JctReference(lower, float(best), False)


def flow_method(method: str) -> str:
    """The method that solves a study's flow objective: ``method`` itself when it is a
    formulation with an objective option, else ``auto`` (which hands flow to CP-SAT)."""
    from rar_opt.formulations import FORMULATIONS

    form = FORMULATIONS.get(method)
    return method if form is not None and "objective" in form.option_names() else "auto"


def flow_outputs(
    instance: Instance, ev: Evaluation, method: str, time_limit: float, seed: int, rows: dict[str, Any]
) -> dict[str, Any]:
    """The total flow time of every policy of ``ev`` against the exact flow optimum, within
    ``time_limit``: adds ``flow`` and its ratios to each policy's row of ``rows`` and
    returns the instance's flow record (status, proven, optimum, bound, best, method)."""
    from rar_opt.solvers import Status, solve

    released = int(instance.releases.sum())
    flows = {
        name: int(simulate(instance, run.result.schedule).completion.sum()) - released for name, run in ev.runs.items()
    }
    used = flow_method(method)
    res = solve(instance, used, objective="flow", time_limit=time_limit, threads=1, seed=seed)
    structural = lower = completion_bounds(instance).flow
    proven_bound = ceil_bound_or_none(res.bound)
    if proven_bound is not None:
        lower = max(lower, proven_bound)
    known = [flows[name] for name, run in ev.runs.items() if run.feasible]  # a schedule past T is no answer
    if res.completion is not None:
        known.append(sum(res.completion) - released)
    optimum = round(res.objective) if res.status == Status.OPTIMAL and res.objective is not None else None
    if optimum is None and known and lower == min(known):  # a proven bound that a feasible schedule meets
        optimum = lower
    best = optimum if optimum is not None else min(known, default=None)
    lower = optimum if optimum is not None else lower
    for name, value in flows.items():
        answer = ev.runs[name].feasible  # a schedule past T is no answer: its flow is beside no reference
        rows[name] |= {
            "flow": value,
            "flow_ratio": value / optimum if optimum and answer else None,
            "flow_ratio_low": value / best if best and answer else None,  # <= ALG/OPT
            "flow_ratio_high": value / lower if answer else None,  # >= ALG/OPT
            "flow_optimal": value == optimum if optimum and answer else None,
        }
    return {
        "status": str(res.status),
        "proven": optimum is not None,
        "optimum": optimum,
        "lower_bound": lower,
        "best": best,
        "completion_bound": structural,
        "solve": _solve_record(res),
        "optimum_schedule": _bare(res.schedule),
    }


def _solve_record(res: Any) -> dict[str, Any]:
    """The solve's deterministic fields: status, numbers, method and options (no times)."""
    options = {k: v for k, v in res.record.to_dict().items() if not k.endswith("_s") and k not in ("phases", "times")}
    return {
        "status": str(res.status),
        "objective": res.objective,
        "bound": res.bound,
        "gap": res.gap,
        "formulation": res.formulation,
        "solver": {k: v for k, v in res.solver.items() if k in ("name", "version", "interface")},
        "options": _json_safe(options),
    }


def _bare(schedule: Schedule | None) -> dict[str, Any] | None:
    """A schedule as JSON with only its method in meta (the rest is in the row)."""
    if schedule is None:
        return None
    data = schedule.to_dict()
    data["meta"] = {"method": schedule.meta.get("method"), "status": schedule.meta.get("status")}
    return data


def _json_safe(value: Any) -> Any:
    """Plain JSON values (tuples become lists; anything else becomes its text)."""
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    return str(value)


def check_policies(policies: list[str] | tuple[str, ...] | None) -> tuple[str, ...]:
    """The policies of a study, validated, in registry order (all of them by default)."""
    names = list(policies or POLICIES)
    unknown = [p for p in names if p not in POLICIES]
    if unknown:
        raise ParameterError(f"unknown policy {unknown[0]!r} (known: {', '.join(POLICIES)})", where="policies")
    return tuple(p for p in POLICIES if p in names)
