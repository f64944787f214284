"""Tables and pictures of the ``load`` experiment (docs/experiments.md, "Jobs that arrive"):
``python benchmarks/load_figures.py [RESULT] [--name NAME]``.

RESULT is the file of

    rar-opt experiment load --seeds 0 1 2 3 4 --jobs 320 \\
        --preset paper-literal paper-split15 contention-heavy --workers 2 \\
        -o benchmarks/results/experiment-load.json

(the default). It prints markdown tables, per preset, of the mean over the seeds of each
policy's average flow time, makespan and average JCT at each load, each with the mean of
its ratio to the instance's proven lower bound over the runs that end by T (a run past T
is named in its cell and in no ratio), which bounds gave them, and a summary of the
average JCT (the best policy beside shortest first, online and offline); and draws docs/figures/NAME-flow.png
(average flow time against load, one panel per preset, one line per policy, the bound
dashed) and docs/figures/NAME-makespan.png (makespan over its bound). NAME defaults to
the result file's stem without ``experiment-``.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
from collections import defaultdict
from pathlib import Path

from rar_opt.algorithms import POLICIES

HERE = Path(__file__).resolve().parent
FIGURES = HERE.parent / "docs" / "figures"
METRICS = {  # metric: (row field, bound field, label)
    "flow": ("avg_flow", "lower_bound_avg_flow", "average flow time (slots)"),
    "makespan": ("makespan", "lower_bound_makespan", "makespan (slots)"),
    "jct": ("avg_jct", "lower_bound_avg_jct", "average JCT from slot 0 (slots)"),
}


def grouped(rows: list[dict]) -> dict[tuple[str, float, str], list[dict]]:
    by: dict[tuple[str, float, str], list[dict]] = defaultdict(list)
    for r in rows:
        by[(r["preset"], r["load"], r["policy"])].append(r)
    return by


def cell(group: list[dict], metric: str) -> tuple[float, float, float]:
    """(mean value, mean bound, mean ratio value / bound) over the seeds; the ratio over the
    runs whose schedule ends by T only (a run past T is counted apart, :func:`past`)."""
    field, bound, _ = METRICS[metric]
    kept = [r for r in group if not r.get("exceeds_horizon")]
    return (
        statistics.fmean(r[field] for r in group),
        statistics.fmean(r[bound] for r in group),
        statistics.fmean(r[field] / r[bound] for r in kept) if kept else math.nan,
    )


def past(group: list[dict]) -> int:
    """How many runs of ``group`` end after T."""
    return sum(bool(r.get("exceeds_horizon")) for r in group)


def floor1(value: float) -> float:
    """``value`` rounded down to one decimal: a mean of proven bounds is never shown above itself."""
    return math.floor(value * 10 + 1e-9) / 10


def bound_names(rows: list[dict], loads: list[float], metric: str) -> str:
    """Which registered bounds gave ``metric``'s bound at each load (the rows name them)."""
    field = "lower_bound_makespan_by" if metric == "makespan" else "lower_bound_avg_jct_by"
    if not any(field in r for r in rows):
        return ""
    parts = []
    for x in loads:
        names = dict.fromkeys(n for r in rows if r["load"] == x for n in r[field].split(", "))
        parts.append(f"{x:g}: {', '.join(names)}")
    return "bound by load: " + "; ".join(parts)


def tables(data: dict) -> str:
    rows = data["runs"]
    by = grouped(rows)
    presets = data["presets"]
    loads = sorted({r["load"] for r in rows})
    policies = [p for p in POLICIES if any(r["policy"] == p for r in rows)]
    out = [
        f"seeds {data['seeds']}, {data['jobs']} jobs, 20 servers; cell: mean over the seeds (mean ratio to the "
        "bound, over the runs that end by T); bounds rounded down"
    ]
    for metric in METRICS:
        for preset in presets:
            out.append(f"\n#### {metric}, {preset}\n")
            out.append("| policy | " + " | ".join(f"load {x:g}" for x in loads) + " |")
            out.append("|---|" + "---|" * len(loads))
            bounds = [cell(by[(preset, x, policies[0])], metric)[1] for x in loads]
            out.append("| **lower bound** | " + " | ".join(f"**{floor1(b):.1f}**" for b in bounds) + " |")
            for p in policies:
                cells = []
                best = {x: min(cell(by[(preset, x, q)], metric)[0] for q in policies) for x in loads}
                for x in loads:
                    mean, _, ratio = cell(by[(preset, x, p)], metric)
                    text = f"{mean:.1f} ({ratio:.2f})"
                    text = f"**{text}**" if f"{mean:.1f}" == f"{best[x]:.1f}" else text  # the best, as printed
                    late = past(by[(preset, x, p)])
                    cells.append(text + (f", {late} past T" if late else ""))
                out.append(f"| {p} | " + " | ".join(cells) + " |")
            note = bound_names([r for r in rows if r["preset"] == preset], loads, metric)
            if note:
                out.append(f"\n{note}")
    beyond = sum(bool(r.get("exceeds_horizon")) for r in rows)
    out.append(f"\nruns whose schedule ends after T: {beyond} of {len(rows)}")
    out.append(jct_summary(data))
    return "\n".join(out)


