"""``study export``: the K worst instances of a store as instance files, and the store as
flat tables (one row per instance and one per instance x policy: :mod:`rar_opt.studies.tables`).

An exported instance file is the instance itself with, in its ``meta``, where it came from
(store, configuration, task key and inputs), its optimum and bound, each policy's makespan
and ratio, and the schedules of the policy and of the optimum, so that the test suite or a
paper can use it without the store (docs/formats.md describes instance files).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from rar_opt.algorithms import run_policy
from rar_opt.errors import InputError, ParameterError
from rar_opt.studies.beside import Beside, beside
from rar_opt.studies.store import TaskRow
from rar_opt.studies.tasks import instance_of, within_horizon
from rar_opt.support.checks import is_int
from rar_opt.support.jsonio import directory_problem, dump_json

INSTANCE_COLUMNS = (
    "key",
    "seq",
    "instance",
    "seed",
    "jobs",
    "servers",
    "gpus",
    "horizon",
    "status",
    "proven",
    "optimum",
    "lower_bound",
    "best_makespan",
    "theorem5_bound",
    "optimum_contention_share",
    "jct_reference",
    "jct_reference_kind",
    "best_avg_jct",
    "wall_s",
)
POLICY_COLUMNS = (
    "key",
    "instance",
    "policy",
    "makespan",
    "avg_jct",
    "ratio",
    "ratio_low",
    "ratio_high",
    "jct_ratio",
    "jct_ratio_low",
    "optimal",
    "exceeds_horizon",
    "feasible",
    "contention_share",
    "overhead_share",
)


def worst_rows(rows: list[TaskRow], k: int, policy: str | None = None) -> list[tuple[TaskRow, str, float]]:
    """The ``k`` proven rows of largest ALG/OPT (of ``policy``, or of the worst policy on each
    instance): (row, policy, ratio), worst first, ties in task order. A run whose schedule
    ends after T has no ratio here, as in the report."""
    if not is_int(k) or k < 1:
        raise ParameterError(f"must be an integer >= 1, got {k!r}", where="worst")
    scored = []
    for r in rows:
        if not r.outputs["proven"]:
            continue
        candidates = {
            name: p["ratio"]
            for name, p in r.outputs["policies"].items()
            if policy in (None, name) and within_horizon(p)  # a schedule past T is no answer (the report's rule)
        }
        if candidates:
            name = max(candidates, key=lambda n: candidates[n])  # the first of equal maxima, in key order
            scored.append((r, name, float(candidates[name])))
    if policy is not None and not scored:
        raise ParameterError(f"no proven instance has a ratio of {policy!r}", where="policy")
    scored.sort(key=lambda t: -t[2])  # a stable sort: equal ratios keep their task order
    return scored[:k]


def instance_file(
    row: TaskRow, policy: str, store: str, config: dict[str, Any], at: Beside | None = None
) -> dict[str, Any]:
    """The instance of ``row`` as an instance file's JSON, with its study record in meta:
    ``beside`` holds ``policy`` and the classical baselines on both metrics (``at``, or
    :func:`rar_opt.studies.beside.beside` of the row: a baseline the row lacks, as in a
    worst-case search's, is judged now)."""
    if at is None:
        at = beside(row, policy, config.get("time_limit"))
    instance = instance_of(row.inputs)
    schedule = run_policy(instance, policy, seed=int(row.inputs["seed"])).schedule
    record = {
        "store": store,
        "config": config,
        "key": row.key,
        "inputs": {k: v for k, v in row.inputs.items() if k != "instance"},
        "policy": policy,
        "ratio": row.outputs["policies"][policy]["ratio"],
        "optimum": row.outputs["optimum"],
        "status": row.outputs["status"],
        "theorem5_bound": row.outputs.get("theorem5_bound"),
        "solve": row.outputs["solve"],  # status, bound, method, backend and its options
        "policies": {n: {"makespan": p["makespan"], "ratio": p["ratio"]} for n, p in row.outputs["policies"].items()},
        "beside": at.to_dict(),
        "schedules": {policy: schedule.to_dict(), "optimum": row.outputs["optimum_schedule"]},
        "versions": row.versions,
    }
    meta = {**instance.meta, "known_optimum": row.outputs["optimum"], "study": record}
    return dataclasses.replace(instance, meta=meta).to_dict()


def export_worst(
    rows: list[TaskRow], k: int, directory: str | Path, store: str, config: dict[str, Any], policy: str | None = None
) -> list[Path]:
    """Write the ``k`` worst instances into ``directory`` (``NAME.json``); the paths written."""
    chosen = list(worst_rows(rows, k, policy))  # checks k before any directory is made
    if not chosen:  # no proven instance: nothing to write, and no empty directory either
        return []
    out = _directory(directory, "--output")
    written = []
    for row, name, _ in chosen:
        path = out / f"{row.outputs['instance']}.json"
        dump_json(instance_file(row, name, store, config), path)
        written.append(path)
    return written


def tables(rows: list[TaskRow]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The store as two flat tables: one row per instance, one per instance and policy."""
    from rar_opt.studies.report import jct_reference

    instances, policies = [], []
    for r in rows:
        o = r.outputs
        ref = jct_reference(r)  # what the report's JCT columns divide by: the proven optimum, else the bound
        jct = {}
        if ref is not None and ref.lower:
            kind = "optimum" if ref.proven else "bound"
            jct = {"jct_reference": ref.lower, "jct_reference_kind": kind, "best_avg_jct": ref.best}
        values = {**o, **jct, "key": r.key, "seq": r.seq, "seed": r.inputs.get("seed"), "wall_s": r.wall_s}
        instances.append({c: values.get(c) for c in INSTANCE_COLUMNS})
        for name, p in o["policies"].items():
            ratios: dict[str, Any] = {"feasible": within_horizon(p)}
            if not ratios["feasible"]:  # past T: no answer, beside no reference (the report's rule)
                ratios |= {"jct_ratio": None, "jct_ratio_low": None}
            elif jct and p.get("avg_jct") is not None and ref is not None:
                ratios |= {"jct_ratio": p["avg_jct"] / ref.lower, "jct_ratio_low": p["avg_jct"] / ref.best}
            policies.append(
                {
                    c: {**p, **ratios, "key": r.key, "instance": o["instance"], "policy": name}.get(c)
                    for c in POLICY_COLUMNS
                }
            )
    return instances, policies


def _directory(directory: str | Path, option: str) -> Path:
    out = Path(directory)
    if (problem := directory_problem(out)) is not None:
        raise InputError(problem, where=option, file=str(out))
    out.mkdir(exist_ok=True)
    return out
