"""A user's own job trace (CSV) made into an instance with the paper's calibration.

The format is in docs/formats.md ("Job traces") and the mapping in docs/arrivals.md. In
short: one job per row; ``submit[UNIT]`` (required), ``gpus``, ``duration[UNIT]`` and/or
``iterations``, and an optional ``name``; a time column carries its unit in the header
(``s``, ``min`` or ``h``). :func:`read_trace` checks every row and names the file, the
line and the column of the first problem; :func:`trace_instance` maps the rows onto
slots: releases from the submit times (relative to the first, rounded down to a slot),
a job's duration becomes its fastest execution time (rounded up to whole slots), and the
physical parameters come from the ``paper`` generator's calibration (:mod:`rar_opt.instances.generate`).
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import io
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rar_opt.cluster.timemodel import FLOOR_RTOL  # a time this close (relative) to a slot boundary is on it
from rar_opt.errors import InputError, ParameterError
from rar_opt.instance import Instance
from rar_opt.instances.calibration import PRESETS
from rar_opt.instances.calibration import preset as preset_calibration
from rar_opt.instances.generate import PAPER_SERVER_SIZES, _calibrate, _Physics, philly_sizes
from rar_opt.support.checks import is_int, is_real
from rar_opt.support.jsonio import INT_LIMIT

UNITS: dict[str, float] = {"s": 1.0, "min": 60.0, "h": 3600.0}
"""Time units a header may name, in seconds."""

TIMED = ("submit", "duration")
"""Columns that carry a time, and so a unit in the header (``submit[min]``)."""

COLUMNS = ("submit", "gpus", "duration", "iterations", "name")
"""Every column a trace may have, in the order the docs list them."""

TAU_RANGE = (0.01, 0.05)
"""The paper's best per-iteration time, in slots: drawn for a job that gives no iterations."""

_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_WHOLE = re.compile(r"\+?\d+")
_HEADER = re.compile(r"([A-Za-z_]+)\s*(?:\[\s*([^\[\]]*?)\s*\])?")
_SPAN = re.compile(r"\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*([A-Za-z]+)\s*")


@dataclass(frozen=True)
class TraceRow:
    """One job of a trace: where it was, and its values in seconds (None: not given)."""

    line: int
    submit: float
    gpus: int | None
    duration: float | None
    iterations: int | None
    name: str | None


@dataclass(frozen=True)
class Trace:
    """A checked trace: its rows in file order, the units its header named, its digest."""

    file: str
    rows: tuple[TraceRow, ...]
    units: tuple[tuple[str, str], ...]  # (column, unit) of the timed columns
    columns: tuple[str, ...]
    sha256: str

    def __post_init__(self) -> None:
        if not self.rows:
            raise InputError("has no job", file=self.file)


def read_trace(path: str | Path) -> Trace:
    """Read and check the CSV trace at ``path``; the first problem is an InputError naming
    the file, the line and the column."""
    file = str(path)
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read file ({exc.strerror or exc})", file=file) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"is not UTF-8 text (byte {exc.start}): not a CSV trace", file=file) from None
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    header: dict[str, tuple[int, str | None]] | None = None
    header_line = 0
    rows: list[TraceRow] = []
    names: dict[str, int] = {}
    try:
        for cells in reader:
            line = reader.line_num
            if not cells or all(not c.strip() for c in cells) or cells[0].lstrip().startswith("#"):
                continue  # a blank line or a comment
            if header is None:
                header, header_line = _header(cells, line, file), line
                continue
            row = _row(cells, line, header, file)
            if row.name is not None:
                if row.name in names:
                    raise _bad(file, line, "name", f"{row.name!r} is also the name on line {names[row.name]}")
                names[row.name] = line
            rows.append(row)
    except csv.Error as exc:
        raise InputError(f"malformed CSV: {exc}", where=f"line {reader.line_num}", file=file) from None
    if header is None:
        raise InputError("is empty: no header line (e.g. submit[s],gpus,duration[min])", file=file)
    if not rows:
        raise InputError("the header is not followed by any job", where=f"line {header_line}", file=file)
    units = tuple((c, u) for c, (_, u) in header.items() if u is not None)
    return Trace(file, tuple(rows), units, tuple(header), hashlib.sha256(raw).hexdigest())


