"""Small, strict helpers for reading and writing rar-opt's JSON files.

Readers check types exactly (a bool is not an integer, ``3.0`` is not an integer), reject
unknown keys, and raise :class:`~rar_opt.errors.InputError` naming the field. Writers are
atomic: a file is written next to its destination and renamed into place, so an error
never leaves a half-written file behind.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from .errors import InputError

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


def _depth(text: str) -> int:
    """The deepest bracket nesting of a JSON text (strings skipped), without parsing it."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def load_json(path: str | Path) -> Any:
    """Parse a JSON file; an unreadable, non-UTF-8, malformed or too deeply nested file, or
    one with a duplicate key, is an InputError naming it."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"is not UTF-8 text (byte {exc.start}): not a JSON file", file=str(path)) from None
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


@contextmanager
def atomic_target(path: str | Path, suffix: str = ".tmp") -> Iterator[Path]:
    """A temporary path next to ``path``; renamed onto ``path`` when the block succeeds,
    removed when it fails, so a failure never leaves a half-written file behind."""
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    try:
        fd, name = tempfile.mkstemp(prefix=f".{target.stem}-", suffix=suffix, dir=directory)
    except OSError as exc:
        raise InputError(f"cannot write file ({exc.strerror or exc})", file=str(path)) from None
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; give the file the usual mode
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def read_file(path: str | Path, parse: Callable[[Any], T]) -> T:
    """Parse the JSON file at ``path`` with ``parse``; every error names the file."""
    try:
        return parse(load_json(path))
    except InputError as exc:
        raise exc.in_file(str(path)) from None


def dump_json(obj: Any, path: str | Path) -> None:
    """Write ``obj`` as JSON to ``path`` atomically."""
    text = json.dumps(obj, indent=1, allow_nan=False) + "\n"
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


def expect_header(data: Mapping[str, Any], fmt: str, version: int) -> None:
    """Check the ``format`` and ``version`` fields every rar-opt file carries."""
    if data.get("format") != fmt:
        raise InputError(f"expected {fmt!r}, got {data.get('format')!r}", where="format")
    if data.get("version") != version or isinstance(data.get("version"), bool):
        raise InputError(
            f"unsupported version {data.get('version')!r} (this rar-opt reads version {version})",
            where="version",
        )


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
        raise InputError(f"must have at least {min_len} entries, got {len(value)}", where=field)
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


def check_meta(value: Any, field: str = "meta") -> FrozenDict:
    """A JSON object (of provenance) as a deep read-only copy."""
    if not isinstance(value, Mapping):
        raise InputError(f"must be an object, got {type_name(value)}", where=field)
    return freeze(value)
