"""The JCT part of docs/bounds-table.md from the rows of ``benchmarks/jct_table.py``
(``python benchmarks/jct_table.py --markdown``): per size and preset, every instance,
every policy's ratio to the bound, how the rows were made.

Beside the rows of the run, two more sources may enter the page:

* ``before``: the same instances on an earlier commit (a results file of the same
  benchmark), shown as *before* columns, with a label that says which commit;
* the schedules kept in ``benchmarks/results/schedules/<instance>-jct.schedule.json``
  (found by longer searches than the table's), shown as *best known* where they beat the
  row's own. The caller checks each against its instance (:func:`rar_opt.check.check`)
  and passes its sum; a kept schedule that fails the checker is refused there.
"""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path
from typing import Any

DOC = Path(__file__).resolve().parent.parent / "docs" / "bounds-table.md"
BEGIN, END = "<!-- jct-table: begin (benchmarks/jct_table.py --markdown) -->", "<!-- jct-table: end -->"
KEPT = Path(__file__).resolve().parent / "results" / "schedules"
"""Where schedules better than a row's, found by longer runs, are kept (``<instance>-jct.schedule.json``)."""

BEFORE_BACKFILL = "the commit before `auto` had its backfill phase (docs/algorithms.md section 5.5)"
"""The label of the first ``before`` file (``jct-table-before.json``)."""


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.2%}"


def by_name(path: Path | None) -> dict[str, dict[str, Any]]:
    """The rows of a results file by instance name (empty without a file)."""
    if path is None or not path.exists():
        return {}
    return {r["instance"]: r for r in json.loads(path.read_text())["rows"]}


def _migratory(r: dict[str, Any], earlier: dict[str, dict[str, Any]]) -> float | None:
    """The gap of the best migratory schedule over the same bound (the earlier run's
    backfill evidence; the flow LP is unchanged since), or None where not measured."""
    e = earlier.get(r["instance"], {}).get("backfill")
    return None if e is None else e["migratory_gap"]


