"""Chunker: the reference checklist (items 1–5), CommonMark rules, sizes, line spans."""

from __future__ import annotations

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fisk_ls.knowledge.index.chunker import (
    MAX_CHARS,
    chunk_document,
    headings,
    split_lines,
)


def chunks_of(md: str):  # type: ignore[no-untyped-def]
    return chunk_document(textwrap.dedent(md)).chunks


def test_breadcrumb_and_body() -> None:  # checklist 1
    chunks = chunks_of(
        """\
        # Design

        ## Backpressure

        Producers block when the queue is full.
        """
    )
    assert len(chunks) == 1
    assert chunks[0].section == "Design > Backpressure"
    assert chunks[0].content.startswith("Design > Backpressure")
    assert "Producers block" in chunks[0].content


def test_large_fence_split_into_valid_fences() -> None:  # checklist 2, improved
    body = "\n".join(f"line {i} = {'x' * 40}" for i in range(200))
    chunks = chunks_of(f"# Code\n\n```python\n{body}\n```\n")
    assert len(chunks) > 1
    for c in chunks:
        assert len(c.text) <= MAX_CHARS
        lines = c.text.split("\n")
        assert lines[0] == "```python" and lines[-1] == "```"
    joined = "\n".join(ln for c in chunks for ln in c.text.split("\n")[1:-1])
    assert joined == body


def test_hash_inside_fence_is_not_heading() -> None:  # checklist 3
    chunks = chunks_of(
        """\
        # Top

        ```sh
        # not a heading
        ## nor this
        ```
        """
    )
    assert all("not a heading" not in c.section for c in chunks)
    assert chunk_document("# Top\n\n```\n# x\n```\n").title == "Top"  # checklist 4


@pytest.mark.parametrize("text", ["", "   \n\n\t\n"])
def test_empty_input_has_no_chunks(text: str) -> None:  # checklist 5
    assert chunk_document(text).chunks == []


def test_atx_needs_space_and_closing_hashes_are_stripped() -> None:
    chunks = chunks_of(
        """\
        ## Real heading ##

        #hashtag is text
        #include <stdio.h>
        """
    )
    assert [c.section for c in chunks] == ["Real heading"]
    assert "#hashtag is text\n#include <stdio.h>" in chunks[0].text


def test_setext_headings() -> None:
    chunks = chunks_of(
        """\
        Title
        =====

        Intro paragraph that is long enough to stand on its own as a chunk body, really it is,
        and it goes on for a while so that the packer does not merge the next section into it.
        More words here to pass the minimum size of a chunk: alpha beta gamma delta epsilon zeta
        eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon phi chi psi omega.
        And one more line of text to be sure that the chunk is over the minimum size by now.

        Part two
        --------

        Second body.
        """
    )
    assert [c.section for c in chunks] == ["Title", "Title > Part two"]
    assert chunks[1].start_line == 10


def test_indented_code_is_not_heading() -> None:
    chunks = chunks_of("# A\n\n    # not heading\n    code\n")
    assert [c.section for c in chunks] == ["A"]
    assert "# not heading" in chunks[0].text


def test_fence_closes_only_on_same_char_and_length() -> None:
    md = "# A\n\n````md\n```\n# inside\n```\n````\n\n# B\n\nafter\n"
    assert headings(md) == [(1, "A", 1), (1, "B", 9)]
    assert "# inside" in chunk_document(md).chunks[0].text
    assert headings("~~~\n```\n# in\n~~~\n\n# C\n\ntext\n") == [(1, "C", 6)]
    assert headings("```\n# in\n``` info\n# still in\n```\n# out\n") == [(1, "out", 6)]


def test_unterminated_fence_runs_to_end() -> None:
    assert headings("# A\n\n```\n# swallowed\nmore\n") == [(1, "A", 1)]


def test_front_matter_skipped_and_title_used() -> None:
    doc = chunk_document('---\ntitle: "The Guide"\nweight: 3\n---\n\nSome text.\n')
    assert doc.title == "The Guide"
    assert doc.chunks[0].section == "The Guide"
    assert "weight" not in doc.chunks[0].text
    assert doc.chunks[0].start_line == 6
    toml = chunk_document("+++\ntitle = 'T'\n+++\nBody\n")
    assert toml.title == "T" and toml.chunks[0].text == "Body"


def test_bom_crlf_and_lone_cr() -> None:
    doc = chunk_document("\ufeff# Head\r\n\r\nLine one\rLine two\r\n")
    assert doc.title == "Head"
    assert doc.chunks[0].text == "Line one\nLine two"
    assert doc.chunks[0].end_line == 4


def test_attribute_suffix_removed() -> None:
    doc = chunk_document("# Install {#install .x}\n\ntext\n")
    assert doc.chunks[0].section == "Install"


