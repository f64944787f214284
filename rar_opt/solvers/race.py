"""The stage ``"race"``: several questions at the floor, asked in turn in slices of time.

From 24 jobs on, every optimum of the frontier that ``auto`` misses within a minute is
missed on the schedule side: the bound is already at the optimum, and what is lacking is
a schedule that meets it (docs/frontier.md). Three models can give one, and each finds it
on instances where the others do not (docs/exactness.md, "The race at the floor"):

* ``"probe"``: the full model with no objective over the floor's slots (:mod:`.probe`); the
  only one that can also answer no (then the floor rises by one);
* ``"modes:SEARCH"``: the contention-free restriction with every placement written out
  (:func:`~rar_opt.formulations.modes.whole`) under the CP-SAT search ``SEARCH``;
* ``"shared:SEARCH"``: the mode restriction widened by the split modes that lose no slot at
  contention 2, which may share a server's link in pairs (``modes.whole(sharing=True)``);
* ``"cfree:SEARCH"``: the same restriction as :mod:`~rar_opt.formulations.cfree` writes it.

The restrictions' schedules are schedules of the instance, so one by the floor is optimal;
a restriction with no schedule by the floor says nothing about the instance, and leaves
the race until the floor rises. The stage asks its entries in turn, each for a slice of
seconds (``race_slice_seconds``, times ``race_growth`` after each turn of all entries),
each ask of an entry with a seed of its own (:func:`~.budget.run_seed`: the first ask
with the run's seed), until the best schedule meets the floor or the stage's share of the
time left (``race_share``) is spent. A time to a schedule varies with the seed far more
than its median (docs/exactness.md, "Restarted probes"), so short asks with new seeds
cover more draws; the growth leaves room for the answers that need longer.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from rar_opt.solvers.backend import MIN_SOLVER_SECONDS
from rar_opt.solvers.budget import run_seed
from rar_opt.solvers.context import Context, Found, Incumbent
from rar_opt.solvers.floor_asks import ask_probe
from rar_opt.solvers.phases import restriction_by, restriction_fits
from rar_opt.solvers.plan import race_entry
from rar_opt.solvers.record import PhaseKind, PhaseRecord
from rar_opt.solvers.status import Status
from rar_opt.support.processes import stop_requested


def stage(ctx: Context, best: Incumbent) -> Iterator[Found]:
    """The race at the floor (module docstring), within the plan's ``race_share`` of the time left."""
    share = ctx.plan.race_share
    if share is None or ctx.budget.limit is None:
        return  # as the probes: without a time limit there is no share to give
    entries = [race_entry(name) for name in ctx.plan.race_entries]
    entries = [(f, s) for f, s in entries if f == "probe" or restriction_fits(ctx.instance, f)]
    stage_budget = ctx.budget.share(share)
    asks = [0] * len(entries)  # the asks of each entry so far (the seeds)
    refuted: dict[int, int] = {}  # restriction entry -> the floor it has no schedule by
    slice_seconds, first_probe = ctx.budget.per_seconds(ctx.plan.race_slice_seconds), True
    while entries:
        for k, (formulation, search) in enumerate(entries):
            if best.span is None or best.floor is None or best.floor >= best.span:
                return
            left = stage_budget.left() or 0.0
            if stage_budget.expired() or left <= MIN_SOLVER_SECONDS or stop_requested() is not None:
                return
            asked = best.floor
            if refuted.get(k) == asked:
                continue
            limit = left if left < 1.5 * slice_seconds else slice_seconds
            seed = run_seed(ctx.budget.seed, asks[k])
            asks[k] += 1
            if formulation == "probe":  # the rows of the plan's probes at the floor
                label = f"probe, seed {seed}"
                found = ask_probe(ctx, best, asked, limit, seed, stepping=False, first=first_probe, label=label)
                first_probe = False
            else:
                found = _restriction(ctx, asked, limit, seed, formulation, search)
                if found.raw is not None and found.raw.status == Status.INFEASIBLE:
                    refuted[k] = asked
            yield found
            if found.record.status == Status.ERROR:
                return
        probing = any(formulation == "probe" for formulation, _ in entries)
        if not probing and all(refuted.get(k) == best.floor for k in range(len(entries))):
            return  # every restriction is refuted at the floor, and no probe can raise it
        slice_seconds *= ctx.plan.race_growth


def _restriction(ctx: Context, asked: int, limit: float, seed: int, formulation: str, search: str) -> Found:
    """One ask of the restriction ``formulation`` by the floor ``asked`` under ``search``."""
    budget = replace(ctx.budget.share(min(1.0, limit / (ctx.budget.left() or limit))), seed=seed)
    raw, schedule, span, seconds = restriction_by(ctx.instance, asked, budget, ctx.symmetry, formulation, search)
    label = f"{formulation}:{search}, seed {seed}"
    record = PhaseRecord(PhaseKind.RESTRICTION, raw.status, span, None, seconds, asked=asked, search=label)
    return Found(record, schedule, span, raw=raw, horizon=asked, solver=raw.solver)
