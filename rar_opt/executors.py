"""Where a sweep's tasks run: in this process, on a local Dask cluster, or on a Dask scheduler.

Every sweep (``rar-opt study``, ``rar-opt experiment``) hands its tasks to an
:class:`Executor`. A task is a plain function of picklable inputs; the executor only
decides *where* it runs, never *what* it returns, so a sweep's results do not depend on
the executor or on the number of workers (docs/studies.md).

* :class:`SerialExecutor`: one task after the other, in this process.
* :class:`DaskExecutor` with ``workers=N``: a Dask ``LocalCluster`` of N single-threaded
  worker processes started by this process. The workers die with it, however it ends
  (SIGINT, SIGTERM, SIGKILL): each asks the kernel for SIGKILL when its parent dies
  (:func:`rar_opt.processes.die_with_parent`, set by a worker plugin).
* :class:`DaskExecutor` with ``address="tcp://HOST:PORT"``: an existing scheduler whose
  workers were started with ``dask worker`` (on this machine or others). Those workers
  belong to whoever started them and outlive the sweep.

Results come back as they finish (:meth:`Executor.run` yields ``(index, result)``), so a
caller can store each one at once; the order of arrival is the only thing that depends on
the executor.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol, TypeVar

from .errors import InputError
from .processes import die_with_parent

log = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")

CONNECT_TIMEOUT_S = 20.0
"""How long to wait for an existing scheduler to answer before calling it bad input."""


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
    """A Dask worker plugin: the worker process dies when the process ``parent`` dies.

    Only for the workers of a local cluster, whose parent is this process; a worker whose
    parent is another process (a ``dask worker`` started by hand) is left alone. The class
    is made here so that importing this module does not import Dask."""
    from distributed import WorkerPlugin

    class DieWithClient(WorkerPlugin):
        name = "rar-opt-die-with-client"

        def setup(self, worker: Any) -> None:
            if os.getppid() == parent:
                die_with_parent(parent)

    return DieWithClient()


class DaskExecutor:
    """Tasks on Dask: a local cluster of ``workers`` processes, or the scheduler at ``address``."""

    def __init__(self, workers: int = 2, address: str | None = None, timeout: float = CONNECT_TIMEOUT_S) -> None:
        from distributed import Client, LocalCluster

        quiet_dask()
        self._cluster: Any = None
        self._client: Any = None
        self.address = address
        if address is not None:
            if not address.strip():
                raise InputError("is empty", where="--scheduler")
            try:
                self._client = Client(address, timeout=timeout, set_as_default=False)
            except (OSError, TimeoutError, ValueError) as exc:
                raise InputError(f"cannot reach the Dask scheduler {address!r}: {exc}", where="--scheduler") from None
            try:
                self.workers = len(self._client.scheduler_info().get("workers", {}))
            except BaseException:
                self.close()
                raise
            if self.workers == 0:
                log.warning("the scheduler at %s has no workers yet; tasks wait for one", address)
            return
        if workers < 1:
            raise InputError(f"= {workers} must be at least 1", where="--workers")
        self.workers = workers
        self._cluster = LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=logging.ERROR,
        )
        try:  # a failure here must not leave the cluster's worker processes behind
            self._client = Client(self._cluster, set_as_default=False)
            self._client.register_plugin(die_with_client_plugin(os.getpid()))
        except BaseException:
            self.close()
            raise

    @property
    def description(self) -> dict[str, Any]:
        """Kind, number of workers (when the cluster was made), and the scheduler's address."""
        kind = "dask-scheduler" if self.address else "dask-local"
        return {"kind": kind, "workers": self.workers, "address": self.address}

    def run(self, fn: Callable[[T], R], items: Sequence[T]) -> Iterator[tuple[int, R]]:
        """Submit every task, then yield results as they finish. A worker that dies mid-task
        has its task run again elsewhere (Dask's own retry); a task that raises re-raises here."""
        from distributed import as_completed

        if not items:
            return
        futures = self._client.map(fn, list(items), pure=False)
        index = {f.key: i for i, f in enumerate(futures)}
        try:
            for future in as_completed(futures, loop=self._client.loop):
                result = future.result()
                yield index[future.key], result
                future.release()
        finally:
            for f in futures:
                f.cancel()

    def on_every_worker(self, fn: Callable[[], Any]) -> dict[str, Any]:
        """Run ``fn`` once in every worker process (e.g. to import or warm up what the tasks
        use); the results by worker address."""
        return dict(self._client.run(fn))

    def close(self) -> None:
        """Close the client, and the local cluster if this executor started it."""
        client, self._client = getattr(self, "_client", None), None
        if client is not None:
            client.close()
        cluster, self._cluster = self._cluster, None
        if cluster is not None:
            cluster.close()

    def __enter__(self) -> DaskExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def quiet_dask() -> None:
    """Dask's own loggers print their progress (INFO) to stderr by default; only its errors
    are kept, and only rar-opt's command line prints."""
    level = logging.DEBUG if log.isEnabledFor(logging.DEBUG) else logging.ERROR
    logging.getLogger("distributed").setLevel(level)


def make_executor(workers: int = 1, scheduler: str | None = None) -> SerialExecutor | DaskExecutor:
    """The executor a sweep's options ask for: a scheduler address wins; else Dask on a local
    cluster when ``workers`` > 1; else serial."""
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InputError(f"= {workers!r} must be an integer >= 1", where="--workers")
    if scheduler is not None:
        return DaskExecutor(address=scheduler)
    if workers > 1:
        return DaskExecutor(workers=workers)
    return SerialExecutor()
