"""The bundled instance library and model catalogue, addressable by name.

``rar-opt schedule paper-160x20-s0`` and ``--model compact-total`` work from any
directory: a name that is not an existing file is looked up in the instance library
(``instances/``, ``instances/counterexamples/``, ``instances/frontier/``, ``instances/arrivals/``) or the
model catalogue (``models/``). From Python, :func:`load_instance` reads an instance by name or path. Both
ship with the package (installed under ``<prefix>/share/rar-opt/``); in a source checkout
the repository's own folders are used.
"""

from __future__ import annotations

import difflib
import sys
import sysconfig
from pathlib import Path

from rar_opt.errors import InputError
from rar_opt.instance import Instance

_REPO = Path(__file__).resolve().parents[2]

INSTANCE_FOLDERS = ("instances", "instances/counterexamples", "instances/frontier", "instances/arrivals")
MODEL_FOLDERS = ("models",)


def _roots() -> list[Path]:
    """Where the library may be: the source checkout, then the installed data."""
    roots = [_REPO]
    for scheme_path in {sysconfig.get_path("data"), sys.prefix}:
        roots.append(Path(scheme_path) / "share" / "rar-opt")
    return [r for r in roots if r.is_dir()]


def _find(name: str, folders: tuple[str, ...], what: str) -> Path:
    path = Path(name)
    if path.exists() or path.suffix == ".json" or len(path.parts) > 1:
        if not path.exists() and path.suffix == ".json" and path.stem in names(folders):
            # models/compact-makespan.json outside a checkout: the bundled file goes by its name
            raise InputError(f"no such file; the bundled {what} of that name is given as {path.stem!r}", file=name)
        return path  # a path: used as given (a missing file is reported when it is read)
    for root in _roots():
        for folder in folders:
            candidate = root / folder / f"{name}.json"
            if candidate.is_file():
                return candidate
    available = names(folders)
    close = difflib.get_close_matches(name, available, n=3, cutoff=0.6)
    guess = f"; did you mean {' or '.join(close)}?" if close else ""
    known = ", ".join(available) or "none found"
    raise InputError(f"is neither a file nor a bundled {what}{guess} (bundled: {known})", file=name)


def names(folders: tuple[str, ...]) -> list[str]:
    """The names available in ``folders`` (sorted, without ``.json``)."""
    out: set[str] = set()
    for root in _roots():
        for folder in folders:
            out |= {p.stem for p in (root / folder).glob("*.json") if not p.stem.endswith(".schedule")}
    return sorted(out)


def instance_path(name: str) -> Path:
    """The file of an instance given as a path or as a library name (``tiny-4x2-s13``)."""
    return _find(name, INSTANCE_FOLDERS, "instance")


def load_instance(name: str) -> Instance:
    """An instance read from a path or a library name, as the command line reads it:
    ``load_instance("tiny-4x2-s13")`` or ``load_instance("my/file.json")``."""
    return Instance.read(instance_path(name))


def model_path(name: str) -> Path:
    """The file of a model spec given as a path or as a catalogue name (``compact-total``)."""
    return _find(name, MODEL_FOLDERS, "model spec")
