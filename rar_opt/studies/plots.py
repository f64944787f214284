"""Pictures of a study (PNG, matplotlib's Agg backend).

* ``ecdf.png``: the empirical CDF of ALG/OPT per policy over the proven instances (a run
  whose schedule ends after T is no answer and is left out of every picture);
* ``ratio-vs-parameters.png``: ALG/OPT against the number of jobs and against the share of
  extra time contention causes in the policy's own schedule (:mod:`rar_opt.shares`);
* ``worst-POLICY.png``: the worst instance of each policy that is ever suboptimal, as a
  Gantt chart under the policy (left) and under the optimum (right), drawn by
  :func:`rar_opt.plotting.schedule.plot_schedule`;
* ``provenance.json``: what the pictures were drawn from (the study's family, seeds,
  method, time limit and versions: :func:`rar_opt.studies.report.describe`) and the
  versions that drew them. Every picture carries a one-line caption with the same.

A store where no optimum is proven still gets its ECDF and parameter plots, of ALG over
the best lower bound (an upper end of ALG/OPT, labelled as such); the worst-instance
charts need an optimum and are left out.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from rar_opt.algorithms import POLICIES, run_policy
from rar_opt.check import check
from rar_opt.errors import ParameterError
from rar_opt.plotting.schedule import add_caption, draw_schedule
from rar_opt.schedule import Schedule
from rar_opt.studies.store import TaskRow
from rar_opt.studies.tasks import instance_of, within_horizon
from rar_opt.support.jsonio import atomic_target, directory_problem
from rar_opt.support.processes import TimeUp, alarm_at, check_stop
from rar_opt.support.provenance import provenance


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _policies(rows: list[TaskRow]) -> list[str]:
    names = {p for r in rows for p in r.outputs["policies"]}
    return [p for p in POLICIES if p in names] + sorted(names - set(POLICIES))


def _answers(rows: list[TaskRow], name: str) -> list[TaskRow]:
    """The rows where ``name`` ran and its schedule ends within T (a run past T is in no
    picture, as in no statistic of the report)."""
    return [r for r in rows if name in r.outputs["policies"] and within_horizon(r.outputs["policies"][name])]


def _basis(rows: list[TaskRow]) -> tuple[list[TaskRow], str, str]:
    """The rows to draw, the ratio field and its label: ALG/OPT over the proven instances,
    or, when none is proven, ALG / best lower bound over every instance."""
    proven = [r for r in rows if r.outputs["proven"]]
    if proven:
        return proven, "ratio", "ALG / OPT"
    return rows, "ratio_high", "ALG / lower bound"


def _save(fig: Any, path: Path, caption: str | None = None) -> None:
    if caption is not None:
        add_caption(fig, caption)
    with atomic_target(path, suffix=".png") as tmp:
        fig.savefig(tmp, dpi=130, format="png")
    _pyplot().close(fig)


def ecdf(rows: list[TaskRow], path: Path, caption: str | None = None) -> None:
    """The empirical CDF of ALG/OPT per policy (proven instances only; ALG / lower bound
    over every instance when none is proven)."""
    plt = _pyplot()
    proven, field, label = _basis(rows)
    fig, ax = plt.subplots(figsize=(8.6, 4.2))
    styles = ["-", "--", "-.", ":"]
    for k, name in enumerate(_policies(proven)):
        ratios = np.sort([r.outputs["policies"][name][field] for r in _answers(proven, name)])
        if not len(ratios):
            continue
        share = np.arange(1, len(ratios) + 1) / len(ratios)
        xs, ys = np.concatenate([[1.0], ratios]), np.concatenate([[0.0], share])
        # thinner lines drawn later: a policy whose curve coincides with an earlier one stays visible
        width = max(2.8 - 0.35 * k, 0.9)
        ax.step(xs, ys, where="post", label=name, linestyle=styles[k % len(styles)], linewidth=width)
    ax.set_xlabel(label)
    ax.set_ylabel("share of instances with ratio <= x")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # beside the axes: it hides no curve
    if field == "ratio":
        ax.set_title(f"ALG/OPT over {len(proven)} instances with a proven optimum", fontsize=10)
    else:
        ax.set_title(f"ALG / lower bound over {len(proven)} instances (no optimum proven)", fontsize=10)
    fig.tight_layout()
    _save(fig, path, caption)


def ratio_vs_parameters(rows: list[TaskRow], path: Path, caption: str | None = None) -> None:
    """ALG/OPT against the number of jobs (mean per count, one line per policy) and against
    the realized contention share of the policy's schedule (one point per instance)."""
    plt = _pyplot()
    proven, field, label = _basis(rows)
    fig, (by_jobs, by_share) = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    names = _policies(proven)
    markers = "osD^vP*X"
    for k, name in enumerate(names):
        mine = _answers(proven, name)
        if not mine:
            continue
        jobs = np.array([r.outputs["jobs"] for r in mine])
        ratio = np.array([r.outputs["policies"][name][field] for r in mine])
        share = np.array([r.outputs["policies"][name]["contention_share"] for r in mine])
        counts = np.unique(jobs)
        offset = 0.08 * (k - (len(names) - 1) / 2)  # policies side by side at each job count
        by_jobs.plot(counts + offset, [ratio[jobs == c].mean() for c in counts], marker=markers[k % 8], label=name)
        by_share.scatter(share, ratio, s=10, marker=markers[k % 8], alpha=0.55, label=name)
    by_jobs.set_xlabel("jobs")
    by_jobs.set_ylabel(f"mean {label}")
    by_share.set_xlabel("contention share of the policy's schedule (extra time / best time)")
    by_share.set_ylabel(label)
    by_share.yaxis.set_tick_params(labelleft=True)
    for ax in (by_jobs, by_share):
        ax.grid(alpha=0.3)
    by_jobs.legend(fontsize=7)
    which = "proven instances" if field == "ratio" else "instances, no optimum proven"
    fig.suptitle(f"{label} against instance parameters ({len(proven)} {which})", fontsize=10)
    fig.tight_layout()
    _save(fig, path, caption)


