"""The best-known table for the average job completion time (JCT) at paper scale (issue 31):
per instance the best average JCT that ``auto`` finds for the total completion time within
``--seconds`` on one thread, the best proven lower bound (total / J) and the phase that
proved it, the certified gap (best - bound) / bound, the makespan of that schedule, and
every registered policy's average JCT and its ratio to the bound.

Instances, in this order (the first three groups carry the issue's goals; the rest are
reported): the paper generator at 160 x 20 for every preset, seeds 0-2; 160 x 10 and
320 x 20 for every preset, seeds 0-2; 640 x 20 paper-literal, seeds 0-1; the homogeneous
clusters (``paper-8gpu``, ``paper-4gpu``) at 160 x 20, seeds 0-1; Poisson arrivals at load
0.9 at 160 x 20, seeds 0-1, where the objective is the flow time sum_j (C_j - r_j) (the
average JCT then counts from each job's arrival).

    python benchmarks/jct_table.py [--seconds 60] [--groups goal160,goal,640,homog,arrivals]
    python benchmarks/jct_table.py --markdown     # the JCT part of docs/bounds-table.md

Rows are stored as they finish (benchmarks/results/jct-table.json); a stopped run keeps
them, and a new run skips the instances already stored (``--fresh`` starts over).

Besides what ``solve`` records, the run keeps what the flow LP itself reports (solved to
its optimum, or stopped at its time limit with a Lagrangian value): the benchmark wraps
``rar_opt.solvers.flowlp.flow_lp_bound`` (the registry's bound calls it through its
module) to record its answer (the bound is unchanged).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

from common import RESULTS, result_name, save
from jct_markdown import BEFORE_BACKFILL, KEPT, by_name, markdown, write_markdown

import rar_opt.solvers.flowlp as flowlp
from rar_opt.algorithms import POLICIES
from rar_opt.check import check
from rar_opt.instances.calibration import PRESETS
from rar_opt.instances.generate import generate
from rar_opt.schedule import Schedule
from rar_opt.shares import realized_shares
from rar_opt.solvers import solve
from rar_opt.solvers.record import PhaseKind
from rar_opt.studies.evaluation import judge

NAME = "jct-table"
GOALS = {"160x20": 0.01, "160x10": 0.03, "320x20": 0.03}
"""Issue 31's goals on the certified gap (paper generator, every preset, all at slot 0)."""

_LP: list[Any] = []  # what each flow LP call answered (the benchmark's own record)
_lp_bound = flowlp.flow_lp_bound


def _recording_lp(*args: Any, **kwargs: Any) -> Any:
    found = _lp_bound(*args, **kwargs)
    _LP.append(found)
    return found


flowlp.flow_lp_bound = _recording_lp


def instances(groups: list[str]) -> list[dict[str, Any]]:
    """The instances of the groups asked, in the order of priority."""
    out: list[dict[str, Any]] = []
    for group in groups:
        if group == "goal160":
            out += [dict(kind="paper", preset=p, jobs=160, servers=20, seed=s) for p in PRESETS for s in range(3)]
        elif group == "goal":
            for jobs, servers in ((160, 10), (320, 20)):
                out += [
                    dict(kind="paper", preset=p, jobs=jobs, servers=servers, seed=s) for p in PRESETS for s in range(3)
                ]
        elif group == "640":
            out += [dict(kind="paper", preset="paper-literal", jobs=640, servers=20, seed=s) for s in range(2)]
        elif group == "homog":
            out += [
                dict(kind=k, preset="paper-literal", jobs=160, servers=20, seed=s)
                for k in ("paper-8gpu", "paper-4gpu")
                for s in range(2)
            ]
        elif group == "arrivals":
            out += [
                dict(kind="paper", preset="paper-literal", jobs=160, servers=20, seed=s, load=0.9) for s in range(2)
            ]
        else:
            raise SystemExit(f"unknown group {group!r}")
    return out


def build(spec: dict[str, Any]):
    kw = dict(jobs=spec["jobs"], servers=spec["servers"])
    if spec["kind"] == "paper":
        kw["preset"] = spec["preset"]
    if spec.get("load") is not None:
        kw["load"] = spec["load"]
    return generate(spec["kind"], spec["seed"], **kw)


