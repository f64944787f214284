"""Plans: how a method over several models spends its time (:mod:`.decompose`).

A :class:`Plan` gives each phase its share of the time left, names the heuristics whose
best schedule is the first incumbent, says whether the full model is floored by the best
bound, how long the probes may run, which improvement searches run where (with options of
their own), the order of the stages, and which CP-SAT searches the full model runs in turn.
It validates itself on construction. :data:`PLANS` holds the methods ``solve`` knows by
name: ``decompose`` (the decomposition as first stated) and ``auto`` (the default).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from rar_opt.algorithms.backfill import FITS
from rar_opt.errors import InputError
from rar_opt.solvers.cpsat import SEARCHES
from rar_opt.support.checks import is_real

Improver = tuple[str, float] | tuple[str, float, tuple[tuple[str, Any], ...]]
"""An improvement search of a plan: a policy's name, its part of the phase's time and,
optionally, options of the policy as (name, value) pairs."""

REVERSALS = ("all", "first", "repeats", "none")
"""The choices of :attr:`Plan.probe_reversal`."""

PRICINGS = ("all", "floor", "none")
"""The choices of :attr:`Plan.probe_pricing`."""

LNS_STARTS = ("best", "search")
"""The choices of :attr:`Plan.lns_start`."""

RESTRICT_FORMULATIONS = ("cfree", "modes", "shared")
"""The choices of :attr:`Plan.restrict_formulation`."""

STAGES = ("probe", "bins", "search", "restrict", "lns", "race", "full")
"""The stages a plan orders after its heuristics, floors and contention-free phases
(:attr:`Plan.stages`): the probes, the GPU bins, the searches of :attr:`Plan.searchers`,
the contention-free restriction asked by the floor, the large-neighbourhood search towards
the floor (:mod:`.floor_lns`), the race of questions at the floor (:mod:`.race`) and the
full model."""


def race_entry(name: str) -> tuple[str, str]:
    """An entry of :attr:`Plan.race_entries` as (model, CP-SAT search): ``"probe"`` is the
    probe at the floor, whose search is the plan's ``probe_search`` (given here as
    ``"probe"``); ``"modes:SEARCH"``, ``"shared:SEARCH"`` and ``"cfree:SEARCH"`` a restriction
    of :data:`RESTRICT_FORMULATIONS` under a search of :data:`~rar_opt.solvers.cpsat.SEARCHES`."""
    if name == "probe":
        return "probe", "probe"
    formulation, _, search = name.partition(":") if isinstance(name, str) else ("", "", "")
    if formulation not in RESTRICT_FORMULATIONS or search not in SEARCHES:
        choices = ", ".join(f"{f}:SEARCH" for f in RESTRICT_FORMULATIONS)
        raise InputError(
            f"{name!r} is not an entry (probe, {choices}; SEARCH one of {', '.join(SEARCHES)})", where="race_entries"
        )
    return formulation, search


@dataclass(frozen=True)
class Plan:
    """How a decomposition run spends its time."""

    name: str
    relax_share: float  # share of the time left that the relaxation may use
    restrict_share: float  # share of the time left that the restriction may use
    heuristics: tuple[str, ...] = ()  # policies whose best schedule is the first incumbent
    floor: bool = False  # the full model gets makespan >= the best bound so far
    # the restriction's share when the relaxation did not close: its makespan is then at
    # least the relaxation's optimum, somewhere above the proven bound, so it rarely proves
    # anything and serves mostly as the full model's hint and horizon
    restrict_share_open: float | None = None
    # the full model's searches in turn (names of rar_opt.solvers.cpsat.SEARCHES), each
    # with its share of the time left; the last one should take all that is left (1.0)
    full_searches: tuple[tuple[str, float], ...] = (("default", 1.0),)
    # before the full model: probes at the floor (rar_opt.solvers.probe) while they refute
    # it, within this share of the time left in all; None: no probes
    probe_share: float | None = None
    # when the best schedule ends one slot above the floor, the probe at the floor is the
    # whole question left (no: the schedule is optimal; yes: a schedule at the floor is);
    # it may then use this share of all the time left instead of what the stage has left
    last_probe_share: float | None = None
    # when the best schedule ends two slots or more above the floor L, a first probe at
    # L + 1, within this share of the time left: a yes (usually quick: it asks for a
    # schedule with slack) leaves the probe at L as the last question; a no proves L + 2;
    # None: the probes start at L
    step_probe_share: float | None = None
    # when the best schedule ends exactly two slots above the floor L, that step probe at
    # L + 1 is the decisive question (a no proves the schedule optimal and makes the probe
    # at L moot; a yes leaves the probe at L as the last question), and it may use this
    # share of all the time left if that is more; None: step_probe_share as above (auto's:
    # measured and not kept, docs/exactness-log.md, "The step probe as the decisive question")
    decisive_step_share: float | None = None
    # when that step probe is undecided (the floor's question is then often slow for the
    # probes too), the GPU bins at the floor within this share of the time left before the
    # probe at L: a quick refutation raises the floor without the probe's wait; None: no bins there
    step_bins_share: float | None = None
    # when that step probe says no (the floor rises to L + 2), the GPU bins at the new floor
    # within this share of the time left before the probes at the floor: where the probes'
    # refutations are slow the bins' are often quick, and where the bins cannot refute they
    # mostly find a relaxed packing at once; None: no bins there
    refuted_step_bins_share: float | None = None
    # a probe at the floor that follows a no (the floor has just risen) may use this share of
    # all the time left, past the end of the probes' stage: probes that refute one slot after
    # another are the stage that makes progress; None: the stage's share alone
    probe_momentum: float | None = None
    # after the probes: the GPU-bins relaxation (rar_opt.formulations.gpubins) at the floor
    # while it refutes it, within this share of the time left; None: left out
    bins_share: float | None = None
    # the bins' stage lasts at most this many seconds (None: its share alone): where the
    # bins refute, they do so quickly, and an undecided wait takes time from the probes
    bins_seconds: float | None = None
    # before the probes: the GPU bins at the floor, the first ask within this many seconds and,
    # while they refute, the next ones within bins_share of the time left (a refutation by the
    # bins, where there is one, is quick); None: the bins only in their own stage (auto's:
    # screened and not kept, docs/exactness-log.md, "The GPU bins before the probes")
    opening_bins_seconds: float | None = None
    # after the bins refute a slot, the next slot may take at most this many times the seconds
    # of that refutation; None: what is left of the bins' stage (auto's: a refutation often
    # takes several times the one before, docs/exactness.md, "GPU bins with servers")
    bins_growth: float | None = 2.0
    # which probes carry the time-reversal row (rar_opt.formulations.symmetry.add_reversal):
    # "all", "first" (the first probe of the stage, at the structural floor), "repeats" (the
    # first, and a probe at the floor that asks again what an undecided step probe asked
    # without the row) or "none"
    probe_reversal: str = "first"
    # the step probe at L + 1 carries the time-reversal row too when the best schedule ends at
    # least this many slots above the floor L (a wide gap: the step probe's question is then
    # mostly a no, which the row speeds); None: the step probe never carries it
    step_reversal_gap: int | None = None
    # which probes carry the pricing rows (rar_opt.formulations.pricing): "all", "floor" (every
    # probe at the floor, not the step probe at L + 1) or "none"; "all" because the rows also
    # speed the step probe's yes where it matters most (docs/exactness.md, "The pricing rows
    # on the step probe")
    probe_pricing: str = "all"
    # a probe at the floor still undecided after this many seconds is asked again with the next
    # CP-SAT seed (the time to a yes varies by seed far more than its median: docs/exactness.md,
    # "Restarted probes"), within the time the question had; None: one ask per question
    probe_restart_seconds: float | None = None
    # the probes at the floor start their search from the best schedule so far (a hint,
    # which may end after the slot asked: rar_opt.formulations.cpsat.hint_towards)
    probe_hint: bool = False
    # the CP-SAT search of every probe (a name of rar_opt.solvers.cpsat.SEARCHES)
    probe_search: str = "no-lp"
    # after the heuristics: the structural lower bounds of rar_opt.bounds.structural (cheap, no solver);
    # a heuristic's schedule that meets them is optimal before any model is built
    structural: bool = False
    # where the full model cannot be built (paper scale): this share of the time left for the
    # improvement searches, and the contention-free phases are left out (docs/exactness.md)
    improve_share: float | None = None
    # those searches in turn (names of rar_opt.algorithms.POLICIES), each with its part of
    # the phase's time (the last one takes what is left: 1.0) and, as a third item, options
    # of the policy as (name, value) pairs (("backfill", 0.5, (("fit", "large"),)))
    improvers: tuple[Improver, ...] = (("pack", 1.0),)
    # where the full model can be built: this share of the time left for the same searches
    # (or for fitting_improvers, where given), before the stages, so that the full model
    # (hinted with it) and the probes start from a better schedule than the heuristics'
    # constructions; None: no such phase
    fitting_improve_share: float | None = None
    fitting_improvers: tuple[Improver, ...] | None = None
    # the stage "search": these improvement searches (as improvers) within search_share of the
    # time left, where the full model can be built, aimed at the makespan past the bound so far
    searchers: tuple[Improver, ...] = ()
    search_share: float | None = None
    # the stage "search" runs its searchers up to this many rounds, round k (from 0) with the
    # seed rar_opt.solvers.budget.run_seed(seed, k), while its share lasts: searches stopped on
    # a count of work finish early, and a new seed is a new walk (1: one round)
    search_rounds: int = 1
    # the stage "restrict": the contention-free restriction (split jobs that share a server never
    # overlap) asked for a schedule that ends by the floor, within this share of the time left
    restrict_floor_share: float | None = None
    # the model of that stage (RESTRICT_FORMULATIONS): "cfree" (rar_opt.formulations.cfree),
    # "modes", the same restriction with each job's placements written out (modes.whole), or
    # "shared", that one widened by the split modes that may share a link (modes.whole, sharing)
    restrict_formulation: str = "cfree"
    # the CP-SAT search of that stage (a name of rar_opt.solvers.cpsat.SEARCHES)
    restrict_search: str = "no-lp"
    # the stage "lns": the large-neighbourhood search on the mode restriction from the best
    # schedule towards the floor (rar_opt.solvers.floor_lns), within this share of the time left
    lns_share: float | None = None
    # where that search starts: "best", the best schedule so far; "search", the best schedule
    # an improvement search handed on (before any full model has moved it)
    lns_start: str = "best"
    # the stage "race" (rar_opt.solvers.race): the questions race_entries (race_entry) asked
    # by the floor in turn, each for race_slice_seconds, the slice times race_growth after each
    # turn, within race_share of the time left
    race_share: float | None = None
    race_entries: tuple[str, ...] = ("cfree:no-lp", "modes:no-probing", "modes:default")
    race_slice_seconds: float = 8.0
    race_growth: float = 1.5
    # the contention-free relaxation and restriction (rar_opt.formulations.cfree) before the
    # probes and the full model; False leaves them out
    contention_free: bool = True
    # the order of the stages after the contention-free phases (names of STAGES): the
    # probes and the bins at most once each, the full model last; the full model may also
    # run earlier, for early_full_share of the time left (its searches' shares scaled by
    # it), to improve the schedule that the stages after it ask about
    stages: tuple[str, ...] = ("probe", "bins", "full")
    early_full_share: float | None = None
    # the early full model stops as soon as its schedule ends one slot above the floor: the
    # probe at the floor is then the whole question left, and gets the time (last_probe_share)
    early_full_stops_one_above: bool = False
    # a full model after an earlier one in the same run searches with another CP-SAT seed
    # (rar_opt.solvers.budget.run_seed): with the same seed, hint, horizon and floor it would
    # repeat the earlier search step for step before it reached anything new
    full_reseed: bool = False
    # the last full model still undecided after this many seconds is asked again with the next
    # seed (rar_opt.solvers.budget.run_seed), from the best schedule then, within the time its
    # search had (rar_opt.solvers.phases.full_model); None: one ask
    full_restart_seconds: float | None = None
    # from large_jobs jobs on, the stages run in the order large_stages, an early full model
    # with large_early_full_share of the time left, and fitting_improve_share is
    # large_fitting_improve_share (measured to prove more from that size on: docs/exactness.md,
    # "The plan chosen by size"); None: every size runs as above
    large_jobs: int | None = None
    large_stages: tuple[str, ...] = ("full", "bins", "probe", "full")
    large_early_full_share: float | None = 0.6
    large_fitting_improve_share: float | None = None
    # and probe_restart_seconds is large_probe_restart_seconds (None: as below large_jobs)
    large_probe_restart_seconds: float | None = None
    # and bins_seconds is large_bins_seconds (None: as below large_jobs)
    large_bins_seconds: float | None = None
    # from mid_jobs jobs on, below large_jobs, the stages run in the order mid_stages with no
    # early full model, fitting_improve_share is large_fitting_improve_share and bins_seconds
    # is mid_bins_seconds (None: as below mid_jobs); None: no such tier (auto has none: the
    # GPU bins then the full model from 20 jobs on was measured and not kept, docs/exactness-log.md,
    # "A middle tier from 20 jobs on")
    mid_jobs: int | None = None
    mid_stages: tuple[str, ...] = ("bins", "full")
    mid_bins_seconds: float | None = None

    def __post_init__(self) -> None:
        shares = {"relax_share": self.relax_share, "restrict_share": self.restrict_share}
        if self.restrict_share_open is not None:
            shares["restrict_share_open"] = self.restrict_share_open
        if self.probe_share is not None:
            shares["probe_share"] = self.probe_share
        if self.bins_share is not None:
            shares["bins_share"] = self.bins_share
        if self.last_probe_share is not None:
            shares["last_probe_share"] = self.last_probe_share
        if self.step_probe_share is not None:
            shares["step_probe_share"] = self.step_probe_share
        if self.decisive_step_share is not None:
            shares["decisive_step_share"] = self.decisive_step_share
        if self.step_bins_share is not None:
            shares["step_bins_share"] = self.step_bins_share
        if self.refuted_step_bins_share is not None:
            shares["refuted_step_bins_share"] = self.refuted_step_bins_share
        if self.probe_momentum is not None:
            shares["probe_momentum"] = self.probe_momentum
        if self.improve_share is not None:
            shares["improve_share"] = self.improve_share
        if self.fitting_improve_share is not None:
            shares["fitting_improve_share"] = self.fitting_improve_share
        if self.early_full_share is not None:
            shares["early_full_share"] = self.early_full_share
        if self.search_share is not None:
            shares["search_share"] = self.search_share
        if self.restrict_floor_share is not None:
            shares["restrict_floor_share"] = self.restrict_floor_share
        if self.lns_share is not None:
            shares["lns_share"] = self.lns_share
        if self.race_share is not None:
            shares["race_share"] = self.race_share
        for where in (
            "probe_restart_seconds",
            "bins_seconds",
            "full_restart_seconds",
            "race_slice_seconds",
            "mid_bins_seconds",
            "opening_bins_seconds",
        ):
            seconds = getattr(self, where)
            if seconds is not None and (not is_real(seconds) or not 0 < seconds < float("inf")):
                raise InputError(f"must be a positive number of seconds or None, got {seconds!r}", where=where)
        shares.update({f"full_searches[{k}]": share for k, (_, share) in enumerate(self.full_searches)})
        for field in ("improvers", "searchers", "fitting_improvers"):
            shares.update({f"{field}[{k}]": entry[1] for k, entry in enumerate(getattr(self, field) or ())})
        for where, share in shares.items():
            if not is_real(share) or not 0 < share <= 1:
                raise InputError(f"a share of the time left must be in (0, 1], got {share!r}", where=where)
        growth = self.bins_growth
        if growth is not None and (not is_real(growth) or not 1 <= growth < float("inf")):
            raise InputError(f"must be a number of 1 or more, or None, got {growth!r}", where="bins_growth")
        rounds = self.search_rounds
        if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
            raise InputError(f"must be a positive number of rounds, got {rounds!r}", where="search_rounds")
        gap = self.step_reversal_gap
        if gap is not None and (isinstance(gap, bool) or not isinstance(gap, int) or gap < 2):
            raise InputError(f"must be a whole number of slots, 2 or more, got {gap!r}", where="step_reversal_gap")
        for flag in ("contention_free", "probe_hint", "full_reseed"):
            if not isinstance(getattr(self, flag), bool):
                raise InputError(f"must be true or false, got {getattr(self, flag)!r}", where=flag)
        for where, value, choices in (
            ("probe_reversal", self.probe_reversal, REVERSALS),
            ("probe_pricing", self.probe_pricing, PRICINGS),
            ("lns_start", self.lns_start, LNS_STARTS),
            ("restrict_formulation", self.restrict_formulation, RESTRICT_FORMULATIONS),
        ):
            if value not in choices:
                raise InputError(f"must be one of {', '.join(choices)}, got {value!r}", where=where)
        if self.probe_search not in SEARCHES:
            raise InputError(
                f"{self.probe_search!r} is not a CP-SAT search ({', '.join(SEARCHES)})", where="probe_search"
            )
        if self.restrict_search not in SEARCHES:
            raise InputError(
                f"{self.restrict_search!r} is not a CP-SAT search ({', '.join(SEARCHES)})", where="restrict_search"
            )
        self._check_race()
        self._check_stages()
        self._check_large()
        if not self.full_searches:
            raise InputError("the full model needs at least one search", where="full_searches")
        for search, _ in self.full_searches:
            if search not in SEARCHES:
                raise InputError(f"{search!r} is not a CP-SAT search ({', '.join(SEARCHES)})", where="full_searches")
        from rar_opt.algorithms import POLICIES  # a lower layer; imported here only to check the names

        for field in ("improvers", "searchers", "fitting_improvers"):
            for k, entry in enumerate(getattr(self, field) or ()):
                where = f"{field}[{k}]"
                if entry[0] not in POLICIES:
                    raise InputError(f"{entry[0]!r} is not a policy ({', '.join(POLICIES)})", where=where)
                options = entry[2] if len(entry) > 2 else ()
                if len(entry) > 3 or not all(
                    isinstance(o, tuple) and len(o) == 2 and isinstance(o[0], str) for o in options
                ):
                    raise InputError(f"options must be (name, value) pairs, got {entry[2:]!r}", where=where)
        if "search" in self.stages and not (self.searchers and self.search_share is not None):
            raise InputError('the stage "search" needs searchers and search_share', where="search_share")
        if "restrict" in self.stages and self.restrict_floor_share is None:
            raise InputError('the stage "restrict" needs restrict_floor_share', where="restrict_floor_share")
        if "lns" in self.stages and self.lns_share is None:
            raise InputError('the stage "lns" needs lns_share', where="lns_share")
        if "race" in self.stages and self.race_share is None:
            raise InputError('the stage "race" needs race_share', where="race_share")

    def _check_race(self) -> None:
        if not isinstance(self.race_entries, tuple) or not self.race_entries:
            raise InputError(f"must be a non-empty tuple of entries, got {self.race_entries!r}", where="race_entries")
        for name in self.race_entries:
            race_entry(name)
        if len(set(self.race_entries)) != len(self.race_entries):
            raise InputError(f"an entry may come once, got {self.race_entries!r}", where="race_entries")
        growth = self.race_growth
        if not is_real(growth) or not 1 <= growth < float("inf"):
            raise InputError(f"must be a number >= 1, got {growth!r}", where="race_growth")

    def _check_stages(self) -> None:
        stages = self.stages
        if not isinstance(stages, tuple) or not stages or stages[-1] != "full":
            raise InputError(f"must be a tuple of stages ending with the full model, got {stages!r}", where="stages")
        for stage in stages:
            if stage not in STAGES:
                raise InputError(f"{stage!r} is not a stage ({', '.join(STAGES)})", where="stages")
        for stage in ("probe", "bins", "search", "restrict", "lns", "race"):
            if stages.count(stage) > 1:
                raise InputError(f"{stage!r} may come at most once, got {stages!r}", where="stages")
        if not isinstance(self.early_full_stops_one_above, bool) or (
            self.early_full_stops_one_above and self.early_full_share is None
        ):
            raise InputError(
                f"must be true only with an early full model, got {self.early_full_stops_one_above!r}",
                where="early_full_stops_one_above",
            )
        if (stages.count("full") > 1) != (self.early_full_share is not None):
            raise InputError(
                'an early full model ("full" before the last stage) needs early_full_share, and only it',
                where="early_full_share",
            )

    def _check_large(self) -> None:
        for tier in ("mid", "large"):
            jobs = getattr(self, f"{tier}_jobs")
            if jobs is None:
                continue
            if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
                raise InputError(f"must be a positive number of jobs or None, got {jobs!r}", where=f"{tier}_jobs")
            try:
                self.for_jobs(jobs)  # the tier's plan validates itself
            except InputError as error:  # named by the tier's own field (the mid tier has no early full share)
                named = "stages" if tier == "mid" and error.where == "early_full_share" else error.where
                raise InputError(error.message, where=f"{tier}_{named}") from None
        if self.mid_jobs is not None and self.large_jobs is not None and self.mid_jobs >= self.large_jobs:
            raise InputError(f"must be below large_jobs ({self.large_jobs}), got {self.mid_jobs!r}", where="mid_jobs")

    def for_jobs(self, jobs: int) -> Plan:
        """The plan that an instance of ``jobs`` jobs runs: from :attr:`large_jobs` on, this
        one with :attr:`large_stages`, :attr:`large_early_full_share`,
        :attr:`large_fitting_improve_share`, :attr:`large_probe_restart_seconds` and
        :attr:`large_bins_seconds` (the last two where set); from :attr:`mid_jobs` on, below
        that, this one with :attr:`mid_stages`, no early full model,
        :attr:`large_fitting_improve_share` and :attr:`mid_bins_seconds` (where set); else
        this one. The plans of the tiers have no switch of their own."""
        if self.large_jobs is not None and jobs >= self.large_jobs:
            restart, bins = self.large_probe_restart_seconds, self.large_bins_seconds
            return replace(
                self,
                stages=self.large_stages,
                early_full_share=self.large_early_full_share,
                fitting_improve_share=self.large_fitting_improve_share,
                probe_restart_seconds=self.probe_restart_seconds if restart is None else restart,
                bins_seconds=self.bins_seconds if bins is None else bins,
                large_jobs=None,
                mid_jobs=None,
            )
        if self.mid_jobs is not None and jobs >= self.mid_jobs:
            bins = self.mid_bins_seconds
            return replace(
                self,
                stages=self.mid_stages,
                early_full_share=None,
                early_full_stops_one_above=False,
                fitting_improve_share=self.large_fitting_improve_share,
                bins_seconds=self.bins_seconds if bins is None else bins,
                large_jobs=None,
                mid_jobs=None,
            )
        return self

    def probe_rows(self, *, stepping: bool, first: bool, repeat: bool = False, gap: int = 0) -> tuple[bool, bool]:
        """Whether a probe carries the time-reversal row and the pricing rows: the step probe
        (``stepping``) only where ``gap`` (the best schedule's slots above the floor) reaches
        ``step_reversal_gap``; ``first``: the first probe at the floor; ``repeat``: a probe at
        the floor asking what an undecided step probe asked."""
        if stepping:
            wide = self.step_reversal_gap is not None and gap >= self.step_reversal_gap
            reversal = wide and self.probe_reversal != "none"
        else:
            marked = first or (repeat and self.probe_reversal == "repeats")
            reversal = self.probe_reversal == "all" or (self.probe_reversal != "none" and marked)
        pricing = self.probe_pricing == "all" or (self.probe_pricing == "floor" and not stepping)
        return reversal, pricing


DECOMPOSE = Plan("decompose", 0.3, 0.5)
LARGE_JOBS = 24
"""From this many jobs on, ``auto`` runs :data:`AUTO_LARGE` (docs/exactness.md, "The plan
chosen by size")."""

BACKFILL_SEARCHERS: tuple[Improver, ...] = tuple(
    ("backfill", 1.0 / (len(FITS) - k), (("fit", fit), ("split", "choose"))) for k, fit in enumerate(FITS)
)
"""The backfill search under each server rule in turn (an equal part of the time each), the
search deciding which jobs split: ``auto``'s stage ``"search"`` (docs/exactness.md, "The
backfill search aimed at the makespan")."""

PACK_RESTARTS = 250
"""Restarts of ``pack``'s search in :data:`COUNTED_IMPROVERS` (about 2 s on the 2-core
machine of 2026-12-06 at 24 x 8 x 150). Measured against 500 and 1000: the same best start
in all 30 runs of the ten 24 x 8 x 150 instances with CP-SAT seeds 0-2, and the most
proofs (16 of 30 against 15 and 15), the easy ones sooner (docs/exactness.md, "Searches
that count their work")."""

LANES_TRIES = 20_000
"""The most tries of ``pack``'s buddy-lanes search in :data:`COUNTED_IMPROVERS` (at
24 x 8 x 150 it stops on its own after 577-965 tries: a cap, seldom reached)."""

BACKFILL_MOVES = 8_000
"""Moves of each backfill search in :data:`COUNTED_IMPROVERS` (4,000-6,000 a second on
the machine of 2026-12-06 at 24 x 8 x 150)."""


def _counted(entry: Improver, *work: tuple[str, int]) -> Improver:
    """``entry`` stopped on the counts ``work`` and allowed what is left of its phase (part 1.0)."""
    options = entry[2] if len(entry) > 2 else ()
    return (entry[0], 1.0, (*options, *work))


COUNTED_IMPROVERS: tuple[Improver, ...] = (
    _counted(("pack", 1.0), ("iterations", PACK_RESTARTS), ("lanes_tries", LANES_TRIES)),
    *(_counted(entry, ("iterations", BACKFILL_MOVES)) for entry in BACKFILL_SEARCHERS),
)
"""``pack``'s search and the backfill searches as ``auto`` runs them before its first full
model from :data:`LARGE_JOBS` jobs on: each stops after a count of work (restarts, tries,
moves), not on seconds, so that the schedule the full model starts from depends on the
instance and the seed alone. Each may take what is left of the phase's time, which is only
a cap (twice and more what the counts take on the machine they were measured on)."""

TIMED_IMPROVERS: tuple[Improver, ...] = (("pack", 0.5), *BACKFILL_SEARCHERS)
"""The same searches stopped on seconds (half the phase for ``pack``, the rest in equal
parts), as ``auto`` ran them from 2026-12-04 to 2026-12-06 with 10% of the time left."""

AUTO = Plan(
    "auto",
    0.1,
    0.2,
    heuristics=("sjf-bco", "ls", "ff", "lpt", "pack"),
    floor=True,
    restrict_share_open=0.05,
    full_searches=(("no-lp", 1.0),),
    probe_share=0.5,
    probe_reversal="repeats",
    probe_momentum=0.5,
    last_probe_share=0.9,
    step_probe_share=0.15,
    bins_share=0.25,
    bins_growth=None,
    stages=("probe", "bins", "search", "full"),
    searchers=BACKFILL_SEARCHERS,
    search_share=0.25,
    structural=True,
    improve_share=1.0,
    improvers=(("pack", 1.0),),
    fitting_improvers=COUNTED_IMPROVERS,
    contention_free=False,
    large_jobs=LARGE_JOBS,
    large_stages=("full", "bins", "race", "full"),
    large_early_full_share=0.3,
    large_fitting_improve_share=0.25,
    large_bins_seconds=4.0,
    race_share=0.9,
)
"""The default method: the probes, the GPU bins, the backfill search aimed at the makespan
past the bound (:data:`BACKFILL_SEARCHERS`, a quarter of the time left), then the full
model, below :data:`LARGE_JOBS` jobs; from there on ``pack``'s search and the backfill searches,
each stopped on a count of work (:data:`COUNTED_IMPROVERS`; a quarter of the time left is
their cap), the full model (hinted with its schedule) with 30% of the rest, the GPU bins
(at most 4 s), the race at the floor (:mod:`.race`: the contention-free restriction of
``cfree`` with ``no-lp``, the mode restriction with CP-SAT's own search without and with
its presolve probing, in turn, 8-s slices growing by half, 90% of the time left) and the full model
again (:data:`AUTO_LARGE`). The probes first prove the 16 x 8 x 100 instances whose
refutation needs most of the time; from 24 jobs on the bound is at the optimum where
``auto`` misses it, and the race looks for a schedule there by the questions that find one
on different instances (measured: docs/exactness.md, "The plan chosen by size", "Pack's
search first, from 24 jobs on" and "The race at the floor")."""

AUTO_LARGE = AUTO.for_jobs(LARGE_JOBS)
"""``auto``'s plan from :data:`LARGE_JOBS` jobs on."""

PLANS = {p.name: p for p in (DECOMPOSE, AUTO)}


__all__ = [
    "AUTO",
    "AUTO_LARGE",
    "BACKFILL_MOVES",
    "BACKFILL_SEARCHERS",
    "COUNTED_IMPROVERS",
    "DECOMPOSE",
    "LANES_TRIES",
    "LARGE_JOBS",
    "LNS_STARTS",
    "PACK_RESTARTS",
    "PLANS",
    "PRICINGS",
    "RESTRICT_FORMULATIONS",
    "REVERSALS",
    "STAGES",
    "TIMED_IMPROVERS",
    "Plan",
    "race_entry",
]
