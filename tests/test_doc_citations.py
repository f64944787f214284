"""Citations of the docs stay true: every section the code names (``docs/FILE.md,
"Title"`` in a docstring or comment, and every registered bound's ``section``) exists in
that file, as a heading or as a bold paragraph label (``**Title.**``). A section renamed
or removed without its citations fails here."""

from __future__ import annotations

import re

import pytest

from rar_opt.bounds import registry

from .helpers import ROOT

CITATION = re.compile(r"docs/([a-z-]+\.md),?\s+(?:section\s+)?\"([^\"]+)\"")


def _norm(text: str) -> str:
    return " ".join(text.replace("`", "").lower().split())


def _places(doc: str) -> list[str]:
    """The headings and bold paragraph labels of a docs page, normalised."""
    text = (ROOT / "docs" / doc).read_text()
    headings = [line.lstrip("#").strip() for line in text.splitlines() if line.startswith("#")]
    labels = re.findall(r"\*\*([^*]+)\*\*", text) + re.findall(r"^([^\n:|#*]{1,60}):", text, re.M)
    return [_norm(p) for p in headings + labels]


def _exists(doc: str, title: str) -> bool:
    wanted = _norm(title).rstrip(".:")
    return any(wanted in place for place in _places(doc))


def _citations() -> list[tuple[str, str, str]]:
    found = []
    for root in ("rar_opt", "benchmarks", "tests"):
        for path in sorted((ROOT / root).rglob("*.py")):
            lines = (line.strip().removeprefix("#").strip() for line in path.read_text().splitlines())
            text = " ".join(" ".join(lines).split())  # a citation may wrap over lines, comments too
            for doc, title in CITATION.findall(text):
                found.append((str(path.relative_to(ROOT)), doc, title))
    return found


def test_the_code_cites_docs_sections_at_all() -> None:
    assert len(_citations()) > 20  # the pattern still finds what it checks


@pytest.mark.parametrize(("source", "doc", "title"), _citations())
def test_every_cited_section_exists(source: str, doc: str, title: str) -> None:
    assert (ROOT / "docs" / doc).is_file(), f"{source} cites docs/{doc}, which does not exist"
    assert _exists(doc, title), f"{source} cites docs/{doc}, {title!r}: no such heading or label"


@pytest.mark.parametrize("bound", list(registry.BOUNDS.values()), ids=lambda b: b.name)
def test_every_bound_names_the_section_that_argues_it(bound: registry.Bound) -> None:
    doc, _, title = bound.section.partition(", ")
    assert doc.startswith("docs/") and (ROOT / doc).is_file(), bound.section
    assert _exists(doc.removeprefix("docs/"), title), f"{bound.name}: {bound.section!r} names no section"
