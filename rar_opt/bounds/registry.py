"""The one registry of lower bounds: every bound rar-opt can prove, by name.

Each entry (:class:`Bound`) says what it bounds (the makespan, or the total completion
time sum_j C_j), how expensive it is (``basic`` and ``structural`` bounds are arithmetic;
``solver`` bounds solve a relaxation within a time limit), the docs section that argues it,
and the function that computes it. Everything that reports bounds reads this table:
:class:`~rar_opt.bounds.summary.LowerBounds`, :func:`~rar_opt.bounds.summary.every_bound`,
the floor phase of ``auto`` (its cheap makespan entries), ``rar-opt bounds`` (one
``--NAME-time`` flag per solver entry) and the bounds table. A new bound is one entry here
and one function where its argument lives.

Solver bounds name their function as ``"module:function"`` and are loaded on first use:
this module sits below the solver layer (the floor phase imports it), and the functions
that solve sit above it (:mod:`rar_opt.bounds.solved`). A solver bound is only computed
when the caller gives it a time limit, so the cheap path never loads a solver.

A solver bound whose model grows with the instance names its size guard the same way
(``guard``: ``instance -> str | None``, the reason its model is too large to build, from
the formulation that builds it). :meth:`Bound.compute` asks the guard first: a model over
its guard is never built, and the bound is reported without a value and with the note
``not built: <reason>`` (docs/exactness.md, "Size guards of the solver bounds"). This is the
one place where a bound is skipped for its size; the cheap bounds have no guard.
"""

from __future__ import annotations

import contextlib
import importlib
import math
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from rar_opt.errors import ParameterError
from rar_opt.formulations.sizes import NOT_BUILT
from rar_opt.instance import Instance
from rar_opt.support.checks import is_real
from rar_opt.support.processes import stop_requested

Objective = Literal["makespan", "total"]
"""What a bound bounds: the makespan max_j C_j, or the total completion time sum_j C_j."""

Family = Literal["basic", "structural", "solver"]
"""``basic``: the longest-job and work bounds; ``structural``: the cheap floors that see the
servers (:mod:`rar_opt.bounds.structural`); ``solver``: a relaxation solved within a time limit."""


@dataclass(frozen=True)
class NamedBound:
    """One bound computed on one instance: its value (None: it proved nothing), seconds and note."""

    name: str
    value: int | None
    seconds: float
    note: str = ""
    exact: bool | None = None  # solver bounds: True when the relaxation was solved to optimality
    order: tuple[int, ...] | None = field(default=None, repr=False)  # a list order the relaxation suggests


@dataclass(frozen=True)
class Ask:
    """What a solver bound is given: its time limit, a seed, and the best cheap bound so far
    (a bound that searches upward, as the GPU bins do, starts there)."""

    time_limit: float
    seed: int = 0
    floor: int = 0
    options: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class Answer:
    """What a solver bound returns: the value it proved (None: nothing), whether it is the
    relaxation's optimum, and a note on how it ended."""

    value: int | None
    exact: bool | None = None
    note: str = ""
    order: tuple[int, ...] | None = None  # the jobs in an order the relaxation's solution suggests


@dataclass(frozen=True)
class Bound:
    """A registered lower bound: name, objective, family, one-line summary, the docs section
    with its argument, and its function (``instance -> int`` for cheap bounds;
    ``"module:function"`` taking ``(instance, Ask) -> Answer`` for solver bounds)."""

    name: str
    objective: Objective
    family: Family
    summary: str
    section: str
    function: Callable[[Instance], int] | str
    applies: Callable[[Instance], bool] | None = None  # None: on every instance
    flag: str = ""  # solver bounds offered by ``rar-opt bounds``: the flag of their seconds
    default_seconds: float = 0.0  # solver bounds: the command line's default time limit
    guard: str = ""  # solver bounds: "module:function", instance -> why the model is too large (None: build it)
    # cheap bounds that may take up to about a second (an LP, and the import of its solver):
    # left out of a quick computation (compute(quick=True): a command whose clock has run out)
    slow: bool = False

    def __post_init__(self) -> None:
        solver = self.family == "solver"
        if solver != isinstance(self.function, str):
            raise ValueError(
                f"bound {self.name!r}: solver bounds name their function as 'module:function', others pass it"
            )
        if self.flag and not (solver and self.flag.startswith("--")):
            raise ValueError(f"bound {self.name!r}: only a solver bound has a flag, and it starts with '--'")
        if self.guard and not (solver and ":" in self.guard):
            raise ValueError(f"bound {self.name!r}: only a solver bound has a size guard, as 'module:function'")

    @property
    def needs_solver(self) -> bool:
        """Whether computing it solves a model (it then needs a time limit)."""
        return self.family == "solver"

    def too_large(self, instance: Instance) -> str | None:
        """Why this bound's model is not built on ``instance`` (its size guard), or None."""
        return _load(self.guard)(instance) if self.guard else None

    def compute(self, instance: Instance, ask: Ask | None = None) -> NamedBound:
        """This bound on ``instance``, timed (solver bounds need ``ask``); a solver bound over
        its size guard is skipped: no value, the note says why."""
        if isinstance(self.function, str):
            if ask is None:
                raise ValueError(f"bound {self.name!r} solves a model: give it a time limit")
            solve = _load(self.function)  # imported before the clock starts: the time limit is the solve's
            began = time.perf_counter()
            why = self.too_large(instance)
            if why is not None:
                return NamedBound(self.name, None, time.perf_counter() - began, f"{NOT_BUILT}{why}")
            answer: Answer = solve(instance, ask)
            seconds = time.perf_counter() - began
            return NamedBound(self.name, answer.value, seconds, answer.note or self.summary, answer.exact, answer.order)
        began = time.perf_counter()
        value = int(self.function(instance))
        return NamedBound(self.name, value, time.perf_counter() - began, self.summary)


