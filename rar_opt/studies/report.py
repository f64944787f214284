"""``study report``: per policy, how far from the optimum over a store's instances.

Statistics of ALG/OPT are taken over the instances whose optimum is proven; the others
are counted apart (``unproven``), with the range their true ratio lies in (ALG / best
schedule known .. ALG / best lower bound). A run whose schedule ends after T is no answer
(:func:`rar_opt.studies.tasks.within_horizon`): it is in no statistic, of the makespan, the
flow or the average JCT, and is counted apart (``beyond_horizon``). Per policy: the count, the proven count, the
mean of ALG/OPT with a 95% confidence interval (Student's t over the instances), the
median, the 95th percentile, the maximum, the share of instances where the policy is
optimal, and the worst instance's name. Theorem 5's bound n_g varphi u / l is an
instance's own number; it is reported at each policy's worst instance and as its smallest
value over the store, beside the worst ratio (docs/studies.md).

Every generated row also holds each policy's total flow time against the flow optimum. In
a store of an arrival family (``tiny-arrivals``, ...) the same statistics of ALG/OPT for
flow are in ``Report.flow`` (over the instances whose flow optimum is proven; the others
counted apart); in the other stores the flow time is the total completion time, and its
ratios are the average JCT's.

The average JCT is reported beside the makespan (``Report.jct``, :func:`jct_stats`): per
policy its average JCT over the instance's reference, which is the proven optimal average
JCT where the row has one (its flow optimum is proven: the total completion time is the
flow time plus the releases) and otherwise the best lower bound the
row carries. The statistics are labelled ``ALG/OPT`` only when every reference is a proven
optimum; otherwise they are ratios to a bound, each at least the true ALG/OPT. The mean of
ALG over the best average JCT known (at most ALG/OPT) is given as the other end.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from rar_opt.algorithms import BASELINES, POLICIES
from rar_opt.instances.generate import GENERATOR_RANGES
from rar_opt.studies.store import TaskRow
from rar_opt.studies.tasks import ARRIVAL_FAMILIES, JctReference, jct_reference_of, within_horizon
from rar_opt.support.provenance import provenance

WORST_CASE_WARNING = (
    "this store holds a worst-case search: its instances were chosen to make the policy look bad, "
    "so these statistics describe adversarial instances, not a typical family member"
)


def _stats_dict(stats: Any) -> dict[str, Any]:
    """One policy's statistics (a dataclass) as JSON-ready values: every field but the
    policy's name (the key it is stored under), in field order, pairs as lists."""
    out: dict[str, Any] = {}
    for field in dataclasses.fields(stats):
        if field.name != "policy":
            value = getattr(stats, field.name)
            out[field.name] = list(value) if isinstance(value, tuple) else value
    return out


@dataclass(frozen=True)
class PolicyStats:
    """ALG/OPT of one policy over a store's proven instances."""

    policy: str
    count: int  # instances the policy ran on
    proven: int  # of them with a proven optimum (the statistics below are over these)
    optimal_share: float | None
    mean_ratio: float | None
    mean_ci95: tuple[float, float] | None
    median_ratio: float | None
    p95_ratio: float | None
    max_ratio: float | None
    worst: str | None  # the instance of the largest ratio (the first in task order on ties; None if never above 1)
    theorem5_at_worst: float | None  # Theorem 5's bound on that instance
    unproven: int
    unproven_ratio_range: tuple[float, float] | None  # min ALG/best .. max ALG/lower bound over them
    beyond_horizon: int = 0  # runs whose schedule ends after T: no answer, in none of the statistics above
    beyond_horizon_ratio_range: tuple[float, float] | None = None  # makespan: their min ALG/best .. max ALG/bound

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready values."""
        return _stats_dict(self)


JCT_OPT = "ALG/OPT"
JCT_BOUND = "ALG/bound"
"""What a policy's average-JCT ratios are taken against: the proven optimum on every
instance (``ALG/OPT``), or a lower bound on some (``ALG/bound``: at least ALG/OPT)."""


@dataclass(frozen=True)
class JctStats:
    """One policy's average JCT over each instance's reference (the proven optimum, else the
    best lower bound), and over the best average JCT known."""

    policy: str
    count: int  # instances the policy ran on
    bounded: int  # of them with a positive reference (the statistics below are over these)
    proven: int  # of those, against a proven optimum
    basis: str | None  # JCT_OPT when every reference is a proven optimum, else JCT_BOUND (None: no instance)
    mean_ratio: float | None
    mean_ci95: tuple[float, float] | None
    median_ratio: float | None
    p95_ratio: float | None
    max_ratio: float | None
    worst: str | None  # the instance of the largest ratio (the first in task order on ties; None if never above 1)
    mean_ratio_best: float | None  # the mean of ALG / the best average JCT known: at most the mean ALG/OPT
    best_share: float | None  # the share of instances where the policy has the best average JCT known
    beyond_horizon: int = 0  # runs past T: no answer, no ratio (their JCT may beat every feasible one)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready values."""
        return _stats_dict(self)


