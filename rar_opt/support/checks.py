"""The small type checks every validator shares, and the one home of the seed ranges.

A bool is an ``int`` in Python, but ``True`` is never a count, a seed or a number of
seconds in rar-opt: these predicates refuse it. Errors are raised by the callers, each
with its own class and field (an ``InputError`` naming a file's field, a ``ParameterError``
naming a parameter, a ``ValueError`` in a params dataclass).
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
