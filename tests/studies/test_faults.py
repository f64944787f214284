"""Stores under faults, on real processes and files: concurrent creators, a creator
interrupted while another command fills the store, damaged rows, read-only stores, a full
disk (issue 21)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rar_opt.studies.store import open_store

from ..helpers import run

CLI = [sys.executable, "-m", "rar_opt", "--quiet"]


def _rows(path: Path) -> int:
    with open_store(path) as store:
        return store.count()


def test_a_store_caught_between_its_header_and_its_tables_is_taken_as_new(tmp_path) -> None:
    # what a second command sees while the first is creating the store: a valid SQLite
    # header in WAL mode (written by the journal-mode pragma), no tables yet
    path = tmp_path / "s.db"
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=WAL")
    db.close()
    assert path.stat().st_size > 0
    out = run("study", "run", str(path), "--family", "tiny", "--count", "2", "--quiet")
    assert out.returncode == 0, out.stderr
    assert _rows(path) == 2


def test_two_runs_started_together_on_a_new_store_both_succeed(tmp_path) -> None:
    for i in range(3):
        path = tmp_path / f"r{i}.db"
        args = [*CLI, "study", "run", str(path), "--family", "tiny", "--count", "3"]
        procs = [subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
        for proc in procs:
            _, err = proc.communicate(timeout=300)
            assert proc.returncode == 0, err
        assert _rows(path) == 3
        # both wrote the same three keys: no duplicates, nothing lost
        with open_store(path) as store:
            assert len(store.keys()) == 3


BLOCKED_CREATOR = """
import sys, time
from rar_opt.studies.run import StudyConfig, run_study

class Blocked:
    description = {"kind": "test", "workers": 1}
    def run(self, fn, items):
        print("created", flush=True)
        while True:
            time.sleep(0.05)
        yield

