"""Finding citation tokens in a line of text."""

from __future__ import annotations

import pytest

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
