"""Lower bounds on the optimum, one registry of them, and SJF-BCO's claims checked.

* :mod:`.registry`: every bound by name (:data:`BOUNDS`), what it bounds, its family and
  the docs section that argues it; :func:`register` adds one;
* :mod:`.structural`: the cheap makespan bounds (longest job, work, the structural floors);
* :mod:`.completion`: bounds on the total completion time;
* :mod:`.solved`: the bounds that solve a relaxation (loaded only when asked for);
* :mod:`.summary`: :func:`every_bound` and :class:`LowerBounds`, built from the registry;
* :mod:`.claims`: Lemma 2, Lemma 3 and Theorem 5 checked on an SJF-BCO run;
* :mod:`.binpacking`, :mod:`.rounding`: the bin-packing test and rounding a proven bound.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rar_opt.bounds.claims import ClaimCheck, check_sjf_bco_claims, theorem5_bound, varphi_bound
from rar_opt.bounds.completion import CompletionBounds, completion_bounds, squashed_completions
from rar_opt.bounds.registry import BOUNDS, Answer, Ask, Bound, NamedBound, register, registered
from rar_opt.bounds.summary import LowerBounds, every_bound, lower_bounds

if TYPE_CHECKING:
    from rar_opt.bounds.solved import load_bound


def __getattr__(name: str) -> Any:
    # load_bound solves models: importing it eagerly would load the solver layer, which
    # itself imports this package's registry
    if name == "load_bound":
        from rar_opt.bounds.solved import load_bound

        return load_bound
    raise AttributeError(f"module 'rar_opt.bounds' has no attribute {name!r}")


__all__ = [
    "BOUNDS",
    "Answer",
    "Ask",
    "Bound",
    "ClaimCheck",
    "CompletionBounds",
    "LowerBounds",
    "NamedBound",
    "check_sjf_bco_claims",
    "completion_bounds",
    "every_bound",
    "load_bound",
    "lower_bounds",
    "register",
    "registered",
    "squashed_completions",
    "theorem5_bound",
    "varphi_bound",
]