def _load(name: str) -> Any:
    """The function ``"module:function"``, its module imported now."""
    module, _, attr = name.partition(":")
    return getattr(importlib.import_module(module), attr)


BOUNDS: dict[str, Bound] = {}
"""Every registered bound by name, in the order they are reported (filled below)."""


def register(bound: Bound) -> Bound:
    """Add ``bound`` to :data:`BOUNDS` (its name must be new)."""
    if bound.name in BOUNDS:
        raise ValueError(f"a bound named {bound.name!r} is already registered")
    BOUNDS[bound.name] = bound
    return bound


@contextlib.contextmanager
def registered(bound: Bound) -> Iterator[Bound]:
    """``bound`` registered for the duration of a ``with`` block (tests, experiments)."""
    register(bound)
    try:
        yield bound
    finally:
        BOUNDS.pop(bound.name, None)


def entries(objective: Objective = "makespan", *, families: tuple[Family, ...] | None = None) -> list[Bound]:
    """The registered bounds on ``objective`` (of ``families``, default all), in order."""
    return [b for b in BOUNDS.values() if b.objective == objective and (families is None or b.family in families)]


def compute(
    instance: Instance,
    objective: Objective = "makespan",
    *,
    structural: bool = True,
    time_limits: Mapping[str, float | None] | None = None,
    seed: int = 0,
    options: Mapping[str, Mapping[str, object]] | None = None,
    quick: bool = False,
) -> list[NamedBound]:
    """Every bound on ``objective`` that applies to ``instance``: the basic ones, the
    structural ones (unless ``structural=False``; with ``quick``, not the :attr:`Bound.slow`
    ones), and each solver bound given a positive finite time limit in ``time_limits`` (by
    name), in registry order; solver bounds run after the cheap ones and are told the best
    of what came before (:attr:`Ask.floor`)."""
    limits = dict(time_limits or {})
    known = [b.name for b in entries(objective, families=("solver",))]
    unknown = sorted(set(limits) - set(known), key=str)
    if unknown:
        raise ParameterError(
            f"no solver bound on the {objective} named {', '.join(map(str, unknown))} (known: {', '.join(known)})",
            where="time_limits",
        )
    for name, seconds in limits.items():
        if seconds is not None and not is_real(seconds):
            raise ParameterError(f"must be seconds (a number) or None, got {seconds!r}", where=f"time_limits[{name!r}]")
    out: list[NamedBound] = []
    for family in ("basic", "structural", "solver"):
        if family == "structural" and not structural:
            continue
        for bound in entries(objective, families=(family,)):
            if bound.applies is not None and not bound.applies(instance):
                continue
            if quick and bound.slow:
                continue
            if family != "solver":
                out.append(bound.compute(instance))
                continue
            seconds = limits.get(bound.name)
            if seconds is None or not (math.isfinite(seconds) and seconds > 0) or stop_requested() is not None:
                continue  # not asked for, or a signal asked the process to stop
            floor = max((b.value for b in out if b.value is not None), default=0)
            ask = Ask(float(seconds), seed, floor, dict((options or {}).get(bound.name, {})))
            out.append(bound.compute(instance, ask))
    return out


def cheap(instance: Instance, objective: Objective = "makespan", quick: bool = False) -> list[NamedBound]:
    """The bounds on ``objective`` that need no solver (the floor phase of ``auto``); with
    ``quick``, only those that take milliseconds (not the :attr:`Bound.slow` ones)."""
    return compute(instance, objective, quick=quick)


