"""Finding citation tokens in a line of text."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lsprotocol import types
from pygls.workspace import TextDocument
from pygls.workspace.position_codec import PositionCodec, Utf16

from fisk_ls.lsp import citations
from fisk_ls.lsp.citations import find_tokens


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        pytest.param("see docs/guide.md#3 here", ["docs/guide.md#3"], id="plain"),
        pytest.param("(docs/guide.md#3)", ["docs/guide.md#3"], id="parens"),
        pytest.param("`a.txt#0`, b.markdown#12.", ["a.txt#0", "b.markdown#12"], id="two"),
        pytest.param("[x](notes/a b.md#1)", ["b.md#1"], id="space-splits"),
        pytest.param("a.md#1x", [], id="trailing-word"),
        pytest.param("guide.md#", [], id="no-ordinal"),
        pytest.param("https://h/x.md#2", [], id="url"),
        pytest.param("C#1 and page.html#2", [], id="not-documents"),
        pytest.param("ÜBER/straße.md#4 ok", ["ÜBER/straße.md#4"], id="unicode"),
        pytest.param("docs/#a.md#2", ["docs/#a.md#2"], id="hash-in-path"),
    ],
)
def test_find_tokens(line: str, expected: list[str]) -> None:
    found = find_tokens(line)
    assert [c for _, _, c in found] == expected
    for start, end, citation in found:
        assert line[start:end] == citation


LONG_LINE = "docs/install.md#0 " + " ".join(f"guide.md#{i}" for i in range(5000))


class CountingUtf16(Utf16):
    """Counts the characters measured, to show the conversion is linear."""

    counted = 0

    def num_units(self, chars: str) -> int:
        CountingUtf16.counted += len(chars)
        return super().num_units(chars)

    def column_from_utf32(self, line: str, column: int) -> int:
        CountingUtf16.counted += column
        return super().column_from_utf32(line, column)


def counting_document(text: str) -> TextDocument:
    codec = PositionCodec()
    codec.impl = CountingUtf16()
    CountingUtf16.counted = 0
    return TextDocument("file:///x/long.md", text, position_codec=codec)


def test_tokens_of_a_long_line_measure_each_character_once() -> None:
    """pygls measured every token's position from the line's start: quadratic (30 s of CPU
    for this line)."""
    doc = counting_document("é😀 " + LONG_LINE + "\n")
    found = list(citations.tokens(doc))
    assert len(found) == 5001
    assert CountingUtf16.counted <= 2 * len(doc.source)
    first = found[0]
    assert first.citation == "docs/install.md#0"
    assert (first.range.start.character, first.range.end.character) == (4, 21)  # UTF-16


def test_token_at_reads_only_near_the_position() -> None:
    doc = counting_document(LONG_LINE * 20)
    token = citations._token_at(doc, types.Position(line=0, character=3))
    assert token is not None and token.citation == "docs/install.md#0"
    assert CountingUtf16.counted <= 2 * len(doc.source)  # pygls measures the line once


REFERENCE = re.compile(
    r"(?<![^\s`'\"<>()\[\]{}|,;:*_])(?!/)"
    r"([^\s`'\"<>()\[\]{}|,;:*]+?\.(?:md|markdown|txt|text)#\d+)(?![\w])",
    re.IGNORECASE,
)
"""The pattern the one-pass scanner replaces (quadratic on ``_a_a_a…``, fine on short text)."""


@given(st.text(alphabet="a_/.mMdD#12 x:É\t`txTmarkdown\u2028ß(", max_size=40))
def test_scanner_finds_what_the_pattern_found(line: str) -> None:
    expected = [(m.start(1), m.end(1), m.group(1)) for m in REFERENCE.finditer(line)]
    assert citations.find_tokens(line) == expected
