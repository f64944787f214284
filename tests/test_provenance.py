"""Provenance: versions, key packages and the source revision, in every result that
should carry them (solve, probe, bounds and compare as JSON)."""

from __future__ import annotations

import json
import re

import pytest

from rar_opt._version import __version__
from rar_opt.support import provenance as prov

from .helpers import INSTANCES, ROOT, run

WAIT = INSTANCES / "wait-beats-start.json"


def _git_head() -> str | None:
    import subprocess

    done = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else None


def _check(record: dict) -> None:
    assert record["rar-opt"] == __version__
    assert re.fullmatch(r"\d+\.\d+(\.\d+)?", record["python"])
    assert set(record["packages"]) == {"pyomo", "highspy", "ortools", "numpy"}
    assert all(v != "not installed" for v in record["packages"].values())
    head = _git_head()
    if head is None:  # not run from a checkout: no revision, the bare version
        assert "revision" not in record and record["version"] == __version__
    else:
        assert record["revision"]["commit"] == head and isinstance(record["revision"]["dirty"], bool)
        assert record["version"].startswith(f"{__version__}+g{head[:7]}")


def test_provenance_names_versions_and_revision() -> None:
    _check(prov.provenance())


def test_no_revision_outside_a_checkout(monkeypatch) -> None:
    prov.source_revision.cache_clear()
    monkeypatch.setattr(prov, "_git", lambda root, *args: None)  # git missing or not a repository
    try:
        record = prov.provenance()
        assert "revision" not in record and record["version"] == __version__ == prov.full_version()
    finally:
        prov.source_revision.cache_clear()


def test_another_repository_is_not_taken_for_ours(monkeypatch, tmp_path) -> None:
    """rar-opt installed inside someone else's git repository (a virtualenv in a project)."""
    prov.source_revision.cache_clear()
    monkeypatch.setattr(prov, "_git", lambda root, *args: str(tmp_path) if "--show-toplevel" in args else "abc")
    try:
        assert prov.source_revision() is None
    finally:
        prov.source_revision.cache_clear()


def test_dirty_flag_in_the_version(monkeypatch) -> None:
    monkeypatch.setattr(prov, "source_revision", lambda: {"commit": "0123456789abcdef", "dirty": True})
    assert prov.full_version() == f"{__version__}+g0123456.dirty"
    assert prov.caption("a figure").startswith(f"a figure | rar-opt {__version__}+g0123456.dirty, Python ")


@pytest.mark.parametrize(
    "args",
    [
        ("solve", str(WAIT), "--time-limit", "20", "--json"),
        ("probe", str(WAIT), "--makespan", "15", "--time-limit", "20", "--json"),
        ("bounds", str(WAIT), "--relaxation-time", "0", "--json"),
        ("compare", str(WAIT), "--bound-time-limit", "0", "--json"),
        ("experiment", "lambda", "--seeds", "0", "--jobs", "8", "--json"),
    ],
    ids=lambda a: a[0],
)
def test_json_results_carry_provenance(args) -> None:
    out = run(*args)
    assert out.returncode == 0, out.stderr
    _check(json.loads(out.stdout)["provenance"])


def test_version_flag_names_the_revision() -> None:
    out = run("--version")
    assert out.returncode == 0 and out.stdout.strip() == f"rar-opt {prov.full_version()}"
    # with the other options before a command it is the same answer (argparse's, or the short cut's)
    for args in (("-v", "--version"), ("--quiet", "--version")):
        again = run(*args)
        assert again.returncode == 0 and again.stdout == out.stdout, args
