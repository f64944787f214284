"""Shared helpers of the benchmark scripts: timing and result files with versions."""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rar_opt.support.provenance import versions

RESULTS = Path(__file__).resolve().parent / "results"


def timed(fn: Callable[[], Any], repeat: int = 5, min_time: float = 0.2) -> tuple[float, Any]:
    """Median seconds per call over ``repeat`` rounds (each round loops to ``min_time``)."""
    value = fn()
    rounds = []
    for _ in range(repeat):
        calls, began = 0, time.perf_counter()
        while True:
            fn()
            calls += 1
            elapsed = time.perf_counter() - began
            if elapsed >= min_time:
                break
        rounds.append(elapsed / calls)
    return statistics.median(rounds), value


def result_name(text: str) -> str:
    """A results file name from a command line: ``NAME``, ``NAME.json`` or a path to it in
    ``results/`` all give ``NAME``; a path elsewhere is refused before any work starts (an
    ``argparse`` type, so that a long run cannot end by failing to write its file)."""
    path = Path(text)
    name = path.name.removesuffix(".json")
    if not name or (path.parent != Path(".") and path.parent.resolve() != RESULTS):
        raise argparse.ArgumentTypeError(f"results are written to {RESULTS}; give a file name there, not {text!r}")
    return name


def save(name: str, rows: list[dict[str, Any]], **extra: Any) -> Path:
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps({"benchmark": name, "versions": versions(), **extra, "rows": rows}, indent=1) + "\n")
    return path


def table(rows: list[dict[str, Any]]) -> str:
    keys = list(rows[0])
    cells = [keys] + [[f"{r[k]:.4g}" if isinstance(r[k], float) else str(r[k]) for k in keys] for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(keys))]
    return "\n".join("  ".join(c[i].rjust(widths[i]) for i in range(len(keys))) for c in cells)
