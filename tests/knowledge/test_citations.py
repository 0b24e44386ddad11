"""Citation tokens: format/parse (property), refusal of escapes, stale detection."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fisk_ls.knowledge import (
    CitationError,
    Knowledge,
    SearchRequest,
    Settings,
    index_project,
)
from fisk_ls.knowledge.citations import format_citation, locate, parse_citation

SEGMENT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="/\\"),
    min_size=1,
    max_size=12,
).filter(lambda s: s not in (".", "..") and s.strip() == s and s.strip())


@given(st.lists(SEGMENT, min_size=1, max_size=4), st.integers(0, 10**6))
def test_round_trip(parts: list[str], ordinal: int) -> None:
    path = "/".join(parts)
    if path.startswith("./") or (len(path) > 1 and path[1] == ":"):
        return
    assert parse_citation(format_citation(path, ordinal)) == (path, ordinal)


@pytest.mark.parametrize(
    "token",
    ["docs/a.md", "docs/a.md#", "#3", "docs/a.md#-1", "docs/a.md#x", "a.md#٣", ""],
)
def test_malformed(token: str) -> None:
    with pytest.raises(CitationError, match="malformed"):
        parse_citation(token)


@pytest.mark.parametrize(
    "token", ["../etc/passwd#0", "/etc/passwd#0", "docs/../../x.md#1", "C:/x.md#0", "..\\x.md#0"]
)
def test_escapes_refused(token: str) -> None:
    with pytest.raises(CitationError, match="outside"):
        parse_citation(token)


def test_leading_dot_slash_accepted() -> None:
    assert parse_citation("./docs/a#b.md#2") == ("docs/a#b.md", 2)


def test_show_and_stale(settings: Settings, project: Path) -> None:
    index_project(settings)
    kb = Knowledge(settings)
    hit = kb.search(SearchRequest("retries backoff jitter")).hits[0]
    shown = kb.show(hit.citation)
    assert not shown.stale and "jitter" in shown.text
    assert shown.current_lines == (hit.start_line, hit.end_line)
    path = project / hit.path
    path.write_text("# Preface\n\nNew intro.\n\n" + path.read_text())
    moved = kb.show(hit.citation)
    assert moved.stale and moved.moved_to is not None
    lines = path.read_text().splitlines()
    a, b = moved.moved_to
    assert "jitter" in "\n".join(lines[a - 1 : b])
    path.write_text("# Gone\n\nnothing left\n")
    assert kb.show(hit.citation).moved_to is None


def test_show_unknown(settings: Settings) -> None:
    index_project(settings)
    with pytest.raises(CitationError, match="no chunk matches"):
        Knowledge(settings).show("docs/design.md#999")
    with pytest.raises(CitationError, match="no chunk matches"):
        Knowledge(settings).show("not/indexed.md#0")


def test_locate() -> None:
    assert locate("a\nb\nc\n", "b\nc") == (2, 3)
    assert locate("a\n", "zzz") is None
