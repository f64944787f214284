"""Online policies against the offline optimum on tiny instances with arrivals:
``python benchmarks/arrivals_study.py [--workers 2]`` (about 3 minutes on the shared 2-core machine).

Four studies of the ``tiny-arrivals`` family (docs/studies.md, "Arrival families"), each
instance solved exactly for the makespan and for the total flow time (method ``auto``,
30 s per solve): 100 instances (seeds 0-99) at offered loads 0.5, 1 and 2, and 30
instances of 8 jobs on 3 servers at load 1. Equivalent to

    rar-opt study run STORE --family tiny-arrivals --load X --count 100 --seed 0 --time-limit 30

Results: benchmarks/results/study-arrivals.json (each study's report and description);
the markdown table it prints is in docs/experiments.md ("Online against the offline optimum").
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from common import save

from rar_opt.studies.executors import make_executor
from rar_opt.studies.report import describe, report
from rar_opt.studies.run import StudyConfig, open_study, run_study

STUDIES = (  # (label, config, count)
    ("load 0.5", StudyConfig(family="tiny-arrivals", load=0.5, time_limit=30.0), 100),
    ("load 1", StudyConfig(family="tiny-arrivals", load=1.0, time_limit=30.0), 100),
    ("load 2", StudyConfig(family="tiny-arrivals", load=2.0, time_limit=30.0), 100),
    ("8 x 3, load 1", StudyConfig(family="tiny-arrivals", jobs=8, servers=3, load=1.0, time_limit=30.0), 30),
)


def cell(stats: dict) -> str:
    if not stats["proven"]:
        return "-"
    return f"{stats['mean_ratio']:.3f} / {stats['max_ratio']:.2f} / {100 * stats['optimal_share']:.0f}%"


def markdown(results: list[dict]) -> str:
    policies = list(results[0]["report"]["policies"])
    out = []
    for metric, key, proven in (("makespan", "policies", "proven"), ("total flow time", "flow", "flow_proven")):
        out.append(f"\n#### ALG/OPT for the {metric}: mean / max / share of instances where the policy is optimal\n")
        head = [f"{r['label']} ({r['report'][proven]} of {r['count']} proven)" for r in results]
        out.append("| policy | " + " | ".join(head) + " |")
        out.append("|---|" + "---|" * len(results))
        for p in policies:
            out.append(f"| {p} | " + " | ".join(cell(r["report"][key][p]) for r in results) + " |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as tmp, make_executor(workers=args.workers) as executor:
        for i, (label, config, count) in enumerate(STUDIES):
            path = Path(tmp) / f"s{i}.db"
            run_study(path, config, count, executor)
            with open_study(path, config) as store:
                rows = list(store.rows())
                about = describe(store.kind, store.config, rows, store.created_with())
            results.append({"label": label, "count": count, "report": report(rows).to_dict(), "about": about})
    path = save("study-arrivals", results, workers=args.workers)
    print(markdown(results))
    print(f"\nwritten: {path}")


if __name__ == "__main__":
    main()
