"""The small type checks every validator shares, the one home of the seed ranges, and the
one wording of a bad seed and a bad number of seconds.

A bool is an ``int`` in Python, but ``True`` is never a count, a seed or a number of
seconds in rar-opt: these predicates refuse it. Errors are raised by the callers, each
with its own class and field (an ``InputError`` naming a file's field, a ``ParameterError``
naming a parameter, which the command line tells by its flag: ``time_limit`` is
``--time-limit``). :func:`seed_problem` and :func:`seconds_problem` word what is wrong
with a seed or a time limit, so that every command says it alike. The pair of checks the
seeded order searches (``improve``, ``backfill``) share for their params dataclasses,
:func:`check_search` and :func:`check_cap`, raise the ``ParameterError`` themselves.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Hashable, Sequence
from typing import Any, TypeGuard

from rar_opt.errors import ParameterError

SOLVER_MAX_SEED = 2**31 - 1
"""The largest seed of HiGHS, CP-SAT and the seeded policies (a signed 32-bit integer)."""

GENERATOR_MAX_SEED = 2**63 - 1
"""The largest seed of an instance generator (numpy takes any non-negative integer; files
and the command line keep seeds in a signed 64-bit integer)."""


def is_int(value: Any) -> TypeGuard[int]:
    """An integer (Python's or numpy's), not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def is_real(value: Any) -> TypeGuard[float]:
    """A real number (an integer or a float, Python's or numpy's), not a bool."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def is_finite(value: Any) -> bool:
    """A finite real number, not a bool."""
    return is_real(value) and math.isfinite(value)


def repeated(items: Sequence[Hashable]) -> list[Any]:
    """The items given more than once, each once, sorted (empty: every item is distinct)."""
    return sorted({x for x in items if items.count(x) > 1})


def seed_problem(seed: Any, largest: int) -> str | None:
    """What is wrong with ``seed`` as a seed in 0..``largest``, or None."""
    if is_int(seed) and 0 <= seed <= largest:
        return None
    return f"must be an integer in 0..{largest}, got {seed!r}"


def seconds_problem(seconds: Any, unit: str = "seconds") -> str | None:
    """What is wrong with ``seconds`` as a time limit (a finite number > 0 of ``unit``), or None."""
    if is_finite(seconds) and seconds > 0:
        return None
    return f"must be a finite number of {unit} > 0, got {seconds!r}"


def check_search(iterations: Any, time_limit: Any, seed: Any, start_order: Any) -> None:
    """The parameters every seeded order search takes: an iteration budget (an integer >= 0),
    a wall-time cap (a positive finite number of seconds), a seed of the solvers' range and
    an optional start order (a tuple holding each job index once). Raises
    ``ParameterError`` naming the first one that is off."""
    if not is_int(iterations) or iterations < 0:
        raise ParameterError(f"must be an integer >= 0, got {iterations!r}", where="iterations")
    if problem := seconds_problem(time_limit):
        raise ParameterError(problem, where="time_limit")
    if problem := seed_problem(seed, SOLVER_MAX_SEED):
        raise ParameterError(problem, where="seed")
    if start_order is not None and (
        not isinstance(start_order, tuple) or sorted(start_order) != list(range(len(start_order)))
    ):
        raise ParameterError("must be a tuple holding every job index once", where="start_order")


def check_cap(name: str, cap: Any) -> None:
    """A search's cap on one axis (``makespan_cap``, ``total_cap``): a positive integer or
    None (no cap). Raises ``ParameterError`` naming it otherwise."""
    if cap is not None and (not is_int(cap) or cap < 1):
        raise ParameterError(f"must be a positive integer or None, got {cap!r}", where=name)