def instance_of(r: dict[str, Any]):
    """The instance of a stored row (rebuilt from its size, kind, preset, seed and load)."""
    jobs, servers = (int(x) for x in r["size"].split("x"))
    kind = r["kind"] if r["kind"] != "arrivals" else "paper"
    return build(dict(kind=kind, preset=r["preset"], jobs=jobs, servers=servers, seed=r["seed"], load=r["load"]))


def _bound_by(phases: list, bound_total: float) -> tuple[str, str, float | None]:
    """The phase whose bound is the best one: (phase kind, bound name, its seconds)."""
    best = None
    for p in phases:
        if p.bound is None:
            continue
        if p.kind == PhaseKind.FLOOR:
            name = max(p.floors, key=p.floors.get) if p.floors else "floor"
        elif p.kind == PhaseKind.RELAXATION:
            name = p.search or "relaxation"
        elif p.kind == PhaseKind.FULL:
            name = "cp-sat"
        else:
            continue
        if best is None or p.bound > best[3] + 1e-9:
            best = (str(p.kind), name, round(p.seconds, 2), p.bound)
    return (best[0], best[1], best[2]) if best else ("none", "none", None)


def holding_side(r: dict[str, Any]) -> tuple[str, str]:
    """Which side holds an instance back, from the row's own evidence (short tag, the
    reason). Rules, in order: the LP stopped at its time limit (its optimum is above the
    Lagrangian value reported) -> bound; the best schedule spends a share of extra time
    (contention + overhead + splitting over the fastest runs) at least the gap, which the LP
    counts nowhere -> bound (likely); otherwise unknown."""
    lp = r.get("lp") or {}
    extra = r["best_shares"]["contention"] + r["best_shares"]["overhead"] + r["best_shares"]["split"]
    if lp.get("method") == "lagrangian":
        return "bound", f"the LP stopped at its {lp['time_limit']:.0f} s limit (Lagrangian value, not its optimum)"
    if extra >= r["gap"]:
        return "bound?", f"the best schedule's extra time share {extra:.1%} >= gap: time the LP does not count"
    return "unknown", f"LP solved; the best schedule's extra time share {extra:.1%} < gap"


