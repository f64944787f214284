"""Results as dicts and tables: one way for every result type.

Four result types grew four names for "as a dict": ``SimResult.summary()``,
``SolveResult.summary()``, ``PolicyResult.record()`` and ``Comparison.to_dict()``. They
all stay; :func:`to_dict` is the one documented way, for any of them, and
:func:`to_rows` / :func:`to_frame` turn many results into flat rows (nested fields joined
with dots: ``estimator.l``, ``solver.name``) and a pandas DataFrame. A Comparison becomes
one row per policy. Stores of many results (study stores, experiment files) are read by
:func:`rar_opt.studies.tables.load_results`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rar_opt.errors import ParameterError
from rar_opt.support.jsonio import plain

RESULT_TYPES = ("SimResult", "SolveResult", "PolicyResult", "Comparison", "Probe")
"""The result types, each with a ``to_dict()`` (read by name: this module sits below all of them)."""


def _is_result(value: Any) -> bool:
    return type(value).__name__ in RESULT_TYPES and callable(getattr(value, "to_dict", None))


def to_dict(result: Any) -> dict[str, Any]:
    """``result`` (a SimResult, SolveResult, PolicyResult, Comparison or Probe) as JSON-ready values.

    The same dict the type's own method gives: ``SimResult.to_dict()`` (also
    ``summary()``), ``SolveResult.summary()`` (every field but the schedule),
    ``PolicyResult.record()`` (the run's choices; the schedule is left out, as in a
    schedule file's ``meta``) and ``Comparison.to_dict()``, as plain JSON values (lists, not
    tuples), so that ``json.loads(json.dumps(d)) == d``. The backend's name and version are
    in it (``solver``); the versions of rar-opt and its packages, and the source revision,
    are what :func:`rar_opt.support.provenance.provenance` returns, which every file the
    command line writes carries beside the result."""
    if not _is_result(result):
        raise ParameterError(
            f"is a {type(result).__name__}; expected a SimResult, SolveResult, PolicyResult, Comparison or Probe",
            where="result",
        )
    out: dict[str, Any] = plain(result.to_dict(), "result", strict=False)
    return out


def flatten(record: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """A nested dict as one level, its keys joined with dots; lists stay as they are."""
    out: dict[str, Any] = {}
    for key, value in record.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            out.update(flatten(value, name + "."))
        else:
            out[name] = value
    return out


def to_rows(results: Any | Iterable[Any]) -> list[dict[str, Any]]:
    """Flat rows of one result or many: one row per result, except a Comparison, which
    gives one row per policy (its instance, reference, reference kind and seed repeated)."""
    if _is_result(results):
        results = [results]
    rows: list[dict[str, Any]] = []
    for result in results:
        data = to_dict(result)
        if type(result).__name__ == "Comparison":
            shared = {k: data[k] for k in ("instance", "reference", "reference_kind", "theorem5_bound", "seed")}
            rows += [flatten({**shared, **policy}) for policy in data["policies"]]
        else:
            rows.append(flatten(data))
    return rows


def to_frame(results: Any | Iterable[Any]) -> Any:
    """:func:`to_rows` as a pandas DataFrame (pandas is a dependency of rar-opt)."""
    import pandas as pd

    return pd.DataFrame(to_rows(results))
