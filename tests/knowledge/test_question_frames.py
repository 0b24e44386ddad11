"""Questions asked in other languages than English: their function words and their what-is
frames are no search terms ("¿qué es un span?" searches for "span"), and a what-is question
reaches the section headed by its term, in Latin script as in Japanese and Chinese."""

from __future__ import annotations

import re
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from fisk_ls.knowledge import Knowledge, SearchRequest, index_project, question, resolve_settings
from fisk_ls.knowledge.fts import STOP_WORDS, has_cjk, heading_key, stop_words
from fisk_ls.knowledge.languages import language_stop_words, query_language
from tests.support.question import heading_terms, query_phrases, query_terms, question_text


@pytest.mark.parametrize(
    ("query", "terms", "heading"),
    [
        ("¿qué es un span?", ["span"], ["span"]),
        ("¿qué son las convenciones semánticas?", ["convenciones", "semánticas"], None),
        ("qu'est-ce qu'un span ?", ["span"], ["span"]),
        ("qu'est-ce que l'observabilité ?", ["observabilité"], ["observabilité"]),
        ("c'est quoi un exporteur", ["exporteur"], ["exporteur"]),
        ("o que é um log record", ["log", "record"], ["log", "record"]),
        ("o que é um pipeline no collector", ["pipeline", "collector"], ["pipeline"]),
        ("was ist ein Span", ["span"], ["span"]),
        ("cos'è uno span", ["span"], ["span"]),
        # long in English stop words, short in its own language's
        (
            "¿qué es la propagación de contexto en el SDK de Java?",
            ["propagación", "contexto", "sdk", "java"],
            ["propagación", "contexto"],
        ),
        # the English frames, as before
        ("what is a span", ["span"], ["span"]),
        ("what is a connector in the collector", ["connector", "collector"], ["connector"]),
        ("What does OTLP stand for?", ["otlp"], ["otlp"]),
    ],
)
def test_a_latin_script_what_is_question_searches_for_its_term(
    query: str, terms: list[str], heading: list[str] | None
) -> None:
    assert query_terms(query) == terms
    assert heading_terms(query) == (terms if heading is None else heading)


@pytest.mark.parametrize(
    ("query", "term"),
    [
        ("スパンとは", "スパン"),
        ("プロデューサースパンとは何ですか", "プロデューサースパン"),
        ("バゲッジって何？", "バゲッジ"),
        ("スパンは何ですか", "スパン"),
        ("什么是 Span", "Span"),
        ("什么是实体", "实体"),
        ("什么叫实体？", "实体"),
        ("Tracer Provider 是什么", "Tracer Provider"),
        ("实体是什么意思？", "实体"),
    ],
)
def test_a_cjk_what_is_question_loses_its_frame(query: str, term: str) -> None:
    """CJK text has no stop words: the frame's bigrams ("とは", "什么") were search terms, and
    they match every "什么是 X" heading of a Chinese site."""
    assert question_text(query) == term
    assert query_terms(query) == query_terms(term)
    assert heading_terms(query) == [w.casefold() for w in term.split()]


@pytest.mark.parametrize(
    "query",
    [
        "バゲッジは属性とは異なる",  # "とは" inside a statement
        "Javaエージェントを使って",  # "って" without "何"
        "如何在 Collector 中配置 mTLS",  # a how-to question
        "什么情况下会丢数据" * 3,  # a long question that starts like one
        "尾部采样",
    ],
)
def test_other_cjk_queries_keep_every_bigram(query: str) -> None:
    assert question_text(query) == query
    assert heading_terms(query) == []


def test_only_the_query_language_adds_stop_words() -> None:
    assert stop_words("what is a span") is STOP_WORDS
    assert stop_words("OTEL_EXPORTER_OTLP_ENDPOINT") is STOP_WORDS
    assert stop_words("スパンとは") is STOP_WORDS
    assert {"qué", "es", "un"} <= stop_words("¿qué es un span?")
    assert "son" in stop_words("¿qué son las convenciones?")
    # An English question keeps words that are function words elsewhere.
    assert query_terms("tell me about the son of a process") == ["son", "process"]
    assert query_terms("die in the collector") == ["die", "collector"]
    assert language_stop_words("en") == language_stop_words(None) == frozenset()


