"""Where a sweep's tasks run: in this process, on a local Dask cluster, or on a Dask scheduler.

Every sweep (``rar-opt study``, ``rar-opt experiment``) hands its tasks to an
:class:`Executor`. A task is a plain function of picklable inputs; the executor only
decides *where* it runs, never *what* it returns, so a sweep's results do not depend on
the executor or on the number of workers (docs/studies.md).

* :class:`SerialExecutor`: one task after the other, in this process.
* :class:`DaskExecutor` with ``workers=N``: a Dask ``LocalCluster`` of N single-threaded
  worker processes started by this process. The workers die with it, however it ends
  (SIGINT, SIGTERM, SIGKILL): each asks the kernel for SIGKILL when its parent dies
  (:func:`rar_opt.support.processes.die_with_parent`, set by a worker plugin).
* :class:`DaskExecutor` with ``address="tcp://HOST:PORT"``: an existing scheduler whose
  workers were started with ``dask worker`` (on this machine or others). Those workers
  belong to whoever started them and outlive the sweep.

Results come back as they finish (:meth:`Executor.run` yields ``(index, result)``), so a
caller can store each one at once (Dask returns short tasks in batches of about half a
second, :class:`Batcher`); the order of arrival is the only thing that depends on
the executor.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import queue
import signal
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol, TypeVar

from rar_opt.errors import ParameterError
from rar_opt.studies.scheduler_address import CONNECT_TIMEOUT_S, check_scheduler, host_port, scheduler_host_port
from rar_opt.support.checks import is_int
from rar_opt.support.processes import check_stop, die_with_parent

log = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")


class SchedulerLost(ParameterError):
    """The Dask scheduler given by address stopped answering while tasks were out (it was
    stopped, or its machine or the network went away). Every result that came back before
    is the caller's; the tasks still out are lost with the scheduler."""

    def __init__(self, address: str, why: str) -> None:
        super().__init__(f"lost the Dask scheduler at {address} ({why})", where="scheduler")
        self.address = address


class Executor(Protocol):
    """Runs tasks; the one interface every sweep uses."""

    @property
    def description(self) -> dict[str, Any]:
        """What ran the tasks (kind, workers, address), for result files."""
        ...

    def run(self, fn: Callable[[T], R], items: Sequence[T]) -> Iterator[tuple[int, R]]:
        """Run ``fn`` on every item; yield ``(index into items, result)`` as each finishes."""
        ...

    def close(self) -> None:
        """Stop what this executor started (idempotent)."""
        ...

    def __enter__(self) -> Executor: ...

    def __exit__(self, *exc: object) -> None: ...


class SerialExecutor:
    """Every task in this process, in order."""

    @property
    def description(self) -> dict[str, Any]:
        """``{"kind": "serial", "workers": 1}``."""
        return {"kind": "serial", "workers": 1}

    def run(self, fn: Callable[[T], R], items: Sequence[T]) -> Iterator[tuple[int, R]]:
        """Run the tasks one after the other."""
        for i, item in enumerate(items):
            yield i, fn(item)

    def close(self) -> None:
        """Nothing to stop."""

    def __enter__(self) -> SerialExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def die_with_client_plugin(parent: int) -> Any:
    """A Dask worker plugin: the worker process dies when the process ``parent`` dies, and
    lives on through a Ctrl-C (a terminal's Ctrl-C reaches the whole process group, workers
    included): the client alone decides what the command does, and closes the cluster. A
    worker that died at the signal would break off whatever it was telling the scheduler
    (this very plugin's registration, at first), and the scheduler and the client would log
    that. After a Ctrl-C the worker keeps quiet (:func:`_quiet_after_ctrl_c`): the client
    ends the command, and the worker's reports of losing its scheduler are not news.

    Only for the workers of a local cluster, whose parent is this process; a worker whose
    parent is another process (a ``dask worker`` started by hand) is left alone. The class
    is made here so that importing this module does not import Dask."""
    from distributed import WorkerPlugin

    class DieWithClient(WorkerPlugin):
        name = "rar-opt-die-with-client"

        def setup(self, worker: Any) -> None:
            if os.getppid() == parent:
                die_with_parent(parent)
                if threading.current_thread() is threading.main_thread():
                    # SIGINT was blocked while the worker started (:func:`_sigint_blocked`);
                    # one that came meanwhile is handled now
                    signal.signal(signal.SIGINT, _quiet_after_ctrl_c)
                    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})

    return DieWithClient()