def _bad(file: str, line: int, column: str, message: str) -> InputError:
    return InputError(message, where=f"line {line}: {column}", file=file)


def _header(cells: list[str], line: int, file: str) -> dict[str, tuple[int, str | None]]:
    """Column name -> (position, unit) from the header line."""
    known = "submit[UNIT], gpus, duration[UNIT], iterations, name"
    found: dict[str, tuple[int, str | None]] = {}
    for i, cell in enumerate(cells):
        match = _HEADER.fullmatch(cell.strip())
        if not cell.strip():
            raise _bad(file, line, f"column {i + 1}", f"has no name (known columns: {known})")
        name = match.group(1).lower() if match else ""
        if name not in COLUMNS:
            hint = "; the separator is a comma" if (";" in cell or "\t" in cell) else ""
            raise _bad(file, line, cell.strip(), f"unknown column (known: {known}; units: {', '.join(UNITS)}){hint}")
        assert match is not None
        unit = match.group(2)
        if name in found:
            raise _bad(file, line, name, f"appears twice in the header (columns {found[name][0] + 1} and {i + 1})")
        if name in TIMED:
            if unit is None:
                raise _bad(
                    file, line, name, f"needs its unit in the header, e.g. {name}[s] (units: {', '.join(UNITS)})"
                )
            if unit.lower() not in UNITS:
                raise _bad(file, line, name, f"unknown unit {unit!r} (known: {', '.join(UNITS)})")
            unit = unit.lower()
        elif unit is not None:
            raise _bad(file, line, name, f"takes no unit, got [{unit}]")
        found[name] = (i, unit)
    if "submit" not in found:
        raise _bad(file, line, "submit", "missing column: every job needs its submit time, e.g. submit[s]")
    if "duration" not in found and "iterations" not in found:
        raise _bad(file, line, "duration", "missing column: give duration[UNIT] or iterations (or both)")
    return found


def _row(cells: list[str], line: int, header: dict[str, tuple[int, str | None]], file: str) -> TraceRow:
    if len(cells) != len(header):
        raise InputError(f"has {len(cells)} fields, the header {len(header)}", where=f"line {line}", file=file)

    def cell(column: str) -> str | None:
        return cells[header[column][0]].strip() if column in header else None

    def seconds(column: str, text: str) -> float:
        value = _number(file, line, column, text) * UNITS[str(header[column][1])]
        if not math.isfinite(value):
            raise _bad(file, line, column, f"= {text} {header[column][1]} is beyond what a float holds in seconds")
        return value

    submit = seconds("submit", cell("submit") or "")
    gpus = cell("gpus")
    duration, iterations = cell("duration") or None, cell("iterations") or None
    if duration is None and iterations is None:
        if "duration" in header and "iterations" in header:
            raise _bad(file, line, "duration", "and iterations are both empty: give one (how long the job runs)")
        column = "duration" if "duration" in header else "iterations"
        raise _bad(file, line, column, "is empty: the job needs it (how long it runs)")
    seconds_run = None if duration is None else seconds("duration", duration)
    if seconds_run is not None and seconds_run <= 0:
        raise _bad(file, line, "duration", f"must be > 0, got {duration}")
    name = cell("name")
    if name is not None and not name:
        raise _bad(file, line, "name", "is empty (leave the column out to name jobs by their line)")
    return TraceRow(
        line=line,
        submit=submit,
        gpus=None if gpus is None else _whole(file, line, "gpus", gpus),
        duration=seconds_run,
        iterations=None if iterations is None else _whole(file, line, "iterations", iterations),
        name=name,
    )


def _number(file: str, line: int, column: str, text: str) -> float:
    if not text:
        raise _bad(file, line, column, "is empty: a number is needed")
    if not _NUMBER.fullmatch(text) or not math.isfinite(value := float(text)):
        raise _bad(file, line, column, f"must be a finite number, got {text!r}")
    return value


def _whole(file: str, line: int, column: str, text: str) -> int:
    if not text:
        raise _bad(file, line, column, "is empty: a whole number is needed")
    if not _WHOLE.fullmatch(text):
        raise _bad(file, line, column, f"must be a whole number >= 1, got {text!r}")
    value = int(text)
    if not 1 <= value <= INT_LIMIT:
        raise _bad(file, line, column, f"= {value} must be in 1..{INT_LIMIT}")
    return value


