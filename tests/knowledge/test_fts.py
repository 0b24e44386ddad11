"""Query building: safe for any input, keeps meaningful words, CJK searchable."""

from __future__ import annotations

import apsw
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fisk_ls.knowledge import schema
from fisk_ls.knowledge.fts import (
    MAX_QUERY_CHARS,
    MAX_TERMS,
    STOP_WORDS,
    cjk_bigrams,
    cjk_column,
    fold_clitics,
    heading_key,
    may_have_key,
    words,
)
from fisk_ls.knowledge.fts import _unicode_words as unicode_words
from fisk_ls.knowledge.index.examine import ChunkRow
from fisk_ls.knowledge.index.rows import insert_chunks
from fisk_ls.knowledge.question import _IDENTIFIER, MAX_PHRASE_WORDS, MAX_PHRASES
from fisk_ls.knowledge.schema import body_key
from fisk_ls.knowledge.topk import plan_of
from tests.support.question import heading_terms, query_phrases, query_terms


def match(text: str) -> str:
    """The MATCH expression a search runs for ``text`` before term statistics."""
    return plan_of(text).expression()


def test_natural_language_question() -> None:  # checklist 6 (stop words now dropped)
    assert query_terms("how does backpressure work") == ["backpressure", "work"]
    assert match("how does backpressure work") == (
        '"backpressure work" OR "backpressure" OR "work" OR "backpressurework"'
    )


def test_single_letters_that_matter_are_kept() -> None:  # checklist 7, improved
    assert query_terms("a bb ccc") == ["bb", "ccc"]  # "a" is a stop word
    assert query_terms("C client") == ["c", "client"]
    assert query_terms("R language") == ["r", "language"]


def test_quotes_and_operators_are_neutralised() -> None:  # checklist 8
    expr = match('say "hello"; DROP AND OR NOT NEAR(x) * ^col:')
    assert expr.count('"') % 2 == 0
    assert '"drop"' in expr and '"near"' in expr and '"col"' in expr


def test_term_cap_and_dedupe() -> None:  # checklist 9
    terms = query_terms(" ".join(f"w{i}" for i in range(200)) + " w1 w1")
    assert len(terms) == MAX_TERMS
    assert len(set(terms)) == len(terms)


@pytest.mark.parametrize("text", ["", "   ", "?!;:", "---", "\x00\x1b[31m"])
def test_nothing_searchable(text: str) -> None:  # checklist 10
    assert match(text) == ""


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


@pytest.fixture(scope="module")
def fts_conn() -> apsw.Connection:
    conn = apsw.Connection(":memory:")
    conn.execute(schema.generation_ddl(1))
    n = schema.names(1)
    conn.execute(f"INSERT INTO {n.documents}(id, path) VALUES (1, 'a.md')")
    body = "hello world NEAR AND"
    insert_chunks(
        conn,
        n,
        1,
        [ChunkRow(0, "Sec", body, None, 1, 1, "ab" * 16, "n:" + "cd" * 16, body_key(body))],
    )
    for sql in schema.fts_flush_sql(1):  # the writer does this before each commit
        conn.execute(sql)
    assert conn.execute(f"SELECT count(*) FROM {n.fts}_docsize").get == 1
    return conn


@pytest.mark.slow
@settings(max_examples=500, deadline=None)
@given(st.text(max_size=300))
def test_any_string_is_a_valid_match(fts_conn: apsw.Connection, text: str) -> None:
    expr = match(text)
    if expr:
        f = schema.names(1).fts
        fts_conn.execute(f"SELECT rowid FROM {f} WHERE {f} MATCH ?", (expr,)).fetchall()


def test_fts_syntax_everywhere(fts_conn: apsw.Connection) -> None:
    f = schema.names(1).fts
    nasty = '"" "unbalanced ( ) AND OR NOT NEAR/3 ^ * : {a b} [x] - + col:word \\ \' ` ~'
    expr = match(nasty * 50)
    fts_conn.execute(f"SELECT rowid FROM {f} WHERE {f} MATCH ?", (expr,)).fetchall()


def test_identifiers_also_match_as_phrases() -> None:
    assert match("OTEL_EXPORTER_OTLP_ENDPOINT port") == (
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


# -- bounded cost for any input (issue 17) ---------------------------------------------------


def _items(expression: str) -> list[str]:
    """The quoted items of an expression (terms and phrases)."""
    return [p.rstrip("*") for p in expression.split(" OR ")] if expression else []


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["-", "_", ".", "/", ":", " ", "--"]), st.text(min_size=1)),
        max_size=400,
    )
)
def test_phrase_bonuses_are_capped_with_the_terms(pieces: list[tuple[str, str]]) -> None:
    """Hyphenated pairs, identifiers and anything else: never more than MAX_TERMS terms plus
    MAX_PHRASES phrases of at most MAX_PHRASE_WORDS words."""
    text = "".join(sep + word for sep, word in pieces)
    terms = query_terms(text)
    phrases = query_phrases(text)
    assert len(terms) <= MAX_TERMS
    assert len(phrases) <= MAX_PHRASES
    for phrase in phrases:
        assert len(phrase.split(" ")) <= MAX_PHRASE_WORDS
    assert len(_items(match(text))) <= MAX_TERMS + MAX_PHRASES


def test_hyphenated_pairs_do_not_multiply_phrases() -> None:
    words = [f"w{i}" for i in range(1000)]
    text = " ".join(f"{a}-{b}" for a, b in zip(words[::2], words[1::2], strict=True))
    expression = match(text)
    assert len(_items(expression)) <= MAX_TERMS + MAX_PHRASES
    for phrase in query_phrases(text):
        assert set(phrase.split()) <= set(query_terms(text)) | STOP_WORDS


