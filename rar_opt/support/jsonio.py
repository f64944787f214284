"""Small, strict helpers for reading and writing rar-opt's JSON files.

Readers check types exactly (a bool is not an integer, ``3.0`` is not an integer), reject
unknown keys, and raise :class:`~rar_opt.errors.InputError` naming the field. Writers are
atomic: a file is written next to its destination and renamed into place, so an error
never leaves a half-written file behind.
"""

from __future__ import annotations

import contextlib
import glob
import json
import math
import os
import re
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from rar_opt.errors import InputError

T = TypeVar("T")


INT_LIMIT = 2**31 - 1
"""The largest integer any field of our files may hold (GPUs, iterations, slots, ...):
far beyond any real instance, and safe in every int64 computation the package does."""

MAX_DEPTH = 64
"""The deepest nesting of objects and lists a file may have (ours need 5)."""


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise InputError(f"duplicate key {key!r} in one object (JSON keeps only one of them)")
        out[key] = value
    return out


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
"""A complete JSON string literal (escapes included)."""
_OPEN = np.frombuffer(b"[{", dtype=np.uint8)
_CLOSE = np.frombuffer(b"]}", dtype=np.uint8)


def _depth(text: str) -> int:
    """The deepest bracket nesting of a JSON text (strings skipped), without parsing it: the
    string literals are cut out (an unterminated one runs to the end of the text), then the
    brackets are counted in numpy, so a 3 MB file takes milliseconds, not a Python loop."""
    bare = _STRING.sub("", text)
    cut = bare.find('"')  # an unterminated string: nothing after its quote counts
    if cut >= 0:
        bare = bare[:cut]
    raw = np.frombuffer(bare.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    steps = np.isin(raw, _OPEN).astype(np.int64) - np.isin(raw, _CLOSE)
    return int(max(0, np.cumsum(steps).max(initial=0)))


def load_json(path: str | Path) -> Any:
    """Parse a JSON file; an unreadable, non-UTF-8, malformed or too deeply nested file, or
    one with a duplicate key, is an InputError naming it. A UTF-8 byte-order mark at the
    start (as some editors write) is skipped, as RFC 8259 allows a parser to."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        bad = exc.object[exc.start : exc.start + 1].hex()
        raise InputError(
            f"is not UTF-8 text (the byte 0x{bad} at offset {exc.start}): not a JSON file", file=str(path)
        ) from None
    except OSError as exc:
        raise InputError(f"cannot read file ({exc.strerror or exc})", file=str(path)) from None
    if _depth(text) > MAX_DEPTH:
        raise InputError(f"nests objects and lists deeper than {MAX_DEPTH} levels", file=str(path))
    try:
        return json.loads(text, object_pairs_hook=_no_duplicate_keys)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}", file=str(path)
        ) from None
    except InputError as exc:
        raise exc.in_file(str(path)) from None


STDOUT = "-"
"""The output path that means the standard output."""


def output_kind(path: str | Path) -> str:
    """What writing to ``path`` means: ``"stdout"`` (``-``), ``"stream"`` (a character
    device or a pipe, such as /dev/null or /dev/stdout: written in place, never replaced),
    ``"file"`` (a regular file, new or existing; a symlink is followed to its target)
    or ``"other"`` (a directory, a block device, a socket: refused)."""
    if str(path) == STDOUT:
        return "stdout"
    try:
        mode = os.stat(path).st_mode  # follows symlinks
    except FileNotFoundError:
        return "file"
    except OSError:
        return "other"
    if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode):
        return "stream"
    return "file" if stat.S_ISREG(mode) else "other"


LINKS_FOLLOWED = 40
"""The most symlinks :func:`output_target` follows (the kernel's own limit, MAXSYMLINKS)."""


def output_target(path: str | Path) -> Path | None:
    """The file that writing ``path`` creates or replaces, resolved as the kernel resolves it
    when the file is opened: every directory on the way must exist (a path into a missing
    directory and back out with ``..`` names no file, although ``os.path.realpath`` folds it
    into the file beside that directory), and a final symlink is
    followed to its target, resolved the same way. None when a directory on the way is
    missing or the links loop. The input-identity check, the checks before any work and the
    write itself all ask this one function, so that what is checked is what is written."""
    current = os.fspath(path)
    for _ in range(LINKS_FOLLOWED):
        parent, name = os.path.split(current)
        try:
            real_parent = os.path.realpath(parent or ".", strict=True)
        except OSError:
            return None
        if not os.path.isdir(real_parent):
            return None
        candidate = os.path.join(real_parent, name)
        if not os.path.islink(candidate):
            return Path(candidate)
        link = os.readlink(candidate)
        current = link if os.path.isabs(link) else os.path.join(real_parent, link)
    return None


def writable_problem(path: str | Path) -> str | None:
    """Why ``path`` cannot be written as an output, or None. A regular file that exists
    must be writable by the user and not marked read-only (no write permission bit at all:
    refused even for root, who could otherwise replace it)."""
    kind = output_kind(path)
    if kind == "stdout":
        return None
    if kind == "stream":  # asked of the path as given: /dev/stdout on a pipe resolves to no file at all
        return None if os.access(path, os.W_OK) else "cannot be written (permission denied)"
    real = output_target(path)
    if real is None:  # named as given: a resolved name would hide the missing directory
        if os.path.islink(path):
            return f"is a link to {os.readlink(path)!r}, which names no file that can be written"
        folder = os.path.dirname(os.fspath(path)) or "."
        return f"the directory {folder!r} does not exist (or the links on the way loop)"
    if kind == "other":
        return "is a directory" if real.is_dir() else "is not a regular file, a character device or a pipe"
    if real.exists():
        if not os.access(real, os.W_OK) or not real.stat().st_mode & 0o222:
            return "is read-only; make it writable or choose another path"
        return None
    parent = real.parent  # it exists: output_target resolved it
    if not os.access(parent, os.W_OK):
        return f"the directory {str(parent)!r} is not writable"
    return None


def directory_problem(path: str | Path) -> str | None:
    """Why ``path`` cannot be an output directory (made if missing), or None: it is empty, an
    existing file, under a directory that does not exist, or not writable. Asked before any
    work, so that a command never computes what it then cannot write."""
    if not str(path).strip():
        return "is empty"
    real = Path(os.path.realpath(path))
    if real.exists():
        if not real.is_dir():
            return "is not a directory"
        return None if os.access(real, os.W_OK) else "is not writable (permission denied)"
    if not real.parent.is_dir():
        return f"the directory {str(real.parent)!r} does not exist"
    if not os.access(real.parent, os.W_OK):
        return f"the directory {str(real.parent)!r} is not writable"
    return None


@contextmanager
def atomic_target(path: str | Path, suffix: str = ".tmp") -> Iterator[Path]:
    """A temporary path to write the output to; when the block succeeds it becomes ``path``.

    * a regular file (new or existing) is written next to its destination and renamed onto
      it, so a failure never leaves a half-written file; a symlink is followed, so its
      target is updated and the link stays; an existing file keeps its permissions, and a
      read-only one is refused;
    * ``-``, a character device or a pipe (/dev/stdout, /dev/null, a FIFO) is written as a
      stream once the block has succeeded; it is never replaced by a file;
    * a directory or any other kind of file is refused.

    A write that fails (a full disk) is an InputError naming the file, and the temporary
    file is removed, also when the command is interrupted (SIGINT, and SIGTERM through the
    command line's handler). Temporary files left by a process that was killed outright are
    swept the next time the same output is written."""
    where = str(path)
    problem = writable_problem(path)
    if problem is not None:
        raise InputError(problem, file=where)
    kind = output_kind(path)
    real = output_target(path) if kind == "file" else None
    target = real if real is not None else Path(where)
    directory = target.parent if kind == "file" else None
    if directory is not None:
        _sweep(directory, target.name, suffix)
    try:
        fd, name = tempfile.mkstemp(prefix=f".{target.name}.{os.getpid()}-", suffix=suffix, dir=directory)
    except OSError as exc:
        raise InputError(f"cannot write file ({exc.strerror or exc})", file=where) from None
    os.close(fd)
    tmp = Path(name)
    try:
        try:
            yield tmp
            if kind == "file":
                _settle(tmp, target)
            else:
                _stream(tmp, where, kind)
        except OSError as exc:
            raise InputError(f"cannot write ({exc.strerror or exc})", file=where) from None
    finally:
        tmp.unlink(missing_ok=True)


def _settle(tmp: Path, target: Path) -> None:
    """Give ``tmp`` the mode ``target`` has (or the usual one), flush it, rename it onto ``target``."""
    try:
        mode = stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask  # mkstemp makes 0600; give a new file the usual mode
    os.chmod(tmp, mode)
    with tmp.open("rb+") as f:
        os.fsync(f.fileno())
    os.replace(tmp, target)


def _stream(tmp: Path, where: str, kind: str) -> None:
    """Copy the finished ``tmp`` to the standard output or into a device or pipe."""
    with tmp.open("rb") as src:
        if kind == "stdout":
            sys.stdout.flush()
            out = sys.__stdout__.buffer if sys.__stdout__ is not None else None
            if out is None:
                raise InputError("there is no standard output", file=where)
            shutil.copyfileobj(src, out)
            out.flush()
        else:
            with open(where, "wb") as dst:  # a device or a pipe: opened for writing, not replaced
                shutil.copyfileobj(src, dst)


def _sweep(directory: Path, name: str, suffix: str) -> None:
    """Remove temporary files ``.NAME.PID-*SUFFIX`` whose process is gone (killed outright)."""
    try:
        leftovers = list(directory.glob(f".{glob.escape(name)}.*-*{glob.escape(suffix)}"))
    except OSError:
        return
    for leftover in leftovers:
        pid = leftover.name[len(name) + 2 :].split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            with contextlib.suppress(OSError):
                leftover.unlink()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True


def read_file(path: str | Path, parse: Callable[[Any], T]) -> T:
    """Parse the JSON file at ``path`` with ``parse``; every error names the file."""
    try:
        return parse(load_json(path))
    except InputError as exc:
        raise exc.in_file(str(path)) from None


def json_text(obj: Any) -> str:
    """``obj`` as the JSON text of rar-opt's files: an object's keys one per line (indented
    by one space per level), and a list that holds lists or objects one element per line,
    each element on its line written compactly (a schedule's job, an instance's job); other
    lists on one line. Written by the C encoder line by line, so a 16,000-job schedule takes
    a fraction of a second (``indent=`` runs Python's pure encoder, and a line per number)."""
    return _text(obj, 0) + "\n"


def _text(obj: Any, level: int) -> str:
    pad, end = " " * (level + 1), " " * level
    if isinstance(obj, Mapping) and obj:
        items = (f"{pad}{json.dumps(str(k))}: {_text(v, level + 1)}" for k, v in obj.items())
        return "{\n" + ",\n".join(items) + "\n" + end + "}"
    if isinstance(obj, list | tuple) and any(isinstance(e, Mapping | list | tuple) for e in obj):
        return "[\n" + ",\n".join(pad + _compact(e) for e in obj) + "\n" + end + "]"
    return _compact(obj)


def _compact(obj: Any) -> str:
    return json.dumps(obj, separators=(", ", ": "), allow_nan=False)


def canonical(obj: Any) -> str:
    """JSON with sorted keys and no spaces: the one form in which values are compared or
    hashed (a study's configurations and task keys, an instance's data digest)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False)


def dump_json(obj: Any, path: str | Path) -> None:
    """Write ``obj`` as JSON (:func:`json_text`) to ``path`` atomically."""
    text = json_text(obj)
    with atomic_target(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def expect_object(data: Any, *, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> Mapping[str, Any]:
    """Check that ``data`` is a JSON object with the required keys and no unknown key."""
    if not isinstance(data, Mapping):
        raise InputError(f"expected a JSON object, got {type_name(data)}")
    unknown = sorted(set(data) - set(required) - set(optional))
    if unknown:
        allowed = ", ".join(repr(k) for k in (*required, *optional))
        raise InputError(f"unknown key {unknown[0]!r} (allowed: {allowed})")
    for key in required:
        if key not in data:
            raise InputError(f"missing required key {key!r}")
    return data


FILE_KINDS = {
    "rar-opt/instance": "an instance",
    "rar-opt/schedule": "a schedule",
    "rar-opt/model": "a model spec",
    "rar-opt/study-store": "a study store",
}
"""The formats of rar-opt's files and what each is, for messages about a file given in the
wrong place."""


def expect_kind(data: Any, fmt: str) -> None:
    """Refuse another rar-opt file given where a ``fmt`` file is expected (a schedule where
    the instance goes), naming both formats, before its keys are checked: its keys would
    otherwise be reported one by one as unknown."""
    found = data.get("format") if isinstance(data, Mapping) else None
    if isinstance(found, str) and found != fmt and found in FILE_KINDS:
        hint = " (where a command takes both, the instance comes first, then the schedule)"
        swapped = {fmt, found} == {"rar-opt/instance", "rar-opt/schedule"}
        raise InputError(
            f"expected {FILE_KINDS[fmt]} ({fmt!r}), found {FILE_KINDS[found]} ({found!r})" + (hint if swapped else ""),
            where="format",
        )


def expect_header(data: Mapping[str, Any], fmt: str, version: int | tuple[int, ...]) -> None:
    """Check the ``format`` and ``version`` fields every rar-opt file carries (``version``:
    the one this rar-opt reads, or all of them)."""
    if data.get("format") != fmt:
        raise InputError(f"expected {fmt!r}, got {data.get('format')!r}", where="format")
    versions = version if isinstance(version, tuple) else (version,)
    found = check_int(data.get("version"), "version")  # 1.0 and "1" are not the integer 1
    readable = " and ".join(str(v) for v in versions)
    if found not in versions:
        raise InputError(f"unsupported version {found!r} (this rar-opt reads version {readable})", where="version")


def type_name(value: Any) -> str:
    """A JSON-flavoured name of a value's type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list | tuple):
        return "a list"
    return type(value).__name__


def check_int(value: Any, field: str, *, lo: int | None = None, hi: int = INT_LIMIT) -> int:
    """An integer (not a bool, not a float) within ``[lo, hi]`` (``hi`` at most :data:`INT_LIMIT`)."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise InputError(f"must be an integer, got {type_name(value)} {value!r}", where=field)
    value = int(value)
    if lo is not None and value < lo:
        raise InputError(f"= {value} is below the minimum {lo}", where=field)
    if value > hi:
        raise InputError(f"= {value} is above the maximum {hi}", where=field)
    return value


def check_real(
    value: Any,
    field: str,
    *,
    lo: float | None = None,
    hi: float | None = None,
    lo_open: bool = False,
) -> float:
    """A finite number within ``[lo, hi]`` (or ``(lo, hi]`` when ``lo_open``)."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise InputError(f"must be a number, got {type_name(value)} {value!r}", where=field)
    value = float(value)
    if not math.isfinite(value):
        raise InputError(f"must be finite, got {value!r}", where=field)
    if lo is not None and (value <= lo if lo_open else value < lo):
        bound = "above" if lo_open else "at least"
        raise InputError(f"= {value!r} must be {bound} {lo!r}", where=field)
    if hi is not None and value > hi:
        raise InputError(f"= {value!r} is above the maximum {hi!r}", where=field)
    return value


def check_str(value: Any, field: str) -> str:
    """``value`` if it is a string, else an InputError naming ``field``."""
    if not isinstance(value, str):
        raise InputError(f"must be a string, got {type_name(value)} {value!r}", where=field)
    return value


def check_list(value: Any, field: str, *, min_len: int = 0) -> list[Any]:
    """``value`` as a list if it is a list or tuple of at least ``min_len`` items, else an InputError."""
    if not isinstance(value, list | tuple):
        raise InputError(f"must be a list, got {type_name(value)}", where=field)
    if len(value) < min_len:
        entries = "entry" if min_len == 1 else "entries"
        raise InputError(f"must have at least {min_len} {entries}, got {len(value)}", where=field)
    return list(value)


class FrozenDict(dict[str, Any]):
    """A read-only dict: provenance (``meta``) on frozen objects cannot be changed in place.

    It is still a dict, so ``json`` writes it and ``dict(meta)`` gives a mutable copy."""

    def _refuse(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("meta is read-only provenance; build a new object with changed meta instead")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = __ior__ = _refuse  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenDict, (dict(self),))


def freeze(value: Any) -> Any:
    """A deep read-only copy: mappings become :class:`FrozenDict`, lists become tuples."""
    if isinstance(value, Mapping):
        return FrozenDict({k: freeze(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(freeze(v) for v in value)
    return value


def plain(value: Any, field: str = "value", *, strict: bool = True) -> Any:
    """``value`` as plain JSON values, so that ``json.loads(json.dumps(x)) == x``: mappings
    become dicts, tuples lists, numpy scalars Python numbers. With ``strict``, anything JSON
    cannot hold (a non-string key, a NaN or an infinity, a set, an object) is an InputError
    naming where it sits within ``field``; without, it is left as it is."""
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        if strict and not math.isfinite(value):
            raise InputError(f"= {value} cannot be written as JSON", where=field)
        return value
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            if strict and not isinstance(key, str):
                raise InputError(f"has the key {key!r}; JSON keys are strings", where=field)
            out[key] = plain(item, f"{field}.{key}", strict=strict)
        return out
    if isinstance(value, list | tuple):
        return [plain(item, f"{field}[{i}]", strict=strict) for i, item in enumerate(value)]
    if strict:
        raise InputError(f"holds {type(value).__name__} {value!r}, which JSON cannot hold", where=field)
    return value


def check_meta(value: Any, field: str = "meta") -> FrozenDict:
    """A JSON object (of provenance) as a deep read-only copy; what JSON cannot hold is
    refused here, not when the file is written."""
    if not isinstance(value, Mapping):
        raise InputError(f"must be an object, got {type_name(value)}", where=field)
    return freeze(plain(value, field))
