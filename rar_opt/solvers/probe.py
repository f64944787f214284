"""Probes: is there a schedule that ends by slot H? (docs/exactness.md, "Probes").

A probe asks CP-SAT whether the full model (:mod:`rar_opt.formulations.cpsat`) built over H
slots has any solution, with no objective. The answer is one of

* ``feasible``: yes, and here is a schedule, checked and re-simulated: OPT <= its makespan <= H;
* ``infeasible``: CP-SAT proved that no schedule ends by slot H, so OPT >= H + 1. The full
  model is exact (docs/exactness.md), and its symmetry rows keep one schedule of every
  orbit, so they remove no makespan. A probe adds one more row of that kind, valid only
  for this question: time reversal (:func:`~rar_opt.formulations.symmetry.add_reversal`);
* ``no_solution``: the time ran out before either.

The answers are monotone in H, so two probes prove an optimum: ``infeasible`` at H - 1 and
``feasible`` at H give OPT = H. This is the destructive lower bound of the scheduling
literature (Klein and Scholl, EJOR 112(2), 1999): a bound is raised by refuting it. On
some instances a feasibility question is much easier for CP-SAT than the optimisation
(`heavy` 16 x 8 x 100 seed 1, whose optimum 46 this proved; docs/frontier.md).

A probe also carries, by default, the rows of :mod:`rar_opt.formulations.pricing`: split
jobs that share a server lose iterations in their common slots. Every schedule satisfies
them, so they remove no answer; they let CP-SAT reason about contention on the jobs'
intervals (the refutation of 45 on ``heavy-16x8x100-s1``: 26-43 s with them, 43-51 s
without; docs/exactness.md, "Probes").

A probe runs CP-SAT's ``no-lp`` search by default (:data:`rar_opt.solvers.cpsat.SEARCHES`):
without the linear relaxation, the probe at 45 on that instance is refuted in 22-28 s
instead of 262-300 s (docs/exactness.md, "Searches").
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any

from rar_opt.errors import ParameterError
from rar_opt.formulations import cpsat
from rar_opt.formulations import symmetry as symmetry_rows
from rar_opt.formulations.base import require_star
from rar_opt.instance import Instance
from rar_opt.schedule import Schedule
from rar_opt.solvers.backend import MIN_SOLVER_SECONDS, WorkMeter
from rar_opt.solvers.budget import Budget
from rar_opt.solvers.cpsat import SEARCHES, Cpsat
from rar_opt.solvers.result import read_back, result_meta
from rar_opt.solvers.status import Status
from rar_opt.support.checks import is_int
from rar_opt.support.provenance import versions


@dataclass(frozen=True)
class ProbeRecord:
    """How a probe was asked and answered: the question, the model, the settings, the solver."""

    question: str
    formulation: str
    time_limit: float | None
    seed: int
    threads: int
    symmetry: bool
    search: str
    cpsat_parameters: dict[str, Any]
    versions: dict[str, Any]
    reversal_job: int | None = None  # the job of the time-reversal row, when one is added
    reversal: bool = True  # whether the time-reversal row was asked for (it needs symmetry and such a job)
    pricing: bool = False  # the redundant pricing rows (formulations/pricing.py)
    hint: str | None = None  # the method of the schedule hinted, when one is
    solver: dict[str, Any] = field(default_factory=dict)
    model_size: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON-ready values (the keys of ``rar-opt probe --json``)."""
        out = {
            "question": self.question,
            "formulation": self.formulation,
            "time_limit": self.time_limit,
            "seed": self.seed,
            "threads": self.threads,
            "symmetry": self.symmetry,
            "reversal": self.reversal,
            "reversal_job": self.reversal_job,
            "pricing": self.pricing,
            "hint": self.hint,
            "search": self.search,
            "cpsat_parameters": dict(self.cpsat_parameters),
            "versions": self.versions,
            "solver": self.solver,
            "model_size": self.model_size or None,  # null: no model was built (the longest job answered)
        }
        return out


@dataclass(frozen=True)
class Probe:
    """The answer to "does a schedule end by slot ``makespan``?"."""

    makespan: int  # the H asked about
    status: Status  # FEASIBLE (yes, see schedule), INFEASIBLE (proven no), NO_SOLUTION (undecided)
    schedule: Schedule | None  # when FEASIBLE: a checked schedule ending by H
    schedule_makespan: int | None  # its makespan, from the simulator (at most H)
    lower_bound: int | None  # when INFEASIBLE: the bound on OPT it proves (at least H + 1)
    seconds: float
    termination: str  # CP-SAT's own status name, or "longest job" when no solve was needed
    record: ProbeRecord

    def to_dict(self) -> dict[str, Any]:
        """Every field but the schedule, as JSON-ready values (:func:`rar_opt.results.to_dict`)."""
        return self.summary()

    def stamped(self) -> Probe:
        """This answer with its schedule's ``meta`` made from the answer and its record, the
        way a solve's schedule carries its run (:func:`~rar_opt.solvers.result.result_meta`):
        the question and every setting, the answer, the seconds, the solver and the versions."""
        if self.schedule is None:
            return self
        options = {k: v for k, v in self.summary().items() if k not in ("status", "solver", "versions")}
        method = self.schedule.meta.get("method", "probe")
        meta = result_meta(method, self.status, options, self.record.solver)
        return replace(self, schedule=self.schedule.with_meta(meta))

    def summary(self) -> dict[str, Any]:
        """Every field but the schedule, as JSON-ready values."""
        return {
            "makespan_asked": self.makespan,
            "status": str(self.status),
            "schedule_makespan": self.schedule_makespan,
            "proves_lower_bound": self.lower_bound,
            "seconds": round(self.seconds, 3),
            "termination": self.termination,
            **self.record.to_dict(),
        }