def parse_span(text: str, where: str) -> float:
    """A time span with its unit (``60s``, ``1min``, ``0.5 h``) in seconds; > 0 and finite."""
    match = _SPAN.fullmatch(text)
    if match is None:
        raise ParameterError(f"must be a number and a unit ({', '.join(UNITS)}), e.g. 1min; got {text!r}", where=where)
    value, unit = float(match.group(1)), match.group(2).lower()
    if unit not in UNITS:
        raise ParameterError(f"unknown unit {match.group(2)!r} (known: {', '.join(UNITS)})", where=where)
    if not math.isfinite(value) or value <= 0:
        raise ParameterError(f"must be > 0, got {text!r}", where=where)
    return value * UNITS[unit]


def _robust_floor(x: np.ndarray) -> np.ndarray:
    return np.floor(x * (1.0 + FLOOR_RTOL) + FLOOR_RTOL).astype(np.int64)


def _robust_ceil(x: np.ndarray) -> np.ndarray:
    return np.ceil(x * (1.0 - FLOOR_RTOL)).astype(np.int64)


def trace_instance(
    trace: Trace,
    *,
    servers: int,
    server_gpus: int | None = None,
    seed: int = 0,
    slot: float = 60.0,
    horizon: int | None = None,
    preset: str = "paper-literal",
    name: str | None = None,
) -> Instance:
    """The instance of ``trace`` on ``servers`` servers (docs/arrivals.md, "Traces").

    ``server_gpus``: GPUs per server (default: drawn from the paper's {4, 8, 16, 32});
    ``slot``: seconds per slot; ``horizon``: T (default: the last release plus every job's
    worst time, so running the jobs one after the other after the last arrival fits);
    ``preset``: the calibration (:data:`rar_opt.instances.calibration.PRESETS`). Seeded by ``seed``:
    the server sizes, the per-iteration times of jobs without iterations, the size mix of
    a trace without ``gpus``, and the calibration's own draws."""
    _check_parameters(servers, server_gpus, seed, slot, horizon, preset)
    cal = preset_calibration(preset)
    rng = np.random.default_rng(seed)
    capacity = [server_gpus] * servers if server_gpus else [int(o) for o in rng.choice(PAPER_SERVER_SIZES, servers)]
    n_gpus = sum(capacity)
    order = sorted(range(len(trace.rows)), key=lambda i: trace.rows[i].submit)  # stable: file order on ties
    rows = [trace.rows[i] for i in order]
    n = len(rows)
    if "gpus" in trace.columns:
        sizes = [int(r.gpus) for r in rows if r.gpus is not None]
        for r in rows:
            if r.gpus is not None and r.gpus > n_gpus:
                raise _bad(trace.file, r.line, "gpus", f"= {r.gpus} is more than the cluster's {n_gpus} GPUs")
    else:  # the paper's Philly mix scaled to the trace, capped at the cluster, in a seeded order
        sizes = [min(g, n_gpus) for g in philly_sizes(n)]
        rng.shuffle(sizes)
    first = rows[0].submit
    offsets = np.array([(r.submit - first) / slot for r in rows])  # slots after the first submit, sorted
    if offsets[-1] >= INT_LIMIT - 1:
        raise _bad(trace.file, rows[-1].line, "submit", f"is {offsets[-1]:.4g} slots of {slot:g} s after the first")
    releases = _robust_floor(offsets)
    drawn = 1.0 / np.round(1.0 / rng.uniform(*TAU_RANGE, size=n))  # 1/k: k iterations per slot, exactly
    iterations = np.zeros(n, dtype=np.int64)
    tau = np.zeros(n)
    for k, r in enumerate(rows):
        if r.iterations is not None and r.duration is not None:  # both: the per-iteration time they give
            iterations[k], tau[k] = r.iterations, r.duration / slot / r.iterations
            if tau[k] >= 1.0:
                lasts = f"an iteration lasts {tau[k]:.4g} slots of {slot:g} s"
                raise _bad(trace.file, r.line, "duration", f"{lasts}; at least one must fit in a slot (a longer slot)")
        elif r.iterations is not None:  # iterations alone: the paper's per-iteration time
            iterations[k], tau[k] = r.iterations, drawn[k]
        else:  # duration alone: the paper's per-iteration time, and the iterations filling the duration
            assert r.duration is not None
            needed = r.duration / slot / drawn[k]  # iterations, before rounding: checked before the cast
            if not needed <= INT_LIMIT:
                raise _bad(trace.file, r.line, "duration", f"is {r.duration:g} s: too long for slots of {slot:g} s")
            iterations[k], tau[k] = max(1, int(_robust_ceil(np.array([needed]))[0])), drawn[k]
    shares = np.full(n, cal.contention)
    cluster, jobs = _calibrate(
        rng, "", capacity, sizes, iterations, tau, shares, cal.overhead, _Physics(), cal.reference
    )
    labels = [r.name if r.name is not None else f"line{r.line}" for r in rows]
    jobs = [
        dataclasses.replace(j, name=label, release=int(rel))
        for j, label, rel in zip(jobs, labels, releases, strict=True)
    ]
    try:
        probe = Instance("probe", INT_LIMIT, cluster, tuple(jobs))
    except InputError as exc:
        raise _on_line(exc, trace, rows) from None
    rho_min, rho_max = probe.bounds.rho_min, probe.bounds.rho_max
    if horizon is None:
        horizon = int(releases.max()) + int(rho_max.sum())
        if horizon > INT_LIMIT:
            raise ParameterError(f"the default {horizon} is above {INT_LIMIT}: give a longer slot", where="slot")
    else:
        late = [k for k in range(n) if releases[k] + rho_min[k] > horizon]
        if late:
            k = max(late, key=lambda k: releases[k] + rho_min[k])
            raise ParameterError(
                f"= {horizon} is too short: the job on line {rows[k].line} of {trace.file} cannot complete before "
                f"slot {int(releases[k] + rho_min[k])} (release {int(releases[k])} + fastest time {int(rho_min[k])})",
                where="horizon",
            )
    meta: dict[str, Any] = {
        "generator": "trace",
        "seed": seed,
        "params": {"servers": servers, "server_gpus": server_gpus, "slot_s": slot, "preset": preset},
        "trace": {
            "file": Path(trace.file).name,
            "sha256": trace.sha256,
            "jobs": n,
            "units": dict(trace.units),
            "sizes": "trace" if "gpus" in trace.columns else "philly-mix",
            "first_submit_s": first,
            "lines": [r.line for r in rows],
        },
        "calibration": f"durations as fastest times, drawn tau 1/k in [0.01, 0.05], {cal.label}",
        "known_optimum": None,
    }
    title = name if name is not None else f"{Path(trace.file).stem}-{n}x{servers}-s{seed}"
    try:
        return Instance(title, horizon, cluster, tuple(jobs), meta)
    except InputError as exc:
        raise _on_line(exc, trace, rows) from None


