"""``improve``: a seeded iterated-greedy search over job orders and placement rules.

A candidate is a list order of the jobs plus, per job, one placement rule of
:data:`~.classical.PLACEMENTS`. The engine turns a candidate into a complete schedule
(one list-scheduling pass over the true time model, no load limit), so every candidate is
judged by the simulator; the candidate is scored by (makespan, sum of completion times),
compared lexicographically: makespan first, average JCT as the tie-break. With
``objective="total"`` the sum comes first; a cap on the other axis (``makespan_cap`` for
the sum, ``total_cap`` for the makespan) puts how far a candidate is past it before both,
so a candidate within the cap beats every one beyond it. The horizon T comes before all of
it, for either objective: the slots a candidate ends past T, so the search first gets
back within T (a schedule ending later is no answer: the checker refuses it) and only
then shortens its objective (:func:`score`; ``backfill`` follows the same rule).

1. **Start.** Every classical order of :data:`~.orders.ORDERS` (longest first, largest
   area first) with every placement rule, one rule for all jobs: 6 list schedules. The
   best is the incumbent; so the search is never worse than any of them (the test).
2. **Iterate** ``iterations`` times: take the incumbent, remove a few jobs from its order
   (between 1 and ``max(1, J // 20)``, drawn) and put each back at a drawn position; with
   ``moves="order+placement"`` (default) each removed job also draws a new placement
   rule with probability 1/2. Half of the time one of the removed jobs is the one that
   completes last, reinserted no later than where it was (the moves that can shorten
   the makespan). The candidate replaces the incumbent when its score is not worse
   (accepting equal scores lets the search drift across plateaus).
3. **Result.** The incumbent, checked by :func:`rar_opt.check.check` (a violation other
   than running past T would be a bug and raises).

Determinism: random numbers come only from ``numpy.random.default_rng(seed)``, and the
iteration budget is the stopping rule, so a seed gives the same schedule on any machine.
``time_limit`` (seconds) is a safety cap on the iterations' wall time: if it stops the
search first, the result depends on the machine's speed and runs may differ; the record
says so (``search.capped``).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np

from rar_opt.algorithms.baselines import BaselineParams
from rar_opt.algorithms.classical import PLACEMENTS
from rar_opt.algorithms.engine import ClusterState, PlacementRule, Trial, run_list
from rar_opt.algorithms.estimators import estimate
from rar_opt.algorithms.orders import ORDERS, SUM_ORDERS
from rar_opt.algorithms.result import PolicyResult, searched_result
from rar_opt.errors import ParameterError
from rar_opt.instance import Instance
from rar_opt.support.checks import SOLVER_MAX_SEED, check_cap, check_search
from rar_opt.support.processes import stop_requested

log = logging.getLogger(__name__)

MAX_SEED = SOLVER_MAX_SEED  # the largest seed (the same limit as the exact solvers')
MOVES = ("order+placement", "order")
OBJECTIVES = ("makespan", "total")
PLACEMENT_NAMES = tuple(PLACEMENTS)


@dataclass(frozen=True)
class SearchParams(BaselineParams):
    """``improve``: an iteration budget (the stopping rule), a wall-time cap in seconds, the
    seed, and which moves the search makes."""

    iterations: int = 40
    time_limit: float = 10.0
    seed: int = 0
    moves: str = "order+placement"
    objective: str = "makespan"  # or "total": the sum of completion times first
    makespan_cap: int | None = None  # objective "total": schedules ending later score by how much first
    total_cap: int | None = None  # objective "makespan": schedules whose sum of completions exceeds it, likewise
    start_order: tuple[int, ...] | None = None  # one more start, tried with every placement rule

    def __post_init__(self) -> None:
        super().__post_init__()
        check_search(self.iterations, self.time_limit, self.seed, self.start_order)
        if self.moves not in MOVES:
            raise ParameterError(f"must be one of {', '.join(MOVES)}, got {self.moves!r}", where="moves")
        if self.objective not in OBJECTIVES:
            raise ParameterError(f"must be one of {', '.join(OBJECTIVES)}, got {self.objective!r}", where="objective")
        for name, aimed in (("makespan_cap", "total"), ("total_cap", "makespan")):
            cap = getattr(self, name)
            check_cap(name, cap)
            if cap is not None and self.objective != aimed:
                raise ParameterError(
                    f"caps the other axis: it takes objective {aimed!r}, not {self.objective!r}", where=name
                )


def mixed_rule(rules: list[PlacementRule]) -> PlacementRule:
    """The placement rule that asks job j's own rule ``rules[j]``."""

    def rule(state: ClusterState, job: int) -> np.ndarray | list[int] | None:
        return rules[job](state, job)

    return rule


