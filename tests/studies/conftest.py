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
