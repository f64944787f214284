"""The typed record of one solve: what was asked, and the story of the run.

A :class:`~rar_opt.solvers.result.SolveResult` keeps its numbers (status, objective, bound,
times) apart from this record, which says how they came about: the formulation or method,
the backend, every option and solver setting, and for the methods over several models
(:mod:`.decompose`) the phases in order, what proved the optimum, and why the run stopped
early. Code reads the record through its typed fields; :meth:`SolveRecord.to_dict` is the
JSON form, with the same keys as the untyped ``options`` dict of earlier versions (the
typed fields add keys, never rename one), so stored results and studies still read.

This module is the only place that turns phase kinds and proofs into their recorded
names; nothing else compares those strings.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from rar_opt.solvers.status import Status

if TYPE_CHECKING:
    from rar_opt.schedule import Schedule


class PhaseKind(StrEnum):
    """The kinds of phase a method over several models runs (docs/exactness.md)."""

    HEURISTICS = "heuristics"  # list-scheduling policies: the first incumbent
    FLOOR = "floor"  # cheap lower bounds from the instance's structure, before any model
    IMPROVE = "improve"  # an improvement search over list schedules (anytime, judged by the simulator)
    RELAXATION = "relaxation"  # the contention-free relaxation: a lower bound
    RESTRICTION = "restriction"  # the contention-free restriction: a schedule of exact makespan
    PROBE = "probe"  # "does a schedule end by slot H?" on the full model
    BINS = "gpu bins"  # "do the jobs fit on the GPUs in H slots?", a time-free relaxation: a lower bound
    FULL = "full cp-sat"  # the full CP-SAT model, with one of its searches

    def __str__(self) -> str:
        return self.value


class ProvedBy(StrEnum):
    """What closed the gap between the best schedule and the best bound."""

    FLOOR = "floor"  # a heuristic's or the search's schedule met a structural lower bound
    RELAXATION = "relaxation"  # a schedule met the relaxation's bound (or the relaxation is infeasible)
    DECOMPOSITION = "decomposition"  # the restriction's schedule met the relaxation's bound
    PROBE = "probe"  # probes raised the floor to the best schedule, or found a schedule at it
    BINS = "gpu bins"  # the GPU-bins relaxation raised the floor to the best schedule
    FULL_MODEL = "full model"  # the full model's own proof, or its bound met the best schedule

    def __str__(self) -> str:
        return self.value


_PROOF_OF_PHASE = {
    PhaseKind.FLOOR: ProvedBy.FLOOR,
    PhaseKind.IMPROVE: ProvedBy.FLOOR,  # its schedule met the structural floor
    PhaseKind.RELAXATION: ProvedBy.RELAXATION,
    PhaseKind.RESTRICTION: ProvedBy.DECOMPOSITION,
    PhaseKind.PROBE: ProvedBy.PROBE,
    PhaseKind.BINS: ProvedBy.BINS,
    PhaseKind.FULL: ProvedBy.FULL_MODEL,
}


@dataclass(frozen=True)
class PhaseRecord:
    """One phase of a run: its kind, our status for it, its numbers and its seconds."""

    kind: PhaseKind
    status: Status
    objective: float | None = None  # the phase's best makespan (a schedule's, or the model's optimum)
    bound: float | None = None  # the phase solver's bound on its own model
    seconds: float = 0.0
    search: str | None = None  # FULL: the CP-SAT search (solvers.cpsat.SEARCHES); IMPROVE: the policy
    asked: int | None = None  # PROBE, BINS, RESTRICTION asked by a slot: the slot asked about
    tried: Mapping[str, int | None] | None = None  # HEURISTICS: each policy's makespan
    floors: Mapping[str, int] | None = None  # FLOOR: each structural bound by name
    work: Mapping[str, int] | None = None  # IMPROVE: the work the search did (restarts, moves, lanes tries)

    @property
    def name(self) -> str:
        """The phase's recorded name: ``relaxation``, ``probe 53``, ``full cp-sat (no-lp)``."""
        if self.kind in (PhaseKind.PROBE, PhaseKind.BINS, PhaseKind.RESTRICTION) and self.asked is not None:
            return f"{self.kind} {self.asked}"
        if self.kind == PhaseKind.FULL and self.search not in (None, "default"):
            return f"{self.kind} ({self.search})"
        if self.kind == PhaseKind.IMPROVE and self.search not in (None, "improve"):
            return f"{self.kind} ({self.search})"
        return str(self.kind)

    @property
    def proves(self) -> ProvedBy:
        """What this phase is credited with when it closes the gap."""
        return _PROOF_OF_PHASE[self.kind]

    def lower_bound(self) -> float | None:
        """The lower bound on OPT this phase proves, or None.

        A relaxation's optimum (or its solver's bound) bounds OPT; a probe that says no at H
        proves H + 1, and so does the GPU-bins relaxation when it has no solution at H; the
        full model's bound is on OPT itself. A restriction's or the
        heuristics' numbers are makespans of schedules, never bounds."""
        if self.kind == PhaseKind.RELAXATION:
            return self.objective if self.status == Status.OPTIMAL else self.bound
        if self.kind in (PhaseKind.PROBE, PhaseKind.BINS) and self.status == Status.INFEASIBLE:
            return self.bound
        if self.kind in (PhaseKind.FULL, PhaseKind.FLOOR):
            return self.bound
        return None

    def to_dict(self) -> dict[str, Any]:
        """The phase as recorded in JSON (``phase``, ``status``, ``objective``, ``bound``,
        ``seconds``; ``kind`` and the kind's own fields besides)."""
        out: dict[str, Any] = {
            "phase": self.name,
            "kind": str(self.kind),
            "status": str(self.status),
            "objective": self.objective,
            "bound": self.bound,
            "seconds": round(self.seconds, 3),
        }
        for key in ("search", "asked", "tried", "floors", "work"):
            value = getattr(self, key)
            if value is not None:
                out[key] = dict(value) if isinstance(value, Mapping) else value
        return out


