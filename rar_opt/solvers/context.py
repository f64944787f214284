"""What every phase of the exact methods shares (:mod:`.phases`): the run's
:class:`Context`, the best so far (:class:`Incumbent`), what a phase yields (:class:`Found`),
the estimate of the full model's build time, and the solve and read-back of a CP-SAT model.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from rar_opt.bounds.rounding import ceil_bound_or_none
from rar_opt.formulations import cpsat
from rar_opt.instance import Instance
from rar_opt.schedule import Schedule
from rar_opt.solvers.backend import RawOutcome
from rar_opt.solvers.budget import Budget
from rar_opt.solvers.cpsat import SEARCHES, Cpsat
from rar_opt.solvers.plan import Plan
from rar_opt.solvers.record import PhaseKind, PhaseRecord
from rar_opt.solvers.result import read_back

MODEL_METHOD = "cpsat-cp"
"""The ``method`` in the meta of a schedule read back from one of the CP-SAT models."""


@dataclass(frozen=True)
class Context:
    """What every phase of one run reads: the instance, the plan, the budget and the limits."""

    instance: Instance
    plan: Plan
    budget: Budget
    horizon: int  # the most slots any phase may use (at most the instance's T)
    symmetry: bool = True  # the models' symmetry-breaking rows (docs/exactness.md)
    policies: tuple[str, ...] = ()  # the heuristics phase's policies
    max_cells: int = field(default_factory=lambda: cpsat.Options().max_cells)

    def fits(self, horizon: int) -> bool:
        """Whether the full CP-SAT model over ``horizon`` slots can be built: small enough
        (``max_cells``) and, with a time limit (not a work limit), built in half the time left
        (estimated)."""
        return self.too_large(horizon) is None

    def too_large(self, horizon: int) -> str | None:
        """Why the full CP-SAT model over ``horizon`` slots is not built, or None."""
        cells = cpsat.count_cells(self.instance, horizon)
        if cells > self.max_cells:
            return "too large"
        left = self.budget.left()  # a budget of work: building costs none of it, so the size alone decides
        if left is not None and self.budget.meter is None and build_seconds(self.instance, horizon) > 0.5 * left:
            return "too large for the time left"
        return None


BUILD_RATE = 100_000
"""Level-cells per second at which the full CP-SAT model is built, a cautious figure:
we measured 260,000 per second on a 20 x 8 x 120 frontier instance and 143,000 per second
on a 160 x 10 paper instance (224,000 cells, 80 jobs that may split: 125 s), both on a
loaded 2-core machine. Building is plain Python, so no time limit interrupts it: a model
whose build would take more than half the time left is not started."""


def build_seconds(instance: Instance, horizon: int) -> float:
    """The estimated seconds to build the full CP-SAT model over ``horizon`` slots: its
    cells times the jobs that may split (the contention levels each cell can take), over
    :data:`BUILD_RATE`."""
    split_capable = int((instance.bounds.n_max >= 2).sum())
    return cpsat.count_cells(instance, horizon) * split_capable / BUILD_RATE


@dataclass
class Incumbent:
    """The best schedule and the best proven lower bound so far, and where each came from."""

    schedule: Schedule | None = None
    span: int | None = None
    source: str | None = None
    bound: float | None = None  # the best proven lower bound on OPT
    phases: list[PhaseRecord] = field(default_factory=list)  # what the run has done so far
    searched: Schedule | None = None  # the best schedule an improvement search handed on
    searched_span: int | None = None

    def last(self, kind: PhaseKind) -> PhaseRecord | None:
        """The last phase of ``kind`` the run recorded, or None."""
        return next((p for p in reversed(self.phases) if p.kind == kind), None)

    def offer(self, schedule: Schedule | None, span: int | None, source: str) -> None:
        """Keep ``schedule`` (checked, of makespan ``span``) if it is the best so far."""
        if schedule is not None and span is not None and (self.span is None or span < self.span):
            self.schedule, self.span, self.source = schedule, span, source

    def offer_searched(self, schedule: Schedule | None, span: int | None) -> None:
        """Keep ``schedule`` as :attr:`searched` if it is the best an improvement search has
        handed on (a start for the stage ``"lns"`` other than the best schedule so far)."""
        if schedule is not None and span is not None and (self.searched_span is None or span < self.searched_span):
            self.searched, self.searched_span = schedule, span

    def raise_bound(self, bound: float | None) -> None:
        """Keep ``bound`` if it is a higher proven lower bound."""
        if bound is not None and math.isfinite(bound) and (self.bound is None or bound > self.bound):
            self.bound = bound

    @property
    def floor(self) -> int | None:
        """The bound rounded up: the makespan is a whole number of slots."""
        return ceil_bound_or_none(self.bound)

    @property
    def closed(self) -> bool:
        """Whether the best schedule meets the best bound: it is optimal."""
        return self.span is not None and self.floor is not None and self.span <= self.floor

    def within(self, horizon: int) -> int:
        """The slots a model needs: the best makespan so far (every optimum fits in it), else ``horizon``."""
        return self.span or horizon


@dataclass(frozen=True)
class Found:
    """What one solve of a phase yields."""

    record: PhaseRecord
    schedule: Schedule | None = None  # checked; its makespan is ``span``
    span: int | None = None
    raw: RawOutcome | None = None  # the solver's outcome, when a solver ran
    nothing_fits: bool = False  # proven: no schedule ends within the modelled horizon
    horizon: int | None = None  # the slots the phase's model had
    source: str | None = None  # where the schedule came from, if not the phase itself (a policy, "probe")
    solver: dict[str, Any] = field(default_factory=dict)  # the solver that answered (name, version)


Phase = Callable[[Context, Incumbent], Iterator[Found]]


def solve_model(
    model: Any, budget: Budget, search: str = "default", stop_at: float | None = None
) -> tuple[RawOutcome, float]:
    """Solve a CP-SAT model within ``budget`` (stopping at the first solution of objective
    at most ``stop_at``, if given); the outcome and the seconds it took."""
    began = time.perf_counter()
    raw = Cpsat().solve(model, budget.settings(params=SEARCHES[search], stop_at=stop_at))
    return raw, time.perf_counter() - began


def read_model(ctx: Context, model: Any, raw: RawOutcome) -> tuple[Schedule | None, int | None]:
    """The schedule of a solved model, if the checker accepts it, and its makespan."""
    if not raw.has_solution:
        return None, None
    judged = read_back(ctx.instance, cpsat.read_schedule(model, ctx.instance), MODEL_METHOD)
    return (None, None) if judged is None else judged


__all__ = [
    "BUILD_RATE",
    "MODEL_METHOD",
    "Context",
    "Found",
    "Incumbent",
    "Phase",
    "build_seconds",
    "read_model",
    "solve_model",
]