def test_breadcrumb_pops_levels() -> None:
    md = "# A\n\n## B\n\n" + "b " * 300 + "\n\n### C\n\n" + "c " * 300 + "\n\n## D\n\nd\n"
    sections = [c.section for c in chunk_document(md).chunks]
    assert sections == ["A > B", "A > B > C", "A > D"]


def test_heading_only_leaf_is_searchable() -> None:
    doc = chunk_document("# Deprecated features\n")
    assert [c.section for c in doc.chunks] == ["Deprecated features"]


def test_small_sections_share_a_chunk() -> None:
    md = "# Cmd\n\n## SYNOPSIS\n\nDoes a thing.\n\n## SYNTAX\n\n```\nCmd -X\n```\n"
    chunks = chunk_document(md).chunks
    assert len(chunks) == 1
    assert chunks[0].section == "Cmd > SYNOPSIS; SYNTAX"  # every merged heading is named
    assert "## SYNTAX" in chunks[0].text


def test_long_paragraph_split_on_sentences_without_cutting_characters() -> None:
    sentence = "Ünïcödé séntence with émojis 🎉 and CJK 東京. "
    para = sentence * 100
    chunks = chunk_document(f"# A\n\n{para}\n").chunks
    assert len(chunks) > 1
    for c in chunks:
        assert len(c.text) <= MAX_CHARS
        c.text.encode("utf-8")  # never a broken character
        assert c.text.endswith(".")


@pytest.mark.slow
def test_giant_single_line_is_split() -> None:
    chunks = chunk_document("x" * 5_000_000).chunks
    assert all(len(c.text) <= MAX_CHARS for c in chunks)
    assert sum(len(c.text) for c in chunks) == 5_000_000


def test_line_spans_point_at_the_text() -> None:
    md = "intro\n\n# A\n\nalpha\nbeta\n\n" + ("word " * 400) + "\n\n## B\n\ngamma\n"
    lines = split_lines(md)
    for c in chunk_document(md).chunks:
        span = "\n".join(lines[c.start_line - 1 : c.end_line])
        for line in c.text.split("\n"):
            assert line.strip() in span


# -- properties ---------------------------------------------------------------------------------

BLOCK = st.one_of(
    st.text(min_size=0, max_size=300),
    st.sampled_from(
        [
            "# H1",
            "## H2",
            "### H3 ###",
            "Setext",
            "===",
            "---",
            "```",
            "````",
            "~~~",
            "    code",
            "> quote",
            "- item",
            "| a | b |",
            "#tag",
            "---\ntitle: x\n---",
        ]
    ),
    st.builds(lambda n: "long sentence. " * n, st.integers(0, 200)),
    st.builds(lambda n: "ü" * n, st.integers(0, 3000)),
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(BLOCK, max_size=30), st.sampled_from(["\n", "\r\n", "\r"]))
def test_properties(blocks: list[str], eol: str) -> None:
    text = eol.join(blocks)
    lines = split_lines(text)
    doc = chunk_document(text)
    previous_end = 0
    for i, c in enumerate(doc.chunks):
        assert c.ordinal == i
        assert 1 <= c.start_line <= c.end_line <= max(len(lines), 1)
        assert c.start_line >= previous_end or c.start_line == previous_end  # in order
        previous_end = c.start_line
        assert len(c.text) <= MAX_CHARS
        c.text.encode("utf-8", errors="strict")
        # fences inside a chunk are balanced
        opened = None
        for line in c.text.split("\n"):
            s = line.lstrip(" ")
            if opened is None:
                for ch in "`~":
                    n = len(s) - len(s.lstrip(ch))
                    if n >= 3 and len(line) - len(s) <= 3 and not (ch == "`" and "`" in s[n:]):
                        opened = (ch, n)
                        break
            elif s.startswith(opened[0] * opened[1]) and s.strip().strip(opened[0]) == "":
                opened = None
        # an unterminated fence may only be the document's own (it runs to the end)
        if opened is not None:
            assert c is doc.chunks[-1] or any("`" * 3 in b or "~" * 3 in b for b in blocks)
        # every text line of the chunk is in the source span
        span = "\n".join(lines[c.start_line - 1 : c.end_line])
        for line in c.text.split("\n"):
            if line.strip() and not line.lstrip(" ").startswith(("```", "~~~")):
                assert line[:200] in span or line.strip()[:200] in span


# -- chunks a reader would cut (issue 14) -------------------------------------------------------

TRACES = """\
# Traces

Traces give us the big picture of what happens when a request is made to an application.

## Trace Exporters

{exporters}

## Context Propagation

Context Propagation is the core concept that enables Distributed Tracing. With Context
Propagation, Spans can be correlated with each other and assembled into a trace.

## Spans

A **span** represents a unit of work or operation. Spans are the building blocks of Traces.

- Name
- Parent span ID (empty for root spans)
- Start and End Timestamps
"""