def _quiet_after_ctrl_c(signum: int, frame: Any) -> None:
    """SIGINT's handler in a local worker (:func:`die_with_client_plugin`): no
    KeyboardInterrupt, and from now on no log of Dask's or asyncio's (the client closes the
    cluster or dies, and the worker would report the scheduler it lost)."""
    for name in ("distributed", "asyncio"):
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)


WAIT_STEP_S = 0.1
"""How often the wait for a batch looks up from it: a stop request (Ctrl-C, SIGTERM) ends
the wait within this time, and a local cluster without workers is noticed."""

WORKERLESS_S = 10.0
"""How long a local cluster may have no worker (a worker being restarted by its nanny takes
a second or two) before its workers count as gone: :class:`WorkersLost`."""


CLOSE_INTERRUPTED_S = 1.0
"""How long closing the client and the local cluster may take each after Ctrl-C."""


class WorkersLost(RuntimeError):
    """Every worker of the local cluster died and none came back (killed from outside); the
    tasks still out would wait for ever. Every result that came back before is the caller's."""


IN_FLIGHT_PER_WORKER = 2
"""Batches submitted per worker ahead of the results: one running, one waiting."""

BATCH_SECONDS = 0.5
"""What a batch should take: long enough that Dask's per-call cost (a few ms, measured in
``benchmarks/study.py``) is small beside it, short enough that results reach the store soon."""


