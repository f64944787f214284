"""Rounding a proven bound on an integral objective.

Makespans and sums of completion times are whole numbers of slots, so a proven lower bound
b on one of them proves ceil(b) as well. Solvers report bounds in floating point, a hair
above or below the value they proved (HiGHS' 44.9999999 or 45.0000001 for 45); rounding up
with a tolerance keeps the first at 45 and does not turn the second into 46, which would
claim more than was proved. Every place that rounds a bound up calls :func:`ceil_bound`.
"""

from __future__ import annotations

import math

TOLERANCE = 1e-6
"""How far above a whole number a reported bound may lie and still be that number."""


def ceil_bound(bound: float) -> int:
    """The least whole number >= ``bound`` (a finite float), within :data:`TOLERANCE`."""
    if not math.isfinite(bound):
        raise ValueError(f"a bound to round up must be finite, got {bound!r}")
    return math.ceil(bound - TOLERANCE)


def ceil_bound_or_none(bound: float | None) -> int | None:
    """:func:`ceil_bound`, or None for a missing or infinite bound (nothing proven)."""
    if bound is None or not math.isfinite(bound):
        return None
    return ceil_bound(bound)
