"""The small type checks every validator shares, and the one home of the seed ranges.

A bool is an ``int`` in Python, but ``True`` is never a count, a seed or a number of
seconds in rar-opt: these predicates refuse it. Errors are raised by the callers, each
with its own class and field (an ``InputError`` naming a file's field, a ``ParameterError``
naming a parameter, a ``ValueError`` in a params dataclass). The one exception is the
pair of checks the seeded order searches (``improve``, ``backfill``) share for their
params dataclasses, :func:`check_search` and :func:`check_cap`, which raise the
``ValueError`` themselves so both searches word it alike.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, TypeGuard

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


def check_search(iterations: Any, time_limit: Any, seed: Any, start_order: Any) -> None:
    """The parameters every seeded order search takes: an iteration budget (an integer >= 0),
    a wall-time cap (a positive finite number of seconds), a seed of the solvers' range and
    an optional start order (a tuple holding each job index once). Raises ``ValueError``
    naming the first one that is off."""
    if not is_int(iterations) or iterations < 0:
        raise ValueError(f"iterations must be a non-negative integer, got {iterations!r}")
    if not is_finite(time_limit) or time_limit <= 0:
        raise ValueError(f"time_limit must be a positive finite number of seconds, got {time_limit!r}")
    if not is_int(seed) or not 0 <= seed <= SOLVER_MAX_SEED:
        raise ValueError(f"seed must be an integer in [0, {SOLVER_MAX_SEED}], got {seed!r}")
    if start_order is not None and (
        not isinstance(start_order, tuple) or sorted(start_order) != list(range(len(start_order)))
    ):
        raise ValueError("start_order must be a tuple holding every job index once")


def check_cap(name: str, cap: Any) -> None:
    """A search's cap on one axis (``makespan_cap``, ``total_cap``): a positive integer or
    None (no cap). Raises ``ValueError`` naming it otherwise."""
    if cap is not None and (not is_int(cap) or cap < 1):
        raise ValueError(f"{name} must be a positive integer or None, got {cap!r}")
