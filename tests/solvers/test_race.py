"""The stage "race" (rar_opt.solvers.race): the probe and the restrictions asked by the floor in turn.

On `wait-beats-start` (optimum 6; the heuristics end at 8) a probe at 5 says no, and the
restriction by 6 has a schedule.
"""

from __future__ import annotations

import dataclasses
import time

import pytest

from rar_opt import Instance
from rar_opt.check import check
from rar_opt.errors import InputError
from rar_opt.solvers import Budget, PhaseKind, Status, floor_asks
from rar_opt.solvers import race as module
from rar_opt.solvers.backend import RawOutcome
from rar_opt.solvers.budget import run_seed
from rar_opt.solvers.context import Context, Found, Incumbent
from rar_opt.solvers.decompose import decompose
from rar_opt.solvers.phases import PHASES
from rar_opt.solvers.plan import AUTO, race_entry
from rar_opt.solvers.probe import Probe, ProbeRecord


def _plan(entries=("probe", "modes:default"), share=0.9, slice_seconds=6.0, growth=1.5):
    return dataclasses.replace(
        AUTO,
        stages=("race", "full"),
        race_share=share,
        race_entries=entries,
        race_slice_seconds=slice_seconds,
        race_growth=growth,
    )


def _context(inst: Instance, plan, limit: float | None = 30.0, seed: int = 0, horizon: int | None = None) -> Context:
    budget = Budget.start(limit, seed=seed)
    return Context(inst, plan, budget, horizon or inst.horizon, True, ("sjf-bco", "ls", "ff"))


def _heuristic_best(inst: Instance, ctx: Context, bound: float) -> Incumbent:
    best = Incumbent(bound=bound)
    (first,) = list(PHASES[PhaseKind.HEURISTICS](ctx, Incumbent()))
    best.offer(first.schedule, first.span, "heuristics")
    return best


def _run(ctx: Context, best: Incumbent) -> list[Found]:
    """The stage's answers, each applied to ``best`` as the run's loop applies it."""
    found = []
    for answer in module.stage(ctx, best):
        found.append(answer)
        best.offer(answer.schedule, answer.span, answer.record.name)
        best.raise_bound(answer.record.lower_bound())
    return found


def test_the_race_raises_the_floor_by_a_probe_and_meets_it_by_a_restriction(wait_beats_start: Instance) -> None:
    # at the floor 5 the probe says no (OPT >= 6); the restriction's turn then comes at 6,
    # where it has a schedule: the best meets the floor, and the stage ends
    ctx = _context(wait_beats_start, _plan())
    best = _heuristic_best(wait_beats_start, ctx, 5.0)
    assert best.span == 8
    found = _run(ctx, best)
    assert [(f.record.kind, f.record.asked, f.record.status) for f in found] == [
        (PhaseKind.PROBE, 5, Status.INFEASIBLE),
        (PhaseKind.RESTRICTION, 6, Status.FEASIBLE),
    ]
    assert found[0].record.lower_bound() == 6 and found[1].record.lower_bound() is None
    assert best.closed and best.span == 6
    assert check(wait_beats_start, found[1].schedule).result.makespan == 6


def test_a_refuted_restriction_leaves_the_race_until_the_floor_rises(wait_beats_start: Instance) -> None:
    # the restriction has no schedule by 5, which proves nothing about the instance: the bound
    # stays at 5, and with no probe to raise it the stage ends after that one ask
    ctx = _context(wait_beats_start, _plan(entries=("modes:no-lp",)))
    best = _heuristic_best(wait_beats_start, ctx, 5.0)
    (answer,) = _run(ctx, best)
    assert answer.record.status == Status.INFEASIBLE and answer.record.lower_bound() is None
    assert best.floor == 5 and best.span == 8


@pytest.mark.parametrize("entry", (*AUTO.race_entries, "shared:no-probing"))
def test_every_entry_of_autos_race_answers_alike(wait_beats_start: Instance, entry: str) -> None:
    # the searches differ in their route, not in the answer: each of auto's entries (and the
    # sharing restriction), alone, has no schedule by 5 and meets 6 with a schedule the checker passes
    ctx = _context(wait_beats_start, _plan(entries=(entry,)))
    refuted = _run(ctx, _heuristic_best(wait_beats_start, ctx, 5.0))
    assert [(f.record.asked, f.record.status) for f in refuted] == [(5, Status.INFEASIBLE)]
    best = _heuristic_best(wait_beats_start, ctx, 6.0)
    (met,) = _run(ctx, best)
    assert met.record.status == Status.FEASIBLE and entry in (met.record.search or "")
    assert best.closed and check(wait_beats_start, met.schedule).result.makespan == 6


def test_nothing_is_asked_without_a_gap_a_share_or_a_time_limit(wait_beats_start: Instance) -> None:
    inst = wait_beats_start
    ctx = _context(inst, _plan())
    best = _heuristic_best(inst, ctx, 8.0)  # the heuristics' 8 meets the floor
    assert list(module.stage(ctx, best)) == []
    no_share = _context(inst, dataclasses.replace(AUTO, race_share=None, large_jobs=None))
    assert list(module.stage(no_share, _heuristic_best(inst, no_share, 5.0))) == []
    no_limit = _context(inst, _plan(), None)
    assert list(module.stage(no_limit, _heuristic_best(inst, no_limit, 5.0))) == []


