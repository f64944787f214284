"""Every solver backend, by name (one line each), and the default backend per problem kind."""

from __future__ import annotations

from rar_opt.errors import InputError
from rar_opt.solvers.appsi_highs import AppsiHighs
from rar_opt.solvers.backend import Backend
from rar_opt.solvers.cpsat import Cpsat
from rar_opt.solvers.scip import Scip

BACKENDS: dict[str, Backend] = {b.name: b for b in (AppsiHighs(), Scip(), Cpsat())}

DEFAULT_BACKEND: dict[str, str] = {"milp": "highs", "minlp": "scip", "cp": "cpsat"}
"""The backend used for a formulation's problem kind when none is named."""


def backend(name: str) -> Backend:
    """The registered backend ``name``; an unknown name is an InputError listing the known."""
    if name not in BACKENDS:
        raise InputError(f"unknown solver backend {name!r} (known: {', '.join(BACKENDS)})", where="backend")
    return BACKENDS[name]
