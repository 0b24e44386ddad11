"""The fast ``locate`` gives exactly the output of the implementation it replaced (a frozen copy
in tests/support/match_reference.py): lines, section, snippet, highlights, terms and offset, on
open-ended chunk bodies and queries — headings, fences, merged sections, stemmed words, CJK,
non-ASCII case folding, every kind of whitespace, terminal control sequences and parts long
enough to be cut."""

from __future__ import annotations

import apsw
from hypothesis import example, given, settings
from hypothesis import strategies as st

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
sections = st.sampled_from(["", "A > B", "Title", "A > B > C > D", "Ops > Restarts"])


def check(body: str, section: str, start: int, extra: int, query: str) -> None:
    lines = (start, max(start, start + body.count("\n") + extra))
    expected = ref.locate(body, section, lines, query, TOKENIZE)
    assert locate(body, section, lines, query, TOKENIZE) == expected
    terms = query_tokens(query, TOKENIZE)
    assert terms == ref.query_tokens(query, TOKENIZE)
    assert locate(body, section, lines, terms, TOKENIZE) == expected
    assert ref.locate(body, section, lines, terms, TOKENIZE) == expected


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
