"""Classical list-scheduling orders on the engine: longest first (LPT) and largest area first.

* ``lpt``: jobs by estimated execution time rho_hat_j, longest first (with the default
  estimator ``best``, rho_hat_j = rho_min_j, the uncontended time on the fewest servers).
  This is Graham's LPT rule (1969) for identical machines, carried over to gang jobs.
* ``laf``: jobs by area G_j rho_hat_j (GPUs times estimated time), largest first, the
  order of decreasing-area heuristics for strip and rectangle packing.

Ties keep the input order. Each takes a ``placement``: the GPUs chosen for a job are
those of ``first-fit`` (the first idle GPUs by index, as ``ff``), ``least-loaded`` (least
accumulated load, ties by index, as ``ls``) or ``consolidate`` (fewest servers, best fit,
as the ``consolidate`` baseline; the default). There is no load limit (theta = T), one
trial, as for ``consolidate``: a classical list scheduler starts each job as soon as the
rule finds room for it.
"""

from __future__ import annotations

from dataclasses import dataclass

from rar_opt.algorithms.baselines import BaselineParams, _unlimited, consolidate_rule
from rar_opt.algorithms.engine import PlacementRule, first_fit_rule, least_loaded_rule
from rar_opt.algorithms.orders import largest_area_first, longest_first
from rar_opt.algorithms.result import PolicyResult
from rar_opt.errors import ParameterError
from rar_opt.instance import Instance

PLACEMENTS: dict[str, PlacementRule] = {
    "first-fit": first_fit_rule,
    "least-loaded": least_loaded_rule,
    "consolidate": consolidate_rule,
}
"""The placement rules the classical orders (and the improvement search) combine with.
All three are stateless functions of the cluster state, so one rule per job may differ."""


def check_placement(value: object, field: str = "placement") -> None:
    """ParameterError naming ``field`` unless ``value`` is a name in :data:`PLACEMENTS`."""
    if value not in PLACEMENTS:
        raise ParameterError(f"must be one of {', '.join(PLACEMENTS)}, got {value!r}", where=field)


@dataclass(frozen=True)
class ClassicalParams(BaselineParams):
    """``lpt`` and ``laf``: the placement rule (``consolidate`` by default) and the estimator
    whose rho_hat sets the order (``best``: rho_min)."""

    placement: str = "consolidate"

    def __post_init__(self) -> None:
        super().__post_init__()
        check_placement(self.placement)


def lpt_policy(instance: Instance, params: ClassicalParams | None = None) -> PolicyResult:
    """lpt: longest estimated execution time first, then ``params.placement``; theta = T."""
    p = params or ClassicalParams()
    rule = PLACEMENTS[p.placement]
    return _unlimited(instance, "lpt", p, longest_first(instance, p.estimator), lambda: rule)


def laf_policy(instance: Instance, params: ClassicalParams | None = None) -> PolicyResult:
    """laf: largest area G_j rho_hat_j first, then ``params.placement``; theta = T."""
    p = params or ClassicalParams()
    rule = PLACEMENTS[p.placement]
    return _unlimited(instance, "laf", p, largest_area_first(instance, p.estimator), lambda: rule)
