"""The chunker's line scanner agrees with a real CommonMark parser (markdown-it-py) on where
headings are, on generated documents and on real documentation."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from fisk_ls.knowledge.index.chunker import headings, split_lines
from fisk_ls.knowledge.index.front_matter import front_matter

MD = MarkdownIt("commonmark")


def reference_headings(text: str) -> list[tuple[int, int]]:
    """(level, 1-based line) of top-level headings according to markdown-it-py."""
    lines = split_lines(text)
    skip = front_matter(lines).lines
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
        # HTML blocks: a comment or <details> hides what looks like a heading until its end
        "<!--",
        "-->",
        "<!-- one line -->",
        "<details>",
        "</details>",
        "<summary>Click</summary>",
        "<div>",
        "<span>",
        "<pre>",
        "</pre>",
        # containers: list items and block quotes hold their own headings and breaks
        "- item",
        "* item",
        "1. step",
        "2) step",
        "-",
        "- # in item",
        "  # in item",
        "   # three in",
        "  ```",
        "  continued",
        "> quoted",
        "> # quoted heading",
        ">",
    ]
)


@pytest.mark.slow
@settings(max_examples=1500, deadline=None)
@given(st.lists(LINES, max_size=25))
def test_headings_match_markdown_it(lines: list[str]) -> None:
    text = "\n".join(lines) + "\n"
    assert ours(text) == reference_headings(text)


@pytest.mark.corpus
def test_real_documentation_agrees(corpora: Path) -> None:
    files = sorted((corpora / "opentelemetry-io" / "content" / "en").rglob("*.md"))[:400]
    if not files:
        pytest.skip("no OpenTelemetry docs found")
    total = mismatched = 0
    for path in files:
        text = path.read_text(encoding="utf-8")
        ref = set(reference_headings(text))
        total += len(ref)
        # Both directions: no heading the parser does not see (one inside an HTML block, a
        # list item or a block quote), none it sees that the scanner misses.
        mismatched += len(ref ^ set(ours(text)))
    assert total > 500
    assert mismatched == 0, f"{mismatched} of {total} headings differ"
