"""Does a command stay within its time limit? ``python benchmarks/time_limits.py [SECONDS]``.

Runs ``rar-opt solve`` as a real process (start-up included, as a user sees it) with
``--time-limit SECONDS`` (default 5) on instances whose proofs take longer than that,
with the compact MILP (HiGHS) and with ``auto`` (CP-SAT), and reports the wall clock
against the limit (the goal: within +5%). Results go to benchmarks/results/time-limits.json.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import save, table
from exact import scaled
from frontier import heavy_twin

SIZES = [(12, 4, 80), (16, 8, 100), (20, 8, 120)]
METHODS = ("compact", "auto")


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 5.0
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for jobs, servers, horizon in SIZES:
            inst = heavy_twin(scaled(100 + jobs, jobs, servers, horizon))
            path = Path(tmp) / f"{inst.name}.json"
            inst.write(path)
            for method in METHODS:
                began = time.perf_counter()
                out = subprocess.run(
                    [
                        sys.executable,
                        "-m",
                        "rar_opt",
                        "solve",
                        str(path),
                        "--formulation",
                        method,
                        "--time-limit",
                        str(seconds),
                        "--json",
                    ],
                    capture_output=True,
                    text=True,
                    check=False,
                )
                wall = time.perf_counter() - began
                status = out.stdout.split('"status": "')[1].split('"')[0] if '"status"' in out.stdout else "?"
                rows.append(
                    {
                        "instance": inst.name,
                        "method": method,
                        "limit_s": seconds,
                        "wall_s": round(wall, 2),
                        "over_pct": round(100 * (wall - seconds) / seconds, 1),
                        "status": status,
                        "exit": out.returncode,
                    }
                )
                print(table(rows[-1:]), flush=True)
    save("time-limits", rows, time_limit_s=seconds)
    print(table(rows))


if __name__ == "__main__":
    main()