def floor(instance: Instance) -> int:
    """The best of the cheap makespan bounds: the floor ``auto`` starts from."""
    return max(b.value for b in cheap(instance) if b.value is not None)


def _star(instance: Instance) -> bool:
    return instance.time_model.links is None


SLOW_FLOORS = ("gpu_bins_lp",)
"""The cheap makespan bounds that may take up to about a second: ``gpu_bins_lp`` solves LPs
by column generation (0.6 s at 32 jobs) and imports scipy on its first call (about 0.5 s)."""


def _builtin() -> None:
    from rar_opt.bounds import completion, structural

    s = structural
    arrivals = "docs/arrivals.md, Lower bounds that use releases"
    makespan: list[tuple[str, Family, Callable[[Instance], int] | str, str, str]] = [
        ("longest", "basic", s.longest_bound, "the longest job's fastest execution time", "What every bound rests on"),
        ("work", "basic", s.work_bound, "best-case GPU-slots over the cluster's GPUs", "What every bound rests on"),
        (
            "energetic",
            "structural",
            s.energetic_bound,
            "energetic reasoning on the cluster's GPUs as one pool",
            "(a) `energetic`",
        ),
        (
            "disjunctive",
            "structural",
            s.disjunctive_bound,
            "jobs too large to overlap anywhere run one after another",
            "`disjunctive`: jobs that never overlap",
        ),
        (
            "classes",
            "structural",
            s.classes_bound,
            "jobs that fit unsplit only on the larger servers, splits priced",
            "(b) `classes` and `halves`",
        ),
        (
            "halves",
            "structural",
            s.halves_bound,
            "jobs over half of every host run one at a time per host",
            "(b) `classes` and `halves`",
        ),
        (
            "split_pairs",
            "structural",
            s.split_pairs_bound,
            "two jobs that must split and share a server contend",
            "(c) `split_pairs`",
        ),
        ("release", "structural", s.release_bound, "the latest release plus fastest execution time", arrivals),
        (
            "release_energy",
            "structural",
            s.release_energy_bound,
            "GPU-slots of the jobs released from r on, after r",
            arrivals,
        ),
        (
            "gpu_bins",
            "structural",
            s.gpu_bins_bound,
            "each GPU's jobs in a row: the GPU-lengths as bin packing (Martello-Toth L2)",
            "(d) `gpu_bins`",
        ),
        (
            "gpu_bins_lp",
            "structural",
            s.gpu_bins_lp_bound,
            "the same bin packing by its Gilmore-Gomory LP (Farley's bound certifies)",
            "(d) `gpu_bins`",
        ),
    ]
    for name, family, fn, summary, section in makespan:
        where = section if section.startswith("docs/") else f"docs/exactness.md, {section}"
        register(Bound(name, "makespan", family, summary, where, fn, slow=name in SLOW_FLOORS))
    register(
        Bound(
            "relaxation",
            "makespan",
            "solver",
            "the contention-free relaxation (CP-SAT)",
            "docs/exactness.md, The contention-free decomposition",
            "rar_opt.bounds.solved:relaxation",
            applies=_star,
            flag="--relaxation-time",
            default_seconds=10.0,
            guard="rar_opt.formulations.sizes:cfree_too_large",
        )
    )
    register(
        Bound(
            "server_bins",
            "makespan",
            "solver",
            "GPU bins that know their servers, splits priced (CP-SAT)",
            "docs/exactness.md, GPU bins with servers",
            "rar_opt.bounds.solved:server_bins",
            flag="--bins-time",
            default_seconds=10.0,
            guard="rar_opt.formulations.sizes:gpubins_too_large",
        )
    )
    register(
        Bound(
            "load",
            "makespan",
            "solver",
            "the tightest theta of the load ILP (14)-(16), by bisection (tiny instances)",
            "docs/model.md, 5. The paper's reformulation, (10)-(16)",
            "rar_opt.bounds.solved:load",
        )
    )
    register(
        Bound(
            "completion_rank",
            "total",
            "basic",
            "k-th completion >= the k-th smallest r_j + rho_min_j and the k-th squashed completion",
            "docs/exactness.md, Bounds on the total completion time",
            completion.rank_bound,
        )
    )
    register(
        Bound(
            "flow_lp",
            "total",
            "solver",
            "time-indexed LP: each job on the pooled GPUs (and its server class) for its fastest time",
            "docs/exactness.md, The flow LP",
            "rar_opt.bounds.solved:flow_lp",
            flag="--lp-time",
            default_seconds=10.0,
            guard="rar_opt.formulations.flowlp:too_large",
        )
    )


_builtin()