BASELINES = ("online-sf", "sjf-oblivious")
"""The classical baselines of the flow time and JCT beside the best policy: shortest first,
online and offline."""


def jct_summary(data: dict) -> str:
    """Per load: the mean release, the JCT bound and, per preset, the best policy's average
    JCT and the shortest-first baselines', each with its mean ratio to the bound."""
    rows = data["runs"]
    by = grouped(rows)
    presets = data["presets"]
    loads = sorted({r["load"] for r in rows})
    policies = [p for p in POLICIES if any(r["policy"] == p for r in rows)]
    out = ["\n#### average JCT (from slot 0): the best policy and shortest first, online and offline\n"]
    out.append("| load | mean release | JCT bound | " + " | ".join(presets) + " |")
    out.append("|---|---|---|" + "---|" * len(presets))
    for x in loads:
        some = by[(presets[0], x, policies[0])]
        release = statistics.fmean(r["mean_release"] for r in some)
        bound = cell(some, "jct")[1]
        cells = []
        for preset in presets:
            means = {p: cell(by[(preset, x, p)], "jct") for p in policies}
            best = min(policies, key=lambda p: means[p][0])
            shown = [best, *(b for b in BASELINES if b != best)]
            cells.append("; ".join(f"{p} {means[p][0]:.1f} ({means[p][2]:.2f})" for p in shown))
        out.append(f"| {x:g} | {release:.1f} | {floor1(bound):.1f} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def draw(data: dict, name: str, source: str) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import ScalarFormatter

    from rar_opt.support.provenance import caption

    rows = data["runs"]
    by = grouped(rows)
    presets = data["presets"]
    loads = sorted({r["load"] for r in rows})
    policies = [p for p in POLICIES if any(r["policy"] == p for r in rows)]
    colours = plt.get_cmap("tab20")
    written = []
    for metric in ("flow", "makespan"):
        fig, axes = plt.subplots(1, len(presets), figsize=(5.2 * len(presets), 4.2), sharey=metric == "makespan")
        for ax, preset in zip(axes, presets, strict=True):
            for i, p in enumerate(policies):
                online = p.startswith("online-")
                if metric == "flow":
                    ys = [cell(by[(preset, x, p)], metric)[0] for x in loads]
                else:
                    ys = [cell(by[(preset, x, p)], metric)[2] for x in loads]
                ax.plot(
                    loads,
                    ys,
                    label=p,
                    color=colours(i),
                    marker="o" if online else "s",
                    markersize=3,
                    linewidth=1.6 if online else 1.0,
                    linestyle="-" if online else (0, (1, 1)),
                )
            if metric == "flow":
                bound = [cell(by[(preset, x, policies[0])], metric)[1] for x in loads]
                ax.plot(loads, bound, "k--", linewidth=2, label="lower bound")
                ax.set_yscale("log")
                ax.yaxis.set_major_formatter(ScalarFormatter())
                ax.yaxis.set_minor_formatter(ScalarFormatter())
                ax.tick_params(axis="y", which="minor", labelsize=7)
                ax.set_ylabel(METRICS[metric][2] + ", log scale")
            else:
                ax.axhline(1.0, color="k", linestyle="--", linewidth=2, label="lower bound")
                ax.set_ylabel("makespan / its lower bound")
            ax.set_title(preset, fontsize=10)
            ax.set_xlabel("offered load (GPU-time per GPU per slot)")
            ax.set_xticks(loads)
        axes[-1].legend(fontsize=6, ncol=2, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        fig.suptitle(
            f"experiment 'load': {data['jobs']} paper jobs, Poisson arrivals; mean over seeds {data['seeds']}; "
            "online policies solid, offline dotted",
            fontsize=10,
        )
        fig.text(0.01, 0.005, caption(f"benchmarks/load_figures.py from {source}"), fontsize=6, color="0.4")
        fig.tight_layout(rect=(0, 0.03, 1, 1))
        path = FIGURES / f"{name}-{metric}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    return written


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("result", nargs="?", default=str(HERE / "results" / "experiment-load.json"))
    ap.add_argument("--name", help="figure name prefix (default: the file's stem without 'experiment-')")
    args = ap.parse_args()
    path = Path(args.result)
    data = json.loads(path.read_text())
    print(tables(data))
    for written in draw(data, args.name or path.stem.removeprefix("experiment-"), path.name):
        print(f"wrote {written}")


if __name__ == "__main__":
    main()
