"""Query building: safe for any input, keeps meaningful words, CJK searchable."""

from __future__ import annotations

import apsw
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fisk_ls.knowledge import schema
from fisk_ls.knowledge.fts import (
    MAX_TERMS,
    cjk_bigrams,
    cjk_column,
    match_expression,
    query_phrases,
    query_terms,
)


def test_natural_language_question() -> None:  # checklist 6 (stop words now dropped)
    assert query_terms("how does backpressure work") == ["backpressure", "work"]
    assert match_expression("how does backpressure work") == (
        '"backpressure work" OR "backpressure" OR "work"'
    )


def test_single_letters_that_matter_are_kept() -> None:  # checklist 7, improved
    assert query_terms("a bb ccc") == ["bb", "ccc"]  # "a" is a stop word
    assert query_terms("C client") == ["c", "client"]
    assert query_terms("R language") == ["r", "language"]


def test_quotes_and_operators_are_neutralised() -> None:  # checklist 8
    expr = match_expression('say "hello"; DROP AND OR NOT NEAR(x) * ^col:')
    assert expr.count('"') % 2 == 0
    assert '"drop"' in expr and '"near"' in expr and '"col"' in expr


def test_term_cap_and_dedupe() -> None:  # checklist 9
    terms = query_terms(" ".join(f"w{i}" for i in range(200)) + " w1 w1")
    assert len(terms) == MAX_TERMS
    assert len(set(terms)) == len(terms)


@pytest.mark.parametrize("text", ["", "   ", "?!;:", "---", "\x00\x1b[31m"])
def test_nothing_searchable(text: str) -> None:  # checklist 10
    assert match_expression(text) == ""


def test_only_stop_words_are_kept_when_nothing_else() -> None:
    assert query_terms("what is it") == ["what", "is", "it"]


def test_cjk_bigrams() -> None:
    assert cjk_bigrams("東京都") == ["東京", "京都"]
    assert cjk_bigrams("東") == ["東"]
    assert cjk_column("no cjk here") is None
    assert cjk_column("API设计文档") == "设计 计文 文档"
    assert query_terms("采样率") == ["采样", "样率"]


def test_combining_marks_stay_in_the_word() -> None:
    assert query_terms("cafe\u0301 menu") == ["café", "menu"]


def test_prefix_on_last_term() -> None:
    assert match_expression("backpr", prefix_last=True) == '"backpr"*'
    assert match_expression("backpr ", prefix_last=True) == '"backpr"'
    assert match_expression("ab", prefix_last=True) == '"ab"'


@pytest.fixture(scope="module")
def fts_conn() -> apsw.Connection:
    conn = apsw.Connection(":memory:")
    conn.execute(schema.generation_ddl(1))
    n = schema.names(1)
    conn.execute(f"INSERT INTO {n.documents}(id, path) VALUES (1, 'a.md')")
    conn.execute(
        f"INSERT INTO {n.chunks}(document_id, ordinal, section, body, cjk, start_line,"
        " end_line, hash) VALUES (1, 0, 'Sec', 'hello world NEAR AND', NULL,"
        " 1, 1, 'h')"
    )
    return conn


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=300), st.booleans())
def test_any_string_is_a_valid_match(fts_conn: apsw.Connection, text: str, prefix: bool) -> None:
    expr = match_expression(text, prefix_last=prefix)
    if expr:
        f = schema.names(1).fts
        fts_conn.execute(f"SELECT rowid FROM {f} WHERE {f} MATCH ?", (expr,)).fetchall()


def test_fts_syntax_everywhere(fts_conn: apsw.Connection) -> None:
    f = schema.names(1).fts
    nasty = '"" "unbalanced ( ) AND OR NOT NEAR/3 ^ * : {a b} [x] - + col:word \\ \' ` ~'
    expr = match_expression(nasty * 50)
    fts_conn.execute(f"SELECT rowid FROM {f} WHERE {f} MATCH ?", (expr,)).fetchall()


def test_identifiers_also_match_as_phrases() -> None:
    assert match_expression("OTEL_EXPORTER_OTLP_ENDPOINT port") == (
        '"otel exporter otlp endpoint" OR "otel exporter otlp endpoint port" OR '
        '"otel" OR "exporter" OR "otlp" OR "endpoint" OR "port"'
    )
    assert query_phrases("opentelemetry-distro") == ["opentelemetry distro"]
    assert query_phrases("plain") == []
    assert query_phrases("bb cc dd ee ff gg") == []  # six words: no whole-query phrase
    assert query_phrases("what is a span") == []  # one word once stop words are gone


def test_document_field_names_the_page_once() -> None:
    from fisk_ls.knowledge.fts import document_field

    assert document_field("Configuration", "Learn how", "docs/collector/configuration.md") == (
        "Configuration\nLearn how\ndocs/collector/configuration.md"
    )
    # A title that already heads the breadcrumbs is not repeated.
    assert document_field("Traces", "", "docs/traces.md", "Traces > Spans") == "docs/traces.md"


def test_heading_terms_of_definitional_questions() -> None:
    from fisk_ls.knowledge.fts import heading_terms

    assert heading_terms("what is a span") == ["span"]
    assert heading_terms("what is a connector in the collector") == ["connector"]
    assert heading_terms("What does OTLP stand for?") == ["otlp"]
    assert heading_terms("define resource detectors") == ["resource", "detectors"]
    assert heading_terms("tail sampling") == ["tail", "sampling"]
    assert heading_terms("how do I configure the tail sampling processor in a gateway") == []
    assert heading_terms("什么是 span") == []
