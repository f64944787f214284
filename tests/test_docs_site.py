"""The documentation site builds with warnings as errors (``mkdocs build --strict``): every
page, the tutorials and the API reference from the docstrings."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest

from .helpers import ROOT

MISSING = [m for m in ("mkdocs", "material", "mkdocstrings", "mkdocs_jupyter") if importlib.util.find_spec(m) is None]


@pytest.mark.skipif(bool(MISSING), reason=f"the site needs {', '.join(MISSING)} (pip install '.[test]')")
def test_the_site_builds_strictly(tmp_path) -> None:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    out = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"), "-d", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    reference = (tmp_path / "reference" / "results" / "index.html").read_text()
    assert "to_frame" in reference and "provenance" in reference  # the docstrings made it in
    for name in ("01-solve-your-own-instance", "04-paper-experiments"):
        assert (tmp_path / "tutorials" / name / "index.html").is_file()
    assert (tmp_path / "studies" / "index.html").is_file()