def worst_gantt(row: TaskRow, policy: str, path: Path, caption: str | None = None) -> None:
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
    _save(fig, path, caption)


def write_plots(rows: list[TaskRow], directory: str | Path, about: dict[str, Any] | None = None) -> list[Path]:
    """Every picture of a study into ``directory`` (created if missing), with
    ``provenance.json`` beside them; the paths written. ``about`` describes the study
    (:func:`rar_opt.studies.report.describe`); it goes into the provenance file, and its
    family, seeds and method into every caption."""
    from rar_opt.support.jsonio import dump_json

    out = Path(directory)
    if (problem := directory_problem(out)) is not None:
        raise ParameterError(problem, where="plots", file=str(out))
    if not rows:
        raise ParameterError("the store has no finished instance to draw", where="plots")
    proven = [r for r in rows if r.outputs["proven"]]
    out.mkdir(exist_ok=True)
    caption = study_caption(rows, about)
    written = [out / "ecdf.png", out / "ratio-vs-parameters.png"]
    with _stoppable():
        ecdf(rows, written[0], caption)
    with _stoppable():
        ratio_vs_parameters(rows, written[1], caption)
    for name in _policies(proven):
        mine = _answers(proven, name)
        ratios = [r.outputs["policies"][name]["ratio"] for r in mine]
        if ratios and max(ratios) > 1.0:
            target = out / f"worst-{name}.png"
            with _stoppable():
                worst_gantt(mine[int(np.argmax(ratios))], name, target, caption)
            written.append(target)
    record = {"figures": [p.name for p in written], "caption": caption, "study": about, "drawn_with": provenance()}
    dump_json(record, out / "provenance.json")
    return [*written, out / "provenance.json"]


@contextmanager
def _stoppable() -> Iterator[None]:
    """One picture, abandoned at once when a signal asks the process to stop (Ctrl-C in
    ``study report --plots``): :class:`~rar_opt.support.processes.Interrupted` ends the
    drawing, the pictures finished before stay (each is written whole or not at all), and
    ``provenance.json``, written last, is not."""
    check_stop()
    try:
        with alarm_at(None):  # Python work a stop request cuts short (no deadline)
            yield
    except TimeUp:
        check_stop()  # raised by the stop request: told as the stop
        raise


def study_caption(rows: list[TaskRow], about: dict[str, Any] | None) -> str:
    """The figures' caption: family, count, seeds, method and time limit (from ``about``
    when given), then the versions."""
    if about is None:
        return f"study of {len(rows)} instances"
    seeds = about.get("seed_range")
    seed_text = f"seeds {seeds[0]}-{seeds[1]}" if seeds else "no seeds"
    kind = "worst-case search" if about.get("kind") == "worst" else "study"
    return (
        f"{kind}: family {about.get('family')}, {about.get('count')} instances, {seed_text}, "
        f"method {about.get('method')}, {about.get('time_limit')} s per solve"
    )
