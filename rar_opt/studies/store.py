"""The results store of a study: one SQLite file in WAL mode, one row per finished task.

A row is written in its own transaction as soon as its task finishes, so a sweep killed at
any moment (the client or a worker, by SIGINT, SIGTERM or SIGKILL) keeps every finished
row and never holds a half-written one; the task's key is the table's primary key, so it
never holds a duplicate either. Re-running the same command skips the keys already there
(resume). A store remembers the configuration that made it; another configuration is
refused, and so is a file that is not a store (docs/studies.md).

Tables: ``meta`` (format, version, kind, configuration, creation versions) and ``tasks``
(key, the task's full inputs and outputs as JSON, the versions that computed it, its wall
time and when it finished).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..provenance import versions

STORE_FORMAT = "rar-opt/study-store"
STORE_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tasks (
    key TEXT PRIMARY KEY,
    seq INTEGER NOT NULL,
    inputs TEXT NOT NULL,
    outputs TEXT NOT NULL,
    versions TEXT NOT NULL,
    wall_s REAL NOT NULL,
    timing TEXT NOT NULL,
    finished_at REAL NOT NULL
);
"""


def canonical(obj: Any) -> str:
    """JSON with sorted keys and no spaces: the form in which configurations are compared."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False)


@dataclass(frozen=True)
class TaskRow:
    """One finished task as stored."""

    key: str
    seq: int
    inputs: dict[str, Any]
    outputs: dict[str, Any]
    versions: dict[str, Any]
    wall_s: float
    finished_at: float


class Store:
    """A study's SQLite store; open it with :func:`open_store` (or :meth:`Store.create`)."""

    def __init__(self, path: Path, connection: sqlite3.Connection, kind: str, config: dict[str, Any]) -> None:
        self.path = path
        self._db = connection
        self.kind = kind
        self.config = config
        self._versions = versions()

    # -- opening ---------------------------------------------------------------------------
    @classmethod
    def open(cls, path: str | Path, kind: str | None = None, config: Mapping[str, Any] | None = None) -> Store:
        """Open the store at ``path``. With ``config``, a new file is created for it, and an
        existing store must have been made by the same ``kind`` and configuration; without
        it, the store must exist (reading). Anything else is an InputError naming the file."""
        target = Path(path)
        where = str(target)
        if target.is_dir():
            raise InputError("is a directory, not a study store", file=where)
        exists = target.exists() and target.stat().st_size > 0
        if not exists and config is None:
            raise InputError("no such study store", file=where)
        if not exists and not target.parent.is_dir():
            raise InputError(f"the directory {str(target.parent)!r} does not exist", file=where)
        if exists:
            _check_header(target)
        try:
            db = sqlite3.connect(target, timeout=30.0, isolation_level=None)
        except sqlite3.Error as exc:
            raise InputError(f"is damaged or not a study store ({exc})", file=where) from None
        try:
            if exists:  # read the header before anything could change the file
                stored_kind, stored = _read_meta(db, where)
            _wal(db, where)
            if not exists:
                assert config is not None and kind is not None
                stored_kind, stored = _initialise(db, kind, dict(config))
        except BaseException:
            db.close()
            raise
        if config is not None and (stored_kind != kind or canonical(stored) != canonical(dict(config))):
            db.close()
            raise InputError(
                f"was made by another configuration ({_difference(stored_kind, stored, kind, dict(config))}); "
                "use a new store file, or repeat the command that made it",
                file=where,
            )
        return cls(target, db, stored_kind, stored)

    def close(self) -> None:
        """Close the connection (the WAL is checkpointed into the file)."""
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing -------------------------------------------------------------------------
    def add(
        self,
        key: str,
        seq: int,
        inputs: Mapping[str, Any],
        outputs: Mapping[str, Any],
        wall_s: float,
        timing: Mapping[str, float] | None = None,
        computed_with: Mapping[str, str] | None = None,
    ) -> bool:
        """Write one finished task in its own transaction; False when the key is already there.
        ``computed_with``: the versions of the process that ran it (default: this one's)."""
        cur = self._db.execute(
            "INSERT OR IGNORE INTO tasks (key, seq, inputs, outputs, versions, wall_s, timing, finished_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                key,
                seq,
                canonical(dict(inputs)),
                canonical(dict(outputs)),
                canonical(dict(computed_with or self._versions)),
                wall_s,
                canonical(dict(timing or {})),
                time.time(),
            ),
        )
        return cur.rowcount == 1

    # -- reading -------------------------------------------------------------------------
    def keys(self) -> set[str]:
        """The keys of the finished tasks."""
        return {k for (k,) in self._db.execute("SELECT key FROM tasks")}

    def count(self) -> int:
        """How many tasks have finished."""
        return int(self._db.execute("SELECT COUNT(*) FROM tasks").fetchone()[0])

    def rows(self) -> Iterator[TaskRow]:
        """Every finished task, in task order (``seq``, then key): the same whatever the
        order in which they finished."""
        for key, seq, inputs, outputs, vers, wall, at in self._db.execute(
            "SELECT key, seq, inputs, outputs, versions, wall_s, finished_at FROM tasks ORDER BY seq, key"
        ):
            yield TaskRow(key, seq, json.loads(inputs), json.loads(outputs), json.loads(vers), wall, at)

    def get(self, key: str) -> TaskRow | None:
        """The finished task ``key``, or None."""
        found = self._db.execute(
            "SELECT key, seq, inputs, outputs, versions, wall_s, finished_at FROM tasks WHERE key = ?", (key,)
        ).fetchone()
        if found is None:
            return None
        k, seq, inputs, outputs, vers, wall, at = found
        return TaskRow(k, seq, json.loads(inputs), json.loads(outputs), json.loads(vers), wall, at)


