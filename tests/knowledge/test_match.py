"""Match location inside a hit: the lines that answer, the heading they sit under, and the
words the index matched (issue: precise results)."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from pathlib import Path

import apsw
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fisk_ls.knowledge import (
    Knowledge,
    SearchRequest,
    Settings,
    index_project,
    resolve_settings,
)
from fisk_ls.knowledge.match import fts_tokenizer, locate
from fisk_ls.knowledge.results import Hit

TOKENIZE = fts_tokenizer(apsw.Connection(":memory:"))


def long_section() -> str:
    return textwrap.dedent(
        """\
        # Operations

        ## Restarts

        The service keeps a small amount of state in memory and on disk.

        Operators normally never need to touch it during daily work.

        Logs rotate every night and are kept for two weeks by default.

        To drain a node before a restart, cordon it and wait for the queue depth to reach zero.

        Afterwards the node rejoins the cluster on its own.
        """
    )


def search(tmp_path: Path, docs: dict[str, str], query: str) -> Sequence[Hit]:
    root = tmp_path / "proj"
    for rel, text in docs.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    s: Settings = resolve_settings(cwd=root, store_base=tmp_path / "stores")
    index_project(s)
    kb = Knowledge(s)
    try:
        return kb.search(SearchRequest(query)).hits
    finally:
        kb.close()


def test_the_fourth_paragraph_of_a_long_section_is_where_the_hit_lands(tmp_path: Path) -> None:
    hits = search(tmp_path, {"ops.md": long_section()}, "how do I drain a node before a restart")
    hit = hits[0]
    assert hit.match is not None
    assert hit.match.lines == (11, 11)  # the paragraph, not the chunk's first line
    line = long_section().split("\n")[hit.match.lines[0] - 1]
    assert line.startswith("To drain a node")
    assert hit.match.section == "Operations > Restarts"
    words = {hit.match.snippet[a:b].casefold() for a, b in hit.match.highlights}
    assert {"drain", "node", "restart"} <= words


def test_a_merged_chunk_reports_the_heading_of_the_section_that_matched(tmp_path: Path) -> None:
    doc = "# Traces\n\n## Context Propagation\n\nContext moves between services.\n\n## Spans\n\nA span is one unit of work in a trace.\n"
    hits = search(tmp_path, {"traces.md": doc}, "unit of work")
    assert len(hits) == 1  # both small sections share one chunk
    assert hits[0].match is not None
    assert hits[0].match.section == "Traces > Spans"
    assert hits[0].match.lines == (7, 9)


def test_stemmed_words_are_highlighted_as_the_index_matched_them() -> None:
    body = "Retrying requests: the client retries with exponential backoff."
    m = locate(body, "Retries", (1, 1), "retry", TOKENIZE)
    assert [body[a:b] for a, b in m.highlights] == ["Retrying", "retries"]
    assert m.terms == ("Retrying", "retries")


def test_cjk_highlights_map_back_to_characters() -> None:
    body = "配置文件。收集器的配置文件在这里，采样配置也在这里。"
    m = locate(body, "配置", (3, 3), "采样配置", TOKENIZE)
    assert m.highlights
    for a, b in m.highlights:
        assert m.snippet[a:b] in body
    assert "采样配置" in [m.snippet[a:b] for a, b in m.highlights]


def test_non_ascii_offsets_are_characters_not_bytes() -> None:
    body = "Naïve café déjà vu: the résumé parser handles accents."
    m = locate(body, "", (1, 1), "parser", TOKENIZE)
    assert [m.snippet[a:b] for a, b in m.highlights] == ["parser"]


def test_control_characters_never_reach_the_snippet() -> None:
    body = "Safe text.\n\nEvil \x1b[2J\x1b]0;title\x07 payload with the keyword inside \x07."
    m = locate(body, "", (1, 3), "keyword", TOKENIZE)
    assert "\x1b" not in m.snippet and "\x07" not in m.snippet
    assert [m.snippet[a:b] for a, b in m.highlights] == ["keyword"]


def test_a_hit_no_term_reaches_lands_on_the_first_part() -> None:
    body = "First paragraph.\n\nSecond paragraph."
    m = locate(body, "Intro", (4, 7), "zzzz qqqq", TOKENIZE)
    assert m.highlights == () and m.snippet == "First paragraph."
    assert m.lines == (4, 5)  # the section heading above the body, and its first paragraph


def test_long_parts_are_cut_around_the_first_match() -> None:
    body = " ".join(["filler"] * 200) + " needle " + " ".join(["filler"] * 200)
    m = locate(body, "", (1, 1), "needle", TOKENIZE)
    assert len(m.snippet) <= 220
    assert [m.snippet[a:b] for a, b in m.highlights] == ["needle"]
    assert m.snippet.startswith("…") and m.snippet.endswith("…")


PIECES = [*"abc xyz\n#`~-*|:é设\t\x1b", "需要", "## ", "```\n", "\n\n", "retries "]
texts = st.lists(st.sampled_from(PIECES), max_size=120).map("".join)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(body=texts, query=texts, start=st.integers(1, 50), extra=st.integers(0, 30))
def test_match_is_always_inside_the_chunk_and_highlights_inside_the_snippet(
    body: str, query: str, start: int, extra: int
) -> None:
    end = start + body.count("\n") + extra
    m = locate(body, "A > B", (start, end), query, TOKENIZE)
    assert start <= m.lines[0] <= m.lines[1] <= end
    assert "\x1b" not in m.snippet
    previous = 0
    for a, b in m.highlights:
        assert previous <= a < b <= len(m.snippet)
        previous = b


@pytest.mark.parametrize("query", ["", "   ", "the of and"])
def test_queries_without_terms_still_give_a_match(query: str) -> None:
    m = locate("Some text here.", "S", (1, 1), query, TOKENIZE)
    assert m.lines == (1, 1) and m.highlights == ()


def test_the_first_matched_word_is_located_on_its_source_line() -> None:
    """``first_word``: the line of the part's first matched word and that line's text before
    it (a front end counts the column in its own units); None when no word matched."""
    body = "Intro line.\n\nThe agent — ß 😀 — drains\nnodes and drains them again."
    match = locate(body, "Ops", (10, 13), "drain nodes", TOKENIZE)
    assert match.lines == (12, 13)  # the body's first line is source line 10
    assert match.first_word is not None
    assert (match.first_word.line, match.first_word.before) == (12, "The agent — ß 😀 — ")
    assert locate(body, "Ops", (10, 13), "zebra", TOKENIZE).first_word is None
