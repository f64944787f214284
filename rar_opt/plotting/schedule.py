"""Pictures of a schedule: a Gantt chart per GPU and the contention per server over time.

Needs matplotlib (``pip install 'rar-opt[plot]'``). Everything drawn comes from the
checker and the simulator. The format follows the file name: ``.png``, ``.pdf`` or ``.svg``.

An infeasible schedule is refused with its violations listed, unless asked to draw it
anyway (``allow_infeasible``): then the violations are written on the figure, GPUs beyond
a server's capacity are drawn in a red band, and GPU ids that do not exist are replaced
by the lowest free lanes.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import numpy as np

from rar_opt.check import check
from rar_opt.errors import InputError
from rar_opt.gpu_ids import assign_gpu_ids
from rar_opt.instance import Instance
from rar_opt.schedule import Schedule
from rar_opt.support.jsonio import atomic_target, dump_json, writable_problem
from rar_opt.support.provenance import caption as caption_text
from rar_opt.support.provenance import provenance

FORMATS = ("png", "pdf", "svg")
GOLDEN = 0.618033988749895  # spreads job colours so that neighbours differ
PAGE_WIDTH = 7.5  # inches: a figure as wide as a page's text
FONT = 7  # points: the smallest text on a figure
LANE_TICKS = 48  # up to this many GPU rows, each one is labelled; beyond, each server
LEGEND_JOBS = 40  # up to this many jobs, a legend names them; beyond, the bars carry their ids


def plot_schedule(
    instance: Instance, schedule: Schedule, path: str | Path, allow_infeasible: bool = False
) -> list[Path]:
    """Draw ``schedule``: top, one row per GPU with the jobs it runs; bottom, c_s[t] per server.
    Returns the files written: the figure at ``path`` and its provenance file beside it
    (:func:`provenance_path`)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fmt = Path(path).suffix.lstrip(".").lower()
    if fmt not in FORMATS:
        raise InputError(f"the file name must end in {', '.join('.' + f for f in FORMATS)}", file=str(path))
    record_path = provenance_path(path)
    if (problem := writable_problem(record_path)) is not None:  # before any drawing: both files or neither
        raise InputError(f"the figure's provenance file {problem}", file=str(record_path))
    schedule.require_matches(instance)
    report = check(instance, schedule)
    if not report.feasible and not allow_infeasible:
        listed = "; ".join(str(v) for v in report.violations[:5])
        more = f" (and {len(report.violations) - 5} more)" if len(report.violations) > 5 else ""
        raise InputError(
            f"the schedule is infeasible: {listed}{more}; use --allow-infeasible to draw it with the violations marked",
            where="schedule",
        )
    height = _heights(instance, schedule, report)
    # a page's width (7.5 in) with fonts of 7 points and more: readable printed in a paper
    fig, (gantt, cont) = plt.subplots(
        2,
        1,
        figsize=(PAGE_WIDTH, 2.6 + min(0.16 * float(height.sum()), 7.5)),
        sharex=True,
        gridspec_kw={"height_ratios": [3, 1]},
    )
    draw_schedule(instance, schedule, report, gantt, cont)
    legend_of_jobs(instance, schedule, gantt)
    fig.tight_layout()
    what = f"{instance.name}, schedule by {schedule.meta.get('method') or 'an unnamed method'}"
    add_caption(fig, what)
    record = {
        "figure": Path(path).name,
        "caption": caption_text(what),
        "instance": instance.name,
        "instance_meta": dict(instance.meta),
        "instance_sha256": instance.data_digest(),
        "schedule_meta": dict(schedule.meta),
        "feasible": report.feasible,
        "makespan": report.result.makespan,
        "drawn_with": provenance(),
    }
    try:  # the record is written inside the figure's block: a record that fails leaves no figure
        with atomic_target(path, suffix=f".{fmt}") as tmp:
            fig.savefig(tmp, dpi=130, format=fmt)
            dump_json(record, record_path)
    finally:
        plt.close(fig)
    return [Path(path), record_path]


def provenance_path(figure: str | Path) -> Path:
    """The provenance file written beside a figure: ``NAME.provenance.json``."""
    figure = Path(figure)
    return figure.with_name(figure.stem + ".provenance.json")


def add_caption(fig: Any, what: str) -> None:
    """A caption at the foot of ``fig``: what it shows, rar-opt's version and revision,
    Python's and the key packages' (:func:`rar_opt.support.provenance.caption`), wrapped to
    the figure's width so that none of it is cut off."""
    width_in, height_in = fig.get_size_inches()
    text = textwrap.fill(caption_text(what), width=max(40, int(width_in * 21)))  # ~21 characters of 6 pt per inch
    lines = text.count("\n") + 1
    fig.subplots_adjust(bottom=max(fig.subplotpars.bottom, 0.0) + (0.25 + 0.1 * lines) / height_in)
    fig.text(0.005, 0.005, text, fontsize=6, ha="left", va="bottom", color="dimgrey")


