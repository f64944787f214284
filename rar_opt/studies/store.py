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

import contextlib
import json
import os
import sqlite3
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rar_opt.errors import InputError
from rar_opt.support.jsonio import canonical
from rar_opt.support.provenance import versions_and_revision as versions

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
        self._lock = _Hold(None)

    # -- opening ---------------------------------------------------------------------------
    @classmethod
    def open(cls, path: str | Path, kind: str | None = None, config: Mapping[str, Any] | None = None) -> Store:
        """Open the store at ``path``. With ``config``, a new file is created for it, and an
        existing store must have been made by the same ``kind`` and configuration; without
        it, the store must exist (reading). Anything else is an InputError naming the file.

        Whether a store exists is decided by its tables, not by the file's size: another
        command creating the same store at the same moment may already have written the
        SQLite header but not yet its tables; its creation is one transaction, which this
        one waits for (and then reads what it made)."""
        target = Path(path)
        where = str(target)
        if target.is_dir():
            raise InputError("is a directory, not a study store", file=where)
        if not target.exists() and config is None:
            raise InputError("no such study store", file=where)
        if not target.exists() and not target.parent.is_dir():
            raise InputError(f"the directory {str(target.parent)!r} does not exist", file=where)
        lock = _hold(target, create=config is not None)
        try:
            if target.stat().st_size > 0:
                _check_header(target)
            db = _connect(target, writable=config is not None)
            try:
                if _has_tables(db, where):  # read the header before anything could change the file
                    stored_kind, stored = _read_meta(db, where)
                    if config is not None:
                        _wal(db, where)
                elif config is None:
                    raise InputError("is an empty file, not a study store", file=where)
                else:
                    assert kind is not None
                    _wal(db, where)
                    stored_kind, stored = _initialise(db, kind, dict(config), where)
            except BaseException:
                db.close()
                raise
        except BaseException:
            lock.release()
            raise
        if config is not None and (stored_kind != kind or canonical(stored) != canonical(dict(config))):
            db.close()
            lock.release()
            raise InputError(
                f"was made by another configuration ({_difference(stored_kind, stored, kind, dict(config))}); "
                "use a new store file, or repeat the command that made it",
                file=where,
            )
        store = cls(target, db, stored_kind, stored)
        store._lock = lock
        return store

    def close(self) -> None:
        """Checkpoint the write-ahead log into the main file (so that the file alone holds
        every row), then close the connection and let go of the store."""
        with contextlib.suppress(sqlite3.Error):  # a reader still in it, a read-only file: the -wal stays
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self._db.close()
        self._lock.release()

    def discard_if_unused(self) -> bool:
        """Remove this store (and its -wal and -shm files) if it holds no row and no other
        process has it open; True when it was removed. A store another command is using, or
        filling, is left alone."""
        if self.count() != 0 or not self._lock.exclusive():
            return False
        self._db.close()
        for suffix in ("", "-wal", "-shm"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)
        self._lock.release()
        return True

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
        row = (
            key,
            seq,
            canonical(dict(inputs)),
            canonical(dict(outputs)),
            canonical(dict(computed_with or self._versions)),
            wall_s,
            canonical(dict(timing or {})),
            time.time(),
        )
        try:
            cur = self._db.execute(
                "INSERT OR IGNORE INTO tasks (key, seq, inputs, outputs, versions, wall_s, timing, finished_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                row,
            )
        except sqlite3.OperationalError as exc:
            raise self._write_error(exc) from None
        return cur.rowcount == 1

    def _write_error(self, exc: sqlite3.Error) -> InputError:
        """A row that could not be written, in words: a full disk, a read-only file."""
        text = str(exc)
        with contextlib.suppress(InputError):
            kept = self.count()
        kept_note = f"the {kept} row(s) written before are kept" if "kept" in locals() else "earlier rows are kept"
        if "full" in text:
            reason = "the disk is full"
        elif "readonly" in text or "read-only" in text:
            reason = "the store is read-only"
        else:
            reason = f"cannot write a row ({text})"
        return InputError(f"{reason}; {kept_note}; run the same command again to resume", file=str(self.path))

    # -- reading -------------------------------------------------------------------------
    def _select(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """Rows of a query; a damaged file is an InputError naming it."""
        try:
            return self._db.execute(sql, params).fetchall()
        except sqlite3.DatabaseError as exc:  # damaged pages, text that is not UTF-8, ...
            raise InputError(f"is damaged ({exc}); its rows cannot be read", file=str(self.path)) from None

    def created_with(self) -> dict[str, Any]:
        """The versions (and revision, when known) of the command that created the store."""
        found = self._select("SELECT value FROM meta WHERE key = 'versions'")
        try:
            value = json.loads(found[0][0]) if found else {}
        except ValueError:
            value = {}
        return value if isinstance(value, dict) else {}

    def keys(self) -> set[str]:
        """The keys of the finished tasks."""
        return {k for (k,) in self._select("SELECT key FROM tasks")}

    def count(self) -> int:
        """How many tasks have finished."""
        return int(self._select("SELECT COUNT(*) FROM tasks")[0][0])

    def rows(self) -> Iterator[TaskRow]:
        """Every finished task, in task order (``seq``, then key): the same whatever the
        order in which they finished."""
        for found in self._select(f"SELECT {_COLUMNS} FROM tasks ORDER BY seq, key"):
            yield self._row(found)

    def get(self, key: str) -> TaskRow | None:
        """The finished task ``key``, or None."""
        found = self._select(f"SELECT {_COLUMNS} FROM tasks WHERE key = ?", (key,))
        return self._row(found[0]) if found else None

    def _row(self, found: tuple[Any, ...]) -> TaskRow:
        """One stored row, its JSON columns parsed; a damaged row is an InputError naming the file."""
        key, seq, inputs, outputs, vers, wall, at = found
        parsed = []
        for column, text in (("inputs", inputs), ("outputs", outputs), ("versions", vers)):
            try:
                value = json.loads(text)
            except (TypeError, ValueError) as exc:
                value = exc
            if not isinstance(value, dict):
                raise InputError(
                    f"is damaged: the {column} of row {key!r} are not a JSON object ({value})", file=str(self.path)
                )
            parsed.append(value)
        if (
            not isinstance(key, str)
            or not isinstance(seq, int)
            or not all(isinstance(v, int | float) for v in (wall, at))
        ):
            raise InputError(f"is damaged: row {key!r} has a field of the wrong type", file=str(self.path))
        return TaskRow(key, seq, parsed[0], parsed[1], parsed[2], wall, at)


_COLUMNS = "key, seq, inputs, outputs, versions, wall_s, finished_at"


class _Hold:
    """A shared ``flock`` on the store file while a command has it open: the store is
    removed (:meth:`Store.discard_if_unused`) only by a command that can take it exclusively,
    that is when no other command has it open. Independent of SQLite's own locks."""

    def __init__(self, fd: int | None) -> None:
        self.fd = fd

    def exclusive(self) -> bool:
        """Try to turn the shared hold into an exclusive one at once; False if another holds it."""
        if self.fd is None or _fcntl is None:
            return False
        try:
            _fcntl.flock(self.fd, _fcntl.LOCK_EX | _fcntl.LOCK_NB)
        except OSError:
            return False
        return True

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)  # closing lets go of the flock
            self.fd = None