def row(spec: dict[str, Any], seconds: float, judge_policies: bool = True) -> dict[str, Any]:
    inst = build(spec)
    jobs = inst.num_jobs
    flow = spec.get("load") is not None
    objective = "flow" if flow else "total"
    mean_release = float(inst.releases.mean())
    policies = {}
    for name in POLICIES if judge_policies else ():
        run = judge(inst, name, seed=spec["seed"])
        avg = run.avg_jct - mean_release if flow else run.avg_jct
        policies[name] = {"avg_jct": round(avg, 3), "makespan": run.makespan, "seconds": round(run.wall_s, 2)}
    _LP.clear()
    load_before = os.getloadavg()[0]
    began, cpu = time.perf_counter(), time.process_time()
    res = solve(inst, "auto", objective=objective, time_limit=seconds, seed=0)
    wall, cpu = time.perf_counter() - began, time.process_time() - cpu
    phases = list(res.record.phases)
    shift = int(inst.releases.sum()) if flow else 0
    best, bound = int(res.objective), int(res.bound)
    phase_of, bound_by, bound_s = _bound_by(phases, bound + shift)
    source = res.schedule.meta.get("method")
    best_phase = next(
        (
            p
            for p in phases
            if (p.kind == PhaseKind.IMPROVE and source == (p.search or "improve"))
            or (p.kind == PhaseKind.FULL and source == "cpsat")
            or (p.kind == PhaseKind.HEURISTICS and p.tried and source in p.tried)
        ),
        None,
    )
    sim = check(inst, res.schedule).result
    shares = realized_shares(inst, res.schedule).to_dict()
    heur = next(p for p in phases if p.kind == PhaseKind.HEURISTICS)
    lp = _LP[-1] if _LP else None
    r = {
        "instance": inst.name,
        "kind": spec["kind"] if not flow else "arrivals",
        "preset": spec["preset"],
        "size": f"{spec['jobs']}x{spec['servers']}",
        "seed": spec["seed"],
        "objective": objective,
        "load": spec.get("load"),
        "jobs": jobs,
        "best": best,
        "best_avg": round(best / jobs, 3),
        "best_by": source,
        "best_s": None if best_phase is None else round(best_phase.seconds, 2),
        "best_makespan": int(sim.makespan),
        "best_shares": {k: round(v, 4) for k, v in shares.items()},
        "bound": bound,
        "bound_avg": round(bound / jobs, 3),
        "bound_phase": phase_of,
        "bound_by": bound_by,
        "bound_s": bound_s,
        "gap": round((best - bound) / bound, 5) if bound > 0 else None,
        "status": str(res.status),
        "stopped": res.record.stopped,
        "auto_s": round(wall, 2),
        "auto_cpu_s": round(cpu, 2),
        "load_avg": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "heuristics_best": heur.objective,
        "phases": [
            {
                "kind": str(p.kind),
                "search": p.search,
                "objective": p.objective,
                "bound": p.bound,
                "seconds": round(p.seconds, 2),
                **({"tried": dict(p.tried)} if p.tried else {}),
                **({"floors": dict(p.floors)} if p.floors else {}),
            }
            for p in phases
        ],
        "full_model": res.record.full_model,
        "lp": None
        if lp is None
        else {
            "method": lp.method,
            "proven": lp.proven,
            "lp_value": lp.lp_value,
            "seconds": round(lp.seconds, 2),
            "time_limit": lp.time_limit,
            "iterations": lp.iterations,
            "columns": lp.columns,
        },
        "policies": {
            n: {**p, "ratio": round(p["avg_jct"] / (bound / jobs), 4) if bound > 0 else None}
            for n, p in policies.items()
        },
    }
    goal = GOALS.get(r["size"]) if spec["kind"] == "paper" and not flow else None
    r["goal"] = goal
    r["within_goal"] = None if goal is None else bool(r["gap"] <= goal + 1e-12)
    if goal is not None:
        side, why = ("-", "") if r["within_goal"] else holding_side(r)
    else:
        side, why = holding_side(r) if r["gap"] > 0 else ("-", "")
    r["held_by"], r["held_why"] = side, why
    return r


def evidence(r: dict[str, Any], seconds: float) -> dict[str, Any]:
    """The schedule side's evidence on a row that misses: ``improve`` (the search ``auto``
    runs, from the LP's order, seed 0) given ``seconds`` of its own, with no iteration cap
    (``auto`` gave it the share of the limit in its row). A lower sum than the row's best
    shows that better schedules exist, so the schedule side holds at least that part."""
    from rar_opt.algorithms import run_policy
    from rar_opt.solvers.sum_best import sum_of

    inst = instance_of(r)
    lp = _lp_bound(inst, time_limit=60.0, seed=0)
    order = None
    if lp.mean_starts is not None:
        order = tuple(int(j) for j in sorted(range(inst.num_jobs), key=lambda j: lp.mean_starts[j]))
    began = time.perf_counter()
    run = run_policy(
        inst,
        "improve",
        objective="total",
        start_order=order,
        iterations=10**7,
        time_limit=seconds,
        seed=0,
    )
    used = time.perf_counter() - began
    total, span = sum_of(inst, run.schedule, r["objective"])
    gap = (total - r["bound"]) / r["bound"]
    return {
        "improve_seconds": seconds,
        "improve_used_s": round(used, 1),
        "from_lp_order": order is not None,
        "best": total,
        "best_avg": round(total / inst.num_jobs, 3),
        "makespan": span,
        "gap": round(gap, 5),
        "better_than_auto": total < r["best"],
    }