def test_long_identifier_is_matched_by_its_first_words() -> None:
    text = "_".join(f"part{i}" for i in range(100))
    (phrase,) = query_phrases(text)
    assert phrase == " ".join(f"part{i}" for i in range(MAX_PHRASE_WORDS))


def test_identifier_pattern_is_linear() -> None:
    """The old pattern backtracked once per start position ("x" * 8192 took 2.9 s). The new one
    is anchored at word starts and possessive. Run in a child process (the regex engine holds
    the GIL) under a generous hang guard: the old pattern needs hours on this input."""
    import subprocess
    import sys

    code = (
        "from fisk_ls.knowledge.question import _IDENTIFIER as p\n"
        "t = 'x' * 400_000 + ' a-b ' + 'y_' * 100_000\n"
        "print(sum(1 for _ in p.finditer(t)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.split() == ["2"]


@given(st.text(alphabet="ab_-./: ", max_size=40))
def test_identifier_pattern_matches_as_before(text: str) -> None:
    import re

    old = re.compile(r"[^\W_]+(?:[_\-./:][^\W_]+)+")
    assert [m.span() for m in _IDENTIFIER.finditer(text)] == [m.span() for m in old.finditer(text)]


def test_the_core_cut_is_the_front_ends_limit() -> None:
    from fisk_ls.knowledge.settings_schema import QUERY

    assert QUERY.max_length == MAX_QUERY_CHARS
    assert query_terms("zz " * MAX_QUERY_CHARS + " tail") == ["zz"]


def test_heading_terms_of_definitional_questions() -> None:
    assert heading_terms("what is a span") == ["span"]
    assert heading_terms("what is a connector in the collector") == ["connector"]
    assert heading_terms("What does OTLP stand for?") == ["otlp"]
    assert heading_terms("define resource detectors") == ["resource", "detectors"]
    assert heading_terms("tail sampling") == ["tail", "sampling"]
    assert heading_terms("how do I configure the tail sampling processor in a gateway") == []
    assert heading_terms("什么是 span") == ["span"]  # the Chinese frame (test_question_frames)
    assert heading_terms("如何配置 span") == []


@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=80))
def test_ascii_words_take_the_short_cut_with_the_same_runs(text: str) -> None:
    """The regex pass for ASCII text gives exactly the character loop's runs."""
    assert list(words(text)) == list(unicode_words(text))


HEADING_WORDS = st.sampled_from(
    [
        "Policy",
        "policies",
        "batches",
        "Batch",
        "span",
        "Spans",
        "status",
        "class",
        "what",
        "is",
        "a",
        "the",
        "OTLP",
        "x",
        "processes",
        "analysis",
        "Ies",
        "café",
        "2",
        "won't",
        "Shan't",
        "collector's",
        "l'agent",
    ]
)


@given(st.lists(HEADING_WORDS, max_size=6), st.lists(HEADING_WORDS, max_size=4))
def test_the_cheap_heading_test_never_rules_out_a_match(
    heading: list[str], query: list[str]
) -> None:
    """``may_have_key`` is a pre-check: whenever the heading's key is the query's, it says so."""
    text = " ".join(heading)
    for want in (heading_key(text), heading_key(" ".join(query))):
        if heading_key(text) == want:
            assert may_have_key(text, want)


@pytest.mark.parametrize(
    ("query", "folded"),
    [
        ("what's a span", "what a span"),
        ("the collector\u2019s own metrics", "the collector own metrics"),  # typographic
        ("don't sample health checks", "do sample health checks"),
        ("I can't format it", "I can format it"),
        ("it won't start", "it will start"),
        ("you're using an old SDK", "you using an old SDK"),
        ("comment désactiver l'agent", "comment désactiver agent"),
        ("qu'est-ce qu'un span", "est-ce un span"),
        ("users' passwords", "users' passwords"),  # no clitic after a plural possessive
        ("OTEL_SERVICE_NAME", "OTEL_SERVICE_NAME"),
    ],
)
def test_contractions_possessives_and_elisions_lose_their_clitic(query: str, folded: str) -> None:
    assert fold_clitics(query) == folded


def test_a_contraction_searches_what_its_full_form_does() -> None:
    assert query_terms("what's a span") == query_terms("what is a span") == ["span"]
    assert query_phrases("what's a span") == query_phrases("what is a span")
    assert heading_terms("what's a span") == ["span"]
    assert query_terms("how do I set the service's name") == ["set", "service", "name"]
    assert query_terms("why doesn't my exporter retry") == ["exporter", "retry"]
    assert heading_key("What's new") == heading_key("what is new") == ("new",)


@given(
    st.lists(
        st.sampled_from(["what", "span", "collector", "it", "don", "can", "l", "qu", "user"]),
        min_size=1,
        max_size=6,
    ),
    st.lists(
        st.sampled_from(["'s", "n't", "'re", "'ll", "'ve", "'d", "'m", "\u2019s", "'"]), max_size=6
    ),
)
def test_no_clitic_is_ever_a_search_term(stems: list[str], clitics: list[str]) -> None:
    words = [w + (clitics[i] if i < len(clitics) else "") for i, w in enumerate(stems)]
    terms = query_terms(" ".join(words))
    assert not {"s", "t", "re", "ll", "ve", "d", "m"} & set(terms)
