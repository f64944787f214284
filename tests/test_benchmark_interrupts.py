"""Ctrl-C (or SIGTERM) in a benchmark script that runs its instances in worker processes
(``benchmarks/common.run_pool``): sent to the whole process group, as a terminal does, it ends
the script at once with status 130 (143) and one line, kills the running workers instead of waiting
for their solves, and leaves the result file as the last finished row wrote it."""

from __future__ import annotations

import json
import os
import signal
import sys
import textwrap
import time
from pathlib import Path

import pytest

from .helpers import group_signalled

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"

SCRIPT = textwrap.dedent(
    """
    import json, os, sys, time
    sys.path.insert(0, sys.argv[1])
    import common
    from pathlib import Path

    common.RESULTS = Path(sys.argv[2])

    def work(seconds):
        if seconds > 1:  # a run that would hold the pool for a long time: tell the test who runs it
            Path(sys.argv[2], f"busy-{os.getpid()}").write_text("")
        time.sleep(seconds)
        return seconds

    if __name__ == "__main__":
        written = common.RESULTS / "rows.json"
        with common.run_pool(2, written=str(written)) as pool:
            rows = []
            for future in [pool.submit(work, s) for s in (0.0, 300.0, 300.0, 300.0)]:
                rows.append(future.result())
                common.save("rows", [{"seconds": s} for s in rows])
    """
)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_stop_signal_to_the_group_ends_a_benchmark_run_at_once(tmp_path: Path, signum: int) -> None:
    script = tmp_path / "bench.py"
    script.write_text(SCRIPT)
    workers: list[int] = []

    def ready() -> bool:  # both workers busy with a long run, and the first row written
        workers[:] = [int(p.name.removeprefix("busy-")) for p in tmp_path.glob("busy-*")]
        return len(workers) == 2 and (tmp_path / "rows.json").exists()

    argv = [sys.executable, str(script), str(BENCHMARKS), str(tmp_path)]
    out, took = group_signalled(argv, 0.0, tmp_path, ready, signum=signum)
    err = out.stderr
    assert out.returncode == 128 + signum, err
    assert took < 5.0, (took, err)  # not the 300 s of the running work
    assert "Traceback" not in err and f"interrupted ({signal.Signals(signum).name})" in err and "rows.json" in err, err
    assert json.loads((tmp_path / "rows.json").read_text())["rows"] == [{"seconds": 0.0}]
    assert not list(tmp_path.glob(".*.partial"))
    time.sleep(0.5)
    for pid in workers:  # killed, not left to finish their runs
        assert not _alive(pid), pid


def _alive(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie that nobody has reaped yet counts as ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return state not in ("Z", "X")