@dataclass(frozen=True)
class Report:
    """A store's report."""

    instances: int
    proven: int
    policies: dict[str, PolicyStats]
    theorem5_min: float | None  # the smallest Theorem 5 bound over the instances
    claims: dict[str, dict[str, int]]  # per SJF-BCO claim: held / violated / inconclusive
    flow: dict[str, PolicyStats] = dataclasses.field(default_factory=dict)  # ALG/OPT for the total flow time (arrivals)
    flow_proven: int = 0  # instances whose flow optimum is proven
    jct: dict[str, JctStats] = dataclasses.field(default_factory=dict)  # the average JCT's ratios, per policy
    jct_proven: int = 0  # instances whose optimal average JCT is proven
    missing_baselines: tuple[str, ...] = ()  # classical baselines with no row (a search; a store made before)

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` object (``flow`` and ``flow_proven`` only for a store that has them)."""
        out = {
            "instances": self.instances,
            "proven": self.proven,
            "policies": {name: s.to_dict() for name, s in self.policies.items()},
            "theorem5_min": self.theorem5_min,
            "sjf_bco_claims": self.claims,
            "jct_proven": self.jct_proven,
            "jct": {name: s.to_dict() for name, s in self.jct.items()},
            "baselines": dict(BASELINES),
            "missing_baselines": list(self.missing_baselines),
        }
        if self.flow:
            out["flow_proven"] = self.flow_proven
            out["flow"] = {name: s.to_dict() for name, s in self.flow.items()}
        return out


def describe(kind: str, config: dict[str, Any], rows: list[TaskRow], created_with: dict[str, Any]) -> dict[str, Any]:
    """What a reader needs to reproduce a store's numbers: the family and its generator's
    ranges (with the sizes the configuration fixed), the seeds, the count, the exact method,
    the time limit, the policies, and the versions that created the store, computed its
    rows and made this report. A worst-case search's store carries a ``warning``."""
    family = config.get("family")
    ranges = dict(GENERATOR_RANGES.get(ARRIVAL_FAMILIES.get(str(family), str(family)), {}))
    for size in ("jobs", "servers"):
        if config.get(size) is not None:
            ranges[size] = config[size]
    if config.get("load") is not None:  # an arrival family: Poisson arrivals at this offered load
        ranges["load"] = config["load"]
    seeds = [r.inputs["seed"] for r in rows if isinstance(r.inputs.get("seed"), int)]
    observed = {}
    for field in ("jobs", "servers", "gpus", "horizon"):
        values = [r.outputs[field] for r in rows if isinstance(r.outputs.get(field), int)]
        if values:
            observed[field] = [min(values), max(values)]
    computed: list[dict[str, Any]] = []
    for r in rows:
        if r.versions not in computed:
            computed.append(r.versions)
    out: dict[str, Any] = {
        "kind": kind,
        "family": family,
        "preset": config.get("preset"),
        "generator_ranges": ranges,
        "observed_ranges": observed,
        "seed_range": [min(seeds), max(seeds)] if seeds else None,
        "count": len(rows),
        "method": config.get("method"),
        "time_limit": config.get("time_limit"),
        "policies": config.get("policies"),
        "created_with": created_with,
        "computed_with": computed,
        "reported_with": provenance(),
    }
    if kind == "worst":
        out["search"] = {k: config.get(k) for k in ("strategy", "objective", "batch", "elite", "initial")}
        out["warning"] = WORST_CASE_WARNING
    return out


def version_text(record: dict[str, Any]) -> str:
    """A versions record (:func:`rar_opt.support.provenance.versions_and_revision`) in a few words."""
    text = str(record.get("rar-opt", "?"))
    if record.get("revision"):
        text += f"+g{str(record['revision'])[:7]}" + (".dirty" if record.get("dirty") else "")
    return text + f" (Python {record.get('python', '?')})"


def describe_lines(about: dict[str, Any]) -> list[str]:
    """:func:`describe` as the lines that head the text report."""

    def span(value: Any) -> str:
        return f"{value[0]}-{value[1]}" if isinstance(value, list) and len(value) == 2 else str(value)

    seeds = about["seed_range"]
    preset = f", preset {about['preset']}" if about.get("preset") else ""
    lines = [
        f"family {about['family']}{preset}: "
        + ", ".join(f"{k} {span(v)}" for k, v in about["generator_ranges"].items()),
        f"{about['count']} instances, seeds {span(seeds) if seeds else '-'}, method {about['method']}, "
        f"time limit {about['time_limit']} s per solve, policies {', '.join(about['policies'] or [])}",
        f"store created with rar-opt {version_text(about['created_with'])}; rows computed with "
        + ("; ".join(f"rar-opt {version_text(v)}" for v in about["computed_with"]) or "-")
        + f"; reported with rar-opt {about['reported_with']['version']}",
    ]
    if about.get("search"):
        lines.insert(0, "worst-case search: " + ", ".join(f"{k} {v}" for k, v in about["search"].items()))
    return lines


def ci95(values: np.ndarray, least: float = 1.0) -> tuple[float, float]:
    """A 95% confidence interval of the mean (Student's t), cut below at ``least``; a point
    when it cannot be wider. Every ratio reported (ALG over the optimum or over a lower
    bound) is at least 1, so the mean is too, and cutting the interval to [1, inf) keeps its
    coverage while it no longer shows means that cannot be (with two instances the t
    interval can reach below 0)."""
    from scipy import stats

    mean = float(np.mean(values))
    if len(values) < 2 or float(np.std(values)) == 0.0:
        return mean, mean
    low, high = stats.t.interval(0.95, len(values) - 1, loc=mean, scale=stats.sem(values))
    return max(float(low), least), float(high)


METRICS = ("makespan", "flow")
"""What a ratio is taken of: the makespan (every store), the total flow time (arrival families)."""


def policy_stats(policy: str, rows: list[TaskRow], metric: str = "makespan") -> PolicyStats:
    """The statistics of ``policy``'s ALG/OPT for ``metric`` over ``rows`` (those it ran on)."""
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}")
    pre = "" if metric == "makespan" else "flow_"

    def proven_on(r: TaskRow) -> bool:
        return bool(r.outputs["proven"] if metric == "makespan" else r.outputs["flow"]["proven"])

    ran = [r for r in rows if policy in r.outputs["policies"] and (metric == "makespan" or "flow" in r.outputs)]
    mine = [r for r in ran if within_horizon(r.outputs["policies"][policy])]  # a run past T is no answer
    past = [r.outputs["policies"][policy] for r in ran if not within_horizon(r.outputs["policies"][policy])]
    past_span = None  # makespan: how far past, as if T did not bind (ALG > T >= OPT: every ratio above 1)
    if past and metric == "makespan":
        past_span = (min(p["ratio_low"] for p in past), max(p["ratio_high"] for p in past))
    proven = [r for r in mine if proven_on(r)]
    ratios = np.array([r.outputs["policies"][policy][f"{pre}ratio"] for r in proven], dtype=float)
    unproven = [r.outputs["policies"][policy] for r in mine if not proven_on(r)]
    span = (
        (min(p[f"{pre}ratio_low"] for p in unproven), max(p[f"{pre}ratio_high"] for p in unproven))
        if unproven
        else None
    )
    apart = (len(past), past_span)
    if not len(ratios):
        return PolicyStats(
            policy, len(ran), 0, None, None, None, None, None, None, None, None, len(unproven), span, *apart
        )
    worst = proven[int(np.argmax(ratios))]  # argmax: the first of equal maxima, in task order
    optimal = sum(bool(r.outputs["policies"][policy][f"{pre}optimal"]) for r in proven)
    # Theorem 5 is SJF-BCO's claim: its bound beside another policy's worst ratio says nothing
    claimed = metric == "makespan" and policy == "sjf-bco" and np.max(ratios) > 1.0
    theorem5 = worst.outputs.get("theorem5_bound") if claimed else None
    return PolicyStats(
        policy,
        len(ran),
        len(proven),
        optimal / len(proven),
        float(np.mean(ratios)),
        ci95(ratios),
        float(np.median(ratios)),
        float(np.percentile(ratios, 95)),
        float(np.max(ratios)),
        worst.outputs["instance"] if np.max(ratios) > 1.0 else None,
        theorem5,
        len(unproven),
        span,
        *apart,
    )


def jct_reference(row: TaskRow) -> JctReference | None:
    """The row's reference for the average JCT (:func:`rar_opt.studies.tasks.jct_reference_of`
    of its outputs), or None for a row that carries no average JCT."""
    return jct_reference_of(row.outputs)


def jct_stats(policy: str, rows: list[TaskRow]) -> JctStats:
    """The statistics of ``policy``'s average JCT over each row's :func:`jct_reference`."""
    mine = [r for r in rows if policy in r.outputs["policies"]]
    past = sum(not within_horizon(r.outputs["policies"][policy]) for r in mine)  # no answer: no ratio
    answers = [r for r in mine if within_horizon(r.outputs["policies"][policy])]
    refs = [(r, jct_reference(r)) for r in answers if r.outputs["policies"][policy].get("avg_jct") is not None]
    bounded = [(r, ref, ref.lower) for r, ref in refs if ref is not None and ref.lower is not None and ref.lower > 0]
    if not bounded:
        return JctStats(policy, len(mine), 0, 0, None, None, None, None, None, None, None, None, None, past)
    avg = np.array([float(r.outputs["policies"][policy]["avg_jct"]) for r, _, _ in bounded])
    ratios = avg / np.array([lower for _, _, lower in bounded])
    to_best = avg / np.array([ref.best for _, ref, _ in bounded])
    proven = sum(ref.proven for _, ref, _ in bounded)
    worst = bounded[int(np.argmax(ratios))][0]
    above = float(np.max(ratios)) > 1.0 + 1e-9  # as the makespan's: no worst instance where it is never above 1
    return JctStats(
        policy,
        len(mine),
        len(bounded),
        proven,
        JCT_OPT if proven == len(bounded) else JCT_BOUND,
        float(np.mean(ratios)),
        ci95(ratios),
        float(np.median(ratios)),
        float(np.percentile(ratios, 95)),
        float(np.max(ratios)),
        worst.outputs["instance"] if above else None,
        float(np.mean(to_best)),
        float(np.mean(np.isclose(to_best, 1.0, rtol=0.0, atol=1e-9))),
        past,
    )


def report(rows: Iterable[TaskRow]) -> Report:
    """The report of a store's rows."""
    rows = list(rows)
    names: list[str] = []
    for r in rows:
        names += [p for p in r.outputs["policies"] if p not in names]
    order = list(POLICIES)
    names.sort(key=lambda p: (order.index(p) if p in order else len(order), p))  # the registry's order
    bounds = [r.outputs["theorem5_bound"] for r in rows if r.outputs.get("theorem5_bound") is not None]
    claims: dict[str, dict[str, int]] = {}
    for r in rows:
        for c in r.outputs.get("claims", []):
            verdict = {True: "held", False: "violated", None: "inconclusive"}[c["holds"]]
            tally = claims.setdefault(c["claim"], {"held": 0, "violated": 0, "inconclusive": 0})
            tally[verdict] += 1
    # the flow section is the arrival families': elsewhere the flow time is the total
    # completion time, whose ratios to the optimum are the average JCT's columns already
    with_flow = [r for r in rows if "flow" in r.outputs and r.inputs.get("family") in ARRIVAL_FAMILIES]
    return Report(
        instances=len(rows),
        proven=sum(bool(r.outputs["proven"]) for r in rows),
        policies={name: policy_stats(name, rows) for name in names},
        theorem5_min=min(bounds) if bounds else None,
        claims=claims,
        flow={name: policy_stats(name, with_flow, "flow") for name in names} if with_flow else {},
        flow_proven=sum(bool(r.outputs["flow"]["proven"]) for r in with_flow),
        jct={name: jct_stats(name, rows) for name in names},
        jct_proven=sum(bool(ref and ref.proven) for ref in map(jct_reference, rows)),
        missing_baselines=tuple(b for b in dict.fromkeys(BASELINES.values()) if b not in names),
    )


def table(rep: Report, metric: str = "makespan") -> tuple[list[tuple[Any, ...]], tuple[str, ...]]:
    """The report as rows of a text table and its header (``metric``: ``makespan`` or, for a
    store of an arrival family, ``flow``)."""
    header = (
        "policy",
        "n",
        "past T",
        "proven",
        "optimal",
        "mean [95% CI]",
        "median",
        "p95",
        "max",
        "T5 bound",
        "worst",
    )
    rows: list[tuple[Any, ...]] = []
    for name, s in (rep.policies if metric == "makespan" else rep.flow).items():
        ci = f"{_f(s.mean_ratio)} [{_f(s.mean_ci95[0])}, {_f(s.mean_ci95[1])}]" if s.mean_ci95 else "-"
        rows.append(
            (
                name,
                s.count,
                s.beyond_horizon or "",  # a schedule past T is no answer: in none of the columns right of it
                s.proven,
                None if s.optimal_share is None else f"{100 * s.optimal_share:.0f}%",
                ci,
                _f(s.median_ratio),
                _f(s.p95_ratio),
                _f(s.max_ratio),
                _f(s.theorem5_at_worst),
                s.worst,
            )
        )
    if metric == "flow":  # Theorem 5 is about the makespan
        return [r[:9] + r[10:] for r in rows], header[:9] + header[10:]
    jct_header = ("JCT vs", "JCT mean [95% CI]", "JCT max", "JCT best-known")
    for k, name in enumerate(rep.policies):
        j = rep.jct.get(name)
        if j is None or j.mean_ci95 is None:
            rows[k] = (*rows[k], "-", "-", "-", "-")
            continue
        ci = f"{_f(j.mean_ratio)} [{_f(j.mean_ci95[0])}, {_f(j.mean_ci95[1])}]"
        rows[k] = (*rows[k], "OPT" if j.basis == JCT_OPT else "bound", ci, _f(j.max_ratio), _f(j.mean_ratio_best))
    return rows, header + jct_header


def _f(value: float | None) -> str:
    return "-" if value is None or not math.isfinite(value) else f"{value:.4f}"