def test_headings_drop_the_query_languages_stop_words() -> None:
    stop = stop_words("qu'est-ce que l'observabilité ?")
    assert heading_key("Qu'est-ce que l'observabilité ?", stop) == ("observabilité",)
    assert heading_key("Qu'est-ce que l'observabilité ?") != ("observabilité",)


def test_a_frame_made_of_stop_words_is_no_identifier_phrase() -> None:
    """ "est-ce" has the shape of a hyphenated identifier, whose phrase earns a bonus."""
    assert query_phrases("qu'est-ce qu'un span ?") == []
    assert query_phrases("how-to guide") == []
    assert query_phrases("OTEL_EXPORTER_OTLP_ENDPOINT") == ["otel exporter otlp endpoint"]


def test_language_detection_reads_words_across_apostrophes() -> None:
    assert query_language("qu'est-ce qu'un span ?") == "fr"
    assert query_language("cos'è uno span") == "it"
    assert query_language("what's a span") == "en"


LATIN_FRAMES = [
    "¿qué es un {}?",
    "qu'est-ce qu'un {} ?",
    "o que é um {}",
    "was ist ein {}",
    "what is a {}",
]
FUNCTION_WORDS = set().union(
    STOP_WORDS, *(language_stop_words(lang) for lang in ("es", "fr", "pt", "de", "it"))
)
TERM = st.text(alphabet="abcdefghijklmnopqrstuvwxyzé", min_size=2, max_size=12)


@given(st.sampled_from(LATIN_FRAMES), TERM)
def test_no_frame_word_is_ever_a_search_term(frame: str, term: str) -> None:
    assume(term not in FUNCTION_WORDS)
    query = frame.format(term)
    assert query_terms(query) == [term]
    assert heading_terms(query) == [term]


KANA = st.text(
    alphabet="アイウエオカキクケコサシスセソタチツテトナニヌネノンーと", min_size=1, max_size=16
)
HAN = st.text(alphabet="实体采样追踪指标日志链接配置处理器导出", min_size=1, max_size=16)


@given(KANA, st.sampled_from(["{}とは", "{}とは何ですか", "{}って何"]))
def test_a_japanese_frame_never_leaves_a_bigram(term: str, frame: str) -> None:
    assert query_terms(frame.format(term)) == query_terms(term)


@given(HAN, st.sampled_from(["什么是{}", "{}是什么", "什么是 {}？"]))
def test_a_chinese_frame_never_leaves_a_bigram(term: str, frame: str) -> None:
    assert query_terms(frame.format(term)) == query_terms(term)


def test_no_other_first_character_matches_a_frames_first_letter() -> None:
    """A query tries the what-is frames only when its first character (after white space,
    lower-cased) is one of ``DEFINITION_STARTS``; as the frames are compiled (ignoring case,
    after ``\\s*``), no other character can stand first in one."""
    starts = f"[{question.DEFINITION_STARTS}]"
    for code in range(sys.maxunicode + 1):
        if re.fullmatch(starts, chr(code), re.IGNORECASE):
            assert chr(code).lower() in question.DEFINITION_STARTS, hex(code)
        assert (re.fullmatch(r"\s", chr(code)) is not None) == chr(code).isspace(), hex(code)


def every_frame(text: str) -> re.Match[str] | None:
    """The what-is match as it was before the first-character check."""
    stop = stop_words(text)
    if has_cjk(text) or question.is_long(text, stop):
        return None
    frames = (re.compile(p, re.IGNORECASE) for p in question._DEFINITIONS)
    return next((m for m in (f.match(text) for f in frames) if m is not None), None)


FRAME_QUESTIONS = ["what is a {}", "Who was {}?", "what does {} stand for", "define {}"]
FRAME_QUESTIONS += ["Definition of {}", "meaning of the {}", "¿qué es un {}?", "cuál es el {}"]
FRAME_QUESTIONS += ["o que é um {}", "que são os {}", "qu'est-ce qu'un {} ?", "c’est quoi un {}"]
FRAME_QUESTIONS += ["was ist ein {}", "cos'è uno {}", "che cosa sono le {}", "{} is what"]
NOISE = st.text(alphabet="abcdoqwWÉéİıſKk\u212a ¿?'’\t\n-", max_size=24)


