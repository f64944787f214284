"""Pictures of a study (PNG, matplotlib's Agg backend).

* ``ecdf.png``: the empirical CDF of ALG/OPT per policy over the proven instances;
* ``ratio-vs-parameters.png``: ALG/OPT against the number of jobs and against the share of
  extra time contention causes in the policy's own schedule (:mod:`rar_opt.analysis`);
* ``worst-POLICY.png``: the worst instance of each policy that is ever suboptimal, as a
  Gantt chart under the policy (left) and under the optimum (right), drawn by
  :func:`rar_opt.plot.plot_schedule`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..algorithms import POLICIES, run_policy
from ..check import check
from ..errors import ParameterError
from ..jsonio import atomic_target
from ..plot import draw_schedule
from ..schedule import Schedule
from .store import TaskRow
from .tasks import instance_of


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _policies(rows: list[TaskRow]) -> list[str]:
    names = {p for r in rows for p in r.outputs["policies"]}
    return [p for p in POLICIES if p in names] + sorted(names - set(POLICIES))


def _save(fig: Any, path: Path) -> None:
    with atomic_target(path, suffix=".png") as tmp:
        fig.savefig(tmp, dpi=130, format="png")
    _pyplot().close(fig)


def ecdf(rows: list[TaskRow], path: Path) -> None:
    """The empirical CDF of ALG/OPT per policy (proven instances only)."""
    plt = _pyplot()
    proven = [r for r in rows if r.outputs["proven"]]
    fig, ax = plt.subplots(figsize=(7, 4.2))
    styles = ["-", "--", "-.", ":"]
    for k, name in enumerate(_policies(proven)):
        ratios = np.sort([r.outputs["policies"][name]["ratio"] for r in proven if name in r.outputs["policies"]])
        if not len(ratios):
            continue
        share = np.arange(1, len(ratios) + 1) / len(ratios)
        xs, ys = np.concatenate([[1.0], ratios]), np.concatenate([[0.0], share])
        # thinner lines drawn later: a policy whose curve coincides with an earlier one stays visible
        width = max(2.8 - 0.35 * k, 0.9)
        ax.step(xs, ys, where="post", label=name, linestyle=styles[k % len(styles)], linewidth=width)
    ax.set_xlabel("ALG / OPT")
    ax.set_ylabel("share of instances with ratio <= x")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    ax.set_title(f"ALG/OPT over {len(proven)} instances with a proven optimum", fontsize=10)
    fig.tight_layout()
    _save(fig, path)


def ratio_vs_parameters(rows: list[TaskRow], path: Path) -> None:
    """ALG/OPT against the number of jobs (mean per count, one line per policy) and against
    the realized contention share of the policy's schedule (one point per instance)."""
    plt = _pyplot()
    proven = [r for r in rows if r.outputs["proven"]]
    fig, (by_jobs, by_share) = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    names = _policies(proven)
    markers = "osD^vP*X"
    for k, name in enumerate(names):
        mine = [r for r in proven if name in r.outputs["policies"]]
        jobs = np.array([r.outputs["jobs"] for r in mine])
        ratio = np.array([r.outputs["policies"][name]["ratio"] for r in mine])
        share = np.array([r.outputs["policies"][name]["contention_share"] for r in mine])
        counts = np.unique(jobs)
        offset = 0.08 * (k - (len(names) - 1) / 2)  # policies side by side at each job count
        by_jobs.plot(counts + offset, [ratio[jobs == c].mean() for c in counts], marker=markers[k % 8], label=name)
        by_share.scatter(share, ratio, s=10, marker=markers[k % 8], alpha=0.55, label=name)
    by_jobs.set_xlabel("jobs")
    by_jobs.set_ylabel("mean ALG / OPT")
    by_share.set_xlabel("contention share of the policy's schedule (extra time / best time)")
    by_share.set_ylabel("ALG / OPT")
    by_share.yaxis.set_tick_params(labelleft=True)
    for ax in (by_jobs, by_share):
        ax.grid(alpha=0.3)
    by_jobs.legend(fontsize=7)
    fig.suptitle(f"ALG/OPT against instance parameters ({len(proven)} proven instances)", fontsize=10)
    fig.tight_layout()
    _save(fig, path)


def worst_gantt(row: TaskRow, policy: str, path: Path) -> None:
    """The row's instance under ``policy`` (left) and under the optimum (right), drawn on
    one slot axis so that the two makespans compare at a glance."""
    plt = _pyplot()
    instance = instance_of(row.inputs)
    mine = run_policy(instance, policy, seed=int(row.inputs["seed"])).schedule
    optimum = Schedule.from_dict(row.outputs["optimum_schedule"])
    reports = [check(instance, mine), check(instance, optimum)]
    span = float(max(max(int(r.result.makespan or 1), 1) for r in reports))
    lanes = float(sum(instance.cluster.servers))
    fig, axes = plt.subplots(
        2,
        2,
        figsize=(14, 2.6 + min(0.3 * lanes, 9)),
        sharex=True,
        gridspec_kw={"height_ratios": [3, 1]},
        squeeze=False,
    )
    for col, (schedule, report, label) in enumerate(zip((mine, optimum), reports, (policy, "optimum"), strict=True)):
        draw_schedule(instance, schedule, report, axes[0][col], axes[1][col], span=span)
        axes[0][col].set_title(f"{label}: makespan {report.result.makespan}", fontsize=10)
    ratio = row.outputs["policies"][policy]["ratio"]
    fig.suptitle(f"{row.outputs['instance']}: {policy} / OPT = {ratio:.4g}", fontsize=12)
    fig.tight_layout()
    _save(fig, path)


def write_plots(rows: list[TaskRow], directory: str | Path) -> list[Path]:
    """Every picture of a study into ``directory`` (created if missing); the paths written."""
    out = Path(directory)
    if out.exists() and not out.is_dir():
        raise ParameterError("is not a directory", where="plots", file=str(out))
    if not out.parent.is_dir():
        raise ParameterError(f"the directory {str(out.parent)!r} does not exist", where="plots", file=str(out))
    proven = [r for r in rows if r.outputs["proven"]]
    if not proven:
        raise ParameterError("the store has no instance with a proven optimum to draw", where="plots")
    out.mkdir(exist_ok=True)
    written = [out / "ecdf.png", out / "ratio-vs-parameters.png"]
    ecdf(rows, written[0])
    ratio_vs_parameters(rows, written[1])
    for name in _policies(proven):
        mine = [r for r in proven if name in r.outputs["policies"]]
        ratios = [r.outputs["policies"][name]["ratio"] for r in mine]
        if max(ratios) > 1.0:
            target = out / f"worst-{name}.png"
            worst_gantt(mine[int(np.argmax(ratios))], name, target)
            written.append(target)
    return written
