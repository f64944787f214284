"""The mode restriction solved whole (formulations/modes.py, ``whole``): cfree's restriction
with the placements written out, so the same optimum, an upper bound on OPT; with
``sharing``, a wider restriction that is still an upper bound."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings

from rar_opt import InputError, Instance
from rar_opt.formulations import cfree, modes
from rar_opt.formulations.cpsat import execution_times, read_schedule
from rar_opt.schedule import Schedule
from rar_opt.simulate import simulate
from rar_opt.solvers import Status, solve
from rar_opt.solvers.backend import SolveOptions
from rar_opt.solvers.cpsat import Cpsat

from ..helpers import LIBRARY_NAMES, load_known
from ..strategies import (
    communication_heavy_instances,
    contended_instances,
    micro_instances,
    reference_simulate,
    with_releases,
)


def _optimum(model, inst: Instance) -> tuple[int, list[int]]:
    raw = Cpsat().solve(model, SolveOptions())
    assert raw.status == Status.OPTIMAL, raw.message
    return round(raw.objective), reference_simulate(inst, read_schedule(model, inst))["completion"]


def _restriction(inst: Instance) -> int:
    return _optimum(cfree.build(inst, cfree.Options(restrict=True)), inst)[0]


@settings(max_examples=20, deadline=None)
@given(communication_heavy_instances())
def test_the_same_restriction_as_cfree_and_an_upper_bound_on_the_optimum(inst: Instance) -> None:
    whole, completion = _optimum(modes.whole(inst), inst)
    assert whole == _restriction(inst)  # two models of one restriction: one optimum
    assert whole >= solve(inst).makespan  # the compact MILP's optimum: OPT
    assert max(completion) == whole  # the model's makespan is its schedule's true one (c_s = 1)


@settings(max_examples=15, deadline=None)
@given(with_releases(micro_instances(), max_release=4))
def test_releases_hold_and_the_symmetry_rows_keep_the_optimum(inst: Instance) -> None:
    whole, completion = _optimum(modes.whole(inst), inst)
    plain, _ = _optimum(modes.whole(inst, symmetry=False), inst)
    assert whole == plain == _restriction(inst)
    assert all(c - r >= 1 for c, r in zip(completion, inst.releases, strict=True))


@pytest.mark.parametrize("name", LIBRARY_NAMES)
def test_where_a_stored_optimum_is_contention_free_the_restriction_meets_it(name: str) -> None:
    # where the stored optimal schedule never puts two split jobs on one server at once, it
    # is a schedule of the restriction, whose optimum is then OPT; where it does, the
    # restriction's optimum may be above
    known = load_known(name)
    inst = known.instance
    contended = max(int(seg.contention.max()) for seg in simulate(inst, known.schedule).segments) >= 2
    model = modes.whole(inst)
    whole, completion = _optimum(model, inst)
    assert whole == known.optimum or (contended and whole > known.optimum)
    rho = execution_times(inst)  # every job runs its placement's own length
    schedule = read_schedule(model, inst)
    for j, row in enumerate(schedule.placements):
        assert completion[j] - schedule.starts[j] == rho[j, sum(1 for k in row if k)]


def test_a_horizon_that_a_job_cannot_meet_is_named() -> None:
    known = load_known(LIBRARY_NAMES[0])
    shortest = int(known.instance.bounds.rho_min.max())
    with pytest.raises(InputError, match="has no mode within"):
        modes.whole(known.instance, shortest - 1)
    modes.whole(known.instance, shortest)  # the longest job's fastest time fits


# -- sharing: split modes that lose no slot at contention 2 may share a link in pairs ----------
FRONTIER = Path(__file__).resolve().parents[2] / "instances" / "frontier"


@settings(max_examples=25, deadline=None)
@given(contended_instances())
def test_sharing_widens_the_restriction_and_stays_an_upper_bound(inst: Instance) -> None:
    model = modes.whole(inst, sharing=True)
    shared, completion = _optimum(model, inst)
    plain, _ = _optimum(modes.whole(inst), inst)
    assert solve(inst).makespan <= shared <= plain  # OPT (the compact MILP) <= it <= the restriction
    assert max(completion) == shared  # true completions, whatever contention the schedule has
    schedule = read_schedule(model, inst)
    times = modes.table(inst, sharing=True)
    for j, row in enumerate(schedule.placements):
        duration = {m.placement: m.duration for m in times.modes[j]}[tuple(row)]
        assert completion[j] - schedule.starts[j] == duration  # every job ends when its mode says
    contention = max(int(seg.contention.max()) for seg in simulate(inst, schedule).segments)
    assert contention <= modes.LINK


@settings(max_examples=15, deadline=None)
@given(communication_heavy_instances())
def test_sharing_never_lengthens_and_without_a_sharing_mode_changes_nothing(inst: Instance) -> None:
    if any(m.shares for own in modes.table(inst, sharing=True).modes for m in own):
        assert _optimum(modes.whole(inst, sharing=True), inst)[0] <= _optimum(modes.whole(inst), inst)[0]
        return
    assert _optimum(modes.whole(inst, sharing=True), inst)[0] == _optimum(modes.whole(inst), inst)[0]


def _fixed(inst: Instance, schedule, sharing: bool) -> Status:
    """The mode model over the schedule's makespan with every start and placement fixed."""
    model = modes.whole(inst, simulate(inst, schedule).makespan, symmetry=False, sharing=sharing)
    for j, (start, row) in enumerate(zip(schedule.start_array, schedule.placement_array, strict=True)):
        model.model.add(model.start[j] == int(start))
        for s, gpus in enumerate(row):
            model.model.add(model.y[j][s] == int(gpus))
    return Cpsat().solve(model, SolveOptions(time_limit=30.0)).status


def test_sharing_holds_the_optimum_that_needs_contention() -> None:
    # tiny-24x8x150-s3's optimum 55 puts jobs 1 and 18 on server 2 at once (contention 2);
    # neither loses a slot to it, so the schedule is one of the sharing restriction's and
    # none of the contention-free restriction's
    inst = Instance.read(FRONTIER / "tiny-24x8x150-s3.json")
    schedule = Schedule.read(FRONTIER / "schedules" / "tiny-24x8x150-s3.schedule.json")
    assert simulate(inst, schedule).makespan == 55
    assert _fixed(inst, schedule, sharing=True) in (Status.OPTIMAL, Status.FEASIBLE)
    assert _fixed(inst, schedule, sharing=False) == Status.INFEASIBLE
