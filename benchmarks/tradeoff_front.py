"""The makespan / average-JCT front of one instance per preset, with a proven bound on each axis.

For each preset, on the paper instance (160 jobs, 20 servers, seed 0): the best average JCT
`auto --objective total` finds with the makespan capped at F times the shortest makespan
the heuristics find (``--makespan-within F``), for F from 1 to 1.5 and without a cap,
each with ``--seconds`` on one thread. Beside the points: the proven lower bound on the
makespan (the best of the registry's cheap bounds) and on the average JCT (the best
certified bound on the total completion time over J, the cap-free one: a cap only removes
schedules, so it bounds every point), and every policy's own point.

The other direction adds a second series: the shortest makespan `auto --objective
makespan` finds with the average JCT capped at G times the best the heuristics find
(``--jct-within G``), for G in ``--jct-factors``; each point's makespan bound is a valid
lower bound on its capped problem too. ``--only-jct`` computes this series alone and adds
it to the stored results (the first series and its commit are kept as they were).

    python benchmarks/tradeoff_front.py [--seconds 20] [--factors 1,1.05,1.1,1.2,1.35,1.5,none]
                                        [--jct-factors 1,1.05,1.1,1.2,1.35] [--only-jct]

Results: benchmarks/results/tradeoff-front.json; pictures docs/figures/front-PRESET.png.
"""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

from common import RESULTS, save

from rar_opt.algorithms import POLICIES
from rar_opt.bounds import lower_bounds
from rar_opt.instances.calibration import PRESETS
from rar_opt.instances.generate import generate
from rar_opt.solvers import solve
from rar_opt.studies.evaluation import judge

FIGURES = Path(__file__).resolve().parent.parent / "docs" / "figures"


def front(preset: str, factors: list[float | None], seconds: float) -> dict:
    inst = generate("paper", 0, jobs=160, servers=20, preset=preset)
    jobs = inst.num_jobs
    span_bound = lower_bounds(inst).best
    points = []
    jct_bound = 0.0
    for factor in factors:
        res = solve(inst, "auto", objective="total", time_limit=seconds, seed=0, makespan_within=factor)
        jct_bound = max(jct_bound, (res.bound or 0.0) / jobs)
        points.append(
            {
                "factor": factor,
                "cap": res.record.options.get("makespan_cap"),
                "makespan": res.makespan,
                "avg_jct": res.avg_jct,
                "bound_avg_jct": None if res.bound is None else res.bound / jobs,
                "status": str(res.status),
                "seconds": round(res.wall_s, 2),
            }
        )
        print(preset, factor, res.makespan, res.avg_jct, res.bound)
    policies = {}
    for name in POLICIES:
        run = judge(inst, name, seed=0)
        policies[name] = {"makespan": run.makespan, "avg_jct": round(run.avg_jct, 3)}
    return {
        "preset": preset,
        "instance": inst.name,
        "makespan_bound": span_bound,
        "avg_jct_bound": jct_bound,
        "points": points,
        "policies": policies,
    }


def jct_front(preset: str, factors: list[float], seconds: float) -> list[dict]:
    """The other direction: the shortest makespan found with the average JCT capped at G x
    the best the heuristics find, for each G, with the proven makespan bound of each."""
    inst = generate("paper", 0, jobs=160, servers=20, preset=preset)
    points = []
    for factor in factors:
        res = solve(inst, "auto", time_limit=seconds, seed=0, jct_within=factor)
        options = res.record.options
        points.append(
            {
                "factor": factor,
                "cap_avg_jct": options["jct_cap"] / inst.num_jobs,
                "reference_avg_jct": options["jct_reference"] / inst.num_jobs,
                "makespan": res.makespan,
                "avg_jct": res.avg_jct,
                "bound_makespan": res.bound,
                "status": str(res.status),
                "seconds": round(res.wall_s, 2),
            }
        )
        print(preset, "jct", factor, res.makespan, res.avg_jct, res.bound, res.status)
    return points


