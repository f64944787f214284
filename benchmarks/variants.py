"""Variants of ``auto``'s plan that ``benchmarks/frontier.py --methods NAME`` runs.

Each is a :class:`rar_opt.solvers.plan.Plan` built from ``auto``'s by ``dataclasses.replace``,
with a comment on what it changes and the session that measured it; docs/exactness.md has
the measurements and the verdicts (docs/exactness-log.md those of the variants not kept).
Most are not ``auto``'s plan: they stay so that every result file under
``benchmarks/results/`` can be run again by its method's name.
"""

from __future__ import annotations

import dataclasses

from rar_opt.solvers.plan import (
    AUTO,
    BACKFILL_SEARCHERS,
    COUNTED_IMPROVERS,
    LANES_TRIES,
    LARGE_JOBS,
    TIMED_IMPROVERS,
)

BEFORE_UNCAPPED = dataclasses.replace(AUTO, name="auto-bins-capped", bins_growth=2.0)
"""``auto``'s plan before the GPU bins' next slot after a refutation could use what is left
of their stage (2026-12-07, thirty-ninth session; ``Plan.bins_growth``): at most twice the
refutation's seconds."""

BEFORE_MOMENTUM = dataclasses.replace(BEFORE_UNCAPPED, name="auto-no-momentum", probe_momentum=None)
"""``auto``'s plan before a probe after a no could run past the probes' stage (2026-12-07,
thirty-eighth session; ``Plan.probe_momentum``): every variant below is built from it, so
that it still runs as it was measured."""

BEFORE_RACE = dataclasses.replace(
    BEFORE_MOMENTUM,
    name="auto-before-race",
    large_stages=("full", "bins", "probe", "full"),
    large_bins_seconds=None,
    large_probe_restart_seconds=8.0,
    race_share=None,
)
"""``auto``'s plan until the race at the floor took the probes' place from ``LARGE_JOBS``
jobs on (2026-12-06, twenty-ninth session): the GPU bins with a quarter of the time left,
then the probes, each probe at the floor asked again with the next CP-SAT seed after 8 s
undecided. The variants measured before are built from it, so that they still run as they
were measured."""
SMALL = dataclasses.replace(BEFORE_RACE, name="auto-small", large_jobs=None)
"""``auto``'s plan below ``LARGE_JOBS`` jobs, at every size (no switch)."""
SMALL_BEFORE = dataclasses.replace(
    SMALL, name="auto-small-before", stages=("probe", "bins", "full"), searchers=(), search_share=None
)
"""``auto``'s plan below ``LARGE_JOBS`` jobs before the backfill stage (2026-12-04, twelfth
session): the variants measured against it are built from it, so that they still run as
they were measured."""
PACK_FIRST = dataclasses.replace(
    BEFORE_RACE.for_jobs(LARGE_JOBS),
    name="auto-pack-first",
    early_full_share=0.6,
    probe_restart_seconds=None,
    fitting_improvers=None,
    fitting_improve_share=0.1,
)
"""``auto``'s plan from ``LARGE_JOBS`` jobs on from 2026-12-04 (ninth session) until the
restarted probes (tenth session): pack's search first, the early full model with 60% of
the time, probes asked once."""
LARGE_BEFORE = dataclasses.replace(PACK_FIRST, name="auto-no-pack-first", fitting_improve_share=None)
"""``auto``'s plan from ``LARGE_JOBS`` jobs on as it was before pack's search came first
(2026-12-04): the variants measured against it are built from it, so that they still run
as they were measured."""

TIMED = dataclasses.replace(
    BEFORE_RACE, name="auto-timed", fitting_improvers=TIMED_IMPROVERS, large_fitting_improve_share=0.1
)
"""``auto`` as it was from 2026-12-04 (twelfth session) to 2026-12-06: from ``LARGE_JOBS`` jobs
on, ``pack``'s search and the backfill searches before the first full model stopped on
seconds (10% of the time left) where they now stop on counts of work."""
LARGE_TIMED = TIMED.for_jobs(TIMED.large_jobs or 0)
"""``auto-timed``'s plan from ``LARGE_JOBS`` jobs on: the variants measured on it before
2026-12-06 are built from it, so that they still run as they were measured."""

