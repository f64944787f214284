"""The makespan / average-JCT trade-off per preset: ``python benchmarks/classical_figures.py``.

Reads benchmarks/results/classical.json (``benchmarks/classical.py``) and draws, for each
preset at the paper's size (160 jobs, 20 servers), one point per policy: x is the mean
average JCT over the seeds, y the mean ratio of makespan to max(longest job, work bound).
Small dots are the single seeds. The dashed lines are the proven lower bounds: ratio 1 on
the makespan axis, and on the JCT axis the mean over the seeds of ``jct_bound``
(benchmarks/classical.py: per completion rank, the larger of the k-th smallest rho_min
and the squashed-area bound). Pictures: docs/figures/tradeoff-PRESET.png.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

from common import RESULTS

FIGURES = Path(__file__).resolve().parent.parent / "docs" / "figures"
SIZE = "160x20"
SHOWN = ("sjf-bco", "ff", "consolidate", "lpt", "lpt/first-fit", "laf", "improve", "improve-200")
STYLE = {  # colour, marker
    "sjf-bco": ("tab:red", "o"),
    "ff": ("tab:orange", "s"),
    "consolidate": ("tab:brown", "D"),
    "lpt": ("tab:blue", "^"),
    "lpt/first-fit": ("tab:cyan", "^"),
    "laf": ("tab:purple", "v"),
    "improve": ("tab:green", "P"),
    "improve-200": ("darkgreen", "*"),
}


def main() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    data = json.loads((RESULTS / "classical.json").read_text())
    rows = [r for r in data["rows"] if r["size"] == SIZE]
    for preset in dict.fromkeys(r["preset"] for r in rows):
        mine = [r for r in rows if r["preset"] == preset]
        fig, ax = plt.subplots(figsize=(8.0, 4.6))
        for policy in SHOWN:
            group = [r for r in mine if r["policy"] == policy]
            if not group:
                continue
            colour, marker = STYLE[policy]
            x = statistics.mean(r["avg_jct"] for r in group)
            y = statistics.mean(r["ratio"] for r in group)
            ax.scatter([r["avg_jct"] for r in group], [r["ratio"] for r in group], s=10, color=colour, alpha=0.35)
            ax.scatter([x], [y], s=90, color=colour, marker=marker, edgecolor="black", zorder=3, label=policy)
        jct_bound = statistics.mean({r["seed"]: r["jct_bound"] for r in mine}.values())
        ax.axhline(1.0, color="grey", ls="--", lw=1)
        ax.axvline(jct_bound, color="grey", ls="--", lw=1)
        ax.text(jct_bound, ax.get_ylim()[1], " JCT bound", va="top", fontsize=8, color="grey")
        ax.text(jct_bound, 1.0, " makespan bound", ha="left", va="bottom", fontsize=8, color="grey")
        ax.set_xlabel("average JCT (slots), mean over seeds 0-4")
        ax.set_ylabel("makespan / max(longest job, work bound)")
        ax.set_title(f"{preset}, {SIZE}: makespan against average JCT")
        ax.legend(
            fontsize=8,
            loc="upper left",
            bbox_to_anchor=(1.01, 1.0),
            title="mean of 5 seeds\n(dots: single seeds)",
            title_fontsize=7,
        )
        fig.tight_layout()
        FIGURES.mkdir(exist_ok=True)
        fig.savefig(FIGURES / f"tradeoff-{preset}.png", dpi=110)
        plt.close(fig)


if __name__ == "__main__":
    main()
