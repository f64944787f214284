"""Every lower bound of the registry on one instance, and the best of them.

:func:`every_bound` computes what :mod:`rar_opt.bounds.registry` lists for an objective
(the solver bounds only when given a time limit); :class:`LowerBounds` keeps the result,
answers ``lb.NAME`` for every registered bound (None when it was not computed) and
``lb.best``. Both are built from the registry alone, so a new bound appears in them, in
the floor phase of ``auto``, in ``rar-opt bounds`` and in the bounds table without an edit
here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rar_opt.bounds.registry import BOUNDS, NamedBound, Objective, compute, entries
from rar_opt.instance import Instance


@dataclass(frozen=True)
class LowerBounds:
    """The bounds computed on one instance (:func:`lower_bounds`), each valid for every
    feasible schedule. ``lb.NAME`` is the value of the registered bound NAME, or None."""

    found: tuple[NamedBound, ...]
    objective: Objective = "makespan"

    def __getattr__(self, name: str) -> int | None:
        if name.startswith("_") or name not in BOUNDS:
            raise AttributeError(name)
        return self.value(name)

    def value(self, name: str) -> int | None:
        """The value of the bound ``name``, or None when it was not computed or proved nothing."""
        return next((b.value for b in self.found if b.name == name), None)

    def get(self, name: str) -> NamedBound | None:
        """The computed bound ``name``, or None."""
        return next((b for b in self.found if b.name == name), None)

    @property
    def best(self) -> int:
        """The largest of the bounds computed."""
        return max(b.value for b in self.found if b.value is not None)

    @property
    def best_by(self) -> str:
        """The name of the (first) bound that reaches :attr:`best`."""
        best = self.best
        return next(b.name for b in self.found if b.value == best)

    @property
    def structural(self) -> dict[str, int]:
        """The structural floors computed, by name."""
        names = {b.name for b in entries(self.objective, families=("structural",))}
        return {b.name: b.value for b in self.found if b.name in names and b.value is not None}

    def replaced(self, bound: NamedBound) -> LowerBounds:
        """A copy with ``bound`` in place of the one of its name (or added)."""
        others = tuple(b for b in self.found if b.name != bound.name)
        return dataclasses.replace(self, found=(*others, bound))

    def to_dict(self) -> dict[str, Any]:
        """{name: value} for every registered bound on the objective (None: not computed),
        ``NAME_proven`` where a solver bound says whether it is its relaxation's optimum,
        ``NAME_note`` where a solver bound ran but gave no value (why: e.g. its size guard),
        and ``structural_seconds`` (the structural floors' time together)."""
        out: dict[str, Any] = {}
        for bound in entries(self.objective):
            got = self.get(bound.name)
            out[bound.name] = None if got is None else got.value
            if got is not None and got.exact is not None:
                out[f"{bound.name}_proven"] = got.exact
            if got is not None and got.value is None and bound.needs_solver:
                out[f"{bound.name}_note"] = got.note
        names = {b.name for b in entries(self.objective, families=("structural",))}
        timed = [b.seconds for b in self.found if b.name in names]
        out["structural_seconds"] = sum(timed) if timed else None
        return out


def every_bound(
    instance: Instance,
    *,
    relaxation_time_limit: float | None = None,
    time_limits: Mapping[str, float | None] | None = None,
    seed: int = 0,
    structural: bool = True,
    objective: Objective = "makespan",
    options: Mapping[str, Mapping[str, object]] | None = None,
) -> list[NamedBound]:
    """Every bound on ``objective`` that rar-opt can prove on ``instance``, each timed: the
    basic and (with ``structural``) the structural ones, and each solver bound given seconds
    in ``time_limits`` by name (``relaxation_time_limit``: the contention-free relaxation's
    seconds, the common case)."""
    limits = dict(time_limits or {})
    if relaxation_time_limit:
        limits.setdefault("relaxation", relaxation_time_limit)
    return compute(instance, objective, structural=structural, time_limits=limits, seed=seed, options=options)


def lower_bounds(
    instance: Instance,
    load: int | None = None,
    *,
    relaxation_time_limit: float | None = None,
    time_limits: Mapping[str, float | None] | None = None,
    seed: int = 0,
    structural: bool = True,
    objective: Objective = "makespan",
) -> LowerBounds:
    """:func:`every_bound` kept as a :class:`LowerBounds`; ``load`` adds a value of the load
    ILP computed elsewhere (:func:`rar_opt.bounds.solved.load_bound`)."""
    found = every_bound(
        instance,
        relaxation_time_limit=relaxation_time_limit,
        time_limits=time_limits,
        seed=seed,
        structural=structural,
        objective=objective,
    )
    lb = LowerBounds(tuple(found), objective)
    if load is not None:
        lb = lb.replaced(NamedBound("load", int(load), 0.0, "computed by the caller"))
    return lb
