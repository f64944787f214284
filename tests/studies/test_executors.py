"""The Dask executor's batching: every task completed exactly once, batches that follow the
measured task time without starving a worker at the end, a slow task that hands its unstarted
batch-mates back, and a failing task that keeps the results before it; a local cluster that
stays quiet when another one holds Dask's usual HTTP port."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rar_opt.studies.executors import IN_FLIGHT_PER_WORKER, Batcher, DaskExecutor, run_batch


def _hand_out(batcher: Batcher, workers: int, durations: list[float]) -> tuple[list[list[int]], list[int]]:
    """Every batch ``batcher`` hands out, each run as a worker runs it (stopping once it has
    run twice the batch time, the rest handed back); the batches and the tasks in the order
    they were completed."""
    batches, done = [], []
    while (batch := batcher.next_batch(workers)) is not None:
        batches.append(batch)
        ran, seconds = 0, 0.0
        for i in batch:
            if ran and seconds >= 2 * batcher.seconds:
                break
            seconds += durations[i]
            ran += 1
        done += batch[:ran]
        batcher.finished(ran, seconds)
        if ran < len(batch):
            batcher.give_back(batch[ran:])
    return batches, done


@settings(max_examples=200, deadline=None)
@given(
    durations=st.lists(st.floats(0.0, 5.0), min_size=1, max_size=300),
    workers=st.integers(1, 8),
    seconds=st.sampled_from([0.0, 0.1, 0.5, 2.0]),
)
def test_every_task_is_completed_exactly_once(durations: list[float], workers: int, seconds: float) -> None:
    batches, done = _hand_out(Batcher(len(durations), seconds), workers, durations)
    assert sorted(done) == list(range(len(durations)))  # each once, however often handed out
    assert all(len(b) >= 1 for b in batches)
    assert batches[0] == [0]  # nothing measured yet: one task
    if seconds == 0.0:
        assert {len(b) for b in batches} == {1}


def test_batches_follow_the_task_time() -> None:
    count = 1000
    short, _ = _hand_out(Batcher(count, 0.5), 2, [0.01] * count)  # 10 ms tasks: about 50 per batch
    assert max(len(b) for b in short) == 50
    long, _ = _hand_out(Batcher(count, 0.5), 2, [1.5] * count)  # tasks over the target: one at a time
    assert {len(b) for b in long} == {1}
    instant, _ = _hand_out(Batcher(count, 0.0), 2, [0.0] * count)  # 0 s: one per batch, even at 0 s tasks
    assert {len(b) for b in instant} == {1}


def test_the_end_of_a_sweep_stays_balanced() -> None:
    count, workers = 400, 2
    batches, _ = _hand_out(Batcher(count, 0.5), workers, [0.001] * count)
    for b in batches:  # never more than the rest shared over the batches in flight
        rest = count - min(b)
        assert len(b) <= max(1, -(-rest // (IN_FLIGHT_PER_WORKER * workers)))


def test_a_slow_task_hands_its_unstarted_batch_mates_back() -> None:
    durations = [0.01] * 200
    durations[30] = 60.0  # a long exact solve among fast tasks
    batches, done = _hand_out(Batcher(len(durations), 0.5), 2, durations)
    with_slow = next(b for b in batches if 30 in b)
    after = [i for i in with_slow if i > 30]
    assert after  # it ran inside a batch with fast tasks after it ...
    assert all(
        any(i in b for b in batches[batches.index(with_slow) + 1 :]) for i in after
    )  # ... the rest went out again
    assert sorted(done) == list(range(200))


def _fail_on_three(x: int) -> int:
    if x == 3:
        raise ValueError(f"task {x} failed")
    return 10 * x


def test_a_failing_task_keeps_the_results_before_it() -> None:
    results, seconds, error = run_batch(_fail_on_three, [1, 2, 3, 4])
    assert results == [10, 20] and seconds >= 0.0
    assert isinstance(error, ValueError) and "task 3" in str(error)
    assert "_fail_on_three" in "".join(error.__notes__)  # the worker's traceback comes along
    assert run_batch(_fail_on_three, [4, 5]) == ([40, 50], pytest.approx(0.0, abs=1.0), None)
    assert run_batch(_fail_on_three, [4, 5, 6], seconds=0.0)[0] == [40]  # out of time after the first


def test_dask_yields_the_results_before_a_failure_then_raises() -> None:
    with DaskExecutor(workers=1) as dask:
        seen = []
        with pytest.raises(ValueError, match="task 3 failed"):
            for i, result in dask.run(_fail_on_three, [0, 1, 2, 3, 4, 5]):
                seen.append((i, result))
        assert seen == [(0, 0), (1, 10), (2, 20)]
        assert sorted(dask.run(_fail_on_three, list(range(100, 160)))) == [(i, 10 * (100 + i)) for i in range(60)]


def test_a_local_cluster_does_not_warn_when_another_holds_the_dashboard_port() -> None:
    # another Dask cluster on the machine holds 8787: the scheduler's HTTP server warned on stderr
    import socket
    import warnings

    holder = socket.socket()
    try:
        with contextlib.suppress(OSError):  # already taken (another cluster): the case itself
            holder.bind(("127.0.0.1", 8787))
            holder.listen()
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            DaskExecutor(workers=1).close()
    finally:
        holder.close()
    assert not [str(w.message) for w in seen if "already in use" in str(w.message)]
