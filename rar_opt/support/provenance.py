"""What a result depends on: the versions and the source revision every result records.

:func:`versions` is the short record result files have always carried (Python, machine,
rar-opt and its libraries). :func:`provenance` is the full one: the same, the key
packages by name, and the source revision (git commit and whether the checkout had
uncommitted changes) when rar-opt runs from a git checkout. Outside a checkout (an
installed wheel, git missing, a broken repository) the revision is simply absent; asking
for it never fails and never takes more than a couple of seconds.
"""

from __future__ import annotations

import functools
import platform
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

from rar_opt._version import __version__

KEY_PACKAGES = ("pyomo", "highspy", "ortools", "numpy")
"""The libraries a result depends on, recorded by name in :func:`provenance`."""


def versions() -> dict[str, str]:
    """Python, machine, and the versions of rar-opt and the libraries results depend on."""
    out = {"python": platform.python_version(), "machine": platform.machine(), "rar-opt": __version__}
    for dist in ("numpy", "pyomo", "highspy", "ortools", "pyscipopt"):
        out[dist] = _version_of(dist)
    return out


def _version_of(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def _git(root: Path, *args: str) -> str | None:
    """The output of ``git -C root args``, or None when git is missing or fails."""
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


@functools.lru_cache(maxsize=1)
def source_revision() -> dict[str, Any] | None:
    """``{"commit": SHA, "dirty": bool}`` of the git checkout rar-opt runs from, or None.

    The checkout must be the one holding this package (its top level contains
    ``rar_opt/``): a wheel installed inside some other repository's virtualenv is not
    taken for a checkout of rar-opt. ``dirty`` counts changes to tracked files only."""
    here = Path(__file__).resolve().parent
    top = _git(here, "rev-parse", "--show-toplevel")
    if not top or (Path(top) / "rar_opt" / "support" / "provenance.py").resolve() != Path(__file__).resolve():
        return None
    commit = _git(here, "rev-parse", "HEAD")
    if not commit:
        return None
    status = _git(here, "status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "dirty": bool(status) if status is not None else None}


def full_version() -> str:
    """rar-opt's version with the revision beside it, as a PEP 440 local version:
    ``0.1.0+g4814a5d`` (``.dirty`` appended with uncommitted changes); the bare version
    when the revision is unknown."""
    rev = source_revision()
    if rev is None:
        return __version__
    return f"{__version__}+g{rev['commit'][:7]}" + (".dirty" if rev["dirty"] else "")


def provenance() -> dict[str, Any]:
    """Everything a result records about the code that made it: rar-opt's version (bare
    and with the revision), Python's, the key packages' and, when known, the source
    revision (``{"commit", "dirty"}``; the key is absent otherwise)."""
    out: dict[str, Any] = {
        "rar-opt": __version__,
        "version": full_version(),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "packages": {dist: _version_of(dist) for dist in KEY_PACKAGES},
    }
    rev = source_revision()
    if rev is not None:
        out["revision"] = dict(rev)
    return out


def versions_and_revision() -> dict[str, Any]:
    """:func:`versions` with the source revision beside it when known (``revision``: the
    commit, ``dirty``: uncommitted changes): what a study's store records per row."""
    out: dict[str, Any] = dict(versions())
    rev = source_revision()
    if rev is not None:
        out["revision"], out["dirty"] = rev["commit"], rev["dirty"]
    return out


def caption(what: str) -> str:
    """A one-line caption for a figure: what it shows and the code that drew it."""
    p = provenance()
    packages = ", ".join(f"{k} {v}" for k, v in p["packages"].items())
    return f"{what} | rar-opt {p['version']}, Python {p['python']}, {packages}"
