"""The classical baselines beside one policy on one stored instance, on both metrics.

A worst-case search (:mod:`rar_opt.studies.worst`) runs its one policy on every candidate:
its fitness is that policy's ratio, and its tasks (their inputs, their keys in the store,
so resuming) hold that policy alone. The instances a search reports are few, so the
classical baselines (:data:`rar_opt.algorithms.BASELINES`: ``lpt``, longest first, for the
makespan; ``sjf-oblivious``, shortest first, for the average JCT) are judged beside it
when the report is made, by :func:`beside`: each through
:func:`rar_opt.studies.evaluation.judge`, as a study's task judges every policy (with the
task's seed), and measured against the row's references on both of the paper's metrics:

* the makespan: the row's proven optimum; when it is not proven, the row's best lower
  bound and the best makespan known (the row's, or a baseline's that ends within T and is
  shorter);
* the average JCT: the row's reference (:func:`rar_opt.studies.tasks.jct_reference_of`),
  which is the proven optimum where the row's flow solve proved it (a study's generated
  instances, a search's random ones); otherwise the best lower bound is the larger of the
  row's and the registry's bounds on the total completion time over J, its solver bounds
  (the flow LP) given ``bound_time_limit`` seconds each
  (:func:`rar_opt.studies.evaluation.total_bounds`, the function a study's task uses).

Nothing is stored: the store, its rows and the search stay as they were. A policy the row
already has (the searched one; in a study's row the baselines too) is taken from the row.
The ratios are :func:`~rar_opt.studies.evaluation.makespan_ratios` and
:func:`~rar_opt.studies.evaluation.jct_ratios`; a run whose schedule ends after T has none
(the report's rule, :func:`rar_opt.studies.tasks.within_horizon`). Why at report time and
not in the store: docs/studies.md, "The baselines beside the verdict".
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from rar_opt.algorithms import BASELINES, with_baselines
from rar_opt.studies.evaluation import jct_ratios, judge, makespan_ratios, total_bounds
from rar_opt.studies.store import TaskRow
from rar_opt.studies.tasks import instance_of, jct_reference_of, within_horizon

STORED, JUDGED = "store", "judged now"
"""Where a run's makespan and average JCT come from: the row, or :func:`judge` at report time."""


@dataclass(frozen=True)
class BesideRun:
    """One policy on the instance: its makespan and average JCT, and their ratios."""

    policy: str
    baseline_for: tuple[str, ...]  # the metrics it is the classical baseline of ("makespan", "avg_jct")
    source: str  # STORED or JUDGED
    makespan: int
    avg_jct: float
    feasible: bool  # ends within T; a run past T is no answer and has no ratio
    ratio: float | None  # ALG / OPT, when the optimum is proven
    ratio_low: float | None  # ALG / the best makespan known: at most ALG / OPT
    ratio_high: float | None  # ALG / the best lower bound: at least ALG / OPT
    jct_ratio_low: float | None  # average JCT / the best known: at most ALG / OPT
    jct_ratio_high: float | None  # average JCT / the best lower bound (the optimum when proven): at least ALG / OPT


@dataclass(frozen=True)
class Beside:
    """A policy and the classical baselines on one stored instance, against its references."""

    instance: str
    key: str
    policy: str  # the policy the verdict is about (the one searched)
    proven: bool  # the makespan's optimum
    optimum: int | None
    lower_bound: int
    best_makespan: int
    jct_proven: bool  # the average JCT's optimum (the row's flow solve proved it)
    jct_lower: float | None  # the best lower bound on the average JCT (the optimum when proven)
    jct_best: float | None  # the best average JCT known within T
    jct_bound_by: str | None  # what gave jct_lower: "optimum", a registry bound's name, or "row"
    runs: tuple[BesideRun, ...]  # the policy first, then the baselines

    def run(self, policy: str) -> BesideRun:
        """The run of ``policy``."""
        return next(r for r in self.runs if r.policy == policy)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready values; ``runs`` as an object by policy."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "runs"}
        runs = {}
        for r in self.runs:
            fields = dataclasses.asdict(r)
            del fields["policy"]
            runs[r.policy] = {**fields, "baseline_for": list(r.baseline_for)}
        return {**out, "runs": runs}


def beside(row: TaskRow, policy: str, bound_time_limit: float | None = None) -> Beside:
    """``policy`` (a policy of ``row``) and the classical baselines on ``row``'s instance
    against its optimum or best bound, on the makespan and the average JCT; the baselines
    the row lacks are judged now. ``bound_time_limit``: seconds for each of the registry's
    solver bounds on the total completion time, when the row has no proven average JCT."""
    out = row.outputs
    instance = instance_of(row.inputs)
    seed = int(row.inputs.get("seed") or 0)
    names = with_baselines([policy])
    raw: dict[str, tuple[str, int, float, bool]] = {}  # source, makespan, average JCT, within T
    for name in names:
        stored = out["policies"].get(name)
        if stored is not None:
            raw[name] = (STORED, int(stored["makespan"]), float(stored["avg_jct"]), within_horizon(stored))
        else:
            run = judge(instance, name, seed=seed)
            raw[name] = (JUDGED, run.makespan, run.avg_jct, run.feasible)
    now = [v for v in raw.values() if v[0] == JUDGED and v[3]]  # new answers within T

    optimum = out["optimum"] if out["proven"] else None
    lower = int(out["lower_bound"])
    best = min([int(out["best_makespan"]), *(v[1] for v in now)])

    ref = jct_reference_of(out)
    jct_lower: float | None
    jct_best: float | None
    if ref is not None and ref.proven:
        jct_lower, jct_best, by = ref.lower, ref.best, "optimum"
    else:
        total = total_bounds(instance, bound_time_limit, seed)
        jct_lower, by = total.best / instance.num_jobs, total.best_by
        if ref is not None and ref.lower is not None and ref.lower > jct_lower:  # e.g. an unproven flow solve's
            jct_lower, by = ref.lower, "row"
        jct_best = min([*(v[2] for v in now), *([ref.best] if ref is not None else [])], default=None)

    runs = []
    for name, (source, span, avg, feasible) in raw.items():
        nothing: dict[str, float | None] = {}  # a run past T: no ratio
        spans = makespan_ratios(span, optimum, best, lower) if feasible else nothing
        jcts = jct_ratios(avg, jct_best, jct_lower) if feasible else nothing
        runs.append(
            BesideRun(
                name,
                tuple(metric for metric, baseline in BASELINES.items() if baseline == name),
                source,
                span,
                avg,
                feasible,
                spans.get("ratio"),
                spans.get("ratio_low"),
                spans.get("ratio_high"),
                jcts.get("jct_ratio_low"),
                jcts.get("jct_ratio_high"),
            )
        )
    return Beside(
        out["instance"],
        row.key,
        policy,
        optimum is not None,
        optimum,
        optimum if optimum is not None else lower,
        optimum if optimum is not None else best,
        bool(ref is not None and ref.proven),
        jct_lower,
        jct_best,
        by,
        tuple(runs),
    )
