"""The paper's four experiments under every generator preset, as tables and pictures:
``python benchmarks/paper_figures.py [--seeds 0 1 2 3 4] [--workers 2] [-o NAME]``, or
``python benchmarks/paper_figures.py --from NAME`` to redo the tables and pictures of a
result file without running anything.

For each preset of :mod:`rar_opt.instances.calibration` (the same draws under each), it runs the
``policies``, ``servers``, ``kappa`` and ``lambda`` experiments over the seeds (each run
beside the best lower bounds ``rar-opt experiment`` proves on its instance, on the makespan
and the average JCT; the kappa and lambda sweeps with the classical baselines ``lpt`` and
``sjf-oblivious`` beside SJF-BCO), writes every row to benchmarks/results/NAME.json
(default ``paper-experiments``; with versions and the seconds of each experiment), prints
one markdown table per experiment (mean makespan over the seeds, min-max in brackets, mean
average JCT, each with its mean ratio to the bound over the runs that end by T, the
realized contention share, and the runs past T), and draws docs/figures/<experiment>.png
with one column per preset, the makespan above and the average JCT below: grouped bars for
the policies, lines for servers, kappa and lambda (error bars: min-max over the seeds;
dashed: the mean lower bound).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

from common import RESULTS, result_name, save

from rar_opt.instances.calibration import PRESETS
from rar_opt.studies.experiments import KAPPAS, LAMBDAS, SERVERS, run_experiment

FIGURES = Path(__file__).resolve().parent.parent / "docs" / "figures"
EXPERIMENT_NAMES = ("policies", "servers", "kappa", "lambda")


def stats(rows: list[dict], key: str = "makespan") -> tuple[float, float, float]:
    values = [r[key] for r in rows]
    return statistics.fmean(values), min(values), max(values)


def floor1(value: float) -> float:
    """``value`` rounded down to one decimal: a mean of proven bounds is never shown above itself."""
    return math.floor(value * 10 + 1e-9) / 10


def within(rows: list[dict]) -> list[dict]:
    """The runs whose schedule ends by T: only they count in a ratio (a run past T is counted apart)."""
    return [r for r in rows if not r.get("exceeds_horizon")]


def ratio(rows: list[dict], key: str, bound: str) -> float:
    """The mean over the runs within T of the per-instance ratio ``key / bound``."""
    kept = within(rows)
    return statistics.fmean(r[key] / r[bound] for r in kept) if kept else math.nan


def cell(group: list[dict]) -> str:
    """Mean makespan [min-max] (mean ratio to the makespan bound) / mean average JCT (mean
    ratio to the average-JCT bound), the realized contention share, and the runs past T."""
    mean, lo, hi = stats(group)
    jct = statistics.fmean(r["avg_jct"] for r in group)
    share = statistics.fmean(r["contention_share"] for r in group)
    text = (
        f"{mean:.1f} [{lo}-{hi}] ({ratio(group, 'makespan', 'lower_bound_makespan'):.2f}) / "
        f"{jct:.1f} ({ratio(group, 'avg_jct', 'lower_bound_avg_jct'):.2f}), c {share:.1%}"
    )
    past = len(group) - len(within(group))
    return text + (f", {past} past T" if past else "")


def bound_cell(group: list[dict]) -> str:
    """The mean bounds over the instances (rounded down), makespan / average JCT."""
    makespan = statistics.fmean(r["lower_bound_makespan"] for r in group)
    jct = statistics.fmean(r["lower_bound_avg_jct"] for r in group)
    return f"**{floor1(makespan):.1f} / {floor1(jct):.1f}**"


def bound_names(rows: list[dict]) -> str:
    """Which registered bounds gave the bound columns, over every run."""
    names = {
        metric: ", ".join(dict.fromkeys(n for r in rows for n in r[f"lower_bound_{metric}_by"].split(", ")))
        for metric in ("makespan", "avg_jct")
    }
    return f"makespan by {names['makespan']}, average JCT by {names['avg_jct']}"


def tables(rows: list[dict]) -> str:
    out = [
        "cell: mean makespan [min-max] (mean ratio to its bound) / mean average JCT (mean ratio to its "
        "bound), c the mean realized contention share; ratios over the runs that end by T"
    ]
    by: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        by[(r["experiment"], r["preset"], r["label"])].append(r)
    for exp in EXPERIMENT_NAMES:
        labels = list(dict.fromkeys(r["label"] for r in rows if r["experiment"] == exp))
        out.append(f"\n#### {exp}\n")
        out.append("| configuration | " + " | ".join(PRESETS) + " |")
        out.append("|---|" + "---|" * len(PRESETS))
        groups = [n for n in SERVERS] if exp == "servers" else [None]
        for n in groups:
            mine = [lab for lab in labels if n is None or lab.startswith(f"{n} ")]
            head = "lower bounds (makespan / avg JCT)" if n is None else f"{n} servers: lower bounds"
            same = [[r for lab in mine for r in by[(exp, preset, lab)]] for preset in PRESETS]
            out.append(f"| **{head}** | " + " | ".join(bound_cell(g) for g in same) + " |")
            for label in mine:
                out.append(f"| {label} | " + " | ".join(cell(by[(exp, preset, label)]) for preset in PRESETS) + " |")
        mine = [r for r in rows if r["experiment"] == exp]
        past = len(mine) - len(within(mine))
        out.append(f"\nbounds: {bound_names(mine)}; runs past T: {past} of {len(mine)}")
    return "\n".join(out)


BASELINE = {"makespan": "lpt", "avg_jct": "sjf-oblivious"}
"""The classical baseline of each metric (:data:`rar_opt.algorithms.BASELINES`)."""
METRICS = {  # row field: (its bound's field, axis label)
    "makespan": ("lower_bound_makespan", "makespan (slots)"),
    "avg_jct": ("lower_bound_avg_jct", "average JCT (slots)"),
}


def _errorbar(ax, xs: list, groups: list[list[dict]], key: str, **style) -> None:
    """The mean of ``key`` over each group at its x, with min-max bars."""
    ms = [stats(group, key) for group in groups]
    ys = [m for m, _, _ in ms]
    ax.errorbar(xs, ys, yerr=[[m - lo for m, lo, _ in ms], [hi - m for m, _, hi in ms]], capsize=2, **style)


def draw(rows: list[dict], source: str) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    from rar_opt.algorithms import POLICIES
    from rar_opt.support.provenance import caption

    FIGURES.mkdir(parents=True, exist_ok=True)
    presets = list(PRESETS)
    seeds = sorted({r["seed"] for r in rows})
    written = []
    for exp in EXPERIMENT_NAMES:
        fig, grid = plt.subplots(2, len(presets), figsize=(5.2 * len(presets), 7.4), squeeze=False)
        handles: dict[str, object] = {}
        for row_axes, (key, (bound, ylabel)) in zip(grid, METRICS.items(), strict=True):
            for ax, preset in zip(row_axes, presets, strict=True):
                sub = [r for r in rows if r["experiment"] == exp and r["preset"] == preset]
                names = [n for n in POLICIES if any(r["policy"] == n for r in sub)]
                if exp == "policies":
                    ms = [stats([r for r in sub if r["policy"] == n], key) for n in names]
                    special = {"sjf-bco": "tab:orange", BASELINE[key]: "tab:green"}
                    ax.bar(
                        names,
                        [m for m, _, _ in ms],
                        yerr=[[m - lo for m, lo, _ in ms], [hi - m for m, _, hi in ms]],
                        color=[special.get(n, "tab:blue") for n in names],
                    )
                    ax.tick_params(axis="x", labelsize=7)
                    plt.setp(ax.get_xticklabels(), rotation=60, ha="right", rotation_mode="anchor")
                    ax.axhline(statistics.fmean(r[bound] for r in sub), color="k", linestyle="--", linewidth=1.5)
                    handles.update(
                        {
                            "sjf-bco": Patch(color="tab:orange"),
                            "the metric's baseline (lpt: makespan, sjf-oblivious: avg JCT)": Patch(color="tab:green"),
                            "other policies": Patch(color="tab:blue"),
                        }
                    )
                elif exp == "servers":  # no min-max bars (the table has them): 17 lines would hide each other
                    shown = {"ff": "tab:blue", "ls": "tab:cyan", "rand": "tab:red", "consolidate": "tab:brown"}
                    shown |= {"sjf-oblivious": "tab:purple", "lpt": "tab:green", "sjf-bco": "tab:orange"}
                    order = [n for n in names if n not in shown] + [n for n in shown if n in names]  # sjf-bco on top
                    for name in order:
                        ys = [
                            statistics.fmean(
                                r[key] for r in sub if r["policy"] == name and r["label"].startswith(f"{n} ")
                            )
                            for n in SERVERS
                        ]
                        if name in shown:
                            wide = name in ("sjf-bco", "lpt", "sjf-oblivious")
                            style = {"marker": "o", "markersize": 4, "linewidth": 2.4 if wide else 1.2}
                            ax.plot(SERVERS, ys, color=shown[name], label=name, **style)
                        else:
                            ax.plot(SERVERS, ys, color="0.75", linewidth=0.8, label="the other ten policies (table)")
                    bounds = [
                        statistics.fmean(r[bound] for r in sub if r["label"].startswith(f"{n} ")) for n in SERVERS
                    ]
                    ax.plot(SERVERS, bounds, "k--", linewidth=2, label="lower bound (mean)")
                    ax.set_xticks(SERVERS)
                    ax.set_xlabel("servers")
                else:
                    xs = KAPPAS if exp == "kappa" else LAMBDAS
                    label_of = (
                        {k: f"kappa={k}" for k in KAPPAS} if exp == "kappa" else {v: f"lambda={v:g}" for v in LAMBDAS}
                    )
                    _errorbar(
                        ax,
                        list(xs),
                        [[r for r in sub if r["label"] == label_of[x]] for x in xs],
                        key,
                        marker="o",
                        label="sjf-bco, kappa fixed" if exp == "kappa" else "sjf-bco, kappa = 1",
                        color="tab:orange",
                    )
                    for name, colour in (("lpt", "tab:green"), ("sjf-oblivious", "tab:purple")):
                        mean = statistics.fmean(r[key] for r in sub if r["policy"] == name)
                        ax.axhline(mean, color=colour, linestyle="-.", linewidth=1.5, label=f"{name} (mean)")
                    ax.axhline(
                        statistics.fmean(r[bound] for r in sub),
                        color="k",
                        linestyle="--",
                        linewidth=1.5,
                        label="lower bound (mean)",
                    )
                    ax.set_xscale("log", base=2)
                    ax.set_xticks(list(xs))
                    ax.set_xticklabels([f"{x:g}" for x in xs])
                    ax.set_xlabel(exp)
                ax.set_title(f"{preset}: {ylabel.split(' (')[0]}", fontsize=9)
                ax.set_ylabel(ylabel)
                if exp != "policies":
                    for handle, name in zip(*ax.get_legend_handles_labels(), strict=True):
                        handles.setdefault(name, handle)
        if exp == "policies":
            handles["lower bound (mean over the instances)"] = plt.Line2D([], [], color="k", linestyle="--")
        first = ["sjf-bco", "sjf-bco, kappa fixed", "sjf-bco, kappa = 1", "lpt", "sjf-oblivious"]
        last = ["the other ten policies (table)", "lower bound (mean)"]
        rank = {name: i - len(first) for i, name in enumerate(first)} | {name: 100 + i for i, name in enumerate(last)}
        handles = dict(sorted(handles.items(), key=lambda item: rank.get(item[0], 0)))  # stable: the rest as met
        fig.legend(
            list(handles.values()),
            list(handles),
            loc="upper center",
            bbox_to_anchor=(0.5, 0.955),
            ncol=5 if exp == "servers" else 4,
            fontsize=7,
            frameon=False,
        )
        bars = "the means (min-max: the table)" if exp == "servers" else "mean, min-max bars"
        fig.suptitle(
            f"experiment '{exp}' over seeds {seeds[0]}-{seeds[-1]}: {bars}; top makespan, bottom average JCT",
            fontsize=10,
        )
        fig.text(0.01, 0.005, caption(f"benchmarks/paper_figures.py from {source}"), fontsize=6, color="0.4")
        fig.tight_layout(rect=(0, 0.02, 1, 0.91 if exp == "servers" else 0.93))
        path = FIGURES / f"{exp}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    return written


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument(
        "-o",
        "--output",
        type=result_name,
        default="paper-experiments",
        help="the result file's name in benchmarks/results/ (default paper-experiments)",
    )
    ap.add_argument(
        "--from",
        dest="source",
        type=result_name,
        help="no runs: the tables and pictures of this result file in benchmarks/results/",
    )
    args = ap.parse_args()
    if args.source is not None:
        name = args.source
        rows = json.loads((RESULTS / f"{name}.json").read_text())["rows"]
    else:
        name = args.output
        rows = []
        wall: dict[str, float] = {}
        began = time.perf_counter()
        for preset in PRESETS:
            for exp in EXPERIMENT_NAMES:
                start = time.perf_counter()
                for row in run_experiment(exp, args.seeds, workers=args.workers, preset=preset):
                    rows.append({"experiment": exp, **row})
                wall[f"{preset} {exp}"] = round(time.perf_counter() - start, 1)
                print(f"{preset} {exp}: done in {wall[f'{preset} {exp}']} s", file=sys.stderr, flush=True)
        wall["total"] = round(time.perf_counter() - began, 1)
        presets = {k: v.to_dict() for k, v in PRESETS.items()}
        path = save(name, rows, seeds=args.seeds, workers=args.workers, wall_s=wall, presets=presets)
        print(f"written: {path}", file=sys.stderr)
    print(tables(rows))
    for path in draw(rows, f"{name}.json"):
        print(f"written: {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
