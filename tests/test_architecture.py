"""The architecture of docs/architecture.md, kept: layers, no import circle, docs in the repo."""

from __future__ import annotations

import re
import subprocess
import sys

import grimp

from .helpers import ROOT

PACKAGE = ROOT / "rar_opt"


def test_layers_contract_holds() -> None:
    """import-linter's contracts in pyproject.toml: no import from a lower layer to a higher one."""
    out = subprocess.run(
        [sys.executable, "-c", "from importlinter.cli import lint_imports_command; lint_imports_command()"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "0 broken" in out.stdout


def test_no_import_circle() -> None:
    graph = grimp.build_graph("rar_opt")
    modules = sorted(graph.modules)
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for dep in sorted(graph.find_modules_directly_imported_by(module)):
            if dep == "rar_opt" or not dep.startswith("rar_opt"):
                continue  # the package face re-exports; it is nobody's dependency
            assert state.get(dep) != 1, "import circle: " + " -> ".join([*path, module, dep])
            if dep not in state:
                visit(dep, [*path, module])
        state[module] = 2

    for module in modules:
        if module != "rar_opt" and module not in state:
            visit(module, [])


def test_the_package_cites_only_files_in_the_repository() -> None:
    cited: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "../" not in text and "shared/spec" not in text, f"{path} cites a file outside the repository"
        cited |= set(re.findall(r"docs/[\w-]+\.md", text))
    assert cited, "the package cites its docs"
    for page in cited | {f"docs/{p}.md" for p in ("model", "formats", "algorithms", "exactness", "architecture")}:
        assert (ROOT / page).is_file(), f"{page} is cited but missing"
