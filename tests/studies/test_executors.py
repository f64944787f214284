"""The Dask executor's batching: every task handed out exactly once, in order, batches that
follow the measured task time without starving a worker at the end, and a failing task that
keeps the results before it."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rar_opt.executors import IN_FLIGHT_PER_WORKER, Batcher, DaskExecutor, run_batch


def _hand_out(batcher: Batcher, workers: int, durations: list[float]) -> list[range]:
    """Every batch of ``batcher``, each reported finished with its tasks' summed durations."""
    batches = []
    while (batch := batcher.next_batch(workers)) is not None:
        batches.append(batch)
        batcher.finished(len(batch), sum(durations[i] for i in batch))
    return batches


@settings(max_examples=200, deadline=None)
@given(
    durations=st.lists(st.floats(0.0, 5.0), min_size=1, max_size=300),
    workers=st.integers(1, 8),
    seconds=st.sampled_from([0.0, 0.1, 0.5, 2.0]),
)
def test_batches_cover_every_task_once_in_order(durations: list[float], workers: int, seconds: float) -> None:
    batches = _hand_out(Batcher(len(durations), seconds), workers, durations)
    assert [i for b in batches for i in b] == list(range(len(durations)))
    assert all(len(b) >= 1 for b in batches)
    assert batches[0] == range(0, 1)  # nothing measured yet: one task
    for b in batches:  # never more than the rest shared over the batches in flight
        rest = len(durations) - b.start
        assert len(b) <= max(1, -(-rest // (IN_FLIGHT_PER_WORKER * workers)))


def test_batches_follow_the_task_time() -> None:
    count = 1000
    short = _hand_out(Batcher(count, 0.5), 2, [0.01] * count)  # 10 ms tasks: about 50 per batch
    assert max(len(b) for b in short) == 50
    long = _hand_out(Batcher(count, 0.5), 2, [1.5] * count)  # tasks over the target: one at a time
    assert {len(b) for b in long} == {1}
    unbatched = _hand_out(Batcher(count, 0.0), 2, [0.001] * count)
    assert {len(b) for b in unbatched} == {1}


def _fail_on_three(x: int) -> int:
    if x == 3:
        raise ValueError(f"task {x} failed")
    return 10 * x


def test_a_failing_task_keeps_the_results_before_it() -> None:
    results, seconds, error = run_batch(_fail_on_three, [1, 2, 3, 4])
    assert results == [10, 20] and seconds >= 0.0
    assert isinstance(error, ValueError) and "task 3" in str(error)
    assert run_batch(_fail_on_three, [4, 5]) == ([40, 50], pytest.approx(0.0, abs=1.0), None)


def test_dask_yields_the_results_before_a_failure_then_raises() -> None:
    with DaskExecutor(workers=1) as dask:
        seen = []
        with pytest.raises(ValueError, match="task 3 failed"):
            for i, result in dask.run(_fail_on_three, [0, 1, 2, 3, 4, 5]):
                seen.append((i, result))
        assert seen == [(0, 0), (1, 10), (2, 20)]
        assert sorted(dask.run(_fail_on_three, list(range(100, 160)))) == [(i, 10 * (100 + i)) for i in range(60)]
