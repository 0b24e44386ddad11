"""Front matter whose title line is plain and that names no tags is read without the YAML parser
(front_matter._plain_title): the title, description and tags are what the parser gives."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fisk_ls.knowledge.index import front_matter as reading
from fisk_ls.knowledge.index.chunker import split_lines
from fisk_ls.knowledge.index.front_matter import FrontMatter, front_matter

VALUES = st.text(
    alphabet=st.sampled_from(list("abcXYZ019 -_.,:#'\"[]{}|>&*!%@`\\\t~/()?=+")), max_size=30
)
KEYS = st.sampled_from(["title", "Title", "description", "ms.date", "tags", "author", " title"])


def parsed(text: str) -> FrontMatter:
    """``front_matter`` with the parser always asked."""
    original = reading._plain_title
    reading._plain_title = lambda inner: None
    try:
        return front_matter(split_lines(text))
    finally:
        reading._plain_title = original


def read(front: FrontMatter) -> tuple[int, str, str, tuple[str, ...]]:
    return front.lines, front.title, front.description, front.tags


@given(st.lists(st.tuples(KEYS, VALUES), max_size=6), st.booleans())
def test_without_the_parser_the_fields_are_the_parsers(
    fields: list[tuple[str, str]], continued: bool
) -> None:
    body = "".join(f"{k}: {v}\n" for k, v in fields)
    if continued:
        body += "  more words\n"
    text = f"---\n{body}---\n# Heading\n\nText.\n"
    fast = front_matter(split_lines(text))
    slow = parsed(text)
    if slow.problem and not fast.problem:
        # the parser failed and no tags were named: only the note of that differs, and the
        # one-line title is what both read
        assert read(fast) == read(slow)
    else:
        assert fast == slow


@pytest.mark.parametrize(
    "line",
    [
        "title: Get-NetAdapter",
        "title: Configure  the   collector",
        "title:    Spaces around   ",
    ],
)
def test_plain_titles_skip_the_parser(line: str) -> None:
    inner = [line, "ms.date: 12/20/2016", "online version: https://example.com/x?y=1"]
    assert reading._plain_title(inner) == " ".join(line.split(":", 1)[1].split())


@pytest.mark.parametrize(
    "inner",
    [
        ["title: yes"],  # a boolean to YAML
        ["title: null"],
        ["title: 2019"],  # a number
        ["title: 'quoted'"],
        ["title: a: b"],
        ["title: a # comment"],
        ["title: >", "  folded"],
        ["title: first", "  continued"],
        ["title: one", "title: two"],  # YAML keeps the last
        ["title: T", "tags: [go]"],
        ["description: no title here"],
    ],
)
def test_what_only_the_parser_can_read_goes_to_the_parser(inner: list[str]) -> None:
    assert reading._plain_title(inner) is None
