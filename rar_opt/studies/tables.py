"""Stores of many results as tables: study stores, worst-case search stores and
experiment files, loaded as rows and pandas DataFrames, written as CSV or Parquet.

:func:`load_results` reads either kind of file and returns a :class:`Results`, a named set
of flat tables:

* a study or search store (SQLite, ``study run`` / ``study worst``): ``instances`` (one
  row per instance) and ``policies`` (one row per instance and policy), the columns of
  ``study export --tables``;
* an experiment file (``experiment ... -o FILE``, JSON): ``runs`` (one row per run, nested
  fields joined with dots) and ``summary`` (one row per configuration).

``Results.rows(name)`` gives a table's rows as dicts, ``Results.frame(name)`` a pandas
DataFrame, ``Results.write(directory, fmt)`` every table as ``NAME.csv`` or
``NAME.parquet``. Parquet needs pyarrow (or fastparquet), which rar-opt does not install;
asking for it without one is an error that says so.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rar_opt.errors import InputError, ParameterError
from rar_opt.results import flatten
from rar_opt.studies.export import INSTANCE_COLUMNS, POLICY_COLUMNS, tables
from rar_opt.studies.store import open_store
from rar_opt.support.jsonio import atomic_target, directory_problem

FORMATS = ("csv", "parquet")


@dataclass(frozen=True)
class Results:
    """Named flat tables read from one file, with what the file says about itself."""

    source: str
    kind: str  # "study", "worst" or "experiment"
    tables: dict[str, list[dict[str, Any]]]
    columns: dict[str, tuple[str, ...]]
    about: dict[str, Any] = field(default_factory=dict)  # configuration, versions

    def names(self) -> tuple[str, ...]:
        """The tables' names, in order."""
        return tuple(self.tables)

    def rows(self, name: str | None = None) -> list[dict[str, Any]]:
        """The rows of table ``name`` (default: the first, ``instances`` or ``runs``)."""
        return self.tables[self._name(name)]

    def frame(self, name: str | None = None) -> Any:
        """Table ``name`` as a pandas DataFrame, its columns in the documented order."""
        import pandas as pd

        key = self._name(name)
        return pd.DataFrame(self.tables[key], columns=list(self.columns[key]))

    def write(self, directory: str | Path, fmt: str = "csv") -> list[Path]:
        """Every table into ``directory`` (created if missing) as ``NAME.csv`` or
        ``NAME.parquet``; the paths written."""
        if fmt not in FORMATS:
            raise ParameterError(f"unknown format {fmt!r} (known: {', '.join(FORMATS)})", where="format")
        if fmt == "parquet":
            require_parquet()
        out = Path(directory)
        if (problem := directory_problem(out)) is not None:
            raise InputError(problem, where="tables", file=str(out))
        out.mkdir(exist_ok=True)
        written = []
        for name in self.tables:
            path = out / f"{name}.{fmt}"
            with atomic_target(path, suffix=f".{fmt}") as tmp:
                if fmt == "csv":
                    with tmp.open("w", newline="", encoding="utf-8") as f:
                        writer = csv.DictWriter(f, fieldnames=list(self.columns[name]))
                        writer.writeheader()
                        writer.writerows({k: _cell(v) for k, v in row.items()} for row in self.tables[name])
                else:
                    self.frame(name).to_parquet(tmp, index=False)
            written.append(path)
        return written

    def _name(self, name: str | None) -> str:
        if name is None:
            return next(iter(self.tables))
        if name not in self.tables:
            raise ParameterError(f"no table {name!r} (this file has: {', '.join(self.tables)})", where="name")
        return name


def _cell(value: Any) -> Any:
    """A CSV cell: lists and objects as JSON text, the rest as it is."""
    return json.dumps(value) if isinstance(value, list | dict) else value


def require_parquet() -> None:
    """Refuse Parquet, saying what to install, when no Parquet engine is importable."""
    import importlib.util

    if importlib.util.find_spec("pyarrow") is None and importlib.util.find_spec("fastparquet") is None:
        raise ParameterError(
            "parquet needs pyarrow, which rar-opt does not install: pip install pyarrow (or use csv)", where="format"
        )


def load_results(path: str | Path) -> Results:
    """The tables of a study store, a worst-case search store or an experiment file."""
    target = Path(path)
    try:
        with target.open("rb") as f:
            head = f.read(16)
    except OSError as exc:
        raise InputError(f"cannot read ({exc.strerror or exc})", file=str(target)) from None
    if head.startswith(b"SQLite format 3"):
        return _store(target)
    return _experiment(target)


def _store(path: Path) -> Results:
    with open_store(path) as store:
        rows = list(store.rows())
        kind, config, created = store.kind, store.config, store.created_with()
    try:
        instances, policies = tables(rows)
    except (KeyError, TypeError, AttributeError) as exc:
        raise InputError(f"is damaged: a row lacks a field ({type(exc).__name__}: {exc})", file=str(path)) from None
    return Results(
        str(path),
        kind,
        {"instances": instances, "policies": policies},
        {"instances": INSTANCE_COLUMNS, "policies": POLICY_COLUMNS},
        {"config": config, "created_with": created},
    )


def _experiment(path: Path) -> Results:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"is neither a study store nor an experiment file ({exc})", file=str(path)) from None
    if not isinstance(data, dict) or not isinstance(data.get("runs"), list) or "experiment" not in data:
        raise InputError(
            "is neither a study store nor an experiment file (expected the JSON object of "
            "'rar-opt experiment -o FILE', with 'experiment' and 'runs')",
            file=str(path),
        )
    named = {"runs": data["runs"], "summary": data.get("summary") or []}
    out: dict[str, list[dict[str, Any]]] = {}
    columns: dict[str, tuple[str, ...]] = {}
    for name, rows in named.items():
        if not all(isinstance(r, dict) for r in rows):
            raise InputError("holds a row that is not an object", where=name, file=str(path))
        flat = [{"experiment": data["experiment"], **flatten(r)} for r in rows]
        order: list[str] = []
        for r in flat:
            order += [k for k in r if k not in order]
        out[name], columns[name] = flat, tuple(order)
    about = {k: v for k, v in data.items() if k not in ("runs", "summary")}
    return Results(str(path), "experiment", out, columns, about)
