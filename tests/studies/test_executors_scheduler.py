"""``--scheduler`` where no Dask scheduler answers: every way the connection can fail is bad
input naming the flag (exit 2, one line), told within the connect timeout (a refused
connection and a malformed address at once), and a signal while the command waits for an
answer ends it at once (130, 143). Before, a service speaking another protocol ended in
``internal error: MemoryError: Unable to allocate 3.01 EiB``, a service that accepted and said
nothing (``python -m http.server``) hung the command for ever, through a first Ctrl-C or
SIGTERM, and a refused or invalid port took 22 s to be called "Timed out"."""

from __future__ import annotations

import contextlib
import signal
import socket
import socketserver
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from rar_opt.errors import ParameterError
from rar_opt.studies.executors import DaskExecutor

from ..helpers import group_signalled

AT_ONCE_S = 3.0
"""How long a refused connection, another protocol's answer or a bad address may take to be
told (from the call, or from the command's start beside its imports): far below the 20 s of
the connect timeout."""


@contextlib.contextmanager
def _server(answer: Callable[[socket.socket], None]) -> Iterator[tuple[int, threading.Event]]:
    """A TCP server on a free port of the loopback whose every connection is handed to
    ``answer``; its port, and an event set once a connection came in."""
    connected = threading.Event()

    class Handler(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            connected.set()
            answer(self.request)

    class Server(socketserver.ThreadingTCPServer):
        daemon_threads = True
        block_on_close = False
        allow_reuse_address = True

    with Server(("127.0.0.1", 0), Handler) as server:
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        thread.start()
        try:
            yield server.server_address[1], connected
        finally:
            server.shutdown()


def _http_426(conn: socket.socket) -> None:
    """An HTTP server that wants another protocol: it answers whatever comes with a 426."""
    conn.recv(4096)
    conn.sendall(b"HTTP/1.1 426 Upgrade Required\r\nUpgrade: websocket\r\nContent-Length: 0\r\n\r\n")


def _silent(conn: socket.socket) -> None:
    """A service that takes the connection and never says a word (as ``http.server`` waits for
    the end of a request line that Dask's handshake never sends)."""
    while conn.recv(4096):
        pass


@contextlib.contextmanager
def _refusing_port() -> Iterator[int]:
    """A port of the loopback where nothing listens (a connection to it is refused), held
    bound without listening while the block runs: no other process (another test worker)
    can take it in between."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield int(sock.getsockname()[1])


def _refused(address: str, timeout: float = 10.0) -> tuple[ParameterError, float]:
    """The error of a DaskExecutor on ``address``, and the seconds it took; fails the test if
    it is still trying ``timeout`` + :data:`AT_ONCE_S` seconds on (it used to wait for ever)."""
    outcome: list[BaseException | DaskExecutor] = []

    def attempt() -> None:
        try:
            outcome.append(DaskExecutor(address=address, timeout=timeout))
        except BaseException as exc:
            outcome.append(exc)

    began = time.perf_counter()
    thread = threading.Thread(target=attempt, daemon=True)
    thread.start()
    thread.join(timeout + AT_ONCE_S)
    took = time.perf_counter() - began
    if not outcome:
        pytest.fail(f"still connecting to {address} {took:.0f} s on (timeout {timeout:g} s)")
    if isinstance(outcome[0], DaskExecutor):
        outcome[0].close()
        pytest.fail(f"connected to {address}")
    error = outcome[0]
    assert isinstance(error, ParameterError), repr(error)
    assert error.where == "scheduler"
    return error, took


def test_a_service_speaking_another_protocol_is_bad_input_at_once() -> None:
    with _server(_http_426) as (port, connected):
        error, took = _refused(f"tcp://127.0.0.1:{port}")
    assert connected.is_set()
    assert str(error).startswith(f"scheduler: cannot reach the Dask scheduler 'tcp://127.0.0.1:{port}': ")
    assert "does not speak Dask's protocol" in str(error), str(error)
    assert took < AT_ONCE_S, took


def test_a_refused_connection_is_said_at_once() -> None:
    with _refusing_port() as port:
        error, took = _refused(f"tcp://127.0.0.1:{port}")
    assert "connection refused" in str(error) and took < AT_ONCE_S, (str(error), took)


def test_a_service_that_never_answers_is_bad_input_within_the_timeout() -> None:
    with _server(_silent) as (port, connected):
        error, took = _refused(f"tcp://127.0.0.1:{port}", timeout=1.0)
    assert connected.is_set()
    assert "no Dask scheduler answered within 1 s" in str(error), str(error)
    assert 1.0 <= took < 1.0 + AT_ONCE_S, took


@pytest.mark.parametrize(
    ("address", "says"),
    [
        ("tcp://127.0.0.1:99999", "port 99999 is not in 1-65535"),
        ("tcp://127.0.0.1:0", "port 0 is not in 1-65535"),
        ("tcp://127.0.0.1", "is not tcp://HOST:PORT"),
        ("tcp://127.0.0.1:http", "is not tcp://HOST:PORT"),
        ("tcp://:8786", "is not tcp://HOST:PORT"),
        ("tcp://127.0.0.1:8786/status", "is not tcp://HOST:PORT"),
        ("tls://127.0.0.1:8786", "a Dask scheduler's address is tcp://HOST:PORT"),
        ("foo:1", "'foo:1' has no scheme: a Dask scheduler's address is tcp://HOST:PORT"),
        ("127.0.0.1:8786", "has no scheme"),
        ("  ", "is empty"),
    ],
)
def test_a_malformed_address_is_refused_before_any_connection(
    address: str, says: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_connection(*args: object, **kwargs: object) -> None:
        raise AssertionError("a connection was attempted")

    monkeypatch.setattr(socket, "create_connection", no_connection)
    error, _ = _refused(address)  # no connection tried (the patch above): nothing to time
    assert says in str(error), str(error)


def test_a_scheduler_is_taken_and_a_worker_is_not() -> None:
    from distributed import LocalCluster

    quiet = {"dashboard_address": "127.0.0.1:0"}  # not Dask's usual 8787, which another cluster may hold
    with LocalCluster(
        n_workers=1, processes=False, threads_per_worker=1, protocol="tcp", host="127.0.0.1", scheduler_kwargs=quiet
    ) as cluster:
        with DaskExecutor(address=cluster.scheduler_address, timeout=10.0) as dask:
            assert dask.workers == 1
            assert sorted(dask.run(abs, [-1, -2, -3])) == [(0, 1), (1, 2), (2, 3)]
        worker = next(iter(cluster.scheduler_info["workers"]))
        error, took = _refused(worker)
    assert "a Dask Worker listens on port" in str(error) and took < AT_ONCE_S, (str(error), took)


def _command(args: list[str], cwd: Path) -> tuple[subprocess.CompletedProcess, float]:
    began = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "rar_opt", *args], capture_output=True, text=True, cwd=cwd, timeout=120)
    return out, time.perf_counter() - began


@pytest.mark.parametrize("case", ["not-dask", "refused", "invalid-port", "no-scheme"])
def test_the_command_line_says_it_in_one_line_with_exit_2(tmp_path: Path, case: str) -> None:
    with _server(_http_426) as (port, _), _refusing_port() as refusing:
        address = {
            "not-dask": f"tcp://127.0.0.1:{port}",
            "refused": f"tcp://127.0.0.1:{refusing}",
            "invalid-port": "tcp://127.0.0.1:99999",
            "no-scheme": "foo:1",  # refused as written, not looked up as a host name
        }[case]
        args = ["study", "run", "x.db", "--family", "tiny", "--count", "2", "--scheduler", address]
        out, took = _command(args, tmp_path)
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --scheduler: "), out.stderr
    assert took < 20.0, took  # the command's imports included; the connect timeout is 20 s
    assert not (tmp_path / "x.db").exists()  # nothing was done
    if case == "no-scheme":
        assert "has no scheme" in lines[0] and "unknown host" not in lines[0], lines[0]


@pytest.mark.parametrize(
    ("command", "signum"),
    [("study", signal.SIGINT), ("study", signal.SIGTERM), ("experiment", signal.SIGINT)],
    ids=["study-ctrl-c", "study-sigterm", "experiment-ctrl-c"],
)
def test_a_signal_while_the_command_waits_for_the_scheduler_ends_it_at_once(
    tmp_path: Path, command: str, signum: int
) -> None:
    args = {
        "study": ["study", "run", "x.db", "--family", "tiny", "--count", "2"],
        "experiment": ["experiment", "policies", "--seeds", "0", "1"],
    }[command]
    with _server(_silent) as (port, connected):
        argv = [sys.executable, "-m", "rar_opt", *args, "--scheduler", f"tcp://127.0.0.1:{port}"]
        out, took = group_signalled(argv, 0.0, tmp_path, connected.is_set, wait_s=10.0, signum=signum)
    assert out.returncode == 128 + signum, out.stderr
    assert took < AT_ONCE_S, (took, out.stderr)
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"interrupted ({signal.Signals(signum).name})"), out.stderr
