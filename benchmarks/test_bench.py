"""One-line benchmarks with pytest-benchmark (not part of CI's test run):

    python -m pytest benchmarks/test_bench.py --benchmark-enable

The scripts beside this file (simulator.py, sjf_bco.py, exact.py) measure growth with size
and write result files; these give quick, statistically summarised timings of the hot paths.
"""

from __future__ import annotations

import pytest

from rar_opt import Instance, check, run_policy, simulate
from rar_opt.formulations import compact
from rar_opt.instances.generate import paper, tiny


@pytest.fixture(scope="module")
def paper0() -> Instance:
    inst = paper(0)
    inst.bounds  # noqa: B018 - build the time model outside the timings
    return inst


def test_simulate_paper(benchmark, paper0: Instance) -> None:
    sched = run_policy(paper0, "ls").schedule
    assert benchmark(simulate, paper0, sched).makespan == check(paper0, sched).result.makespan


def test_sjf_bco_paper(benchmark, paper0: Instance) -> None:
    assert benchmark(run_policy, paper0, "sjf-bco").theta >= 1


def test_check_paper(benchmark, paper0: Instance) -> None:
    assert benchmark(check, paper0, run_policy(paper0, "consolidate").schedule).feasible


def test_build_compact_tiny(benchmark) -> None:
    inst = tiny(19, jobs=8, servers=4)
    assert benchmark(compact.build, inst).name
