"""``improve``'s search state: a run can go on from where another stopped."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rar_opt import Instance, check
from rar_opt.algorithms import run_policy
from rar_opt.algorithms.search import ImproveState, SearchParams, improve_search

from ..strategies import tiny_instances


def _score(inst: Instance, state: ImproveState, params: SearchParams) -> tuple[int, ...]:
    """The state's score, from a run that only evaluates it (no iteration)."""
    again, _ = improve_search(inst, dataclasses.replace(params, iterations=0), resume=state)
    trial = check(inst, again.schedule).result
    total = int(trial.completion.sum())
    assert trial.makespan is not None
    return (max(0, trial.makespan - inst.horizon), total, trial.makespan)


@settings(max_examples=25)
@given(tiny_instances(), st.integers(0, 1000), st.integers(0, 1000))
def test_a_resumed_improve_is_never_worse_than_the_state_it_resumes(inst: Instance, seed: int, other: int) -> None:
    params = SearchParams(objective="total", seed=seed, iterations=15)
    first, state = improve_search(inst, params)
    assert first == run_policy(inst, "improve", objective="total", seed=seed, iterations=15)  # the policy is the search
    before = _score(inst, state, params)
    report = check(inst, first.schedule).result
    assert before[1] == int(report.completion.sum())  # the state rebuilds the run's schedule
    again, end = improve_search(inst, dataclasses.replace(params, seed=other), resume=state)
    assert _score(inst, end, params) <= before
    assert int(check(inst, again.schedule).result.completion.sum()) == _score(inst, end, params)[1]


def test_a_resume_that_is_not_a_state_of_the_instance_is_refused(paper_instance: Instance) -> None:
    n = paper_instance.num_jobs
    params = SearchParams(objective="total", iterations=0)
    with pytest.raises(ValueError, match="resume"):
        improve_search(paper_instance, params, resume=ImproveState(tuple(range(n - 1)), (0,) * (n - 1)))
    with pytest.raises(ValueError, match="placement"):
        improve_search(paper_instance, params, resume=ImproveState(tuple(range(n)), (99,) * n))
    # a valid state with no iteration gives the list schedule of that order and those rules
    order = tuple(np.random.default_rng(0).permutation(n).tolist())
    run, state = improve_search(paper_instance, params, resume=ImproveState(order, (0,) * n))
    assert state == ImproveState(order, (0,) * n)
    assert run.search is not None and run.search["start"] == "resumed" and run.search["iterations"] == 0
    assert int(check(paper_instance, run.schedule).result.completion.sum()) == run.search["start_total_completion"]