run_study(sys.argv[1], StudyConfig(family="tiny", time_limit=60.0, method="compact"), 2, Blocked())
"""


def _has_open(pid: int, path: Path) -> bool:
    fds = Path(f"/proc/{pid}/fd")
    try:
        return any(os.readlink(fds / fd) == str(path) for fd in os.listdir(fds))
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc to see which process has the store open")
def test_an_interrupted_creator_leaves_the_store_another_run_is_filling(tmp_path) -> None:
    path = tmp_path / "s.db"
    creator = subprocess.Popen(
        [sys.executable, "-c", BLOCKED_CREATOR, str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert creator.stdout is not None and creator.stdout.readline().strip() == "created"
    # the second run: same configuration; its first row takes a MILP solve, so it has the
    # store open without a row for a while
    second = subprocess.Popen(
        [*CLI, "study", "run", str(path), "--family", "tiny", "--count", "2", "--method", "compact"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # open for half a second on end: past its first look at the store, inside its run
    deadline, since = time.monotonic() + 120, None
    while second.poll() is None and time.monotonic() < deadline:
        if not _has_open(second.pid, path):
            since = None
        elif since is None:
            since = time.monotonic()
        elif time.monotonic() - since > 0.5:
            break
        time.sleep(0.01)
    assert _has_open(second.pid, path), "the second run never held the store open"
    with open_store(path) as store:
        rows_when_interrupted = store.count()
    creator.send_signal(signal.SIGINT)
    _, err = creator.communicate(timeout=60)
    assert creator.returncode != 0 and "KeyboardInterrupt" in err
    assert path.exists(), "the interrupted creator removed a store another run had open"
    _, err = second.communicate(timeout=300)
    assert second.returncode == 0, err
    assert _rows(path) == 2
    assert rows_when_interrupted == 0 or pytest.skip("the second run wrote a row before the interrupt")


def test_an_interrupted_creator_alone_still_leaves_no_store(tmp_path) -> None:
    path = tmp_path / "s.db"
    creator = subprocess.Popen(
        [sys.executable, "-c", BLOCKED_CREATOR, str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert creator.stdout is not None and creator.stdout.readline().strip() == "created"
    creator.send_signal(signal.SIGINT)
    creator.communicate(timeout=60)
    assert list(tmp_path.iterdir()) == []


def _flip(path: Path, at: int) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0xFF  # every bit of one byte
    path.write_bytes(bytes(data))


def test_flipped_bytes_in_the_rows_are_refused_naming_the_file(tmp_path) -> None:
    made = tmp_path / "made.db"
    assert run("study", "run", str(made), "--family", "tiny", "--count", "2", "--quiet").returncode == 0
    data = made.read_bytes()
    assert not Path(f"{made}-wal").exists(), "the store was not checkpointed on close"
    # bytes inside the stored JSON of the rows: a key, a value, a bracket
    spots = [data.rfind(b'"proven"') + 2, data.rfind(b'"policies"') + 1, data.rfind(b'{"'), data.rfind(b"}")]
    spots += [data.rfind(b'"ratio":') + 8, data.rfind(b'"python"') + 2]
    refused = []
    for i, at in enumerate(spots):
        assert at > 100, "the rows were not found in the file"
        path = tmp_path / f"flipped{i}.db"
        path.write_bytes(data)
        _flip(path, at)
        out = run("study", "report", str(path))
        assert out.returncode in (0, 2), (at, out.stderr)
        assert "Traceback" not in out.stderr and "internal error" not in out.stderr, out.stderr
        if out.returncode == 2:
            refused.append(i)
            assert str(path) in out.stderr and len(out.stderr.strip().splitlines()) == 1, out.stderr
    # the flips in what the report reads (the outputs) are all found; a flip in a column it
    # does not read (timing) or one that leaves valid JSON cannot be seen without checksums
    assert {0, 1, 4} <= set(refused), refused


def _in_small_filesystem(tmp_path: Path, script: str, size: str) -> subprocess.CompletedProcess:
    """Run ``script`` (sh) with a tmpfs of ``size`` mounted on tmp_path/small, in a private
    mount namespace (root or user namespaces needed); skips where that is not allowed."""
    small = tmp_path / "small"
    small.mkdir()
    probe = subprocess.run(
        ["unshare", "-m", "--map-root-user", "sh", "-c", f"mount -t tmpfs -o size=16k tmpfs {small}"],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        probe = subprocess.run(
            ["unshare", "-m", "sh", "-c", f"mount -t tmpfs -o size=16k tmpfs {small}"], capture_output=True, text=True
        )
        prefix = ["unshare", "-m"]
    else:
        prefix = ["unshare", "-m", "--map-root-user"]
    if probe.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {probe.stderr.strip()}")
    cli = f"{sys.executable} -m rar_opt --quiet"
    body = f"mount -t tmpfs -o size={size} tmpfs {small} && cd {small} && " + script.replace("RAR", cli)
    return subprocess.run([*prefix, "sh", "-c", body], capture_output=True, text=True, timeout=600)


def test_a_full_disk_says_so_and_keeps_the_rows(tmp_path) -> None:
    out = _in_small_filesystem(
        tmp_path,
        "RAR study run s.db --family tiny --count 200 --policies sjf-bco; echo rc=$?; "
        "RAR study report s.db --json > /dev/null && echo report-ok; RAR study report s.db --json | head -c 0; "
        'python3 -c "import sqlite3; '
        "print('rows', sqlite3.connect('s.db').execute('select count(*) from tasks').fetchone()[0])\"",
        "160k",
    )
    assert "rc=2" in out.stdout, (out.stdout, out.stderr)
    assert "the disk is full" in out.stderr and "s.db" in out.stderr and "kept" in out.stderr, out.stderr
    assert "Traceback" not in out.stderr and "internal error" not in out.stderr
    rows = int(out.stdout.split("rows ")[1].split()[0])
    assert 0 < rows < 200


def test_an_output_that_does_not_fit_leaves_nothing(tmp_path) -> None:
    paper = Path(__file__).resolve().parents[2] / "instances" / "paper-160x20-s0.json"
    out = _in_small_filesystem(tmp_path, f"RAR schedule {paper} -o s.json > /dev/null; echo rc=$?; ls -A", "16k")
    assert "rc=2" in out.stdout and "No space left" in out.stderr and "s.json" in out.stderr, (out.stdout, out.stderr)
    assert out.stdout.strip().splitlines()[-1] == "rc=2", "something was left on the full disk"


def test_a_store_on_a_read_only_disk_can_be_reported_on(tmp_path) -> None:
    shelf = tmp_path / "shelf"
    shelf.mkdir()
    assert run("study", "run", str(shelf / "s.db"), "--family", "tiny", "--count", "2", "--quiet").returncode == 0
    before = sorted(p.name for p in shelf.iterdir())
    cli = f"{sys.executable} -m rar_opt"
    body = (
        f"mount --bind {shelf} {shelf} && mount -o remount,ro,bind {shelf} && touch {shelf}/x 2>/dev/null; "
        f"{cli} study report {shelf}/s.db --json"
    )
    out = subprocess.run(["unshare", "-m", "sh", "-c", body], capture_output=True, text=True, timeout=300)
    if "mount" in out.stderr and out.returncode != 0 and "rar_opt" not in out.stderr:
        pytest.skip(f"cannot make a read-only bind mount here: {out.stderr.strip()}")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["instances"] == 2
    assert sorted(p.name for p in shelf.iterdir()) == before
