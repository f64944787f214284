"""What a result depends on: the versions every result file records."""

from __future__ import annotations

import platform
from importlib import metadata

from ._version import __version__


def versions() -> dict[str, str]:
    """Python, machine, and the versions of rar-opt and the libraries results depend on."""
    out = {"python": platform.python_version(), "machine": platform.machine(), "rar-opt": __version__}
    for dist in ("numpy", "pyomo", "highspy", "ortools", "pyscipopt"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "not installed"
    return out