def probe(
    instance: Instance,
    makespan: int,
    *,
    time_limit: float | None = None,
    seed: int = 0,
    threads: int = 1,
    symmetry: bool = True,
    search: str = "no-lp",
    reversal: bool = True,
    pricing: bool = True,
    hint: Schedule | None = None,
    meter: WorkMeter | None = None,
) -> Probe:
    """Ask whether some schedule of ``instance`` ends by slot ``makespan`` (module docstring).
    ``reversal`` adds the time-reversal row (with ``symmetry`` only; docs/exactness.md);
    ``pricing`` the redundant rows that price contention on intervals
    (:mod:`rar_opt.formulations.pricing`); ``hint`` a schedule (which may end later) where
    CP-SAT's search looks first: it changes the route to an answer, never the answer.
    ``meter``: ``time_limit`` is in units of work, charged to this meter (a probe within a
    budget of work, :mod:`.budget`); the answer's seconds are still wall-clock seconds."""
    if not is_int(makespan) or makespan < 1:
        raise ParameterError(f"must be a whole number of slots >= 1, got {makespan!r}", where="makespan")
    makespan = int(makespan)
    if makespan > instance.horizon:
        raise ParameterError(f"= {makespan} is beyond the instance's horizon T = {instance.horizon}", where="makespan")
    began = time.perf_counter()
    if meter is None:
        budget = Budget.start(time_limit, threads, seed)  # the same checks as solve's; the clock starts
    else:
        budget = Budget.start(None, threads, seed, work_limit=time_limit, meter=meter)
    if not isinstance(search, str) or search not in SEARCHES:
        raise ParameterError(
            f"= {search!r} is not a CP-SAT search; choose one of {', '.join(SEARCHES)}", where="search"
        )
    if not isinstance(reversal, bool):
        raise ParameterError(f"must be true or false, got {reversal!r}", where="reversal")
    if not isinstance(pricing, bool):
        raise ParameterError(f"must be true or false, got {pricing!r}", where="pricing")
    require_star(instance, "a probe (it builds the cpsat formulation)")
    record = ProbeRecord(
        question=f"does a schedule end by slot {makespan}?",
        formulation="cpsat (no objective)",
        time_limit=time_limit,
        seed=seed,
        threads=threads,
        symmetry=symmetry,
        search=search,
        cpsat_parameters=dict(SEARCHES[search]),
        versions=versions(),
        pricing=pricing,
        reversal=reversal,
    )
    longest = int(instance.bounds.rho_min.max())
    if makespan < longest:  # a job alone needs longer: no model to build, and OPT >= that job's time
        why = {"name": "rar-opt", "reason": "a job's fastest execution time exceeds the makespan"}
        record = replace(record, solver=why)
        took = time.perf_counter() - began
        return Probe(makespan, Status.INFEASIBLE, None, None, longest, took, "longest job", record)
    if budget.limit is not None and budget.limit <= MIN_SOLVER_SECONDS:  # the caller's clock has run out
        spent = "the time limit was spent before the model could be built"
        record = replace(record, solver={"name": "rar-opt", "reason": spent})
        return Probe(makespan, Status.NO_SOLUTION, None, None, None, time.perf_counter() - began, spent, record)
    model = cpsat.build(instance, cpsat.Options(horizon=makespan, symmetry=symmetry, pricing=pricing))
    model.model.clear_objective()
    if symmetry and reversal:  # no objective: the mirror of a schedule that ends by H ends by H
        job = symmetry_rows.add_reversal(model.model, instance, model.start, model.end, makespan)
        record = replace(record, reversal_job=job)
    if hint is not None:
        cpsat.hint_towards(model, instance, hint)
        record = replace(record, hint=hint.meta.get("method", "given"))
    raw = Cpsat().solve(model, budget.settings(params=SEARCHES[search]))
    record = replace(record, solver=raw.solver, model_size=raw.model_size)
    seconds = time.perf_counter() - began
    if raw.has_solution:
        judged = read_back(instance, cpsat.read_schedule(model, instance), "probe")
        if judged is None or judged[1] > makespan:
            raise RuntimeError(f"the probe's schedule fails the checker or ends after slot {makespan}")
        schedule, span = judged
        return Probe(makespan, Status.FEASIBLE, schedule, span, None, seconds, raw.termination, record).stamped()
    if raw.status == Status.INFEASIBLE:
        return Probe(makespan, raw.status, None, None, makespan + 1, seconds, raw.termination, record)
    if raw.status in (Status.NO_SOLUTION, Status.INTERRUPTED):  # undecided: a limit or a signal
        return Probe(makespan, raw.status, None, None, None, seconds, raw.termination, record)
    raise RuntimeError(f"CP-SAT ended the probe with {raw.termination}")
