"""Execution-time estimates rho_hat and their error bounds l, u (docs/algorithms.md section 6)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rar_opt import Instance
from rar_opt.algorithms import estimators
from rar_opt.algorithms.estimators import estimate


def test_estimates_by_hand(wait_beats_start: Instance) -> None:
    # both jobs: 3 slots at best (alone), 8 at worst (sharing a server with the other)
    best = estimate(wait_beats_start, "best")
    assert list(best.rho_hat) == [3, 3] and (best.lower, best.upper) == pytest.approx((3 / 8, 1.0))
    worst = estimate(wait_beats_start, "worst")
    assert list(worst.rho_hat) == [8, 8] and (worst.lower, worst.upper) == pytest.approx((1.0, 8 / 3))
    assert list(worst.weight) == pytest.approx([3, 3])  # charged rho_hat / u
    geo = estimate(wait_beats_start, "geometric")
    assert list(geo.rho_hat) == pytest.approx([math.sqrt(24)] * 2)
    assert (geo.lower, geo.upper) == pytest.approx((math.sqrt(24) / 8, math.sqrt(24) / 3))


def test_an_estimate_outside_the_range_is_refused(wait_beats_start: Instance, monkeypatch) -> None:
    monkeypatch.setitem(estimators.ESTIMATORS, "too-low", lambda inst: np.ones(inst.num_jobs))
    with pytest.raises(ValueError, match="left the range"):
        estimate(wait_beats_start, "too-low")
    with pytest.raises(ValueError, match="unknown estimator"):
        estimate(wait_beats_start, "nope")