class _Evaluator:
    """Runs candidates through the engine (no load limit, no horizon) and counts them."""

    def __init__(self, instance: Instance, weight: np.ndarray) -> None:
        self.instance = instance
        self.weight = weight
        self.runs = 0

    def __call__(self, order: np.ndarray, choice: np.ndarray) -> Trial:
        rules = [PLACEMENTS[PLACEMENT_NAMES[c]] for c in choice.tolist()]
        self.runs += 1
        trial = run_list(self.instance, order, mixed_rule(rules), np.inf, self.weight, within_horizon=False)
        if not isinstance(trial, Trial):  # only an invalid instance gets here
            raise RuntimeError("a list schedule without load limit or horizon did not complete")
        return trial


def score(
    trial: Trial,
    objective: str = "makespan",
    cap: int | None = None,
    total_cap: int | None = None,
    horizon: int | None = None,
) -> tuple[int, ...]:
    """(makespan, sum of completion times), smaller is better, compared in that order; with
    ``objective="total"`` the sum first. A cap on the other axis comes before both: with
    a makespan ``cap`` (objective ``total``) the slots past it, with a ``total_cap`` on the
    sum (objective ``makespan``) how far the sum exceeds it; so a schedule within its cap
    beats every one beyond it. The ``horizon`` T comes first of all, for both objectives:
    the slots past it, so a schedule ending after T loses to every one within T (the
    checker refuses it), and among those past T the one that ends earliest wins."""
    span, total = trial.makespan, int(trial.completion.sum())
    late = () if horizon is None else (max(0, span - horizon),)
    if objective != "total":
        return late + ((max(0, total - total_cap), span, total) if total_cap is not None else (span, total))
    return late + ((max(0, span - cap), total, span) if cap is not None else (total, span))