def _check_parameters(
    servers: int, server_gpus: int | None, seed: int, slot: float, horizon: int | None, preset: str
) -> None:
    def whole(value: Any, where: str, lo: int) -> None:
        if not is_int(value) or not lo <= value <= INT_LIMIT:
            raise ParameterError(f"must be an integer in {lo}..{INT_LIMIT}, got {value!r}", where=where)

    whole(servers, "servers", 1)
    whole(seed, "seed", 0)
    if server_gpus is not None:
        whole(server_gpus, "server_gpus", 1)
    if horizon is not None:
        whole(horizon, "horizon", 1)
    if not is_real(slot) or not math.isfinite(slot) or slot <= 0:
        raise ParameterError(f"must be a number of seconds > 0, got {slot!r}", where="slot")
    if preset not in PRESETS:
        raise ParameterError(f"unknown preset {preset!r} (known: {', '.join(PRESETS)})", where="preset")


def _on_line(exc: InputError, trace: Trace, rows: list[TraceRow]) -> InputError:
    """An error about ``jobs[k]`` of the instance, told by the trace line it came from."""
    match = re.match(r"jobs\[(\d+)\](?:\.(\w+))?", exc.where)
    if match is None:
        return exc.in_file(trace.file)
    k, field = int(match.group(1)), match.group(2)
    timed = "duration" if rows[k].duration is not None else "iterations"  # what set the job's run time
    column = {"gpus": "gpus", "release": "submit"}.get(field or "", timed)
    return _bad(trace.file, rows[k].line, column, exc.message)
