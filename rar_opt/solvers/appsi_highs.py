"""HiGHS through Pyomo's ``appsi_highs`` interface.

Why appsi_highs: warm starts. The newer ``pyomo.contrib.solver`` HiGHS interface is about
10% faster to hand a model over, but has no MIP-start option in pyomo 6.10.1, and a
complete MIP start from a heuristic is part of what users ask for (``benchmarks/exact.py``
holds our measurements). Threads default to 1 (HiGHS' branch and bound is essentially
serial; run several solves in separate processes instead), and the random seed is set and
recorded: HiGHS' run time swings with it.

The time limit is kept from outside HiGHS. Appsi hands the model over; HiGHS then runs in a
thread of its own (highspy releases the interpreter lock while it runs) and the calling
thread watches the clock. HiGHS checks its own time limit, and our interrupt callbacks stop
it at the deadline, but some of its work calls neither for seconds (presolve of a large
compact model took 9 s of a 10 s share under load, issue 21): if it has not stopped
:data:`ABANDON_GRACE_S` after the deadline, the solve is reported at once as a time limit
with the incumbent HiGHS last announced (or the MIP start), and HiGHS is left to end in its
thread at its next callback. The next HiGHS solve in the process waits for it first.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pyomo.environ as pyo
from pyomo.common.timing import HierarchicalTimer
from pyomo.contrib.appsi.solvers import Highs
from pyomo.version import version as PYOMO_VERSION

from rar_opt.solvers.backend import MIN_SOLVER_SECONDS, Capabilities, RawOutcome, SolveOptions
from rar_opt.solvers.status import HIGHS_TABLE, Status, map_status
from rar_opt.support.processes import TimeUp, alarm_at, on_stop, stop_requested

log = logging.getLogger(__name__)

ABANDON_GRACE_S = 0.25
"""Seconds HiGHS is given, after the deadline (or a stop request) asked it to stop, to end
by itself; past them the solve returns without it (see the module's notes)."""


@functools.cache
def highs_version() -> str:
    """The HiGHS version behind highspy (asked once per process)."""
    try:
        return ".".join(str(v) for v in Highs().version())
    except Exception:
        return "unavailable"


class AppsiHighs:
    """The HiGHS backend (MILP; MIP starts; time limit; threads)."""

    name = "highs"
    capabilities = Capabilities(mip_start=True, nonconvex=False, time_limit=True, threads=True, certified=True)

    def unavailable(self) -> str | None:
        """None when highspy can run, else how to install it."""
        try:
            ok = Highs().available()
        except Exception:
            ok = False
        return None if ok else "HiGHS (highspy) is not available: pip install 'highspy>=1.16,<1.17'"

    def solve(self, model: pyo.ConcreteModel, options: SolveOptions) -> RawOutcome:
        """Hand ``model`` to HiGHS and run it within ``options.deadline``; values are loaded
        only when a solution exists."""
        solver = {"name": self.name, "interface": "appsi_highs", "version": highs_version(), "pyomo": PYOMO_VERSION}
        missing = self.unavailable()
        if missing:
            return RawOutcome(Status.ERROR, message=missing, solver=solver)
        opt = Highs()
        opt.config.load_solution = False
        began = time.perf_counter()
        try:
            # the hand-off first, on its own clock, so that HiGHS gets exactly what is left; it
            # is Python code, so the deadline can stop it (the half-built solver is dropped)
            handed = False
            try:
                with alarm_at(options.deadline):
                    opt.set_instance(model)
                handed = True
            except TimeUp:
                pass  # reported below as a time limit during the hand-off
            limit = options.time_limit
            if not handed or stop_requested() is not None:  # a warm start is still an incumbent
                return _not_started(model, options, solver, time.perf_counter() - began, "the hand-off")
            if not settle_abandoned(options.deadline):  # HiGHS left running by an earlier solve
                return _not_started(model, options, solver, time.perf_counter() - began, "the wait for HiGHS")
            if options.deadline is not None:
                left = options.deadline - time.perf_counter()
                if left <= 0:
                    return _not_started(model, options, solver, time.perf_counter() - began, "the hand-off")
                limit = left if limit is None else min(limit, left)
            highs: Any = opt._solver_model
            _configure(highs, options, limit)
            if options.warm_start:
                opt._warm_start()  # the model's values as a MIP start (appsi's own hand-over)
            run = HighsRun(highs, options.deadline)
            if not run.finished():  # still running past the grace: leave it, keep what it announced
                return _left_running(opt, model, run, options, solver, handoff_s=run.began - began)
            if run.error is not None:
                raise run.error
            with _quiet_interrupt(run.stopped):
                res = opt._postsolve(HierarchicalTimer())  # appsi reads the outcome and the solution
        except Exception as exc:
            return RawOutcome(
                Status.ERROR,
                solver_s=time.perf_counter() - began,
                message=f"{type(exc).__name__}: {exc}",
                solver=solver,
            )
        total = time.perf_counter() - began
        h: Any = opt._solver_model
        solver_s: float | None = None
        size: dict[str, int] = {}
        termination = ""
        try:  # read defensively: a missing metric never fails a good solve
            solver_s = float(h.getRunTime())
            size = _size(h)
            termination = h.modelStatusToString(h.getModelStatus())
        except Exception:
            pass
        objective = res.best_feasible_objective
        bound = res.best_objective_bound
        # our callback stopped it only if HiGHS ended interrupted (it may have finished first)
        interrupted = run.stopped and "interrupt" in termination.lower()
        if interrupted and objective is None:  # appsi does not read an interrupted solve back
            objective, bound = _incumbent(h, bound)
        has_solution = objective is not None
        if has_solution:
            opt.load_vars()
        if bound is not None and not math.isfinite(bound):  # HiGHS reports -inf before any bound
            bound = None
        status = map_status(HIGHS_TABLE, res.termination_condition, has_solution)
        if interrupted and stop_requested() is not None:  # a signal asked us to stop
            status = Status.INTERRUPTED
            termination = f"interrupted by signal {stop_requested()} (stopped by the interrupt callback)"
        elif interrupted:  # stopped by us at the deadline: a time limit
            status = Status.FEASIBLE if has_solution else Status.NO_SOLUTION
            termination = "time limit (stopped at the deadline by the interrupt callback)"
        return RawOutcome(
            status=status,
            has_solution=has_solution,
            objective=objective,
            bound=bound,
            solver_s=solver_s,
            handoff_s=None if solver_s is None else total - solver_s,
            model_size=size,
            termination=termination or str(res.termination_condition),
            solver=solver,
        )


APPSI_LOG = logging.getLogger("pyomo.contrib.appsi.solvers.highs")


def _not_our_interrupt(record: logging.LogRecord) -> bool:
    return "kInterrupt" not in record.getMessage()


@contextlib.contextmanager
def _quiet_interrupt(ours: bool) -> Iterator[None]:
    """While appsi reads back a run that our callback interrupted, drop its warning about
    the status it does not know (kInterrupt): the status table maps that run (a time limit
    or a signal), and the warning would reach the user's terminal, once per solve."""
    if not ours:
        yield
        return
    APPSI_LOG.addFilter(_not_our_interrupt)
    try:
        yield
    finally:
        APPSI_LOG.removeFilter(_not_our_interrupt)


def _configure(highs: Any, options: SolveOptions, limit: float | None) -> None:
    """HiGHS' options for one run: threads, seed, gap, time limit; its log goes to our
    logger at debug level (and its last line names what it was doing when it was left)."""
    values: dict[str, Any] = {
        "output_flag": True,
        "log_to_console": False,
        "threads": int(options.threads),
        "random_seed": int(options.seed),
        "mip_abs_gap": float(options.abs_gap),
    }
    if limit is not None:
        values["time_limit"] = max(float(limit), MIN_SOLVER_SECONDS)
    for key, value in values.items():
        highs.setOptionValue(key, value)


def _size(highs: Any) -> dict[str, int]:
    return {"rows": int(highs.getNumRow()), "cols": int(highs.getNumCol()), "nonzeros": int(highs.getNumNz())}


def _incumbent(highs: Any, bound: float | None) -> tuple[float | None, float | None]:
    """HiGHS' incumbent objective (the MIP start at least, when it was taken) and dual bound
    after an interrupt, read from its info; (None, bound) when it has no feasible point."""
    try:
        info = highs.getInfo()
        if int(info.primal_solution_status) != 2:  # 2: kSolutionStatusFeasible
            return None, bound
        return float(info.objective_function_value), float(info.mip_dual_bound)
    except Exception:
        return None, bound


class HighsRun:
    """One HiGHS run in a thread of its own, watched by the calling thread.

    Its callbacks (HiGHS calls them from its thread, taking the interpreter lock for each)
    stop it at the deadline or at a stop request (MIP, simplex and interior-point
    interrupts), and remember what a caller needs if the run is left behind: the last
    improving solution (columns of the original model, as HiGHS announces it), the dual
    bound, and HiGHS' last log line."""

    def __init__(self, highs: Any, deadline: float | None) -> None:
        self.highs = highs
        self.deadline = deadline
        self.began = time.perf_counter()
        self.done = threading.Event()
        self.wake = threading.Event()  # the run ended, or a stop was asked for
        self.lock = threading.Lock()
        self.asked = False  # the deadline or a signal asked HiGHS to stop
        self.stopped = False  # one of our callbacks told HiGHS to stop
        self.error: BaseException | None = None
        self.solution: np.ndarray | None = None
        self.objective: float | None = None
        self.bound: float | None = None
        self.last_log = ""
        self._subscribe()
        self.thread = threading.Thread(target=self._target, name="rar-opt-highs", daemon=True)
        self.thread.start()

    def _subscribe(self) -> None:
        h = self.highs
        h.cbMipInterrupt.subscribe(self._mip_interrupt)
        h.cbSimplexInterrupt.subscribe(self._interrupt)
        h.cbIpmInterrupt.subscribe(self._interrupt)
        h.cbMipImprovingSolution.subscribe(self._improving)
        h.cbLogging.subscribe(self._log)

    def _mip_interrupt(self, event: Any) -> None:
        self._note_bound(event.data_out.mip_dual_bound)
        self._interrupt(event)

    def _interrupt(self, event: Any) -> None:
        late = self.deadline is not None and time.perf_counter() >= self.deadline
        if self.asked or late or stop_requested() is not None:
            self.stopped = True
            event.interrupt()

    def _improving(self, event: Any) -> None:
        solution = np.array(event.data_out.mip_solution, dtype=float, copy=True)
        with self.lock:
            self.solution, self.objective = solution, float(event.data_out.objective_function_value)
        self._note_bound(event.data_out.mip_dual_bound)

    def _note_bound(self, bound: float) -> None:
        if math.isfinite(bound):
            with self.lock:
                self.bound = float(bound)

    def _log(self, event: Any) -> None:
        lines = [" ".join(line.split()) for line in event.message.splitlines() if line.strip()]
        if lines:
            self.last_log = lines[-1]
            log.debug("HiGHS: %s", " | ".join(lines))

    def _target(self) -> None:
        try:
            self.highs.run()
        except BaseException as exc:  # handed to the caller's thread
            self.error = exc
        finally:
            self.done.set()
            self.wake.set()

    def _ask_to_stop(self) -> None:
        self.asked = True
        self.wake.set()

    def finished(self) -> bool:
        """Wait for the run to end by itself, until the deadline or a stop request; then ask
        it to stop and wait :data:`ABANDON_GRACE_S` more. False: it is still running (it is
        then recorded as left behind, and stops at its next callback)."""
        try:
            with on_stop(self._ask_to_stop):
                if self.deadline is None:
                    self.wake.wait()
                else:
                    self.wake.wait(max(0.0, self.deadline - time.perf_counter()))
                if self.done.is_set():
                    return True
                self._ask_to_stop()
                if self.done.wait(ABANDON_GRACE_S):
                    return True
        except BaseException:  # a second Ctrl-C: it ends at its next callback, the caller goes on
            self._ask_to_stop()
            _LEFT_RUNNING.append(self.thread)
            raise
        _LEFT_RUNNING.append(self.thread)
        return False


_LEFT_RUNNING: list[threading.Thread] = []
"""HiGHS runs that were left to end in their threads (asked to stop, not yet stopped)."""


def settle_abandoned(deadline: float | None) -> bool:
    """Wait, until ``deadline`` at the latest, for HiGHS runs left behind by earlier solves
    of this process to end (they were asked to stop), so that two never run at once; True
    when none is left."""
    for thread in list(_LEFT_RUNNING):
        thread.join(None if deadline is None else max(0.0, deadline - time.perf_counter()))
        if thread.is_alive():
            return False
        _LEFT_RUNNING.remove(thread)
    return True


def _not_started(
    model: pyo.ConcreteModel, options: SolveOptions, solver: dict[str, Any], spent: float, during: str
) -> RawOutcome:
    """HiGHS never started: the time ran out (or a signal came) ``during`` the hand-off, or
    while an earlier solve's HiGHS, left running, was still ending. A warm start is still an
    incumbent (the model's variables hold it)."""
    start = pyo.value(model.obj) if options.warm_start else None
    signal = stop_requested() is not None
    doing = {
        "the hand-off": "the model was being handed to HiGHS",
        "the wait for HiGHS": "an earlier solve's HiGHS (left running past its deadline) was still ending",
    }[during]
    return RawOutcome(
        Status.FEASIBLE if options.warm_start else Status.NO_SOLUTION,
        has_solution=options.warm_start,
        objective=None if start is None else float(start),
        handoff_s=spent,
        termination=("a signal" if signal else "time limit") + f" during {during}",
        message=f"{doing} when " + ("a signal asked to stop" if signal else "the time limit ran out"),
        solver=solver,
    )


def _left_running(
    opt: Any, model: pyo.ConcreteModel, run: HighsRun, options: SolveOptions, solver: dict[str, Any], handoff_s: float
) -> RawOutcome:
    """The outcome of a run that did not stop within the grace after the deadline (or a stop
    request): the last improving solution HiGHS announced, loaded into the model, else the
    MIP start (already in the model's variables), else no schedule; the dual bound it
    announced. A time limit (or ``interrupted``), never an error."""
    with run.lock:
        solution, objective, bound = run.solution, run.objective, run.bound
    has_solution = solution is not None
    if solution is not None:
        values = opt._vars
        for var_id, col in opt._pyomo_var_to_solver_var_map.items():
            values[var_id][0].set_value(float(solution[col]), skip_validation=True)
    elif options.warm_start:
        objective, has_solution = float(pyo.value(model.obj)), True
    signal = stop_requested()
    where = f" (its log last said {run.last_log!r})" if run.last_log else ""
    why = f"interrupted by signal {signal}" if signal is not None else "time limit"
    return RawOutcome(
        status=Status.INTERRUPTED if signal is not None else Status.FEASIBLE if has_solution else Status.NO_SOLUTION,
        has_solution=has_solution,
        objective=objective,
        bound=bound,
        solver_s=time.perf_counter() - run.began,
        handoff_s=handoff_s,
        model_size=_size(opt._solver_model),
        termination=f"{why} (HiGHS had not stopped {ABANDON_GRACE_S} s after being asked{where}; "
        "left to end in the background)",
        message="HiGHS was still working where it does not check the clock; the best it had announced is kept",
        solver=solver,
    )