class Batcher:
    """Cuts ``count`` tasks into batches whose size follows the tasks' measured duration: one
    task at first, then as many as fill about ``seconds`` (:data:`BATCH_SECONDS`), never so many
    that the last batches leave a worker idle (at most the rest over two batches per worker).
    ``seconds <= 0`` means one task per batch. A worker stops a batch once it has run for
    ``seconds`` (:func:`run_batch`) and hands its unstarted tasks back (:meth:`give_back`); they
    go out first again. So a slow task among fast ones delays its batch-mates by at most its
    own time, and once tasks take ``seconds`` or more they go one per batch."""

    def __init__(self, count: int, seconds: float = BATCH_SECONDS) -> None:
        self.count, self.seconds = count, seconds
        self.submitted = 0  # tasks 0 .. submitted-1 were handed out at least once
        self._returned: list[int] = []  # handed back unstarted, to go out again first
        self._tasks = 0
        self._task_s = 0.0

    def next_batch(self, workers: int) -> list[int] | None:
        """The indices of the next batch, or None when every task was handed out."""
        rest = len(self._returned) + self.count - self.submitted
        if rest <= 0:
            return None
        size = 1
        if self._tasks and self.seconds > 0:
            per_task = self._task_s / self._tasks
            size = rest if per_task * rest <= self.seconds else int(self.seconds / per_task)
            size = max(1, min(size, -(-rest // (IN_FLIGHT_PER_WORKER * max(1, workers)))))
        batch, self._returned = self._returned[:size], self._returned[size:]
        fresh = size - len(batch)
        batch += range(self.submitted, self.submitted + fresh)
        self.submitted += fresh
        return batch

    def finished(self, tasks: int, seconds: float) -> None:
        """``tasks`` tasks of a batch ran in ``seconds`` on their worker."""
        self._tasks += tasks
        self._task_s += seconds

    def give_back(self, indices: Sequence[int]) -> None:
        """Tasks of a batch that its worker did not start: they are handed out again first."""
        self._returned = [*indices, *self._returned]


def run_batch(
    fn: Callable[[T], R], items: Sequence[T], seconds: float = math.inf
) -> tuple[list[R], float, Exception | None]:
    """Run a batch on a worker, stopping early once it has run ``seconds``: the results in
    order (the first ``len(results)`` items; the rest were not started), the seconds taken,
    and the exception of the task that failed (the batch stops there; its worker's traceback
    is attached as a note) or None."""
    began = time.perf_counter()
    results: list[R] = []
    for item in items:
        if results and time.perf_counter() - began >= seconds:
            break
        try:
            results.append(fn(item))
        except Exception as exc:  # handed back with the results before it, re-raised by the client
            exc.add_note(f"raised on a Dask worker:\n{traceback.format_exc()}")
            return results, time.perf_counter() - began, exc
    return results, time.perf_counter() - began, None


class DaskExecutor:
    """Tasks on Dask: a local cluster of ``workers`` processes, or the scheduler at ``address``.

    ``address`` is ``tcp://HOST:PORT``; unless a Dask scheduler answers there within
    ``timeout`` seconds, the executor is refused with a
    :class:`~rar_opt.errors.ParameterError` (``scheduler``) that says why
    (:func:`~.scheduler_address.check_scheduler`: a malformed address or a refused connection at once).

    Short tasks go in batches of about ``batch_seconds`` (:class:`Batcher`): one Dask call
    per task would cost a few milliseconds each, in the workers and in the scheduler that
    shares this machine's cores."""

    def __init__(
        self,
        workers: int = 2,
        address: str | None = None,
        timeout: float = CONNECT_TIMEOUT_S,
        batch_seconds: float = BATCH_SECONDS,
    ) -> None:
        from distributed import Client, LocalCluster

        quiet_dask()
        self.batch_seconds = batch_seconds  # 0: one task per Dask call
        self._cluster: Any = None
        self._client: Any = None
        self.address = address
        if address is not None:
            host, port = scheduler_host_port(address)
            target = f"tcp://{host_port(host, port)}"
            check_scheduler(address, host, port, timeout, WAIT_STEP_S)  # bounded, and ended by a stop request
            try:  # a scheduler answered just now: anything going wrong is about the address still
                self._client = Client(target, timeout=timeout, set_as_default=False)
            except Exception as exc:
                why = f"cannot reach the Dask scheduler {address!r}: {_reason(exc)}"
                raise ParameterError(why, where="scheduler") from None
            try:
                self.workers = len(self._client.scheduler_info().get("workers", {}))
            except BaseException:
                self.close()
                raise
            if self.workers == 0:
                log.warning("the scheduler at %s has no workers yet; tasks wait for one", address)
            return
        if workers < 1:
            raise ParameterError(f"= {workers} must be at least 1", where="workers")
        self.workers = workers
        import dask

        # Background work that competes with the tasks for the workers' interpreter lock: the
        # statistical profiler (a stack sample every 10 ms) feeds only the dashboard, which is
        # not started; the event-loop "tick" (every 20 ms) and the system monitor (every
        # 0.5 s) only watch health. Together they cost the tasks 2-5% (benchmarks/study.py).
        # The workers inherit these settings from here.
        quieter = {
            "distributed.worker.profile.enabled": False,
            "distributed.admin.tick.interval": "1s",
            "distributed.admin.system-monitor.interval": "5s",
        }
        _start_resource_tracker()  # before the block: started later, it would lift the block
        with dask.config.set(quieter), _sigint_blocked():
            self._cluster = LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                # the scheduler serves HTTP (health, metrics) even without a dashboard, on port
                # 8787 by default: with another Dask cluster on this machine it warned, on stderr,
                # that the port was taken. Any free port of this machine's loopback will do.
                scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                silence_logs=logging.ERROR,
            )
        try:  # a failure here must not leave the cluster's worker processes behind
            check_stop()  # a Ctrl-C while the cluster started (this thread blocked it) ends it now
            self._client = Client(self._cluster, set_as_default=False)
            self._client.register_plugin(die_with_client_plugin(os.getpid()))
        except BaseException as exc:
            self.__exit__(type(exc), exc, exc.__traceback__)  # closed as a with block would close it
            raise

    @property
    def description(self) -> dict[str, Any]:
        """Kind, number of workers (when the cluster was made), and the scheduler's address."""
        kind = "dask-scheduler" if self.address else "dask-local"
        return {"kind": kind, "workers": self.workers, "address": self.address}

    def run(self, fn: Callable[[T], R], items: Sequence[T]) -> Iterator[tuple[int, R]]:
        """Run the tasks in batches (:class:`Batcher`), a few batches per worker in flight, and
        yield each batch's results as it comes back. A worker that dies mid-batch has its batch
        run again elsewhere (Dask's own retry; a task that kills its worker three times ends
        the run with Dask's ``KilledWorker``, and its batch-mates with it). A task that raises
        re-raises here, after the results of its batch that finished before it.

        The wait for a batch never blocks for long (:data:`WAIT_STEP_S`): a stop request
        (:func:`rar_opt.processes.check_stop`) raises :class:`~rar_opt.processes.Interrupted`
        at once, and a local cluster left without workers raises :class:`WorkersLost`; the
        batches still out are cancelled. (The local workers live on through the Ctrl-C of a
        terminal, which reaches its whole process group: this process closes the cluster.)"""
        if not items:
            return
        batcher = Batcher(len(items), self.batch_seconds)
        pending: dict[str, Any] = {}  # the futures of the batches out, by key
        batches: dict[str, list[int]] = {}
        try:
            yield from self._batches(fn, items, batcher, pending, batches)
        except Exception as exc:  # a lost scheduler is one line, not Dask's cancellation
            if self.address is not None and not self._connected():
                raise SchedulerLost(self.address, _reason(exc)) from None
            raise
        finally:
            unfinished = list(pending.values())
            if unfinished and self._client is not None and self._connected():
                self._client.cancel(unfinished)

    def _batches(
        self,
        fn: Callable[[T], R],
        items: Sequence[T],
        batcher: Batcher,
        pending: dict[str, Any],
        batches: dict[str, list[int]],
    ) -> Iterator[tuple[int, R]]:
        """:meth:`run`'s loop: keep batches in flight, yield results as batches come back."""
        arrived: queue.SimpleQueue[Any] = queue.SimpleQueue()  # futures as they finish (Dask's callback thread)
        while True:
            workers = self._live_workers()
            while len(pending) < IN_FLIGHT_PER_WORKER * workers:
                batch = batcher.next_batch(workers)
                if batch is None:
                    break
                chunk = [items[i] for i in batch]
                future = self._client.submit(run_batch, fn, chunk, 2 * self.batch_seconds, pure=False)
                batches[future.key] = batch
                pending[future.key] = future
                future.add_done_callback(arrived.put)
            if not pending:
                return
            future = self._next_finished(arrived)
            del pending[future.key]
            results, seconds, error = future.result()
            batch = batches.pop(future.key)
            ran = len(results) + (error is not None)
            batcher.finished(ran, seconds)
            yield from zip(batch, results, strict=False)
            future.release()
            if error is not None:
                raise error
            if ran < len(batch):
                batcher.give_back(batch[ran:])

    def _next_finished(self, arrived: queue.SimpleQueue[Any]) -> Any:
        """The next future to finish, waiting in steps of :data:`WAIT_STEP_S`; between steps, a
        stop request raises :class:`~rar_opt.processes.Interrupted` and a local cluster without
        a worker for :data:`WORKERLESS_S` raises :class:`WorkersLost`."""
        workerless_since: float | None = None
        while True:
            try:
                return arrived.get(timeout=WAIT_STEP_S)
            except queue.Empty:
                pass
            check_stop()
            if self._cluster is None:  # a scheduler's workers come and go as their owners decide
                continue
            if self._cluster.scheduler_info.get("workers"):
                workerless_since = None
            elif workerless_since is None:
                workerless_since = time.monotonic()
            elif time.monotonic() - workerless_since > WORKERLESS_S:
                raise WorkersLost(f"the {self.workers} local Dask worker(s) died and none came back")

    def _connected(self) -> bool:
        """Whether the client still talks to its scheduler (Dask says ``running``)."""
        return self._client is not None and getattr(self._client, "status", "running") == "running"

    def _live_workers(self) -> int:
        """Workers the scheduler knows now (at least 1: tasks wait for a worker to join)."""
        if self.address is None:
            return self.workers
        return max(1, len(self._client.scheduler_info().get("workers", {})))

    def on_every_worker(self, fn: Callable[[], Any]) -> dict[str, Any]:
        """Run ``fn`` once in every worker process (e.g. to import or warm up what the tasks
        use); the results by worker address."""
        return dict(self._client.run(fn))

    def close(self, timeout: float | None = None) -> None:
        """Close the client, and the local cluster if this executor started it; with
        ``timeout``, give up on each after that many seconds (its workers still die with
        this process)."""
        client, self._client = getattr(self, "_client", None), None
        if client is not None:
            with contextlib.suppress(TimeoutError) if timeout is not None else contextlib.nullcontext():
                client.close(timeout=timeout)
        cluster, self._cluster = self._cluster, None
        if cluster is not None:
            with contextlib.suppress(TimeoutError) if timeout is not None else contextlib.nullcontext():
                cluster.close(timeout=timeout)

    def __enter__(self) -> DaskExecutor:
        return self

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        # after Ctrl-C the command ends within seconds: a local cluster that does not close
        # at once is not waited for (its workers die with this process)
        interrupted = kind is not None and issubclass(kind, KeyboardInterrupt)
        if interrupted:  # the scheduler and the nannies log what the close cuts short: the
            logging.getLogger("distributed").setLevel(logging.CRITICAL + 1)  # CLI's line says it
        self.close(timeout=CLOSE_INTERRUPTED_S if interrupted else None)


@contextlib.contextmanager
def _sigint_blocked() -> Iterator[None]:
    """Block SIGINT in this thread while the block runs: the threads it starts (Dask's event
    loop and the threads that spawn worker processes, now and on a restart) inherit the
    block, and so do the worker processes, which a Ctrl-C in a terminal reaches too (their
    process group is the terminal's). A worker then never stops with a KeyboardInterrupt
    traceback halfway through its imports; once set up it lives on through a Ctrl-C, quietly
    (:func:`die_with_client_plugin`). This process still hears the signal: the kernel hands
    it to a thread that does not block it (:func:`rar_opt.processes.graceful_stops`'
    watcher), or to this thread when the block ends."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


RESOURCE_TRACKER_QUIET = "ignore:resource_tracker:UserWarning"
"""The warnings filter of multiprocessing's resource tracker process (:func:`_start_resource_tracker`)."""


def _start_resource_tracker() -> None:
    """Start multiprocessing's resource tracker process now, from this thread, if it is not
    running yet; a local cluster needs it (its workers are spawned processes).

    Started by Dask's event loop instead, it would lift :func:`_sigint_blocked`'s block in that
    thread: the standard library blocks SIGINT and SIGTERM while it spawns the tracker, then
    *unblocks* them (``pthread_sigmask(SIG_UNBLOCK)``, not a restore of the mask before). Every
    worker process, spawned from threads of that loop, would then take a Ctrl-C halfway through
    its imports and print a KeyboardInterrupt traceback. Here the mask of this thread is restored.

    The tracker removes the semaphores a process left when it ended abruptly (a Ctrl-C while the
    workers start, the command's fast exit), and warns about each kind it removed: a note about
    its own cleanup, not news, so its warnings filter drops it (:data:`RESOURCE_TRACKER_QUIET`;
    the tracker prints nothing else but its own failures, which still show)."""
    if not hasattr(signal, "pthread_sigmask"):  # no tracker without POSIX signals (Windows)
        return
    from multiprocessing import resource_tracker

    mask = signal.pthread_sigmask(signal.SIG_BLOCK, set())
    before = os.environ.get("PYTHONWARNINGS")
    os.environ["PYTHONWARNINGS"] = ",".join(filter(None, (before, RESOURCE_TRACKER_QUIET)))
    try:
        resource_tracker.ensure_running()
    finally:
        if before is None:
            del os.environ["PYTHONWARNINGS"]
        else:
            os.environ["PYTHONWARNINGS"] = before
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


def _reason(exc: BaseException) -> str:
    """Why Dask gave up on the scheduler, in a few words (its messages run to two sentences)."""
    text = str(exc)
    if "scheduler-connection-lost" in text or "lost the connection" in text.lower():
        return "the connection was lost"
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else 'no message'}"


def quiet_dask() -> None:
    """Dask's own loggers print their progress (INFO) to stderr by default; only its errors
    are kept, and only rar-opt's command line prints. A lost scheduler is reported once, by
    :class:`SchedulerLost`: the client's traceback of its reconnection, cancelled when the
    client closes, is dropped."""
    level = logging.DEBUG if log.isEnabledFor(logging.DEBUG) else logging.ERROR
    logging.getLogger("distributed").setLevel(level)
    client_log = logging.getLogger("distributed.client")
    if _not_a_cancelled_reconnect not in client_log.filters:
        client_log.addFilter(_not_a_cancelled_reconnect)


def _not_a_cancelled_reconnect(record: logging.LogRecord) -> bool:
    """Drop the client's log of a cancelled coroutine (its reconnection to a lost scheduler,
    cancelled as the client closes) and of giving up on reconnecting."""
    import asyncio

    if record.exc_info and isinstance(record.exc_info[1], asyncio.CancelledError):
        return False
    return "reconnect" not in record.getMessage().lower()


def make_executor(workers: int = 1, scheduler: str | None = None) -> SerialExecutor | DaskExecutor:
    """The executor a sweep's options ask for: a scheduler address wins; else Dask on a local
    cluster when ``workers`` > 1; else serial."""
    if not is_int(workers) or workers < 1:
        raise ParameterError(f"must be an integer >= 1, got {workers!r}", where="workers")
    if scheduler is not None:
        return DaskExecutor(address=scheduler)
    if workers > 1:
        return DaskExecutor(workers=workers)
    return SerialExecutor()
