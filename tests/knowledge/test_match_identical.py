"""The fast ``locate`` gives exactly the output of the implementation it replaced (a frozen copy
in tests/support/match_reference.py): lines, section, snippet, highlights, terms and offset, on
open-ended chunk bodies and queries — headings, fences, merged sections, stemmed words, CJK,
non-ASCII case folding, every kind of whitespace, terminal control sequences and parts long
enough to be cut."""

from __future__ import annotations

import random
from pathlib import Path

import apsw
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from fisk_ls.knowledge.index.chunker import chunk_document
from fisk_ls.knowledge.match import fts_tokenizer, locate, query_tokens
from tests.support import match_reference as ref

TOKENIZE = fts_tokenizer(apsw.Connection(":memory:"))

VOCABULARY = """
retry retries Retrying retrying backoff backing back node nodes drain restart
Get-NetAdapter adapter adapters NetAdapter -WhatIf WhatIf ip IP address the a of
café CAFÉ Naïve résumé Straße STRASSE İstanbul ﬁle file Ωmega ωmega x1 42 C c
配置 采样配置 文件 需要 设 の 日本語 한국어 收集器
"""
WORDS = VOCABULARY.split()
SPACE = [" ", " ", "\t", "\n", "\n\n", "\r\n", "\xa0", "\u3000", "\x85", "\u2028", "\x0b", "\x1c"]
CONTROL = ["\x1b[2J", "\x1b]0;title\x07", "\x1b]8;;x", "\x1b", "\x07", "\x00", "\x7f", "\x9b"]
CONTROL += ["\x1bPq#0\x1b\\", "\x1bX", "\x1b\\", "\x1b7"]
MARKUP = ["# ", "## ", "###### ", "####### ", "   # ", "    # ", " #", "#", " ## x ##"]
MARKUP += ["```", "~~~", "````", "```ps1", " ```", "    ```", "`", "~", "- ", "* ", "> ", "|"]
FILLER = ["lorem ipsum dolor " * 12, "x" * 90, "— " * 40, "\n" + "filler text " * 30 + "\n"]

piece = st.one_of(
    st.sampled_from(WORDS),
    st.sampled_from(SPACE),
    st.sampled_from(CONTROL),
    st.sampled_from(MARKUP),
    st.sampled_from(FILLER),
    st.text(max_size=4),
)
soup = st.lists(piece, max_size=160).map("".join)
# Paragraphs of a few shared words between blank lines, headings and fences, so that several
# parts hold query words and a later one can beat an earlier one.
FEW = ["node", "nodes", "drain", "retries", "retry", "配置", "café", "x", "the"]
BREAKS = ["\n\n", "\n", "\n\n## Sub\n\n", "\n# Top\n", "\n```\n", "\n~~~\n", "\n\n    \n"]
BREAKS += ["\n  ```\n", "\n\t```x\n", "\n    ~~~\n", "\n````\n"]
paragraph = st.lists(st.sampled_from([*FEW, *SPACE[:3], *CONTROL[:2]]), min_size=1, max_size=12)
structured = st.lists(
    st.tuples(paragraph.map(" ".join), st.sampled_from(BREAKS)), min_size=1, max_size=10
).map(lambda blocks: "".join(text + gap for text, gap in blocks))
bodies = st.one_of(soup, structured)
queries = st.one_of(
    st.lists(st.sampled_from(FEW), min_size=1, max_size=4).map(" ".join),
    st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join),
    st.lists(st.one_of(st.sampled_from(WORDS), st.text(max_size=6)), max_size=5).map(" ".join),
)
QUESTIONS = [
    "get the ip address of a network adapter",
    "how do I restart a service remotely",
    "configure the collector exporter endpoint",
    "what does -WhatIf do",
    "trace context propagation",
    "the",
    "配置",
]
sections = st.sampled_from(["", "A > B", "Title", "A > B > C > D", "Ops > Restarts"])


def check(body: str, section: str, start: int, extra: int, query: str) -> None:
    lines = (start, max(start, start + body.count("\n") + extra))
    expected = ref.locate(body, section, lines, query, TOKENIZE)
    assert locate(body, section, lines, query, TOKENIZE) == expected
    terms = query_tokens(query, TOKENIZE)
    assert terms == ref.query_tokens(query, TOKENIZE)
    assert locate(body, section, lines, terms, TOKENIZE) == expected
    assert ref.locate(body, section, lines, terms, TOKENIZE) == expected


@pytest.mark.slow
@settings(max_examples=600, deadline=None)
@given(
    body=bodies,
    section=sections,
    start=st.integers(1, 60),
    extra=st.integers(-3, 30),
    query=queries,
)
@example(
    body="Retrying requests: the client retries with exponential backoff.",
    section="Retries",
    start=1,
    extra=0,
    query="retry backoff",
)
@example(
    body="# A\n\n```\n# not a heading\n```\n\n## B\n\nnode",
    section="",
    start=3,
    extra=0,
    query="node heading",
)
@example(
    body="配置文件。收集器的配置文件在这里，采样配置也在这里。",
    section="配置",
    start=3,
    extra=0,
    query="采样配置",
)
@example(body="a \x1b]0;t node\x07 b  \t node", section="", start=1, extra=0, query="node")
@example(
    body=" ".join(["filler"] * 200) + " needle " + "x " * 300,
    section="",
    start=1,
    extra=0,
    query="needle filler",
)
def test_locate_is_identical_to_the_reference(
    body: str, section: str, start: int, extra: int, query: str
) -> None:
    check(body, section, start, extra, query)


@settings(max_examples=200, deadline=None)
@given(body=st.text(max_size=400), query=st.text(max_size=30), start=st.integers(1, 9))
def test_locate_is_identical_to_the_reference_on_any_text(
    body: str, query: str, start: int
) -> None:
    check(body, "S", start, 0, query)


@pytest.mark.corpus
def test_real_documentation_gives_identical_matches(corpora: Path) -> None:
    """Chunks of real docs (PowerShell's and OpenTelemetry's: code fences, tables, lists, merged
    sections, a few non-ASCII pages), each with a question-like query and three of its own words."""
    rng = random.Random(15)
    files = [
        *sorted((corpora / "windows-powershell-docs").rglob("*.md"))[::97][:120],
        *sorted((corpora / "opentelemetry-io" / "content").rglob("*.md"))[::23][:120],
    ]
    if not files:
        pytest.skip("no PowerShell or OpenTelemetry docs found")
    compared = 0
    for path in files:
        for chunk in chunk_document(path.read_text(encoding="utf-8", errors="replace")).chunks:
            words = chunk.text.split()
            own = " ".join(rng.sample(words, min(3, len(words))))
            for query in (rng.choice(QUESTIONS), own):
                lines = (chunk.start_line, chunk.end_line)
                got = locate(chunk.text, chunk.section, lines, query, TOKENIZE)
                assert got == ref.locate(chunk.text, chunk.section, lines, query, TOKENIZE), (
                    path,
                    chunk.ordinal,
                    query,
                )
                compared += 1
    assert compared > 1000