def backfill_evidence(r: dict[str, Any], seconds: float) -> dict[str, Any]:
    """Both sides' evidence from ``backfill_search`` (seed 0; ``seconds``, a third of it for
    the migratory search): the best
    checked schedule of the backfilling search on the servers (a lower sum than ``auto``'s
    puts at least that part of the gap on the schedule side), and the best sum of the
    migratory relaxation, which every bound that checks capacities slot by slot stays
    below (docs/exactness.md, "What a slot-by-slot bound cannot see")."""
    import backfill_search as bf

    inst = instance_of(r)
    lp = _lp_bound(inst, time_limit=60.0, seed=0)
    found = bf.on_servers(inst, lp.mean_starts, seconds)
    mig = bf.migratory(inst, lp.mean_starts, seconds / 3)
    shift = int(inst.releases.sum()) if r["objective"] == "flow" else 0
    total, ceiling = found.total - shift, mig.total - shift
    return {
        "seconds": seconds,
        "best": total,
        "best_avg": round(total / inst.num_jobs, 3),
        "gap": round((total - r["bound"]) / r["bound"], 5),
        "violations": found.violations,
        "split_jobs": found.split_jobs,
        "rule": found.rule,
        "moves": found.iterations,
        "better_than_auto": found.violations == 0 and total < r["best"],
        "migratory": ceiling,
        "migratory_avg": round(ceiling / inst.num_jobs, 3),
        "migratory_gap": round((ceiling - r["bound"]) / r["bound"], 5),
    }


def apply_backfill(r: dict[str, Any], e: dict[str, Any]) -> None:
    """Re-tag the row from its backfill evidence (``held_by``, ``held_why``)."""
    base = r.get("held_before_backfill", r["held_by"]), r.get("why_before_backfill", r["held_why"])
    r["held_before_backfill"], r["why_before_backfill"] = base
    cut = f"cuts on the flow LP's variables can raise the bound by at most {e['migratory_gap']:.2%}"
    best = min(r["best"], e["best"] if e["better_than_auto"] else r["best"])
    gap = (best - r["bound"]) / r["bound"]
    within = r["goal"] is not None and gap <= r["goal"] + 1e-12
    if e["better_than_auto"]:
        r["held_by"] = "schedule" if within else "schedule+"
        r["held_why"] = f"a backfilling search finds {e['best_avg']:.2f} (gap {e['gap']:.2%}, checked); {cut}"
        if not within:
            r["held_why"] += "; the rest: unknown"
    else:
        r["held_by"] = base[0]
        r["held_why"] = base[1] + f"; the backfilling search finds nothing better; {cut}"


def kept_sums(rows: list[dict[str, Any]]) -> dict[str, int]:
    """The sum of every kept schedule (``KEPT``) of a row's instance, judged by the checker;
    one that breaks a rule of the instance stops the run (it must not enter the page)."""
    out = {}
    for r in rows:
        path = KEPT / f"{r['instance']}-jct.schedule.json"
        if not path.exists():
            continue
        inst = instance_of(r)
        report = check(inst, Schedule.read(path))
        if report.violations or not report.result.all_complete:
            raise SystemExit(f"{path}: the kept schedule breaks the instance's rules: {report.violations[:3]}")
        shift = int(inst.releases.sum()) if r["objective"] == "flow" else 0
        out[r["instance"]] = int(report.result.completion.sum()) - shift
    return out


