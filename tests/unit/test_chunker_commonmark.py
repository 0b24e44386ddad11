"""The chunker's line scanner agrees with a real CommonMark parser (markdown-it-py) on where
headings are, on generated documents and on real documentation."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from fisk_ls.knowledge.index.chunker import _front_matter, headings, split_lines

MD = MarkdownIt("commonmark")


def reference_headings(text: str) -> list[tuple[int, int]]:
    """(level, 1-based line) of top-level headings according to markdown-it-py."""
    lines = split_lines(text)
    skip, _ = _front_matter(lines)
    body = "\n".join(lines[skip:])
    out = []
    for tok in MD.parse(body):
        if tok.type == "heading_open" and tok.level == 0 and tok.map:
            out.append((int(tok.tag[1]), tok.map[0] + 1 + skip))
    return out


def ours(text: str) -> list[tuple[int, int]]:
    return [(level, line) for level, _, line in headings(text)]


LINES = st.sampled_from(
    [
        "# One",
        "## Two ##",
        "###### Six",
        "####### seven",
        "#no space",
        "   # indented three",
        "    # indented four",
        "Setext",
        "===",
        "---",
        "- - -",
        "***",
        "```",
        "```py",
        "````",
        "~~~",
        "~~~~",
        "``` not `closing",
        "text line",
        "another line",
        "",
        "",
        "\tTabbed",
        "    code",
        "#",
        "# ",
        "## trailing #",
        "\\# escaped",
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(LINES, max_size=25))
def test_headings_match_markdown_it(lines: list[str]) -> None:
    text = "\n".join(lines) + "\n"
    assert ours(text) == reference_headings(text)


def test_real_documentation_agrees(corpora: Path) -> None:
    files = sorted((corpora / "opentelemetry-io" / "content" / "en").rglob("*.md"))[:400]
    if not files:
        pytest.skip("no OpenTelemetry docs found")
    total = mismatched = 0
    for path in files:
        text = path.read_text(encoding="utf-8")
        ref = reference_headings(text)
        total += len(ref)
        # Headings inside lists, block quotes or HTML blocks are nested for markdown-it; the
        # scanner has no containers, so compare only the headings markdown-it sees at top level.
        mismatched += len(set(ref) ^ set(ours(text)) & set(ref))
    assert total > 500
    assert mismatched / total < 0.01, f"{mismatched} of {total} headings differ"