def open_store(path: str | Path, kind: str | None = None, config: Mapping[str, Any] | None = None) -> Store:
    """:meth:`Store.open`."""
    return Store.open(path, kind, config)


def _check_header(path: Path) -> None:
    """A file that is not SQLite at all is refused before SQLite touches it."""
    try:
        with path.open("rb") as f:
            head = f.read(16)
    except OSError as exc:
        raise InputError(f"cannot read ({exc.strerror or exc})", file=str(path)) from None
    if head != b"SQLite format 3\x00":
        raise InputError("is not a study store (not a SQLite file)", file=str(path))


def _wal(db: sqlite3.Connection, where: str) -> None:
    """Write-ahead logging: readers never block the writer, and a killed writer leaves the
    last committed row intact."""
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
    except sqlite3.Error as exc:
        raise InputError(f"is damaged or not a study store ({exc})", file=where) from None


def _initialise(db: sqlite3.Connection, kind: str, config: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """Create the tables and the header of a new store, in one transaction."""
    db.execute("BEGIN IMMEDIATE")
    try:
        for statement in _SCHEMA.split(";"):
            if statement.strip():
                db.execute(statement)
        found = db.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
        if found is None:  # another process may have created it first: then read that one
            values = {
                "format": STORE_FORMAT,
                "version": str(STORE_VERSION),
                "kind": kind,
                "config": canonical(config),
                "versions": canonical(versions()),
            }
            db.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", list(values.items()))
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    return _read_meta(db, "")


def _read_meta(db: sqlite3.Connection, where: str) -> tuple[str, dict[str, Any]]:
    """The kind and configuration of an existing store; a foreign or damaged file is an InputError."""
    try:
        meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
        db.execute("SELECT key, seq, inputs, outputs, versions, wall_s, finished_at FROM tasks LIMIT 1").fetchall()
    except sqlite3.DatabaseError as exc:
        raise InputError(f"is not a study store ({exc})", file=where) from None
    if meta.get("format") != STORE_FORMAT:
        raise InputError(f"is not a study store (format {meta.get('format')!r})", file=where)
    if meta.get("version") != str(STORE_VERSION):
        raise InputError(
            f"is a study store of version {meta.get('version')}; this rar-opt reads version {STORE_VERSION}",
            file=where,
        )
    try:
        config = json.loads(meta["config"])
        kind = meta["kind"]
    except (KeyError, ValueError) as exc:
        raise InputError(f"has a damaged header ({exc})", file=where) from None
    if not isinstance(config, dict):
        raise InputError("has a damaged header (config is not an object)", file=where)
    return kind, config


def _difference(kind_a: str, a: dict[str, Any], kind_b: str | None, b: dict[str, Any]) -> str:
    """The first differing field of two configurations, in words."""
    if kind_a != kind_b:
        return f"it is a {kind_a} store, not a {kind_b} store"
    for key in sorted(set(a) | set(b)):
        if canonical(a.get(key)) != canonical(b.get(key)):
            return f"{key} was {a.get(key)!r}, now {b.get(key)!r}"
    return "the configurations differ"