def _heights(instance: Instance, schedule: Schedule, report: Any) -> np.ndarray:
    """Lanes drawn per server: its GPUs, or more when an infeasible schedule overfills it."""
    lanes = _lanes(instance, schedule, report.feasible)
    cap = np.array(instance.cluster.servers)
    return np.maximum(cap, [max([lane + 1 for s2, lane in _all(lanes) if s2 == s] or [0]) for s in range(len(cap))])


def draw_schedule(
    instance: Instance, schedule: Schedule, report: Any, gantt: Any, cont: Any, span: float | None = None
) -> None:
    """Draw ``schedule`` (checked: ``report``) into two axes: the Gantt chart per GPU and
    c_s[t] per server, over slots up to ``span`` (default: its own last completion)."""
    import matplotlib

    res = report.result
    lanes = _lanes(instance, schedule, report.feasible)
    cap = np.array(instance.cluster.servers)
    height = _heights(instance, schedule, report)
    offset = np.concatenate([[0], np.cumsum(height)[:-1]])
    end_of = res.completion if res.all_complete else np.where(res.stalled, instance.horizon, res.completion)
    span = float(max(int(np.max(end_of)), 1)) if span is None else span
    cmap = matplotlib.colormaps["turbo"]
    # a label needs about FONT points of height and some width: each server segment of a
    # job (a run of adjacent GPU rows) is labelled where it has room
    points_per_lane = 0.75 * 72 * gantt.figure.get_size_inches()[1] * 0.75 / float(height.sum())
    lanes_for_label = int(np.ceil(FONT / max(points_per_lane, 1e-9)))
    for j, ids in enumerate(lanes):
        start, end = int(schedule.starts[j]), int(end_of[j])
        colour = job_colour(cmap, j)
        for s, lane in ids:
            gantt.broken_barh([(start, end - start)], (offset[s] + lane + 0.05, 0.9), color=colour, linewidth=0)
        release = instance.jobs[j].release
        if release > 0 and ids:  # its release: a mark, and a dotted wait up to its start (docs/arrivals.md)
            s, lane = ids[0]
            y = offset[s] + lane + 0.5
            gantt.plot([release], [y], marker=">", markersize=4, color="black", linewidth=0)
            if start > release:
                gantt.plot([release, start], [y, y], linestyle=":", linewidth=0.8, color="black")
        if not ids or (end - start) < 0.03 * span:
            continue
        for s in sorted({s for s, _ in ids}):
            for run in _runs(sorted(lane for s2, lane in ids if s2 == s)):
                if len(run) >= lanes_for_label:
                    # the middle lane's centre (the lower of the two middle ones for an even run):
                    # never the gap between two lanes, where the bars' edges cut the text
                    middle = offset[s] + run[(len(run) - 1) // 2] + 0.5
                    text = gantt.text(start + 0.15, middle, str(j), va="center", fontsize=FONT)
                    text.set_color("white" if _dark(colour) else "black")
    for s in range(len(cap)):
        if height[s] > cap[s]:  # GPUs that do not exist: an infeasible schedule drawn anyway
            gantt.axhspan(offset[s] + cap[s], offset[s] + height[s], color="red", alpha=0.15, linewidth=0)
        gantt.axhline(offset[s], color="grey", linewidth=0.6)
    if float(height.sum()) <= LANE_TICKS:  # every GPU row labelled: server s, GPU g
        rows = [(offset[s] + g + 0.5, f"s{s} g{g}") for s in range(len(cap)) for g in range(int(height[s]))]
        gantt.set_yticks([y for y, _ in rows])
        gantt.set_yticklabels([t for _, t in rows], fontsize=FONT - 1)
        gantt.set_ylabel("GPU (server s, GPU g)", fontsize=FONT + 1)
    else:
        gantt.set_yticks(offset + height / 2)
        gantt.set_yticklabels([f"server {s} ({cap[s]} GPUs)" for s in range(len(cap))], fontsize=FONT)
    gantt.set_ylim(0, float(height.sum()))
    title = f"{instance.name}: makespan {res.makespan}, average JCT {_fmt(res.avg_jct)}"
    if not report.feasible:  # the kinds of violation, counted; the details go to the first lines
        kinds = sorted(report.names())
        counts = ", ".join(f"{k} x{sum(v.constraint == k for v in report.violations)}" for k in kinds)
        title += f"\nINFEASIBLE: {counts}\n" + "\n".join(textwrap.shorten(str(v), 110) for v in report.violations[:3])
    gantt.set_title(title, fontsize=FONT + 2, color="black" if report.feasible else "red")
    _contention(cont, res, len(cap))
    cont.set_xlabel("slot", fontsize=FONT + 1)
    cont.set_xlim(min(0, int(np.min(schedule.start_array))), span)
    integer_slots(cont)


def integer_slots(ax: Any) -> None:
    """Slot ticks on whole slots only (at most about a dozen of them)."""
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(nbins=12, integer=True))
    ax.tick_params(labelsize=FONT)