def _commit() -> str | None:
    try:
        return subprocess.run(
            ["git", "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
            cwd=Path(__file__).resolve().parent,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--groups", default="goal160,goal,640,homog,arrivals")
    parser.add_argument("--name", type=result_name, default=NAME, help="results file name (a smoke test: another name)")
    parser.add_argument("--limit", type=int, help="stop after this many new instances")
    parser.add_argument("--fresh", action="store_true", help="start over (default: skip the stored instances)")
    parser.add_argument("--no-policies", action="store_true", help="leave out every policy's own row (auto only)")
    parser.add_argument("--markdown", action="store_true", help="write the JCT part of docs/bounds-table.md")
    parser.add_argument("--before", help="with --markdown: the results file (name) of the same rows before a change")
    parser.add_argument("--before-label", default=BEFORE_BACKFILL, help="with --markdown: which commit --before is")
    parser.add_argument("--earlier", help="with --markdown: a results file (name) whose backfill evidence to show")
    parser.add_argument("--evidence", type=float, help="improve for this many seconds on the rows that miss a goal")
    parser.add_argument("--reported", action="store_true", help="with --evidence: also the reported rows with a gap")
    parser.add_argument("--only", help="with --evidence/--backfill: these instances only (comma-separated names)")
    parser.add_argument("--backfill", type=float, help="backfill_search for this many seconds on the rows that miss")
    args = parser.parse_args()
    path = RESULTS / f"{args.name}.json"
    if args.backfill:
        data = json.loads(path.read_text())
        for r in data["rows"]:
            missed = r["goal"] is not None and not r["within_goal"]
            if "backfill" in r or not (missed or (args.reported and r["goal"] is None and r["gap"] > 0)):
                continue
            if args.only and r["instance"] not in args.only.split(","):
                continue
            began = time.perf_counter()
            e = r["backfill"] = backfill_evidence(r, args.backfill)
            apply_backfill(r, e)
            data["backfill_seconds"] = args.backfill
            path.write_text(json.dumps(data, indent=1) + "\n")
            print(
                f"{r['instance']}: gap {r['gap']:.2%}, backfill {e['gap']:.2%} ({e['split_jobs']} split, "
                f"{e['violations']} violations), migratory {e['migratory_gap']:.2%}, {r['held_by']}, "
                f"{time.perf_counter() - began:.0f} s",
                flush=True,
            )
        return
    if args.evidence:
        data = json.loads(path.read_text())
        for r in data["rows"]:
            missed = r["goal"] is not None and not r["within_goal"]
            if "evidence" in r or not (missed or (args.reported and r["goal"] is None and r["gap"] > 0)):
                continue
            if args.only and r["instance"] not in args.only.split(","):
                continue
            e = r["evidence"] = evidence(r, args.evidence)
            if e["better_than_auto"]:
                within = r["goal"] is not None and e["gap"] <= r["goal"] + 1e-12
                r["held_by"] = "schedule" if within else "schedule+"
                r["held_why"] = (
                    f"improve with {args.evidence:g} s of its own finds {e['best_avg']:.2f} (gap {e['gap']:.2%})"
                    + ("" if within else "; the rest: " + r["held_why"])
                )
            else:
                r["held_why"] += f"; improve with {args.evidence:g} s of its own finds nothing better"
            data["evidence_seconds"] = args.evidence
            path.write_text(json.dumps(data, indent=1) + "\n")
            print(f"{r['instance']}: gap {r['gap']:.2%} -> {e['gap']:.2%} ({r['held_by']})", flush=True)
        return
    if args.markdown:
        before = by_name(RESULTS / f"{args.before}.json" if args.before else None)
        earlier = by_name(RESULTS / f"{args.earlier}.json" if args.earlier else None)
        data = json.loads(path.read_text())
        data["name"] = args.name
        kept = kept_sums(data["rows"])
        write_markdown(markdown(data, before, earlier, args.before_label, kept, args.before or "jct-table-before"))
        print(f"wrote the JCT part of docs/bounds-table.md ({len(kept)} kept schedules)")
        return
    stored = json.loads(path.read_text()) if path.exists() and not args.fresh else {"rows": []}
    rows = stored["rows"]
    done = {r["instance"] for r in rows}
    meta = {
        "seconds": args.seconds,
        "threads": 1,
        "solve_seed": 0,
        "commit": _commit(),
        "groups": args.groups,
        "policy_seeds": "the instance's seed",
    }
    new = 0
    for spec in instances(args.groups.split(",")):
        name = build(spec).name
        if name in done:
            continue
        if args.limit is not None and new >= args.limit:
            break
        r = row(spec, args.seconds, judge_policies=not args.no_policies)
        rows.append(r)
        new += 1
        save(args.name, rows, **meta)
        print(
            f"{r['instance']} {r['objective']}: best {r['best_avg']:.2f} ({r['best_by']}), bound {r['bound_avg']:.2f} "
            f"({r['bound_by']}, {r['bound_s']} s), gap {r['gap']:.2%}, makespan {r['best_makespan']}, "
            f"lp {r['lp'] and r['lp']['method']}, held {r['held_by']}, auto {r['auto_s']} s "
            f"({r['auto_cpu_s']} s CPU, load {r['load_avg']})",
            flush=True,
        )


if __name__ == "__main__":
    main()