def _undecided(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int, float]]:
    """Spies in place of the probe and the restriction that answer "undecided" after a short
    wait; the asks they saw, as (entry, seed, seconds allowed)."""
    log: list[tuple[str, int, float]] = []

    def probe(instance, makespan, *, time_limit, seed, **kwargs):
        log.append(("probe", seed, time_limit))
        time.sleep(min(time_limit, 0.03))
        record = ProbeRecord("?", "cpsat", time_limit, seed, 1, True, "no-lp", {}, {})
        return Probe(makespan, Status.NO_SOLUTION, None, None, None, 0.03, "UNKNOWN", record)

    def restriction_by(instance, slot, budget, symmetry, formulation, search):
        log.append((f"{formulation}:{search}", budget.seed, budget.limit))
        time.sleep(min(budget.limit, 0.03))
        return RawOutcome(status=Status.NO_SOLUTION, termination="UNKNOWN"), None, None, 0.03

    monkeypatch.setattr(floor_asks, "probe", probe)
    monkeypatch.setattr(module, "restriction_by", restriction_by)
    return log


def test_the_entries_take_turns_with_seeds_of_their_own_and_growing_slices(
    wait_beats_start: Instance, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = _undecided(monkeypatch)
    entries = ("probe", "modes:default", "cfree:no-lp")
    plan = _plan(entries=entries, share=1.0, slice_seconds=0.01, growth=2.0)
    ctx = _context(wait_beats_start, plan, 0.6, seed=7)
    assert list(module.stage(ctx, Incumbent(span=8, bound=6.0)))  # undecided answers until the share is spent
    assert len(log) >= 3 * len(entries)
    for k, (entry, seed, limit) in enumerate(log):
        turn = k // len(entries)
        assert entry == entries[k % len(entries)]
        assert seed == run_seed(7, turn)  # the first ask with the run's seed, then new seeds
        slice_seconds = 0.01 * 2.0**turn
        if turn < 3:  # each ask takes at most 0.03 s: the share lasts far beyond these slices
            assert limit == pytest.approx(slice_seconds, rel=0.05)
        assert limit < 1.5 * slice_seconds  # later, what is left when less than a slice and a half


def test_restrictions_over_their_size_guard_are_left_out(
    wait_beats_start: Instance, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rar_opt.formulations import cfree, modes

    log = _undecided(monkeypatch)
    monkeypatch.setattr(modes, "MAX_MODES", modes.count_modes(wait_beats_start) - 1)
    monkeypatch.setattr(cfree, "too_large", lambda instance: "too large")
    plan = _plan(entries=("modes:default", "cfree:no-lp", "probe"), share=1.0, slice_seconds=0.05)
    ctx = _context(wait_beats_start, plan, 0.3)
    list(module.stage(ctx, Incumbent(span=8, bound=6.0)))
    assert log and {entry for entry, _, _ in log} == {"probe"}
    only_restrictions = _context(wait_beats_start, _plan(entries=("modes:default",)))
    assert list(module.stage(only_restrictions, Incumbent(span=8, bound=6.0))) == []


def test_auto_with_the_race_proves_the_optimum(wait_beats_start: Instance) -> None:
    plan = dataclasses.replace(_plan(), name="auto-race", large_jobs=None, stages=("race", "full"))
    result = decompose(wait_beats_start, time_limit=30.0, plan=plan)
    assert result.status == Status.OPTIMAL and result.schedule is not None
    assert check(wait_beats_start, result.schedule).result.makespan == 6


@pytest.mark.parametrize(
    ("field", "bad"),
    [
        ("race_entries", ()),
        ("race_entries", ("probe", "probe")),
        ("race_entries", ("modes",)),
        ("race_entries", ("patterns:default",)),
        ("race_entries", ("modes:fast",)),
        ("race_entries", ["probe"]),
        ("race_growth", 0.5),
        ("race_growth", float("nan")),
        ("race_slice_seconds", 0),
        ("race_slice_seconds", float("inf")),
        ("race_share", 1.5),
    ],
)
def test_a_plan_names_a_bad_race_setting(field: str, bad: object) -> None:
    with pytest.raises(InputError) as caught:
        dataclasses.replace(_plan(), **{field: bad})
    assert caught.value.where == field


def test_a_plan_with_the_race_needs_its_share_and_runs_it_once() -> None:
    with pytest.raises(InputError) as caught:
        dataclasses.replace(AUTO, stages=("race", "full"), race_share=None, large_jobs=None)
    assert caught.value.where == "race_share"
    with pytest.raises(InputError) as caught:
        dataclasses.replace(_plan(), stages=("race", "race", "full"))
    assert caught.value.where == "stages"
    assert race_entry("probe") == ("probe", "probe") and race_entry("cfree:default") == ("cfree", "default")
