"""The commands a user runs, at 1x, 10x and 100x the paper: ``python benchmarks/scale_commands.py``.

The instances are what ``rar-opt generate paper --jobs J --servers S --seed 1`` makes with
its defaults (the paper is 160 jobs x 20 servers; 10x is 1,600 x 200, 100x 16,000 x
2,000; the horizon is the generator's own), and, as extra rows only (``--raised``), the
100x instance with its horizon raised to 120,000 (the instance of benchmarks/commands.py).
On each, every command in its own process, so that its peak memory is its own:

* ``schedule I --policy sjf-bco -o S`` and ``schedule I --policy pack -o P``;
* ``simulate I S`` (the checker and the simulator on the file);
* check: ``rar_opt.check.check`` on the files read back, in a small Python process;
* ``compare I --policies sjf-bco`` and ``bounds I`` (their defaults).

Per command: wall time, CPU time (user + system of the waited child, the steadier of the
two on a shared machine), peak RSS (``ru_maxrss`` from ``os.wait4``), output size (the
file written, else stdout), and the growth exponent over the sizes: the least-squares
slope of log(CPU time) against log(jobs) (1 is linear, J log J from 1,600 to 16,000 jobs
is 1.12). ``--tree DIR`` runs an older source tree instead (``git archive COMMIT rar_opt |
tar -x -C DIR``); ``--label`` names the run. Results are added to
benchmarks/results/scale-<date>.json under the label, with the commit and versions.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import RESULTS, table

from rar_opt.support.provenance import versions

SEED = 1
SIZES = ((160, 20), (1600, 200), (16000, 2000))
RAISED = 120_000  # the horizon of benchmarks/commands.py (extra rows)
TIMEOUT = 300.0  # seconds per command; a longer run is recorded as "> 300 s"
MEMORY = 6 * 2**30  # address space per command (RLIMIT_AS); more is recorded as out of memory

BOOT = """
import sys
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
sys.path.insert(0, sys.argv.pop(1))
"""

CHECK_CHILD = """
import sys, json
from rar_opt import Instance, Schedule, check
inst = Instance.read(sys.argv[1]); sched = Schedule.read(sys.argv[2])
print(json.dumps({"feasible": check(inst, sched).feasible}))
"""

RAISE_CHILD = """
import sys
from rar_opt import Instance
import dataclasses
inst = Instance.read(sys.argv[1])
dataclasses.replace(inst, horizon=int(sys.argv[3])).write(sys.argv[2])
"""


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def measure(argv: list[str], out: Path | None = None) -> dict:
    """Run ``argv`` as a child: wall and CPU seconds, peak RSS (MB), output bytes."""
    began = time.perf_counter()
    with tempfile.TemporaryFile() as so, tempfile.TemporaryFile() as se:
        proc = subprocess.Popen(argv, stdout=so, stderr=se, preexec_fn=_limit)
        deadline = began + TIMEOUT
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                _, status, usage = os.wait4(proc.pid, 0)
                return {"wall_s": None, "cpu_s": None, "peak_mb": None, "out_mb": None, "note": f"> {TIMEOUT:g} s"}
            time.sleep(0.05)
        wall = time.perf_counter() - began
        code = os.waitstatus_to_exitcode(status)
        so.seek(0)
        se.seek(0)
        stdout, stderr = so.read(), se.read()
    if code != 0:
        memory = b"MemoryError" in stderr or b"Unable to allocate" in stderr
        note = f"out of memory (> {MEMORY / 2**30:g} GB)" if memory else f"exit {code}: {stderr.decode()[-300:]}"
        return {"wall_s": None, "cpu_s": None, "peak_mb": None, "out_mb": None, "note": note}
    size = out.stat().st_size if out is not None else len(stdout)
    return {
        "wall_s": round(wall, 2),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "peak_mb": round(usage.ru_maxrss / 1024, 1),
        "out_mb": round(size / 1e6, 3),
    }


def slope(points: list[tuple[int, float]]) -> float | None:
    """Least-squares slope of log(t) against log(jobs)."""
    pts = [(math.log(j), math.log(max(t, 0.01))) for j, t in points if t is not None]
    if len(pts) < 2:
        return None
    mx, my = sum(x for x, _ in pts) / len(pts), sum(y for _, y in pts) / len(pts)
    return round(sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x, _ in pts), 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--label", required=True, help="the name of this run (before, after, ...)")
    parser.add_argument("--tree", help="run the rar_opt package in DIR instead (git archive COMMIT rar_opt)")
    parser.add_argument("--workdir", help="where instances and schedules go (default: a temporary directory)")
    parser.add_argument("--sizes", type=int, nargs="*", default=[1, 10, 100], help="multiples of the paper")
    parser.add_argument("--raised", action="store_true", help=f"extra rows: 100x with horizon {RAISED}")
    parser.add_argument("--commit", help="the commit measured (default: HEAD of this checkout)")
    args = parser.parse_args()
    work = Path(args.workdir or tempfile.mkdtemp(prefix="rar-opt-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    py = [sys.executable]
    cli = [*py, "-m", "rar_opt", "--quiet"]
    check_child = [*py, "-c", CHECK_CHILD]
    if args.tree:
        cli = [*py, "-c", BOOT + "from rar_opt.cli import run; run()", args.tree, "--quiet"]
        check_child = [*py, "-c", BOOT + CHECK_CHILD, args.tree]
    commit = (
        args.commit
        or subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=Path(__file__).parent
        ).stdout.strip()
    )
    cases = [(160 * k, 20 * k, None) for k in args.sizes]
    if args.raised:
        cases.append((16000, 2000, RAISED))
    path = RESULTS / f"scale-{datetime.date.today().isoformat()}.json"
    RESULTS.mkdir(exist_ok=True)
    old = json.loads(path.read_text()) if path.exists() else {"benchmark": "scale_commands", "runs": {}}
    measured = {(c[0], c[2] or "default") for c in cases}
    rows = [r for r in old["runs"].get(args.label, {}).get("rows", []) if (r["jobs"], r["horizon"]) not in measured]

    def write() -> dict:
        growth = {}
        for name in dict.fromkeys(r["command"] for r in rows):
            pts = [(r["jobs"], r["cpu_s"]) for r in rows if r["command"] == name and r["horizon"] == "default"]
            growth[name] = slope(pts)
        old["runs"][args.label] = {
            "commit": commit,
            "tree": args.tree,
            "versions": versions(),
            "seed": SEED,
            "instances": "rar-opt generate paper --jobs J --servers S --seed 1 (defaults)",
            "load_1min": os.getloadavg()[0],
            "cpus": os.cpu_count(),
            "limits": {"timeout_s": TIMEOUT, "address_space_gb": MEMORY / 2**30},
            "note": "2 cores shared with other work: wall times are noisy; exponents from CPU time",
            "growth_exponent_cpu": growth,
            "rows": sorted(rows, key=lambda r: (str(r["horizon"]), r["jobs"])),
        }
        # other labels as the file holds them now (another run may write it meanwhile)
        now = json.loads(path.read_text()) if path.exists() else old
        now["runs"][args.label] = old["runs"][args.label]
        path.write_text(json.dumps(now, indent=1) + "\n")
        return growth

    for jobs, servers, horizon in cases:
        inst = work / f"paper-{jobs}x{servers}-s{SEED}.json"
        if not inst.exists():  # always made by the current package: the same file for every tree
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "rar_opt",
                    "--quiet",
                    "generate",
                    "paper",
                    "--jobs",
                    str(jobs),
                    "--servers",
                    str(servers),
                    "--seed",
                    str(SEED),
                    "-o",
                    str(inst),
                ],
                check=True,
                capture_output=True,
            )
        if horizon is not None:
            raised = work / f"paper-{jobs}x{servers}-s{SEED}-T{horizon}.json"
            subprocess.run([sys.executable, "-c", RAISE_CHILD, str(inst), str(raised), str(horizon)], check=True)
            inst = raised
        sched, packed = inst.with_suffix(".sjf-bco.json"), inst.with_suffix(".pack.json")
        sched.unlink(missing_ok=True)
        packed.unlink(missing_ok=True)
        commands = [
            ("schedule sjf-bco", [*cli, "schedule", str(inst), "--policy", "sjf-bco", "-o", str(sched)], sched),
            ("schedule pack", [*cli, "schedule", str(inst), "--policy", "pack", "-o", str(packed)], packed),
            ("simulate", [*cli, "simulate", str(inst), str(sched)], None),
            ("check", [*check_child, str(inst), str(sched)], None),
            ("compare sjf-bco", [*cli, "compare", str(inst), "--policies", "sjf-bco"], None),
            ("bounds", [*cli, "bounds", str(inst)], None),
        ]
        for name, argv, out in commands:
            if name in ("simulate", "check") and not sched.exists():
                row = {"wall_s": None, "cpu_s": None, "peak_mb": None, "out_mb": None, "note": "no schedule"}
            else:
                row = measure(argv, out)
            rows.append({"command": name, "jobs": jobs, "servers": servers, "horizon": horizon or "default", **row})
            print(table([{k: ("-" if v is None else v) for k, v in rows[-1].items()}]), flush=True)
            write()
    print(json.dumps(write(), indent=1))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
