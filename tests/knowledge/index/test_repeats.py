"""A run's ``Repeats``: the rows a document gets from what the run already chunked are the rows
it gets on its own, whatever front matter its copies carry."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fisk_ls.knowledge.index import examine
from fisk_ls.knowledge.index.chunker import chunk_document, split_lines
from fisk_ls.knowledge.index.front_matter import front_matter

from .test_chunker import BLOCK

FRONT = st.one_of(
    st.just(""),
    st.builds(
        lambda title, extra, tags: (
            "---\n"
            + (f"title: {title}\n" if title is not None else "")
            + "".join(f"{key}: {value}\n" for key, value in extra)
            + (f"tags: [{', '.join(tags)}]\n" if tags else "")
            + "---\n"
        ),
        st.one_of(st.none(), st.sampled_from(["Get-Thing", "Get-Other", "'Quoted: x'", ""])),
        st.lists(
            st.tuples(st.sampled_from(["ms.date", "author", "description"]), st.text("ab1 ")),
            max_size=3,
        ),
        st.lists(st.sampled_from(["a", "b"]), max_size=2),
    ),
)


def rows_alone(text: str) -> tuple[str, list[examine.ChunkRow]]:
    lines = split_lines(text)
    return examine._chunked(lines, front_matter(lines), None)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.lists(BLOCK, max_size=12), st.lists(FRONT, min_size=1, max_size=5))
def test_copies_under_any_front_matter_get_their_own_rows(
    blocks: list[str], fronts: list[str]
) -> None:
    body = "\n".join(blocks)
    repeats = examine.Repeats()
    for front in fronts:
        text = front + body
        lines = split_lines(text)
        title, rows = repeats.chunked(lines, front_matter(lines))
        assert (title, rows) == rows_alone(text)
        doc = chunk_document(text)
        assert [(r.section, r.body, r.start_line, r.end_line) for r in rows] == [
            (c.section, c.text, c.start_line, c.end_line) for c in doc.chunks
        ]
        assert (front_matter(lines).title or title) == doc.title