def test_merged_sections_name_every_heading_and_keep_it_in_the_text() -> None:
    md = TRACES.format(exporters="Trace Exporters send traces to a consumer. " * 20)
    merged = [c for c in chunk_document(md).chunks if "Context Propagation" in c.text]
    assert len(merged) == 1
    chunk = merged[0]
    assert chunk.section == "Traces > Context Propagation; Spans"
    assert chunk.text.startswith("## Context Propagation")
    assert "## Spans" in chunk.text
    lines = split_lines(md)
    assert lines[chunk.start_line - 1] == "## Context Propagation"


def test_a_single_section_chunk_keeps_its_breadcrumb_label() -> None:
    md = TRACES.format(exporters="Trace Exporters send traces to a consumer. " * 20)
    exporters = next(c for c in chunk_document(md).chunks if "send traces" in c.text)
    # The short intro under "# Traces" shares the chunk: its heading stays in the text.
    assert exporters.section == "Traces > Trace Exporters"
    assert exporters.text.startswith("# Traces")
    md = md.replace("application.", "application. " + "Words about traces. " * 30)
    exporters = next(c for c in chunk_document(md).chunks if "send traces" in c.text)
    assert exporters.section == "Traces > Trace Exporters"
    assert exporters.text.startswith("Trace Exporters send")  # the label carries the heading


YAML = "\n".join(
    f"      - name: policy-{i}\n        type: string_attribute\n        values: [v{i}]"
    for i in range(40)
)

TAIL = f"""\
---
title: Tail-Based Sampling
---

This example demonstrates tail-based sampling decisions in the Collector. {"More words. " * 60}

## Collector Configuration

To enable tail-based sampling, add the following to your
`otelcol-config-extras.yml`:

```yaml
processors:
  tail_sampling:
    policies:
{YAML}
```

## How It Works

The processor waits for all spans of a trace before it decides.
"""


def test_an_introduction_ending_in_a_colon_travels_with_its_code_block() -> None:
    chunks = chunk_document(TAIL).chunks
    intro = next(c for c in chunks if "add the following" in c.text)
    assert "```yaml" in intro.text
    assert "tail_sampling:" in intro.text
    assert len(intro.text) <= MAX_CHARS
    assert not intro.text.rstrip().endswith(":")


def test_an_introduction_moves_to_the_chunk_of_the_list_it_introduces() -> None:
    md = (
        "# Guide\n\n"
        + "Filler sentence about the guide. " * 28
        + "\n\nThe options are:\n\n"
        + "\n".join(f"- option {i}: does thing {i} in a sentence long enough" for i in range(12))
        + "\n"
    )
    chunks = chunk_document(md).chunks
    intro = next(c for c in chunks if "The options are:" in c.text)
    assert "- option 0" in intro.text


def test_a_section_slightly_over_target_is_not_split() -> None:
    body = "\n\n".join(f"Sentence number {i} of this section is here. " * 3 for i in range(10))
    md = f"# A\n\n## B\n\n{body}\n\n## C\n\nShort tail section.\n"
    assert 1200 < len(body) < MAX_CHARS
    chunks = chunk_document(md).chunks
    b = [c for c in chunks if "Sentence number" in c.text]
    assert len(b) == 1, "the whole section fits in one chunk"


@pytest.mark.parametrize(
    "md",
    [
        "# Real\n\n<!--\n# not a heading\n-->\n\ntext\n",
        "# Real\n\n<details>\n<summary>More</summary>\n# not a heading\n</details>\n\ntext\n",
        "# Real\n\n- item\n  # not a heading\n\n1. # not a heading\n",
        "# Real\n\n> # not a heading\n> quoted\n",
        "# Real\n\n- item\n---\n\ntext\n",
    ],
)
def test_html_blocks_and_containers_hold_no_headings(md: str) -> None:
    assert [h for _, h, _ in headings(md)] == ["Real"]
    assert {c.section for c in chunk_document(md).chunks} == {"Real"}


def test_an_introduction_never_pushes_its_block_past_the_limit() -> None:
    """Found by the property test: ":" before a paragraph of exactly MAX_CHARS made a chunk of
    MAX_CHARS + 3; the introduction now stays behind when its block fills a chunk alone."""
    text = "\n".join(["0", "", ":", "", "long sentence. " * 100]) + "\n"
    chunks = chunk_document(text).chunks
    assert all(len(c.text) <= MAX_CHARS for c in chunks)
    assert "long sentence." in chunks[-1].text


def test_a_merged_chunk_never_passes_max_chars_by_its_first_heading() -> None:
    """A chunk of merged sections shows its first heading again in front (the label names
    every merged section), unless that heading would take it past ``MAX_CHARS``. Found by
    ``test_properties``: a long setext heading put such a chunk 11 characters over."""
    first = "0" * 169
    body = ["long sentence. " * 21, "ü" * 391, "", "long sentence. " * 30]
    text = "\n".join([first, "===", first, "", "# 00", *body])
    chunks = chunk_document(text).chunks
    assert all(len(c.text) <= MAX_CHARS for c in chunks)
    assert chunks[0].section.startswith(first)  # still named by its label