def _neighbour(
    rng: np.random.Generator, order: np.ndarray, choice: np.ndarray, last: int, placement_moves: bool
) -> tuple[np.ndarray, np.ndarray]:
    """A candidate near (order, choice): a few jobs removed and put back at drawn positions,
    some with a drawn placement rule; half of the time the last job to complete is one of
    them and goes back no later than where it was."""
    n = len(order)
    k = int(rng.integers(1, max(1, n // 20) + 1))
    picked = [int(j) for j in rng.choice(order, size=min(k, n), replace=False)]
    critical = bool(rng.random() < 0.5)
    if critical and last not in picked:
        picked[0] = last
    where = {int(j): i for i, j in enumerate(order.tolist())}
    removed = set(picked)
    rest = [j for j in order.tolist() if j not in removed]
    new_choice = choice.copy()
    for j in picked:
        if critical and j == last:
            pos = int(rng.integers(0, min(where[j], len(rest)) + 1))
        else:
            pos = int(rng.integers(0, len(rest) + 1))
        rest.insert(pos, j)
        if placement_moves and rng.random() < 0.5:
            new_choice[j] = int(rng.integers(len(PLACEMENT_NAMES)))
    return np.array(rest, dtype=np.int64), new_choice


@dataclass(frozen=True)
class ImproveState:
    """Where a run of ``improve`` ended: its best order and each job's placement rule (an
    index into :data:`PLACEMENT_NAMES`), from which :func:`improve_search` can go on."""

    order: tuple[int, ...]
    choice: tuple[int, ...]


def improve_policy(instance: Instance, params: SearchParams | None = None) -> PolicyResult:
    """improve: iterated greedy from the best classical list schedule (module docstring)."""
    return improve_search(instance, params)[0]


def improve_search(
    instance: Instance, params: SearchParams | None = None, resume: ImproveState | None = None
) -> tuple[PolicyResult, ImproveState]:
    """The search of :func:`improve_policy`, which also returns its best state; with
    ``resume`` (such a state, from an earlier run on the same instance) the search starts
    from that state alone instead of building its starts again, so that a short run can go
    on where it stopped (``auto`` for the sums, :mod:`rar_opt.solvers.sums`)."""
    p = params or SearchParams()
    est = estimate(instance, p.estimator)
    evaluate = _Evaluator(instance, est.weight)
    n = instance.num_jobs
    best: tuple[tuple[int, ...], Trial, np.ndarray, np.ndarray, str] | None = None
    if resume is not None:
        if sorted(resume.order) != list(range(n)) or len(resume.choice) != n:
            raise ValueError("resume is not a state of this instance's search")
        if any(not 0 <= c < len(PLACEMENT_NAMES) for c in resume.choice):
            raise ValueError("resume names a placement rule that does not exist")
        order, choice = np.array(resume.order, dtype=np.int64), np.array(resume.choice, dtype=np.int64)
        trial = evaluate(order, choice)
        best = (
            score(trial, p.objective, p.makespan_cap, p.total_cap, instance.horizon),
            trial,
            order,
            choice,
            "resumed",
        )
    for order_name, order in ({} if resume is not None else _starts(instance, p)).items():
        for c, placement in enumerate(PLACEMENT_NAMES):
            choice = np.full(n, c, dtype=np.int64)
            trial = evaluate(order, choice)
            key = score(trial, p.objective, p.makespan_cap, p.total_cap, instance.horizon)
            if best is None or key < best[0]:
                best = (key, trial, order, choice, f"{order_name}/{placement}")
    assert best is not None
    start_trial, start_name = best[1], best[4]
    rng = np.random.default_rng(p.seed)
    began, done, improved, capped = time.perf_counter(), 0, 0, False
    for _ in range(p.iterations):
        if time.perf_counter() - began > p.time_limit or stop_requested() is not None:
            capped = True  # the time cap, or a signal asking the run to stop (Ctrl-C): keep the best
            break
        key, trial, order, choice, _ = best
        last = int(np.argmax(trial.completion))
        cand_order, cand_choice = _neighbour(rng, order, choice, last, p.moves == "order+placement")
        cand = evaluate(cand_order, cand_choice)
        done += 1
        cand_score = score(cand, p.objective, p.makespan_cap, p.total_cap, instance.horizon)
        if cand_score <= key:
            if cand_score < key:
                improved += 1
                log.debug("improve: iteration %d, score %s", done, cand_score)
            best = (cand_score, cand, cand_order, cand_choice, best[4])
    _, trial, final_order, choice, _ = best
    state = ImproveState(tuple(final_order.tolist()), tuple(choice.tolist()))
    if capped:
        log.info("improve: the time limit of %g s stopped the search after %d iterations", p.time_limit, done)
    counts = np.bincount(choice, minlength=len(PLACEMENT_NAMES)).tolist()
    search = {
        "start": start_name,
        "objective": p.objective,
        "start_makespan": start_trial.makespan,
        "start_total_completion": int(start_trial.completion.sum()),
        "iterations": done,
        "improvements": improved,
        "capped": capped,
        "placements": dict(zip(PLACEMENT_NAMES, counts, strict=True)),
    }
    result, report = searched_result(instance, "improve", trial, p, est, evaluate.runs, search)
    if report.result.makespan != trial.makespan:
        raise RuntimeError("improve kept a makespan that the simulator does not reproduce")
    return result, state


def _starts(instance: Instance, p: SearchParams) -> dict[str, np.ndarray]:
    """The start orders by name: the classical orders for the objective (step 1 of the
    module docstring), and ``start_order`` if given."""
    orders = {**ORDERS, **SUM_ORDERS} if p.total_cap is not None else ORDERS  # the sum's orders meet its cap
    if p.objective == "total":  # with a makespan cap the makespan's orders may be the ones within it
        orders = {**SUM_ORDERS, **ORDERS} if p.makespan_cap is not None else SUM_ORDERS
    starts = {name: make(instance, p.estimator) for name, make in orders.items()}
    if p.start_order is not None:
        if len(p.start_order) != instance.num_jobs:
            raise ValueError(f"start_order has {len(p.start_order)} jobs, the instance {instance.num_jobs}")
        starts["given"] = np.array(p.start_order, dtype=np.int64)
    return starts