try:  # POSIX; elsewhere a store is never removed by a failing command
    import fcntl as _fcntl
except ImportError:  # pragma: no cover
    _fcntl = None  # type: ignore[assignment]


def _hold(target: Path, create: bool) -> _Hold:
    """A shared hold on the file at ``target`` (created empty if ``create``). If the file
    was removed and made again while waiting, the hold is taken again on the new one."""
    where = str(target)
    for _ in range(100):
        try:
            fd = os.open(target, os.O_RDONLY | (os.O_CREAT if create else 0), 0o666)
        except FileNotFoundError:
            raise InputError("no such study store", file=where) from None
        except OSError as exc:
            raise InputError(f"cannot open ({exc.strerror or exc})", file=where) from None
        if _fcntl is None:  # pragma: no cover
            return _Hold(fd)
        try:
            _fcntl.flock(fd, _fcntl.LOCK_SH)
            same = os.fstat(fd).st_ino == os.stat(target).st_ino
        except OSError:
            same = False
        if same:
            return _Hold(fd)
        os.close(fd)  # removed by a command that discarded it: take the new file
    raise InputError("keeps being removed and created by other commands", file=where)


def _connect(target: Path, writable: bool) -> sqlite3.Connection:
    """A connection; for reading, a file or directory that cannot be written is opened
    read-only (a store on a read-only disk, a copy without write permission)."""
    where = str(target)
    try:
        if writable or (os.access(target, os.W_OK) and os.access(target.parent, os.W_OK)):
            return sqlite3.connect(target, timeout=30.0, isolation_level=None)
        wal = Path(f"{target}-wal")
        # without a -wal (or an empty one) the file alone holds every row: no shared memory needed
        mode = "immutable=1" if not wal.exists() or wal.stat().st_size == 0 else "mode=ro"
        return sqlite3.connect(f"{target.resolve().as_uri()}?{mode}", uri=True, timeout=30.0, isolation_level=None)
    except sqlite3.Error as exc:
        raise InputError(f"is damaged or not a study store ({exc})", file=where) from None


def _has_tables(db: sqlite3.Connection, where: str) -> bool:
    """Whether the database has any table (a file still being created by another command has none)."""
    try:
        return db.execute("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'").fetchone()[0] > 0
    except sqlite3.DatabaseError as exc:
        raise InputError(f"is not a study store ({exc})", file=where) from None


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


WAL_WAIT_SECONDS = 30.0
"""How long a command waits for another that holds a new store's lock while switching it to WAL."""


def _wal(db: sqlite3.Connection, where: str) -> None:
    """Write-ahead logging: readers never block the writer, and a killed writer leaves the
    last committed row intact."""
    deadline = time.monotonic() + WAL_WAIT_SECONDS
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            return
        except sqlite3.OperationalError as exc:
            # switching to WAL takes the file's exclusive lock, and SQLite does not wait for it
            # (its busy timeout does not cover this pragma): a second command creating the same
            # new store at once gets "database is locked"; wait for the first one instead
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise InputError(f"is damaged or not a study store ({exc})", file=where) from None
            time.sleep(0.05)
        except sqlite3.Error as exc:
            raise InputError(f"is damaged or not a study store ({exc})", file=where) from None


def _initialise(db: sqlite3.Connection, kind: str, config: dict[str, Any], where: str) -> tuple[str, dict[str, Any]]:
    """Create the tables and the header of a new store, in one transaction (or read those
    another command created first)."""
    try:
        _create(db, kind, config)
    except sqlite3.OperationalError as exc:
        raise InputError(f"cannot create the store ({exc})", file=where) from None
    return _read_meta(db, where)


def _create(db: sqlite3.Connection, kind: str, config: dict[str, Any]) -> None:
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
        with contextlib.suppress(sqlite3.Error):
            db.execute("ROLLBACK")
        raise


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