@dataclass(frozen=True)
class SolveRecord:
    """How a solve came about: the method, the backend, the options and the run's story.

    ``options`` holds the formulation's options and the solver settings as plain values,
    in the order they are recorded. The typed fields are the story: the phases of a method
    over several models, what proved the optimum (``proved_by``, with the phase that did
    it), where a time limit stopped the run (``stopped``), why the full model did not run
    (``full_model``), why ``auto`` handed the request to one model, the compact MILP or
    CP-SAT (``auto_choice``), who confirmed an uncertified answer (``verified_by``), and the
    bound an uncertified backend reported, which is kept apart from proofs (``solver_bound``)."""

    formulation: str
    backend: str
    options: Mapping[str, Any] = field(default_factory=dict)
    phases: tuple[PhaseRecord, ...] = ()
    proved_by: ProvedBy | None = None
    proof_phase: str | None = None  # the name of the phase that proved it (FULL_MODEL: which search)
    stopped: str | None = None  # "build", or "after the relaxation" ...: the phase after which time ran out
    full_model: str | None = None  # why the full model did not run ("skipped: too large")
    auto_choice: str | None = None  # auto handed the request to one model (compact or cpsat), because ...
    verified_by: str | None = None  # "compact+highs": an uncertified claim checked by the compact MILP
    verification: bool = False  # an uncertified claim was put to a check (``verified_by`` None: it could not run)
    # an uncertified backend's own bound: reported here, never a proof (SolveResult.bound is None for it)
    solver_bound: float | None = None
    interrupted: str | None = None  # the signal that stopped the run before a proof ("SIGINT", "SIGTERM")

    def phase(self, kind: PhaseKind) -> PhaseRecord | None:
        """The first phase of ``kind`` that ran, or None."""
        return next((p for p in self.phases if p.kind == kind), None)

    def proved(self, phase: PhaseRecord) -> SolveRecord:
        """This record with ``phase`` credited for the proof."""
        return dataclasses.replace(self, proved_by=phase.proves, proof_phase=phase.name)

    @property
    def proof(self) -> str | None:
        """What proved the optimum, as recorded: the proving full-model phase by its name
        (``full cp-sat (no-lp)``), any other proof by its kind; None without a proof."""
        if self.proved_by is None:
            return None
        return self.proof_phase if self.proved_by == ProvedBy.FULL_MODEL else str(self.proved_by)

    def relaxation_bound(self) -> tuple[float, bool] | None:
        """The contention-free relaxation's bound on OPT and whether it is the relaxation's
        optimum (True) or its solver's bound on it (False); None when no relaxation ran or
        it proved nothing. Solved over a heuristic's makespan as horizon, it still bounds
        OPT: every optimal schedule fits in that horizon (docs/exactness.md)."""
        relaxed = self.phase(PhaseKind.RELAXATION)
        if relaxed is None or relaxed.status in (Status.INFEASIBLE, Status.ERROR):
            return None
        value = relaxed.lower_bound()
        if value is None:
            return None
        return value, relaxed.status == Status.OPTIMAL

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON-ready values, with the keys of earlier versions' ``options``."""
        out: dict[str, Any] = {"formulation": self.formulation, "backend": self.backend, **self.options}
        if self.phases:
            out["phases"] = [p.to_dict() for p in self.phases]
        if self.proved_by is not None:
            out["proved_by"] = self.proof
        for key in ("stopped", "full_model", "auto_choice", "interrupted"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        if self.verification:
            out["verified_by"] = self.verified_by
        if self.solver_bound is not None:
            out["solver_bound_unverified"] = self.solver_bound
        if self.auto_choice is not None:
            out["method"] = "auto"
        return out


@dataclass(frozen=True)
class Searched:
    """What a search on a schedule returns (:mod:`rar_opt.solvers.server_orders`,
    :mod:`rar_opt.solvers.neighbourhoods`): its best schedule (checked) and what it did."""

    schedule: Schedule
    total: int  # sum_j C_j of the schedule, by the simulator
    first: int  # sum_j C_j of the schedule it started from
    steps: int  # the moves or neighbourhoods tried
    kept: int  # those whose answer was kept (server orders: the sum did not grow; neighbourhoods: it fell)
    seconds: float
