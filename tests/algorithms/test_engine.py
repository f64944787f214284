"""The list-scheduling engine: the bisection over theta (docs/algorithms.md section 2.1), progress reports."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from rar_opt.algorithms import POLICIES, run_policy
from rar_opt.algorithms.engine import Trial, bisect_theta
from rar_opt.instances.generate import paper

from ..helpers import PAPER_FILE, run


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


@given(st.sampled_from(sorted(POLICIES)), st.integers(0, 5))
def test_progress_reports_every_trial_and_changes_nothing(name: str, seed: int) -> None:
    inst = paper(seed, jobs=30, servers=4, horizon=[600, 900, 3000][seed % 3])
    calls: list[tuple[int, int, int]] = []
    heard = run_policy(inst, name, seed=seed, progress=lambda *c: calls.append(c))
    silent = run_policy(inst, name, seed=seed)
    assert heard.schedule == silent.schedule and heard.record() == silent.record()
    trials = sorted({t for t, _, _ in calls})
    assert trials == list(range(1, len(trials) + 1)) and len(trials) == heard.trials
    firsts = []
    for t in trials:  # each trial counts up from where it began (a resumed one mid-list), to its end
        placed = [p for u, p, n in calls if u == t and n == inst.num_jobs]
        assert placed == sorted(placed) and placed[0] < inst.num_jobs and placed[-1] <= inst.num_jobs
        firsts.append(placed[0])
    assert firsts[0] == 0  # the first trial starts from the empty cluster
    assert any(p == inst.num_jobs for _, p, _ in calls)


def test_schedule_command_is_silent_on_stderr_without_a_terminal() -> None:
    out = run("schedule", str(PAPER_FILE), "--policy", "ff", "--json")
    assert out.returncode == 0 and out.stderr == ""