VARIANTS = {
    plan.name: plan
    for plan in (
        BEFORE_RACE,
        SMALL,
        SMALL_BEFORE,
        # the full model right after the floors (no probes, no GPU bins)
        dataclasses.replace(SMALL_BEFORE, name="auto-full-first", stages=("full",), probe_share=None, bins_share=None),
        # the bins for a short while, the full model early, then the probes and the full model again
        dataclasses.replace(
            SMALL_BEFORE,
            name="auto-interleave",
            stages=("bins", "full", "probe", "full"),
            bins_share=0.15,
            early_full_share=0.4,
        ),
        # the full model early for a third of the time, then the probes, the bins, the full model again
        dataclasses.replace(
            SMALL_BEFORE, name="auto-early-full", stages=("full", "probe", "bins", "full"), early_full_share=0.3
        ),
        # the full model early for up to 60% of the time, stopped once its schedule ends one slot
        # above the floor; then the bins for a short while, the probes, the full model again
        dataclasses.replace(
            SMALL_BEFORE,
            name="auto-early-stop",
            stages=("full", "bins", "probe", "full"),
            early_full_share=0.6,
            early_full_stops_one_above=True,
            bins_share=0.15,
        ),
        # the full model early for most of the time, then the bins, the probes, the full model
        # again: auto's plan from LARGE_JOBS jobs on before pack's search came first (LARGE_BEFORE), at every size
        dataclasses.replace(LARGE_BEFORE, name="auto-full-bins"),
        # the full model early for a quarter of the time, then the probes (a step probe at
        # L + 1 first), the bins, the full model again
        dataclasses.replace(
            LARGE_BEFORE, name="auto-short-full", stages=("full", "probe", "bins", "full"), early_full_share=0.25
        ),
        # the same with the early full model stopped once it ends one slot above the floor
        dataclasses.replace(
            LARGE_BEFORE,
            name="auto-short-full-stop",
            stages=("full", "probe", "bins", "full"),
            early_full_share=0.25,
            early_full_stops_one_above=True,
        ),
        # the full model early for a quarter of the time, then the bins, the probes, the full
        # model again (the bins' raised floor reaches the probes and the last full model)
        dataclasses.replace(
            LARGE_BEFORE, name="auto-short-bins", stages=("full", "bins", "probe", "full"), early_full_share=0.25
        ),
        # the same without the step probe at L + 1: the probes start at the floor
        dataclasses.replace(
            LARGE_BEFORE,
            name="auto-short-bins-nostep",
            stages=("full", "bins", "probe", "full"),
            early_full_share=0.25,
            step_probe_share=None,
        ),
        # auto-short-full and auto-short-bins-nostep with the probes at the floor hinted with the best schedule
        dataclasses.replace(
            LARGE_BEFORE,
            name="auto-short-full-hint",
            stages=("full", "probe", "bins", "full"),
            early_full_share=0.25,
            probe_hint=True,
        ),
        dataclasses.replace(
            LARGE_BEFORE,
            name="auto-short-bins-nostep-hint",
            stages=("full", "bins", "probe", "full"),
            early_full_share=0.25,
            step_probe_share=None,
            probe_hint=True,
        ),
        # auto's 24-job plan with 10% of the time for pack's search first (Plan.fitting_improve_share):
        # auto itself from 24 jobs on since 2026-12-04; and without it, auto's 24-job plan before
        PACK_FIRST,
        LARGE_BEFORE,
        # PACK_FIRST with every probe at the floor asked again with the next CP-SAT seed after
        # 8 s undecided (Plan.probe_restart_seconds); and the same with the early full model cut
        # to 30% so that the restarted probes get more of the time: auto itself from 24 jobs on
        # since the tenth session
        dataclasses.replace(PACK_FIRST, name="auto-restarts", probe_restart_seconds=8.0),
        dataclasses.replace(PACK_FIRST, name="auto-short-restarts", early_full_share=0.3, probe_restart_seconds=8.0),
        # auto's plan below LARGE_JOBS jobs with the same restarts (measured on the hard instances: not kept)
        dataclasses.replace(SMALL_BEFORE, name="auto-small-restarts", probe_restart_seconds=8.0),
        # auto's plan below LARGE_JOBS jobs with the GPU bins first, for 5% of the time (about 3 s
        # of a minute), so that a quick refutation raises the floor before the probes ask at it
        dataclasses.replace(
            SMALL_BEFORE, name="auto-bins-first-short", stages=("bins", "probe", "full"), bins_share=0.05
        ),
        # auto's plan below LARGE_JOBS jobs with the backfill search aimed at the makespan (scored
        # past the floor) first, under each server rule in turn with the split rule "choose", for
        # 10% of the time left, so that the stages start from its schedule
        dataclasses.replace(
            SMALL_BEFORE, name="auto-backfill-first", fitting_improve_share=0.1, improvers=BACKFILL_SEARCHERS
        ),
        # the same for 5% of the time (about 3 s of a minute)
        dataclasses.replace(
            SMALL_BEFORE, name="auto-backfill-first-short", fitting_improve_share=0.05, improvers=BACKFILL_SEARCHERS
        ),
        # auto's plan below LARGE_JOBS jobs with the backfill rules as a stage after the GPU bins, for
        # a quarter of the time left: a search aimed at the bins' raised floor before the full model
        dataclasses.replace(
            SMALL_BEFORE,
            name="auto-backfill-stage",
            stages=("probe", "bins", "search", "full"),
            searchers=BACKFILL_SEARCHERS,
            search_share=0.25,
        ),
        # auto's plan from LARGE_JOBS jobs on before the twelfth session, with the backfill rules as a
        # stage before the last full model
        dataclasses.replace(
            LARGE_TIMED,
            fitting_improvers=None,
            name="auto-large-search",
            stages=("full", "bins", "probe", "search", "full"),
            searchers=BACKFILL_SEARCHERS,
            search_share=0.25,
            large_jobs=None,
        ),
        # auto below LARGE_JOBS jobs with the GPU bins at the floor after an undecided step probe
        # (6% of the time left), before the probe at the floor (Plan.step_bins_share)
        dataclasses.replace(BEFORE_RACE, name="auto-step-bins", step_bins_share=0.06, large_jobs=None),
        # from LARGE_JOBS jobs on: pack's search for half of the first improvement phase, then the
        # backfill rules (Plan.fitting_improvers; measured with them as the improvers, the same at
        # these sizes): auto itself from 24 jobs on since the twelfth session
        dataclasses.replace(LARGE_TIMED, name="auto-large-backfill", large_jobs=None),
        # auto from LARGE_JOBS jobs on with the backfill rules as a stage after the GPU bins, before
        # the probes: a search aimed at the floor as the bins leave it (the sixteenth session)
        dataclasses.replace(
            LARGE_TIMED,
            name="auto-large-bins-search",
            stages=("full", "bins", "search", "probe", "full"),
            large_jobs=None,
        ),
        # auto from LARGE_JOBS jobs on with the last full model on another CP-SAT seed than the
        # early one (Plan.full_reseed); and the same without the probes, so that the last full
        # model gets their time (the seventeenth session: 24 and 23 of 50 against auto's 25, not kept)
        dataclasses.replace(LARGE_TIMED, name="auto-large-reseed", full_reseed=True, large_jobs=None),
        dataclasses.replace(
            LARGE_TIMED,
            name="auto-large-reseed-no-probes",
            full_reseed=True,
            stages=("full", "bins", "full"),
            large_jobs=None,
        ),
        # auto from LARGE_JOBS jobs on with the contention-free restriction asked by the floor
        # (the stage "restrict", half of the time left) instead of the probes (the seventeenth
        # session: it found tiny-24x8x150-s4's optimum, which no other route had)
        dataclasses.replace(
            LARGE_TIMED,
            name="auto-large-restrict",
            stages=("full", "bins", "restrict", "full"),
            restrict_floor_share=0.5,
            large_jobs=None,
        ),
        # auto before its searches counted their work (the twenty-fourth session): the A/B control
        TIMED,
        # auto with pack's count of restarts halved and doubled against the first setting, 500: the
        # other choices; auto-pack-250 has been auto's own plan since (docs/exactness.md)
        *(
            dataclasses.replace(
                BEFORE_RACE,
                name=f"auto-pack-{restarts}",
                fitting_improvers=(
                    ("pack", 1.0, (("iterations", restarts), ("lanes_tries", LANES_TRIES))),
                    *COUNTED_IMPROVERS[1:],
                ),
            )
            for restarts in (250, 1000)
        ),
        # auto with the large-neighbourhood search on the mode restriction (the stage "lns",
        # rar_opt.solvers.floor_lns) after the GPU bins from LARGE_JOBS jobs on, with half of the
        # time left, before the probes (the twenty-fifth session)
        dataclasses.replace(
            BEFORE_RACE, name="auto-lns", large_stages=("full", "bins", "lns", "probe", "full"), lns_share=0.5
        ),
        # the same, with the search started from the searches' schedule before the early full
        # model (pack's and the backfill searches' best), not the full model's (Plan.lns_start)
        dataclasses.replace(
            BEFORE_RACE,
            name="auto-lns-search",
            large_stages=("full", "bins", "lns", "probe", "full"),
            lns_share=0.5,
            lns_start="search",
        ),
        # the GPU bins' stage cut at a few seconds from LARGE_JOBS jobs on (Plan.bins_seconds):
        # at 24 x 8 x 150 every refutation on record took at most 3.3 s, every undecided
        # answer its whole share (about 9.4 s), time the probes then lack (twenty-sixth session)
        *(dataclasses.replace(BEFORE_RACE, name=f"auto-bins-{cap:g}s", large_bins_seconds=cap) for cap in (2.0, 4.0)),
        # the last full model asked again with the next seed after 8 s undecided
        # (Plan.full_restart_seconds), from the best schedule then: below LARGE_JOBS jobs it
        # proves only where a schedule at the floor is the last question (twenty-sixth session)
        dataclasses.replace(BEFORE_RACE, name="auto-full-restart-8s", full_restart_seconds=8.0),
        # the counted searches before the first full model from LARGE_JOBS jobs on capped at half
        # of the time left instead of a quarter: on a machine half as fast as the one the counts
        # were set on, the quarter cut them in 64 of 100 runs at 24 x 8 x 150 (twenty-sixth session)
        dataclasses.replace(BEFORE_RACE, name="auto-searches-half", large_fitting_improve_share=0.5),
        # the stage "search" below LARGE_JOBS jobs as rounds of the counted backfill searches
        # (8,000 moves each), each round with a new seed, within half of the time left instead of
        # three timed searches in a quarter (Plan.search_rounds; measured on the two 20 x 8 x 120
        # instances that reach the stage, not kept: twenty-eighth session)
        dataclasses.replace(
            BEFORE_RACE, name="auto-search-rounds", searchers=COUNTED_IMPROVERS[1:], search_share=0.5, search_rounds=8
        ),
        # from LARGE_JOBS jobs on, the contention-free restriction with its placements written out
        # (formulations/modes.py, whole) asked by the floor after the GPU bins (cut at 4 s), with
        # 70% of the time left, before the probes, with the no-lp search (auto-large-patterns) or
        # CP-SAT's default one, which alone, by the optimum, found the schedules of
        # heavy-24x8x150-s1 and -s3 more often (twenty-eighth session)
        *(
            dataclasses.replace(
                BEFORE_RACE,
                name=name,
                large_stages=("full", "bins", "restrict", "probe", "full"),
                large_bins_seconds=4.0,
                restrict_floor_share=0.7,
                restrict_formulation="modes",
                restrict_search=search,
            )
            for name, search in (("auto-large-patterns", "no-lp"), ("auto-large-modes-default", "default"))
        ),
        # from LARGE_JOBS jobs on, the race at the floor (solvers/race.py) in place of the probes,
        # after the GPU bins (cut at 4 s), with 90% of the time left: the probe, the mode
        # restriction with CP-SAT's default search and with no-lp, in turn, 6-s slices growing
        # by half each turn (twenty-ninth session)
        # (auto-large-race), or with the two restrictions before the probe (auto-large-race-modes-first)
        *(
            dataclasses.replace(
                BEFORE_RACE,
                name=name,
                large_stages=("full", "bins", "race", "full"),
                large_bins_seconds=4.0,
                race_share=0.9,
                race_entries=entries,
                race_slice_seconds=6.0,
            )
            for name, entries in (
                ("auto-large-race", ("probe", "modes:default", "modes:no-lp")),
                ("auto-large-race-modes-first", ("modes:default", "modes:no-lp", "probe")),
            )
        ),
        # the race of the three restriction entries that found the optima alone (cfree with no-lp,
        # the mode restriction with the default search and with no-lp), 7-s slices: in the place
        # of the probes (auto-large-race-restrictions), or right after the counted searches,
        # and the GPU bins (cut at 4 s), before the early full model, with 40% of the time left
        # (auto-large-race-early)
        dataclasses.replace(
            BEFORE_RACE,
            name="auto-large-race-restrictions",
            large_stages=("full", "bins", "race", "full"),
            large_bins_seconds=4.0,
            race_share=0.9,
            race_entries=("cfree:no-lp", "modes:default", "modes:no-lp"),
            race_slice_seconds=7.0,
        ),
        dataclasses.replace(
            BEFORE_RACE,
            name="auto-large-race-early",
            large_stages=("bins", "race", "full", "probe", "full"),
            large_bins_seconds=4.0,
            race_share=0.4,
            race_entries=("cfree:no-lp", "modes:default", "modes:no-lp"),
            race_slice_seconds=7.0,
        ),
        # the race with the mode restriction under CP-SAT's own search with no presolve probing
        # (cpsat.SEARCHES "no-probing") in the place of no-lp, CP-SAT's default search last (it
        # then gets what is left), in 8-s or 7-s slices (2026-12-06, thirtieth session)
        *(
            dataclasses.replace(
                BEFORE_MOMENTUM,
                name=name,
                race_entries=("cfree:no-lp", "modes:no-probing", "modes:default"),
                race_slice_seconds=slice_seconds,
            )
            for name, slice_seconds in (("auto-race-no-probing", 8.0), ("auto-race-no-probing-7", 7.0))
        ),
        # more time for the race: the early full model with 20% of the time left (auto: 30%),
        # and the race with all of what is left after the bins (auto: 90%; the last full model
        # then has none) (2026-12-06, thirtieth session)
        # (the race's entries and slices as measured, so that a later change of auto's leaves it be)
        dataclasses.replace(
            BEFORE_MOMENTUM,
            name="auto-race-more",
            large_early_full_share=0.2,
            race_share=1.0,
            race_entries=("cfree:no-lp", "modes:no-probing", "modes:default"),
            race_slice_seconds=8.0,
        ),
        # the probe (the full model at the floor, the only entry that can meet an optimum that
        # needs contention) in the race, second or last (2026-12-07, thirty-first session)
        *(
            dataclasses.replace(BEFORE_MOMENTUM, name=name, race_entries=entries, race_slice_seconds=8.0)
            for name, entries in (
                ("auto-race-probe-2nd", ("cfree:no-lp", "probe", "modes:no-probing", "modes:default")),
                ("auto-race-probe-last", ("cfree:no-lp", "modes:no-probing", "modes:default", "probe")),
            )
        ),
        # auto's plan from 24 jobs on (the early full model, the GPU bins, the race at the
        # floor, the full model) from 20 jobs on: at 20 x 8 x 120 the misses under 24 units
        # of work end with the probes' questions undecided and the full model short of time
        # (2026-12-07, thirty-third session)
        dataclasses.replace(BEFORE_MOMENTUM, name="auto-large-from-20", large_jobs=20),
        # from 20 jobs on, no race (the misses there are on the bound side, where the race's
        # restrictions cannot answer no): the GPU bins (at most 8 s) then the full model, or
        # the early full model, the bins and the full model again (2026-12-07, thirty-third session)
        dataclasses.replace(
            BEFORE_MOMENTUM,
            name="auto-20-bins-full",
            large_jobs=20,
            large_stages=("bins", "full"),
            large_early_full_share=None,
            large_bins_seconds=8.0,
        ),
        dataclasses.replace(
            BEFORE_MOMENTUM,
            name="auto-20-full-bins-full",
            large_jobs=20,
            large_stages=("full", "bins", "full"),
            large_bins_seconds=8.0,
        ),
        # auto-20-bins-full below 24 jobs, written as Plan's middle tier (from 24 jobs on the
        # plan stays auto's); at 20 x 8 x 120 the same runs, unit for unit
        dataclasses.replace(BEFORE_MOMENTUM, name="auto-mid-bins-full", mid_jobs=20, mid_bins_seconds=8.0),
        # below 24 jobs the GPU bins (at most 8 s) before the probes: on tiny-16x8x100-s5 the probe
        # at 56 is undecided for 17 s and the bins left after it refute 56 but not 57 in their
        # share (2026-12-07, thirty-third session)
        dataclasses.replace(
            BEFORE_MOMENTUM, name="auto-bins-first", stages=("bins", "probe", "search", "full"), bins_seconds=8.0
        ),
        # the same order from 20 jobs on only, as Plan's middle tier (which also runs the counted
        # searches first): at 20 x 8 x 120 the probes at the floor of heavy-20x8x120-s0 are
        # undecided for about 65 s where the bins after them refute it in 3-6 s (2026-12-07,
        # thirty-fourth session)
        dataclasses.replace(
            BEFORE_MOMENTUM,
            name="auto-mid-bins-probe",
            mid_jobs=20,
            mid_stages=("bins", "probe", "search", "full"),
            mid_bins_seconds=8.0,
        ),
        # from 20 jobs on, the counted searches first (Plan's middle tier), then auto's stages
        # as they are: the control of auto-mid-decisive (2026-12-07, thirty-sixth session)
        dataclasses.replace(
            BEFORE_MOMENTUM, name="auto-mid-searches-first", mid_jobs=20, mid_stages=BEFORE_MOMENTUM.stages
        ),
        # the same, and the step probe at L + 1 gets 90% of the time left when the best schedule
        # ends at L + 2, where its no proves that schedule optimal: on heavy-20x8x120-s5 (optimum
        # 55) the probe at 54 alone refutes it in 31-54 s, where auto asks at 54 for 9 s, then
        # at 53; measured, the searches end there at 57 with four seeds of five, and the rule
        # costs heavy-20x8x120-s0 its proofs (2026-12-07, thirty-sixth session; not kept)
        dataclasses.replace(
            BEFORE_MOMENTUM,
            name="auto-mid-decisive",
            mid_jobs=20,
            mid_stages=BEFORE_MOMENTUM.stages,
            decisive_step_share=0.9,
        ),
        # the probes with CP-SAT's overload checker on energies scaled by dual-feasible
        # functions (the search "no-lp-dff"): the probes at 53 and 54 of heavy-20x8x120-s5
        # refuted in 12-20 s where no-lp takes 27-56 s (2026-12-07, thirty-seventh session)
        # (measured with the reversal row on the first probe only, as auto was then)
        dataclasses.replace(BEFORE_MOMENTUM, name="auto-probe-dff", probe_search="no-lp-dff", probe_reversal="first"),
        # the same check in the full model too
        dataclasses.replace(
            BEFORE_MOMENTUM,
            name="auto-dff",
            probe_search="no-lp-dff",
            probe_reversal="first",
            full_searches=(("no-lp-dff", 1.0),),
        ),
        # the time-reversal row also on a probe at the floor that asks again what an undecided
        # step probe asked without it: on tiny-20x8x120-s3 auto's second probe at 57 is
        # undecided for 35-47 s without the row, and refuted in 11-13 s with it (2026-12-07,
        # thirty-seventh session)
        # (auto's own setting since; measured against auto-first-row below)
        dataclasses.replace(BEFORE_MOMENTUM, name="auto-repeats", probe_reversal="repeats"),
        # auto before the rule above was kept (2026-12-07, thirty-seventh session): the row on
        # the first probe at the floor only
        dataclasses.replace(BEFORE_MOMENTUM, name="auto-first-row", probe_reversal="first"),
        # the reversal row on the step probe too where the best schedule ends five or more slots
        # above the floor: there the step probe's question was a no or undecided in every
        # 24-unit run (2026-12-07, thirty-eighth session)
        dataclasses.replace(BEFORE_MOMENTUM, name="auto-wide-step-row", step_reversal_gap=5),
        # the GPU bins at the new floor after the step probe's no, within 15% of the time left,
        # before the probes at the floor (2026-12-07, thirty-eighth session)
        dataclasses.replace(BEFORE_MOMENTUM, name="auto-step-no-bins", refuted_step_bins_share=0.15),
        # the same with a quarter of the time left (the bins' own stage share), and with the
        # reversal row on a wide gap's step probe as well (2026-12-07, thirty-eighth session)
        dataclasses.replace(BEFORE_MOMENTUM, name="auto-step-no-bins-25", refuted_step_bins_share=0.25),
        dataclasses.replace(
            BEFORE_MOMENTUM, name="auto-wide-row-no-bins", step_reversal_gap=5, refuted_step_bins_share=0.25
        ),
        # a probe after a no may use half of all the time left, past the probes' stage
        # (Plan.probe_momentum; 2026-12-07, thirty-eighth session; auto's own setting since,
        # measured against auto-no-momentum)
        dataclasses.replace(BEFORE_MOMENTUM, name="auto-momentum", probe_momentum=0.5),
        BEFORE_MOMENTUM,
        dataclasses.replace(BEFORE_MOMENTUM, name="auto-wide-row-momentum", step_reversal_gap=5, probe_momentum=0.5),
        # the three together (2026-12-07, thirty-eighth session)
        dataclasses.replace(
            BEFORE_MOMENTUM, name="auto-next", step_reversal_gap=5, probe_momentum=0.5, refuted_step_bins_share=0.25
        ),
        # the GPU bins' next slot after a refutation with what is left of their stage, not twice
        # the refutation's seconds (Plan.bins_growth None; 2026-12-07, thirty-ninth session; auto's
        # own setting since, measured against auto-bins-capped)
        dataclasses.replace(BEFORE_UNCAPPED, name="auto-bins-uncapped", bins_growth=None),
        BEFORE_UNCAPPED,
        # the GPU bins before the probes, the first ask within 4 s (1.6 units of work), the next
        # ones while they refute within the bins' share (Plan.opening_bins_seconds; 2026-12-07,
        # thirty-ninth session)
        dataclasses.replace(AUTO, name="auto-opening-bins", opening_bins_seconds=4.0),
        # both changes together, in the probes only and in the full model too (measured, not kept)
        dataclasses.replace(
            BEFORE_MOMENTUM, name="auto-probe-dff-repeats", probe_reversal="repeats", probe_search="no-lp-dff"
        ),
        dataclasses.replace(
            BEFORE_MOMENTUM,
            name="auto-dff-repeats",
            probe_reversal="repeats",
            probe_search="no-lp-dff",
            full_searches=(("no-lp-dff", 1.0),),
        ),
    )
}
"""Variants of auto's plan, run by ``--methods NAME`` (docs/exactness.md)."""
