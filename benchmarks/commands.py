"""The commands a user runs, at 100x the paper: ``python benchmarks/commands.py --label NAME``.

One instance of the paper's generator at 16,000 jobs x 2,000 servers, seed 0, with the
horizon scaled as in benchmarks/scale.py (1,200 x 100 slots; ``--horizon 1200`` gives the
instance of ``rar-opt generate paper --seed 0 --jobs 16000 --servers 2000``, on which
SJF-BCO needs 57 trials instead of a few), then, each in its own process so that its peak
memory is its own:

* ``rar-opt schedule INSTANCE -o SCHEDULE`` (SJF-BCO, the default policy);
* ``rar-opt simulate INSTANCE SCHEDULE`` (the checker and the simulator on the file);
* the checker alone (``rar_opt.check.check`` on the file read back), in a small Python
  process, timed from after the files are read.

Wall time, CPU time (user + system, of the waited child: on a machine shared with
other work the steadier of the two) and peak RSS (``ru_maxrss``, from ``os.wait4``) per
command, and the schedule file's size. Rows are added under ``--label`` to
benchmarks/results/commands.json, so a run before a change and one after stand side by
side. The goal of issue 21: schedule -o and simulate within 10 s and 500 MB each, the
file within 10 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import RESULTS, table

from rar_opt.support.provenance import versions

JOBS, SERVERS, SEED = 16000, 2000, 0

CHECK_CHILD = """
import resource, sys, time, json
from rar_opt import Instance, Schedule, check
inst = Instance.read(sys.argv[1]); sched = Schedule.read(sys.argv[2])
began = time.perf_counter()
report = check(inst, sched)
print(json.dumps({"check_s": time.perf_counter() - began, "feasible": report.feasible}))
"""


BOOT = """
import sys
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
sys.path.insert(0, sys.argv.pop(1))
"""


def measure(argv: list[str]) -> dict:
    """Run ``argv`` as a child; its wall and CPU seconds, peak RSS (MB) and exit status."""
    began = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.stdout.read(), proc.stderr.read()  # type: ignore[union-attr]
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - began
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}: {err.decode()[-2000:]}")
    cpu = usage.ru_utime + usage.ru_stime
    return {
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "peak_mb": round(usage.ru_maxrss / 1024, 1),
        "stdout": out.decode(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--label", required=True, help="the name of this measurement (before, after, ...)")
    parser.add_argument("--workdir", help="where the instance and schedule go (default: a temporary directory)")
    parser.add_argument("--tree", help="run the rar_opt package in DIR instead (e.g. git archive COMMIT rar_opt)")
    parser.add_argument("--horizon", type=int, default=1200 * JOBS // 160, help="T (default 1,200 x 100)")
    args = parser.parse_args()
    work = Path(args.workdir or tempfile.mkdtemp(prefix="rar-opt-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    instance, schedule = work / f"paper-100x-T{args.horizon}.json", work / f"paper-100x-T{args.horizon}.schedule.json"
    cli = [sys.executable, "-m", "rar_opt"]
    check_child = [sys.executable, "-c", CHECK_CHILD]
    if args.tree:  # the older package: past the editable install's finder
        cli = [sys.executable, "-c", BOOT + "from rar_opt.cli import run; run()", args.tree]
        check_child = [sys.executable, "-c", BOOT + CHECK_CHILD, args.tree]
    if not instance.exists():
        from rar_opt.instances.generate import paper

        paper(SEED, jobs=JOBS, servers=SERVERS, horizon=args.horizon).write(instance)
    schedule.unlink(missing_ok=True)
    rows = []
    run = measure([*cli, "--quiet", "schedule", str(instance), "-o", str(schedule)])
    rows.append(
        {
            "command": "schedule -o",
            "wall_s": run["wall_s"],
            "cpu_s": run["cpu_s"],
            "peak_mb": run["peak_mb"],
            "file_mb": round(schedule.stat().st_size / 1e6, 2),
        }
    )
    run = measure([*cli, "--quiet", "simulate", str(instance), str(schedule), "--json"])
    makespan = json.loads(run["stdout"])["makespan"]
    rows.append(
        {
            "command": "simulate",
            "wall_s": run["wall_s"],
            "cpu_s": run["cpu_s"],
            "peak_mb": run["peak_mb"],
            "file_mb": None,
        }
    )
    run = measure([*check_child, str(instance), str(schedule)])
    inner = json.loads(run["stdout"])
    rows.append(
        {
            "command": "check (function, whole process)",
            "wall_s": run["wall_s"],
            "cpu_s": run["cpu_s"],
            "peak_mb": run["peak_mb"],
            "file_mb": None,
            "check_only_s": round(inner["check_s"], 2),
        }
    )
    for row in rows:
        row["label"] = args.label
    print(table([{k: ("-" if v is None else v) for k, v in r.items() if k != "check_only_s"} for r in rows]))
    path = RESULTS / "commands.json"
    old = json.loads(path.read_text()) if path.exists() else {"benchmark": "commands", "runs": {}}
    old["runs"][args.label] = {
        "versions": versions(),
        "tree": args.tree,
        "instance": f"paper seed {SEED}, {JOBS} jobs x {SERVERS} servers, horizon {args.horizon}",
        "makespan": makespan,
        "load_1min": os.getloadavg()[0],
        "rows": rows,
    }
    RESULTS.mkdir(exist_ok=True)
    path.write_text(json.dumps(old, indent=1) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