def picture(row: dict) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.8))
    pts = sorted((p for p in row["points"] if p["makespan"] is not None), key=lambda p: (p["makespan"], p["avg_jct"]))
    xs, ys = [p["makespan"] for p in pts], [p["avg_jct"] for p in pts]
    ax.plot(xs, ys, "o-", color="C0", label="auto --objective total, makespan capped at F x shortest")
    labels: dict[tuple[float, float], list[str]] = {}  # points that coincide share one label
    for p in pts:
        labels.setdefault((p["makespan"], p["avg_jct"]), []).append(
            "none" if p["factor"] is None else f"{p['factor']:g}"
        )
    for k, (where, names) in enumerate(labels.items()):
        offset = (6, 4) if k % 2 == 0 else (6, -11)  # neighbours on alternate sides
        ax.annotate("F=" + ", ".join(names), where, textcoords="offset points", xytext=offset, fontsize=8, color="C0")
    other = sorted((p for p in row.get("jct_points", []) if p["makespan"] is not None), key=lambda p: p["makespan"])
    if other:
        ax.plot(
            [p["makespan"] for p in other],
            [p["avg_jct"] for p in other],
            "s",  # markers only: the searches are not monotone in G, a line would suggest a front
            color="C1",
            markersize=5,
            label="auto --objective makespan, average JCT capped at G x best heuristic's",
        )
        seen: dict[tuple[float, float], list[str]] = {}
        for p in other:
            seen.setdefault((p["makespan"], p["avg_jct"]), []).append(f"{p['factor']:g}")
        for where, names in seen.items():
            ax.annotate(
                "G=" + ", ".join(names),
                where,
                textcoords="offset points",
                xytext=(-8, 6),
                fontsize=7,
                color="C1",
                ha="right",
            )
    far, shown = [], {}
    for name, p in row["policies"].items():  # policies far off both bounds would squeeze the rest
        off = p["makespan"] > 2 * row["makespan_bound"] or p["avg_jct"] > 1.6 * row["avg_jct_bound"]
        (far.append(name) if off else shown.update({name: p}))
    if far:
        ax.text(0.99, 0.78, "off the chart: " + ", ".join(far), transform=ax.transAxes, ha="right", fontsize=7)
    for name, p in shown.items():
        ax.plot(p["makespan"], p["avg_jct"], "x", color="0.45")
        ax.annotate(
            name, (p["makespan"], p["avg_jct"]), textcoords="offset points", xytext=(4, -9), fontsize=7, color="0.35"
        )
    ax.axvline(row["makespan_bound"], ls="--", color="C3", label=f"makespan bound {row['makespan_bound']}")
    ax.axhline(row["avg_jct_bound"], ls="--", color="C2", label=f"average-JCT bound {row['avg_jct_bound']:.1f}")
    ax.set_xlabel("makespan (slots)")
    ax.set_ylabel("average JCT (slots)")
    ax.set_title(f"{row['instance']}: the makespan / average-JCT front ({row['preset']})")
    ax.legend(fontsize=8, loc="upper right")
    ax.grid(alpha=0.3)
    FIGURES.mkdir(exist_ok=True)
    path = FIGURES / f"front-{row['preset']}.png"
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--factors", default="1,1.05,1.1,1.2,1.35,1.5,none")
    parser.add_argument("--presets", default=",".join(PRESETS))
    parser.add_argument("--jct-factors", default="1,1.05,1.1,1.2,1.35")
    parser.add_argument("--only-jct", action="store_true", help="add the JCT-capped series to the stored results")
    parser.add_argument("--replot", action="store_true", help="redraw the pictures from the stored results")
    args = parser.parse_args()
    jct_factors = [float(f) for f in args.jct_factors.split(",") if f]
    revision = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    if args.replot or args.only_jct:
        import json

        stored = json.loads((RESULTS / "tradeoff-front.json").read_text())
        for row in stored["rows"]:
            if args.only_jct:
                row["jct_points"] = jct_front(row["preset"], jct_factors, args.seconds)
            print(picture(row))
        if args.only_jct:
            keep = {k: v for k, v in stored.items() if k not in ("benchmark", "versions", "rows")}
            keep.update(jct_seconds=args.seconds, jct_commit=revision)
            save("tradeoff-front", stored["rows"], **keep)
        return
    factors = [None if f == "none" else float(f) for f in args.factors.split(",")]
    rows = []
    for preset in args.presets.split(","):
        row = front(preset, factors, args.seconds)
        if jct_factors:
            row["jct_points"] = jct_front(preset, jct_factors, args.seconds)
        rows.append(row)
        picture(row)
        save("tradeoff-front", rows, seconds=args.seconds, seed=0, threads=1, commit=revision, jct_commit=revision)
    print(f"wrote {RESULTS / 'tradeoff-front.json'}")


if __name__ == "__main__":
    main()
