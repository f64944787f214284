"""Whether a Dask scheduler answers at an address, asked before a sweep hands it any task.

``--scheduler tcp://HOST:PORT`` is read first (a malformed address, or a port outside
1-65535, is refused before any connection), then asked within :data:`CONNECT_TIMEOUT_S`
whether it is a Dask scheduler: a refused connection, an unknown host, another protocol,
a Dask worker or silence is a :class:`~rar_opt.errors.ParameterError` naming
``scheduler``, and a stop request (Ctrl-C, SIGTERM) ends the wait at once
(docs/studies.md, "Executors"). :mod:`.executors` uses it.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from rar_opt.errors import ParameterError
from rar_opt.support.processes import check_stop

CONNECT_TIMEOUT_S = 20.0
"""How long to wait for an existing scheduler to answer before calling it bad input."""


def scheduler_host_port(address: str) -> tuple[str, int]:
    """The host and port of a Dask scheduler's address ``tcp://HOST:PORT`` (``tcp://[::1]:8786``
    for IPv6). Anything else is a :class:`~rar_opt.errors.ParameterError` naming
    ``scheduler``, before any attempt to connect: an address without ``tcp://`` too (Dask
    would read ``HOST:PORT`` as TCP, but docs/studies.md asks for the scheme, and a bare
    ``foo:1`` is more likely a slip than an address), and a port outside 1-65535."""
    from distributed.comm.addressing import parse_host_port

    text = address.strip()
    if not text:
        raise ParameterError("is empty", where="scheduler")
    scheme, sep, rest = text.partition("://")
    if not sep:
        raise ParameterError(
            f"= {address!r} has no scheme: a Dask scheduler's address is tcp://HOST:PORT", where="scheduler"
        )
    if scheme != "tcp":
        raise ParameterError(f"= {address!r}: a Dask scheduler's address is tcp://HOST:PORT", where="scheduler")
    try:
        host, port = parse_host_port(rest)
    except ValueError:
        host, port = "", 0
    if not host or "/" in host:
        raise ParameterError(f"= {address!r} is not tcp://HOST:PORT", where="scheduler")
    if not 1 <= port <= 65535:
        raise ParameterError(f"= {address!r}: port {port} is not in 1-65535", where="scheduler")
    return host, port


def host_port(host: str, port: int) -> str:
    """``HOST:PORT``, an IPv6 host in brackets."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def check_scheduler(address: str, host: str, port: int, timeout: float = CONNECT_TIMEOUT_S, step: float = 0.1) -> None:
    """Make sure that a Dask scheduler answers at ``host:port`` within ``timeout`` seconds, or
    raise :class:`~rar_opt.errors.ParameterError` (``scheduler``) saying why not: connection
    refused (at once), unknown host, no answer, a service that does not speak Dask's protocol
    (an HTTP server), a Dask worker instead of a scheduler. Dask's own client retries a
    refused connection for its whole timeout, waits for ever for a service that accepts a
    connection and says nothing, and reads another protocol's first bytes as the length of a
    frame (``MemoryError: Unable to allocate 3.01 EiB``).

    The attempt runs in a thread of its own; this thread waits for it in steps of
    ``step`` seconds, so a stop request (Ctrl-C, SIGTERM: :func:`check_stop`) raises
    :class:`~rar_opt.processes.Interrupted` at once (the attempt ends by itself within
    ``timeout``)."""
    outcome: list[str | None] = []
    done = threading.Event()

    def attempt() -> None:
        try:
            why = _why_no_scheduler(host, port, timeout)
        except Exception as exc:  # any failure is an answer: the caller must not wait for ever
            why = f"{type(exc).__name__}: {exc}"
        outcome.append(why)
        done.set()

    threading.Thread(target=attempt, name="rar-opt-scheduler-check", daemon=True).start()
    deadline = time.monotonic() + timeout + 1.0  # the attempt keeps to timeout; this is a safety net
    while not done.wait(step):
        check_stop()
        if time.monotonic() > deadline:
            outcome.append(f"no answer within {timeout:g} s")
            break
    why = outcome[0]
    if why is not None:
        raise ParameterError(f"cannot reach the Dask scheduler {address!r}: {why}", where="scheduler")


def _why_no_scheduler(host: str, port: int, timeout: float) -> str | None:
    """Why no Dask scheduler answers at ``host:port`` within ``timeout`` seconds, or None when
    one does: a TCP connection first, then Dask's handshake and its ``identity`` call."""
    import asyncio
    import socket

    began = time.monotonic()
    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except socket.gaierror as exc:
        return f"unknown host {host!r} ({exc.strerror})"
    except ConnectionRefusedError:
        return f"connection refused (nothing listens on port {port})"
    except TimeoutError:
        return f"no answer within {timeout:g} s"
    except OSError as exc:
        return exc.strerror or f"{type(exc).__name__}: {exc}"
    left = max(0.1, timeout - (time.monotonic() - began))
    try:
        info = asyncio.run(asyncio.wait_for(_identity(f"tcp://{host_port(host, port)}", left), left))
    except TimeoutError:
        return f"port {port} took the connection, but no Dask scheduler answered within {timeout:g} s"
    except Exception as exc:  # e.g. another protocol's reply read as Dask's frames
        return f"the service on port {port} does not speak Dask's protocol ({type(exc).__name__})"
    kind = str(info.get("type", "")) if isinstance(info, dict) else ""
    if not kind.endswith("Scheduler"):
        what = f"a Dask {kind}" if kind else "a service that does not answer as Dask does"
        return f"{what} listens on port {port}, not a Dask scheduler"
    return None


async def _identity(address: str, timeout: float) -> Any:
    """What the Dask server at ``address`` says it is (its ``identity`` call)."""
    from distributed.comm import connect
    from distributed.core import send_recv

    comm = await connect(address, timeout=timeout)
    try:
        info = await send_recv(comm, op="identity")
        await comm.write({"op": "close", "reply": False})
        return info
    finally:
        comm.abort()
