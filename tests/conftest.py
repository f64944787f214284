"""Shared fixtures: instances named after what they show."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from rar_opt import Cluster, Instance, Job
from rar_opt.generate import paper

settings.register_profile(
    "ci",
    max_examples=60,
    deadline=None,
    derandomize=True,  # CI is reproducible; the "thorough" profile searches afresh
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
settings.register_profile("thorough", max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck))
settings.load_profile("ci")

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def paper_instance() -> Instance:
    return paper(0)


@pytest.fixture(scope="session")
def two_server_contention() -> Instance:
    """Two split jobs sharing two servers: each slows the other down."""
    cluster = Cluster(servers=(2, 2), b_inter=1.0, b_intra=10.0, reduce_speed=50.0, alpha=0.5, xi1=1.0, xi2=0.01)
    jobs = (
        Job("a", gpus=2, iterations=10, grad_size=0.1, batch_size=8, fwd_time=0.01, bwd_time=0.1),
        Job("b", gpus=2, iterations=10, grad_size=0.1, batch_size=8, fwd_time=0.01, bwd_time=0.1),
    )
    return Instance(name="two-server-contention", horizon=20, cluster=cluster, jobs=jobs)
