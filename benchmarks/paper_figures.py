"""The paper's four experiments under every generator preset, as tables and pictures:
``python benchmarks/paper_figures.py [--seeds 0 1 2 3 4] [--workers 2]``.

For each preset of :mod:`rar_opt.instances.calibration` (the same draws under each), it runs the
``policies``, ``servers``, ``kappa`` and ``lambda`` experiments over the seeds, writes
every row to benchmarks/results/paper-experiments.json (with versions), prints one
markdown table per experiment (mean makespan over the seeds, min-max in brackets, and the
realized contention share), and draws docs/figures/<experiment>.png with one panel per
preset: grouped bars for the policies, lines for servers, kappa and lambda (error bars:
min-max over the seeds).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict
from pathlib import Path

from common import save

from rar_opt.instances.calibration import PRESETS
from rar_opt.studies.experiments import KAPPAS, LAMBDAS, SERVERS, run_experiment

FIGURES = Path(__file__).resolve().parent.parent / "docs" / "figures"
EXPERIMENT_NAMES = ("policies", "servers", "kappa", "lambda")


def stats(rows: list[dict], key: str = "makespan") -> tuple[float, float, float]:
    values = [r[key] for r in rows]
    return statistics.fmean(values), min(values), max(values)


def tables(rows: list[dict]) -> str:
    out = []
    by: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        by[(r["experiment"], r["preset"], r["label"])].append(r)
    for exp in EXPERIMENT_NAMES:
        labels = list(dict.fromkeys(r["label"] for r in rows if r["experiment"] == exp))
        out.append(f"\n#### {exp}\n")
        out.append("| configuration | " + " | ".join(PRESETS) + " |")
        out.append("|---|" + "---|" * len(PRESETS))
        for label in labels:
            cells = []
            for preset in PRESETS:
                group = by[(exp, preset, label)]
                mean, lo, hi = stats(group)
                share = statistics.fmean(r["contention_share"] for r in group)
                cells.append(f"{mean:.1f} [{lo}-{hi}] c {share:.1%}")
            out.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def draw(rows: list[dict]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rar_opt.algorithms import POLICIES

    FIGURES.mkdir(parents=True, exist_ok=True)
    presets = list(PRESETS)
    for exp in EXPERIMENT_NAMES:
        fig, axes = plt.subplots(1, len(presets), figsize=(5 * len(presets), 3.6), sharey=False)
        for ax, preset in zip(axes, presets, strict=True):
            sub = [r for r in rows if r["experiment"] == exp and r["preset"] == preset]
            if exp == "policies":
                names = list(POLICIES)
                ms = [stats([r for r in sub if r["policy"] == n]) for n in names]
                ax.bar(names, [m for m, _, _ in ms], yerr=[[m - lo for m, lo, _ in ms], [hi - m for m, _, hi in ms]])
                ax.tick_params(axis="x", rotation=45, labelsize=7)
            elif exp == "servers":
                for name in POLICIES:
                    ms = [
                        stats([r for r in sub if r["policy"] == name and r["label"].startswith(f"{n} ")])
                        for n in SERVERS
                    ]
                    ax.errorbar(
                        SERVERS,
                        [m for m, _, _ in ms],
                        yerr=[[m - lo for m, lo, _ in ms], [hi - m for m, _, hi in ms]],
                        label=name,
                        capsize=2,
                        marker="o",
                        markersize=3,
                    )
                ax.set_xlabel("servers")
                ax.legend(fontsize=6)
            else:
                xs = KAPPAS if exp == "kappa" else LAMBDAS
                labels = [f"kappa={k}" for k in KAPPAS] if exp == "kappa" else [f"lambda={v:g}" for v in LAMBDAS]
                ms = [stats([r for r in sub if r["label"] == lab]) for lab in labels]
                ax.errorbar(
                    xs,
                    [m for m, _, _ in ms],
                    yerr=[[m - lo for m, lo, _ in ms], [hi - m for m, _, hi in ms]],
                    marker="o",
                    capsize=2,
                )
                ax.set_xscale("log", base=2)
                ax.set_xlabel(exp)
            ax.set_title(preset, fontsize=9)
            ax.set_ylabel("makespan (slots)")
        fig.suptitle(f"experiment '{exp}': mean over the seeds, min-max bars", fontsize=10)
        fig.tight_layout()
        fig.savefig(FIGURES / f"{exp}.png", dpi=110)
        plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    rows = []
    for preset in PRESETS:
        for exp in EXPERIMENT_NAMES:
            for row in run_experiment(exp, args.seeds, workers=args.workers, preset=preset):
                rows.append({"experiment": exp, **row})
            print(f"{preset} {exp}: done", file=sys.stderr, flush=True)
    path = save("paper-experiments", rows, seeds=args.seeds, presets={k: v.to_dict() for k, v in PRESETS.items()})
    print(tables(rows))
    draw(rows)
    print(f"\nwritten: {path} and {FIGURES}/*.png", file=sys.stderr)


if __name__ == "__main__":
    main()