def job_colour(cmap: Any, j: int) -> Any:
    """Job j's colour: the golden-ratio walk through the colour map (neighbours differ)."""
    return cmap(0.08 + 0.84 * ((j * GOLDEN) % 1.0))


def legend_of_jobs(instance: Instance, schedule: Schedule, ax: Any) -> None:
    """A legend naming the jobs (``id: name (GPUs)``) beside the chart, up to LEGEND_JOBS
    jobs; with more, the ids on the bars are all there is room for."""
    import matplotlib
    from matplotlib.patches import Patch

    if instance.num_jobs > LEGEND_JOBS:
        return
    cmap = matplotlib.colormaps["turbo"]
    handles = [
        Patch(color=job_colour(cmap, j), label=f"{j}: {job.name} ({job.gpus})") for j, job in enumerate(instance.jobs)
    ]
    ax.legend(
        handles=handles,
        title="job: name (GPUs)",
        title_fontsize=FONT,
        fontsize=FONT,
        loc="upper left",
        bbox_to_anchor=(1.005, 1.0),
        ncol=1 + instance.num_jobs // 20,
        frameon=False,
        borderaxespad=0.0,
    )


def _runs(lanes: list[int]) -> list[list[int]]:
    """Sorted lane numbers split into runs of adjacent ones."""
    out: list[list[int]] = []
    for lane in lanes:
        if out and lane == out[-1][-1] + 1:
            out[-1].append(lane)
        else:
            out.append([lane])
    return out


def _dark(colour: Any) -> bool:
    """Whether text on ``colour`` reads better in white (its luminance is low)."""
    r, g, b = colour[:3]
    return 0.299 * r + 0.587 * g + 0.114 * b < 0.5


def _contention(ax: Any, res: Any, n_servers: int) -> None:
    """c_s[t] per server through the last slot: lines for a few servers, a heat map for many."""
    if not res.segments:
        return
    trace = res.trace()
    values = trace.contention  # (slots, servers)
    slots = np.arange(trace.origin, trace.origin + len(values) + 1)  # edges: the last slot is drawn whole
    if n_servers <= 6:
        top = max(int(values.max()), 1)
        styles = ["-", "--", "-.", ":"]
        for s in range(n_servers):
            # the true values, no offsets: lines that coincide stay visible because the
            # later ones are thinner and dashed differently
            y = np.append(values[:, s], values[-1, s])
            width = max(3.0 - 0.45 * s, 0.8)
            ax.step(slots, y, where="post", label=f"server {s}", linewidth=width, linestyle=styles[s % 4])
        ax.set_yticks(range(top + 1))
        ax.set_ylim(-0.15, top + 0.3)
        ax.tick_params(labelsize=FONT)
        ax.legend(fontsize=FONT, ncol=1, loc="upper left", bbox_to_anchor=(1.005, 1.0), frameon=False)
    else:
        image = ax.pcolormesh(slots, np.arange(n_servers + 1), values.T, cmap="Greys", shading="flat")
        bar = ax.inset_axes((1.005, 0.0, 0.012, 1.0))  # outside the axes: the x axes stay aligned
        ax.figure.colorbar(image, cax=bar, label="c_s")
        step = max(1, n_servers // 10)
        ax.set_yticks(np.arange(0, n_servers, step) + 0.5)
        ax.set_yticklabels([str(s) for s in range(0, n_servers, step)], fontsize=FONT)
    ax.set_ylabel("split jobs c_s" if n_servers <= 6 else "server (shade: c_s)", fontsize=FONT + 1)


def _lanes(instance: Instance, schedule: Schedule, feasible: bool) -> list[list[tuple[int, int]]]:
    """(server, lane) per GPU of every job: the schedule's own GPU ids when they are valid,
    else the lowest free lanes (which may go past a server's capacity when it is overloaded)."""
    if feasible:
        ids = (schedule if schedule.gpu_ids is not None else assign_gpu_ids(instance, schedule)).gpu_ids
        return [list(g or ()) for g in ids or ()]
    starts = schedule.start_array
    ends = starts + np.maximum(check(instance, schedule).result.completion - starts, 1)
    busy: dict[int, list[int]] = {}  # lane -> end slot, per server
    out: list[list[tuple[int, int]]] = [[] for _ in range(instance.num_jobs)]
    for j in np.argsort(starts, kind="stable"):
        for s, count in enumerate(schedule.placements[j]):
            lanes = busy.setdefault(s, [])
            for _ in range(max(int(count), 0)):
                free = next((i for i, e in enumerate(lanes) if e <= starts[j]), None)
                if free is None:
                    lanes.append(0)
                    free = len(lanes) - 1
                lanes[free] = int(ends[j])
                out[j].append((s, free))
    return out


def _all(lanes: list[list[tuple[int, int]]]) -> list[tuple[int, int]]:
    return [x for ids in lanes for x in ids]


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"
