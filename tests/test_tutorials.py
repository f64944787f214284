"""The tutorial notebooks (docs/tutorials) run from top to bottom, as the documentation
site shows them: each is executed in a fresh kernel, and any cell that raises (their own
asserts included) fails the test. They are the generator's output, never edited apart."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from .helpers import ROOT

TUTORIALS = ROOT / "docs" / "tutorials"
NOTEBOOKS = sorted(TUTORIALS.glob("*.ipynb"))
MISSING = [m for m in ("nbformat", "nbclient", "ipykernel") if importlib.util.find_spec(m) is None]
needs_jupyter = pytest.mark.skipif(
    bool(MISSING), reason=f"the tutorials need {', '.join(MISSING)} (pip install '.[test]')"
)


def test_there_are_four_tutorials() -> None:
    assert [p.name[:2] for p in NOTEBOOKS] == ["01", "02", "03", "04"]


@needs_jupyter
def test_the_notebooks_are_what_the_generator_writes() -> None:
    import nbformat

    sys.path.insert(0, str(TUTORIALS))
    try:
        import make_notebooks
    finally:
        sys.path.remove(str(TUTORIALS))
    assert sorted(make_notebooks.NOTEBOOKS) == [p.name for p in NOTEBOOKS]
    for path in NOTEBOOKS:
        stored = nbformat.read(path, as_version=4)
        assert [c.source for c in stored.cells] == make_notebooks.NOTEBOOKS[path.name], path.name
        assert all(not c.get("outputs") for c in stored.cells if c.cell_type == "code"), "stored with outputs"


@needs_jupyter
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_tutorial_runs(path: Path, tmp_path: Path) -> None:
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    # the kernel is this interpreter (the one rar-opt is installed in), run in a scratch directory
    client = NotebookClient(nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.get("execution_count") for c in code)
    assert not any(o.get("output_type") == "error" for c in code for o in c.get("outputs", []))