def markdown(
    data: dict[str, Any],
    before: dict[str, dict[str, Any]],
    earlier: dict[str, dict[str, Any]],
    before_label: str = BEFORE_BACKFILL,
    kept: dict[str, int] | None = None,
    before_name: str = "jct-table-before",
) -> str:
    """The JCT part of docs/bounds-table.md: per size and preset (with the rows of
    ``before``, the same instances on the commit ``before_label`` names), every instance
    (with the checked sum of its kept schedule, ``kept``, where it is lower), every
    policy's ratio, then how the rows were made."""
    rows = [_with_kept(r, (kept or {}).get(r["instance"])) for r in data["rows"]]
    groups: dict[tuple[str, str, str], list[dict]] = {}
    for r in rows:
        kind = r["kind"] if r["kind"] != "paper" else r["preset"]
        groups.setdefault((r["size"], kind, r["objective"]), []).append(r)
    secs = data["seconds"]
    lines = [
        BEGIN,
        "",
        "## Average JCT",
        "",
        "How far from optimal is the best average job completion time (JCT) known? For each",
        f'instance below, `solve(inst, "auto", objective="total")` within {secs:g} s on one thread',
        "gives the best schedule it finds for the total completion time sum_j C_j and the best",
        "lower bound it proves; the average JCT is sum_j C_j / J, so the certified gap",
        "(best - bound) / bound is the same on both. Goals (issue 31): gap ≤ 1% on every",
        "160 x 20 instance of every preset, ≤ 3% at 160 x 10 and 320 x 20. The other rows are",
        "reported without a goal; with Poisson arrivals (`L0.9`) the objective is the flow time",
        "sum_j (C_j - r_j), and the JCT counts from each job's arrival. *Before*: the same",
        f"instances, limit and seed on {before_label}.",
        "",
        "### Per size and preset",
        "",
        "| size | preset | within goal | before | mean gap | before | max gap | before | bound by | auto s (CPU s) "
        "| max migratory |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (size, kind, objective), g in groups.items():
        goal = g[0]["goal"]
        old = [before[r["instance"]] for r in g if r["instance"] in before]
        within = "-" if goal is None else f"{sum(r['within_goal'] for r in g)}/{len(g)} (≤ {goal:.0%})"
        was = "-" if goal is None or len(old) < len(g) else f"{sum(r['within_goal'] for r in old)}/{len(old)}"
        by = ", ".join(sorted({r["bound_by"] for r in g}))
        label = kind + (" (flow)" if objective == "flow" else "")
        migr = [m for m in (_migratory(r, earlier) for r in g) if m is not None]
        cpu = [r["auto_cpu_s"] for r in g if "auto_cpu_s" in r]
        secs_cell = f"{statistics.fmean(r['auto_s'] for r in g):.0f}" + (
            f" ({statistics.fmean(cpu):.0f})" if len(cpu) == len(g) else ""
        )
        old_mean = _pct(statistics.fmean(r["gap"] for r in old)) if len(old) == len(g) else "-"
        old_max = _pct(max(r["gap"] for r in old)) if len(old) == len(g) else "-"
        lines.append(
            f"| {size} | {label} | {within} | {was} | {_pct(statistics.fmean(r['gap'] for r in g))} | {old_mean} "
            f"| {_pct(max(r['gap'] for r in g))} | {old_max} | {by} | {secs_cell} "
            f"| {_pct(max(migr)) if migr else '-'} |"
        )
    lines += [
        "",
        "*within goal*: instances whose certified gap meets the issue's goal for that size",
        "(*before*: on the earlier commit); *bound by*: the bounds that gave",
        "the best bound (`flow_lp`, the time-indexed LP on the GPU pool with server classes;",
        "`completion_rank`, the per-rank floor); *auto s (CPU s)*: the mean wall seconds",
        "`auto` used of its limit and the CPU seconds it got in them (fewer where the machine was shared);",
        "*max migratory*: the largest gap of a migratory schedule over the bound, the most any",
        "cut on the flow LP's variables could add (docs/exactness.md, \"What a slot-by-slot",
        'bound cannot see"; measured on the rows that missed before, with the same bound);',
        "`-` where not measured.",
        "",
        "### Every instance",
        "",
        "| instance | avg JCT | by | s | bound | by | s | gap | before | makespan | best known | its gap "
        "| held by | migratory |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        old = before.get(r["instance"])
        migr = _migratory(r, earlier)
        lines.append(
            f"| {r['instance']} | {r['best_avg']:.2f} | {r['best_by']} | {r['best_s']:.0f} | {r['bound_avg']:.2f} "
            f"| {r['bound_by']} | {r['bound_s']:.0f} | {_pct(r['gap'])} | {_pct(old and old['gap'])} "
            f"| {r['best_makespan']} | {_known(r)} | {_pct(r.get('known_gap'))} | {r['held_by']} | {_pct(migr)} |"
        )
    lines += [
        "",
        "*avg JCT* and its *by*, *s*: the best average JCT, the phase of `auto` that found it",
        "(`backfill`, the backfilling search; `improve`, the search over the engine's job",
        "orders; a policy's name: that policy in the heuristics phase) and that phase's",
        "seconds. *bound*, *by*, *s*: the best lower bound on the average JCT, the bound that",
        "proved it and its seconds. *gap*, *before*: the certified gap, and the gap on the",
        "earlier commit. *makespan*: that schedule's makespan (the price of the short JCT:",
        "compare the makespan table above). *best known*, *its gap*: the average JCT of a",
        "schedule kept from a longer search (`benchmarks/results/schedules/`, checked by the",
        "checker when the page is written) where it beats the row's, and its certified gap to",
        "the same bound; `-` where none is kept. *held by* (where the gap is open beyond the",
        "goal, or on a reported row): `schedule` where a kept schedule meets the goal (a",
        "schedule within it exists, and the run did not find it); `bound` where the LP stopped at its time",
        "limit with a Lagrangian value below its optimum; `bound?` where the best schedule",
        "spends a share of extra time (contention, overhead and splitting over each job's",
        "fastest run, `rar_opt.shares.realized_shares`) at least as large as the gap, time the",
        "LP counts nowhere, so a loose bound is likely but not proven; `unknown` otherwise;",
        "`-` within the goal. *migratory*: the gap of the best migratory schedule (jobs may",
        "change servers between slots, never split) that `benchmarks/backfill_search.py`",
        "found on that row in the earlier run, which caps what any cut on the flow LP's",
        "variables could add to the bound.",
    ]
    names = list(rows[0]["policies"]) if rows else []
    if names:
        lines += [
            "",
            "### Every policy's JCT ratio to the bound",
            "",
            "Each policy's average JCT over the instance's bound (the table above), each with its",
            "defaults (`backfill`: 200 moves). *best*: the best of `auto` over the bound (1 + gap).",
            "",
            "| instance | best | " + " | ".join(names) + " |",
            "|---|---|" + "---|" * len(names),
        ]
        for r in rows:
            ratios = " | ".join(f"{r['policies'][n]['ratio']:.3f}" for n in names)
            lines.append(f"| {r['instance']} | {1 + r['gap']:.3f} | {ratios} |")
    lines += [
        "",
        "### How the JCT rows were made",
        "",
        f"By `benchmarks/jct_table.py` (rows in `benchmarks/results/{data.get('name', 'jct-table')}.json`, the rows",
        f"before in `benchmarks/results/{before_name}.json`): per",
        f"instance, `auto` on the total completion time with {secs:g} s of wall clock and seed 0",
        "on one thread, with the phases of its commit (docs/exactness.md,",
        '"`auto` for the total completion and flow time": the heuristics of `SUM_POLICIES`, the floors, the flow LP,',
        "`improve` aimed at the sum, the backfilling search, the exact neighbourhoods where the",
        "CP-SAT model does not fit, which it does not at these sizes),",
        "the best schedule re-simulated; every policy of `POLICIES` judged by the simulator",
        "with the instance's seed. The run records, beside `solve`'s phases, whether the LP",
        "reached its optimum (`lp` in each row), and the CPU seconds and load average around",
        "each `auto`. "
        + (f"Commit {data['commit'][:10]}; " if data.get("commit") else "")
        + "versions: "
        + ", ".join(f"{k} {v}" for k, v in sorted(data["versions"].items()))
        + ".",
        "Each run got at most the wall clock given, and the CPU seconds its row records",
        "(`auto_cpu_s`; the machine has two cores).",
    ]
    lines += _shows(rows, before, before_label)
    missed = [r for r in rows if r["goal"] is not None and not r["within_goal"]]
    if missed:
        cells = [f"`{r['instance']}` {_pct(r['gap'])} (migratory {_pct(_migratory(r, earlier))})" for r in missed]
        lines += [
            "",
            "The goal rows still missed: " + ", ".join(cells) + ". Their migratory schedules are within the",
            "percentage given of the same bound, so no cut on the LP's variables could close more than that:",
            "the rest of each gap is the schedules' (or a bound that fixes each job's servers for its run).",
        ]
    if data.get("note"):
        lines += ["", data["note"]]
    lines += ["", END]
    return "\n".join(lines) + "\n"


def _shows(rows: list[dict[str, Any]], before: dict[str, dict[str, Any]], before_label: str) -> list[str]:
    """What the goal rows show, before and after, per preset (from the rows)."""
    goal = [r for r in rows if r["goal"] is not None and r["instance"] in before]
    if not goal:
        return []
    out = ["", f"What the rows show, per preset (goal rows; before: {before_label}):", ""]
    for preset in sorted({r["preset"] for r in goal}):
        g = [r for r in goal if r["preset"] == preset]
        old = [before[r["instance"]] for r in g]
        by = sorted({r["best_by"] for r in g})
        out.append(
            f"* `{preset}`: within the goal {sum(r['within_goal'] for r in old)} of {len(g)} before, "
            f"{sum(r['within_goal'] for r in g)} of {len(g)} after; gaps {_pct(min(r['gap'] for r in old))} to "
            f"{_pct(max(r['gap'] for r in old))} before, {_pct(min(r['gap'] for r in g))} to "
            f"{_pct(max(r['gap'] for r in g))} after; best schedules by {', '.join(by)}."
        )
    return out


def _with_kept(r: dict[str, Any], total: int | None) -> dict[str, Any]:
    """The row with its kept schedule's sum (``known``, ``known_gap``) where that beats the
    row's best; a kept schedule within the goal puts the row's miss on the schedule side."""
    if total is None or total >= r["best"]:
        return r
    gap = (total - r["bound"]) / r["bound"]
    out = {**r, "known": total, "known_avg": total / r["jobs"], "known_gap": gap}
    if r["goal"] is not None and not r["within_goal"] and gap <= r["goal"] + 1e-12:
        out["held_by"] = "schedule"
        out["held_why"] = f"a kept schedule has gap {gap:.2%}: within the goal"
    return out


def _known(r: dict[str, Any]) -> str:
    return "-" if "known_avg" not in r else f"{r['known_avg']:.2f}"


def write_markdown(part: str) -> None:
    """Replace the marked JCT region of docs/bounds-table.md with ``part`` (what
    :func:`markdown` gives; appended when the region is absent)."""
    text = DOC.read_text() if DOC.exists() else ""
    pattern = re.compile(re.escape(BEGIN) + r".*?" + re.escape(END) + r"\n?", re.S)
    text = pattern.sub(lambda _: part, text) if pattern.search(text) else text.rstrip("\n") + "\n\n" + part
    DOC.write_text(text)
