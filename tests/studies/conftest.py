"""Shared pieces of the study tests: a small tiny-family configuration and row digests."""

from __future__ import annotations

import pytest

from rar_opt.studies.run import StudyConfig
from rar_opt.studies.store import open_store


@pytest.fixture(scope="session")
def config() -> StudyConfig:
    """A study of tiny instances: every policy, a short time limit (they prove in milliseconds)."""
    return StudyConfig(family="tiny", seed=100, time_limit=5.0)


def digest(path) -> list[tuple]:
    """A store's rows without their timing: (key, seq, inputs, outputs), in task order."""
    with open_store(path) as store:
        return [(r.key, r.seq, r.inputs, r.outputs) for r in store.rows()]


def proven_digest(path) -> list[tuple]:
    """A store's rows as :func:`digest` gives them, each solve's output cut to what a proof
    fixes: its keys, the optimum and bounds, and the flow optimum (not the schedules). Two
    separate runs are compared on this: which of several equal optimal schedules a 5-s
    ``auto`` returns depends on the machine's load (seen in CI)."""
    out = []
    for key, seq, inputs, outputs in digest(path):
        flow = outputs.get("flow") or {}
        fixed = (outputs.get("optimum"), outputs.get("lower_bound"), outputs.get("proven"), flow.get("optimum"))
        out.append((key, seq, inputs, sorted(outputs), fixed))
    return out
