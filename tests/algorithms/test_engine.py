"""The list-scheduling engine's bisection over theta (docs/algorithms.md section 2.1)."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from rar_opt.algorithms.engine import Trial, bisect_theta


@given(st.lists(st.booleans(), min_size=1, max_size=60), st.sampled_from(["paper", "tightest"]))
def test_bisection_rules_on_any_feasibility_pattern(pattern: list[bool], rule: str) -> None:
    # feasibility in theta need not be monotone; makespans are arbitrary but deterministic
    def span(theta: int) -> int:
        return (theta * 7919) % 13 + 1

    asked: list[int] = []

    def attempt(theta: int) -> Trial | None:
        asked.append(theta)
        if not pattern[theta - 1]:
            return None
        z = np.zeros(1, dtype=np.int64)
        return Trial(z, ((),), z, makespan=span(theta), max_load=0.0)

    trial, theta, tried = bisect_theta(len(pattern), attempt, rule)
    assert tried == len(asked) <= len(pattern).bit_length()  # at most floor(log2 T) + 1 thetas
    feasible = [t for t in asked if pattern[t - 1]]
    if not feasible:
        assert trial is None and theta is None
        return
    assert pattern[theta - 1] and trial.makespan == span(theta)
    if rule == "tightest":  # the smallest feasible theta among those tried
        assert theta == min(feasible)
        assert theta == 1 or (theta - 1 in asked and not pattern[theta - 2])  # the one below failed
    else:  # the first trial with the best makespan among those tried
        best = min(span(t) for t in feasible)
        assert theta == next(t for t in feasible if span(t) == best)