@given(
    st.sampled_from(["", " ", "\u3000", "\t\n"]),
    st.sampled_from(FRAME_QUESTIONS) | NOISE.map(lambda noise: noise + "{}"),
    st.sampled_from([str, str.upper, str.swapcase]),
    TERM,
)
def test_the_first_character_check_skips_no_frame(
    lead: str, question_form: str, case: Callable[[str], str], term: str
) -> None:
    text = lead + case(question_form).replace("{}", term)
    found, expected = question._definition(text, stop_words(text)), every_frame(text)
    assert (found and found.groupdict()) == (expected and expected.groupdict())


PAGES = {
    # Each language's page opens with a section headed by the what-is question of the site's
    # name, as doc sites do: its heading holds the frame's words.
    "{lang}/docs/what-is-opentelemetry.md": """\
        # {what}

        {filler}

        ## {what_obs}

        {filler}
        """,
    "{lang}/docs/concepts/traces.md": """\
        # {traces}

        {filler}

        ## Tracer Provider

        {filler}

        ## {spans}

        {span_def} {filler}

        ## {status}

        {status_text} {filler}
        """,
}
LANGS = {
    "es": {
        "what": "¿Qué es OpenTelemetry?",
        "what_obs": "¿Qué es la observabilidad?",
        "traces": "Trazas",
        "spans": "Spans",
        "span_def": "Un span representa una unidad de trabajo u operación.",
        "status": "Estado del span",
        "status_text": "El estado de un span es Unset, Error u Ok. Un span con error es un span.",
        "filler": "OpenTelemetry es un framework de observabilidad para trazas, métricas y logs.",
    },
    "fr": {
        "what": "Qu'est-ce qu'OpenTelemetry ?",
        "what_obs": "Qu'est-ce que l'observabilité ?",
        "traces": "Traces",
        "spans": "Spans",
        "span_def": "Un span représente une unité de travail ou une opération.",
        "status": "Statut de span",
        "status_text": "Le statut d'un span est Unset, Error ou Ok.",
        "filler": "OpenTelemetry est un framework d'observabilité pour les traces et les métriques.",
    },
    "ja": {
        "what": "OpenTelemetryとは？",
        "what_obs": "オブザーバビリティとは？",
        "traces": "トレース",
        "spans": "スパン",
        "span_def": "スパンは作業または操作の単位を表します。",
        "status": "スパンステータス",
        "status_text": "スパンのステータスは Unset、Error、Ok のいずれかです。スパンとスパンの関係。",
        "filler": "OpenTelemetryはトレース、メトリクス、ログのためのオブザーバビリティフレームワークです。",
    },
    "zh": {
        "what": "什么是 OpenTelemetry？",
        "what_obs": "什么是可观测性？",
        "traces": "链路",
        "spans": "Span",
        "span_def": "Span 代表一个工作或操作单元。",
        "status": "Span 状态",
        "status_text": "Span 状态是 Unset、Error 或 Ok。什么是错误的 Span 状态？",
        "filler": "OpenTelemetry 是一个可观测性框架，用于链路、指标和日志。什么是遥测？",
    },
}


@pytest.fixture(scope="module")
def knowledge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Knowledge]:
    root = tmp_path_factory.mktemp("frames")
    for lang, words in LANGS.items():
        long = {**words, "filler": " ".join([words["filler"]] * 8)}  # one chunk per section
        for rel, text in PAGES.items():
            path = root / rel.format(lang=lang)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(text.format(**long)), encoding="utf-8")
    settings = resolve_settings(
        cwd=root, store_base=Path(tmp_path_factory.mktemp("frames-store")), discover=False
    )
    index_project(settings)
    k = Knowledge(settings)
    yield k
    k.close()


@pytest.mark.parametrize(
    ("query", "lang"),
    [
        ("¿qué es un span?", "es"),
        ("qu'est-ce qu'un span ?", "fr"),
        ("スパンとは", "ja"),
        ("什么是 Span", "zh"),
    ],
)
def test_a_what_is_question_reaches_the_section_headed_by_its_term(
    knowledge: Knowledge, query: str, lang: str
) -> None:
    top = knowledge.search(SearchRequest(query, top_k=3)).hits[0]
    assert top.path == f"{lang}/docs/concepts/traces.md"
    assert top.section.endswith(LANGS[lang]["spans"])
    assert LANGS[lang]["span_def"] in top.text
