"""Server capacity (2) for the CP-SAT models, as cumulatives over optional intervals.

Row (2) says that the GPUs a server's running jobs hold there never exceed its capacity.
With a GPU count y_js per job and server, it is one cumulative per server whose demands
are the variables y_js. CP-SAT's cumulative reasons only with a demand's lower bound, and
y_js may be 0 until the job's placement is decided, so a job whose server is still open
contributes nothing to the server's time-table.

Here each job j enters server s's cumulative through one of two optional intervals, both
over the job's own [a_j, e_j):

* **whole on s**, present iff j uses s and does not split (z_js and not split_j), with the
  fixed demand G_j (then y_js = G_j by the gang row (1)); absent where G_j exceeds the
  server's capacity, which then admits j only as a part of a split;
* **a part on s**, present iff j uses s and splits (z_js and split_j), with the demand
  y_js. A job that can never split (one GPU, or one server) has no such interval.

The two are exclusive, and their demand is y_js whenever j is on s, so the rows admit
exactly the schedules of the plain form: the model is as exact as before. What changes is
what propagation sees: a job placed whole has a fixed demand, and a presence literal that
the cumulative can reason about (CP-SAT's optional-interval propagators), before its
placement is fully decided. Measured: docs/exactness-log.md, "Optional intervals for the
servers".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ortools.sat.python import cp_model


def add_server_cumulatives(
    m: cp_model.CpModel,
    gpus: Sequence[int],
    cap: Sequence[int],
    start: Sequence[Any],
    duration: Sequence[Any],
    end: Sequence[Any],
    y: Sequence[Sequence[Any]],
    z: Sequence[Sequence[Any]],
    split: Mapping[int, Any],
) -> None:
    """Row (2) for every server, as the module docstring says. ``split[j]`` is job j's
    literal "spans two servers or more"; a job absent from ``split`` never splits."""
    for s, capacity in enumerate(cap):
        intervals, demands = [], []
        for j, g in enumerate(gpus):
            splits = split.get(j)
            if g > capacity:  # j fits here only as a part of a split
                if splits is None:
                    m.add(z[j][s] == 0)
                else:
                    m.add_implication(z[j][s], splits)
            else:
                whole = z[j][s] if splits is None else _both(m, z[j][s], ~splits, f"whole{j}_{s}")
                intervals.append(m.new_optional_interval_var(start[j], duration[j], end[j], whole, f"W{j}_{s}"))
                demands.append(int(g))
            if splits is not None:
                part = _both(m, z[j][s], splits, f"part{j}_{s}")
                intervals.append(m.new_optional_interval_var(start[j], duration[j], end[j], part, f"P{j}_{s}"))
                demands.append(y[j][s])
        m.add_cumulative(intervals, demands, int(capacity))


def _both(m: cp_model.CpModel, a: Any, b: Any, name: str) -> Any:
    """A literal equal to (a and b)."""
    lit = m.new_bool_var(name)
    m.add_bool_and([a, b]).only_enforce_if(lit)
    m.add_bool_or([~a, ~b, lit])
    return lit
