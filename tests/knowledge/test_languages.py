"""Translated copies of a doc site: the query's language, and its copy first."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fisk_ls.knowledge import Knowledge, SearchRequest, index_project, languages, resolve_settings
from fisk_ls.knowledge.languages import (
    NEAR_TIE,
    OTHER_LANGUAGE,
    environment_language,
    language_of_path_segment,
    locale_language,
    prefer_query_language,
    query_language,
)
from tests.support.translated_site import ENGLISH, IDENTIFIER, PORTUGUESE, write_site


@pytest.mark.parametrize(
    ("query", "lang"),
    [
        ("what is a span", "en"),
        ("how do I configure tail sampling", "en"),
        ("¿cuándo conviene registrar algo como evento en vez de como atributo?", "es"),
        ("como configurar o exportador para o coletor", "pt"),
        ("comment configurer le collecteur", "fr"),
        ("Tracer Provider 是什么", "zh"),
        ("サンプリングとは", "ja"),
        ("샘플링이란 무엇입니까", "ko"),
        ("OTEL_EXPORTER_OTLP_ENDPOINT", None),  # an identifier: any language's page
        ("zPages", None),
        ("Views métricas", None),
        ("", None),
        ("12345 !!", None),
    ],
)
def test_query_language(query: str, lang: str | None) -> None:
    assert query_language(query) == lang


def test_language_folders() -> None:
    assert language_of_path_segment("ja") == "ja"
    assert language_of_path_segment("pt-BR") == "pt"
    assert language_of_path_segment("zh_CN") == "zh"
    for topic in ("docs", "go", "js", "api", "xx", "english"):
        assert language_of_path_segment(topic) is None


PATHS = {
    1: "content/pt/docs/exporter.md",
    2: "content/en/docs/exporter.md",
    3: "content/ja/docs/exporter.md",
    4: "blog/post.md",
}


def test_the_copy_in_the_query_language_comes_first() -> None:
    fused = [(1, 1.0), (2, 0.95), (3, 0.9), (4, 0.6)]
    out = prefer_query_language(fused, PATHS, "how do I configure the exporter endpoint")
    assert [cid for cid, _ in out] == [2, 4, 1, 3]
    assert dict(out)[1] == pytest.approx(1.0 * OTHER_LANGUAGE)
    pt = prefer_query_language(fused, PATHS, "como configurar o endpoint do exportador")
    assert pt[0][0] == 1


def test_no_preference_without_translations_or_a_known_language() -> None:
    fused = [(1, 1.0), (2, 0.95), (3, 0.9)]
    assert prefer_query_language(fused, PATHS, "OTEL_EXPORTER_OTLP_ENDPOINT") == fused
    topics = {1: "docs/ml/intro.md", 2: "docs/ts/intro.md", 3: "docs/guide.md"}
    # "ml" and "ts" are language codes, but no candidate is in the query's language there.
    assert prefer_query_language(fused, topics, "how do I train a model") == fused
    english_only = {1: "content/en/a.md", 2: "content/en/b.md", 3: "c.md"}
    assert prefer_query_language(fused, english_only, "what is a span") == fused


def test_a_query_in_no_language_breaks_near_ties_for_the_most_common_language() -> None:
    paths = {
        1: "content/pt/docs/exporter.md",
        2: "content/en/docs/exporter.md",
        3: "content/en/docs/sdk.md",
        4: "content/ja/docs/exporter.md",
    }
    near = [(1, 1.0), (2, 0.97), (4, 0.9), (3, 0.5)]  # English: 2 of the 4 candidates
    out = prefer_query_language(near, paths, "OTEL_EXPORTER_OTLP_ENDPOINT")
    assert [cid for cid, _ in out] == [2, 1, 4, 3]
    assert dict(out)[1] == pytest.approx(NEAR_TIE)
    clear = [(1, 1.0), (2, 0.9), (4, 0.8), (3, 0.5)]  # the Portuguese copy is well ahead
    assert [c for c, _ in prefer_query_language(clear, paths, "OTEL_EXPORTER_OTLP_ENDPOINT")] == [
        1,
        2,
        4,
        3,
    ]
    tied_votes = {1: paths[1], 2: paths[2], 4: paths[4]}  # one copy each: no language leads
    assert prefer_query_language(near[:3], tied_votes, "OTEL_EXPORTER_OTLP_ENDPOINT") == near[:3]


@pytest.mark.parametrize(
    ("tag", "lang"),
    [
        ("ja_JP.UTF-8", "ja"),
        ("pt_BR.utf8", "pt"),
        ("de_DE@euro", "de"),
        ("zh-cn", "zh"),
        ("en", "en"),
        ("en-US", "en"),
        (" fr_CA ", "fr"),
        ("C", None),
        ("C.UTF-8", None),
        ("POSIX", None),
        ("", None),
        (None, None),
        ("tlh", None),
        ("english", None),
    ],
)
def test_locale_language(tag: str | None, lang: str | None) -> None:
    assert locale_language(tag) == lang


def test_environment_language_follows_posix_precedence() -> None:
    assert environment_language({"LANG": "ja_JP.UTF-8"}) == "ja"
    assert environment_language({"LANG": "ja_JP.UTF-8", "LC_MESSAGES": "de_DE.UTF-8"}) == "de"
    assert environment_language({"LANG": "ja_JP.UTF-8", "LC_ALL": "C"}) is None
    assert environment_language({"LANG": "ja_JP.UTF-8", "LC_ALL": ""}) == "ja"
    assert environment_language({}) is None


def test_a_query_in_no_language_takes_the_readers() -> None:
    paths = {
        1: "content/pt/docs/exporter.md",
        2: "content/en/docs/exporter.md",
        3: "content/en/docs/sdk.md",
        4: "content/ja/docs/exporter.md",
    }
    fused = [(1, 1.0), (2, 0.9), (4, 0.8), (3, 0.5)]
    ja = prefer_query_language(fused, paths, "OTEL_EXPORTER_OTLP_ENDPOINT", reader="ja")
    assert [c for c, _ in ja] == [4, 1, 2, 3]
    assert dict(ja)[1] == pytest.approx(OTHER_LANGUAGE)  # as for a query written in Japanese
    en = prefer_query_language(fused, paths, "OTEL_EXPORTER_OTLP_ENDPOINT", reader="en")
    assert [c for c, _ in en] == [2, 1, 3, 4]  # the Portuguese copy x0.5, not x0.95
    # The query's own words outrank the reader's language.
    pt = prefer_query_language(fused, paths, "como configurar o endpoint", reader="ja")
    assert pt[0][0] == 1
    # A reader in a language the candidates lack gets the site's main language, firmly
    # (not the near-tie rule: the best-scored copy would win whatever its language).
    ko = prefer_query_language(fused, paths, "OTEL_X", reader="ko")
    assert ko == prefer_query_language(fused, paths, "OTEL_X", reader="en")


folders = st.sampled_from(["content/en", "content/pt", "content/ja", "docs", "i18n/fr", "ml"])


@given(
    st.lists(st.tuples(folders, st.floats(0.0, 1.0)), min_size=1, max_size=15),
    st.sampled_from(["what is a span", "o que é um span", "スパンとは", "X_Y"]),
    st.sampled_from([None, "en", "ja", "fr", "ko"]),
)
def test_preference_only_lowers_scores_and_keeps_every_candidate(
    rows: list[tuple[str, float]], query: str, reader: str | None
) -> None:
    fused = sorted(((i, s) for i, (_, s) in enumerate(rows)), key=lambda x: (-x[1], x[0]))
    paths = {i: f"{folder}/page{i}.md" for i, (folder, _) in enumerate(rows)}
    out = prefer_query_language(fused, paths, query, reader)
    assert sorted(c for c, _ in out) == sorted(c for c, _ in fused)
    before = dict(fused)
    assert all(s <= before[c] for c, s in out)
    assert out == sorted(out, key=lambda x: (-x[1], x[0]))


def test_search_answers_an_english_question_from_the_english_copy(
    tmp_path: Path, store_base: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write_site(tmp_path / "site")
    settings = resolve_settings(cwd=root, store_base=store_base, discover=False)
    index_project(settings)
    k = Knowledge(settings)
    try:
        english = k.search(
            SearchRequest("how do I configure the OTLP exporter endpoint", top_k=5)
        ).hits
        assert english[0].path == "content/en/docs/exporter.md"
        portuguese = k.search(
            SearchRequest("como configurar o endpoint do exporter OTLP", top_k=5)
        ).hits
        assert portuguese[0].path == "content/pt/docs/exporter.md"
        # An identifier says nothing of its asker: the Portuguese copy scores a little higher
        # (shorter), and the copy in the language most candidates are in wins the near-tie.
        monkeypatch.setattr(languages, "NEAR_TIE", 1.0)
        bare = [
            h.path for h in k.search(SearchRequest("OTEL_EXPORTER_OTLP_ENDPOINT", top_k=5)).hits
        ]
        assert bare[:2] == ["content/pt/docs/exporter.md", "content/en/docs/exporter.md"]
        monkeypatch.undo()
        bare = [
            h.path for h in k.search(SearchRequest("OTEL_EXPORTER_OTLP_ENDPOINT", top_k=5)).hits
        ]
        assert bare[:2] == ["content/en/docs/exporter.md", "content/pt/docs/exporter.md"]
        # Asked from a Portuguese desktop (a locale tag, as LANG or an editor gives it), the
        # identifier is the reader's Portuguese: its page first, the English ones at half.
        pt = k.search(SearchRequest("OTEL_EXPORTER_OTLP_ENDPOINT", 5, "pt_BR.UTF-8")).hits
        assert pt[0].path == "content/pt/docs/exporter.md"
        assert pt[1].path == "content/en/docs/exporter.md"
        assert pt[1].score <= OTHER_LANGUAGE * pt[0].score + 1e-4  # x0.5, not the near-tie's
        assert (
            k.search(SearchRequest("OTEL_EXPORTER_OTLP_ENDPOINT", 5, "C.UTF-8")).hits
            == k.search(SearchRequest("OTEL_EXPORTER_OTLP_ENDPOINT", 5)).hits
        )
        # The question's own language still wins over the reader's.
        en = k.search(
            SearchRequest("how do I configure the OTLP exporter endpoint", 5, "pt_BR")
        ).hits
        assert en[0].path == "content/en/docs/exporter.md"
    finally:
        k.close()


def test_a_reader_whose_language_has_no_copy_gets_the_sites_main_language() -> None:
    """A Chinese reader on a site translated into Portuguese only: the English copy (the
    language most candidates are in) comes first, even when the Portuguese copy scores far
    above it, not whichever copy scores highest."""
    paths = {
        1: "content/pt/docs/exporter.md",
        2: "content/en/docs/exporter.md",
        3: "content/en/docs/sdk.md",
        4: "content/en/docs/other.md",
    }
    fused = [(1, 1.0), (2, 0.7), (3, 0.5), (4, 0.2)]
    ranked = prefer_query_language(fused, paths, "OTEL_EXPORTER_OTLP_ENDPOINT", reader="zh")
    assert ranked[0][0] == 2
    # with no reader known, only a near-tie moves: the Portuguese copy stays first here
    assert prefer_query_language(fused, paths, "OTEL_EXPORTER_OTLP_ENDPOINT")[0][0] == 1
    # a reader whose language has a copy gets it
    assert (
        prefer_query_language(fused, paths, "OTEL_EXPORTER_OTLP_ENDPOINT", reader="pt")[0][0] == 1
    )


def test_a_page_with_no_copy_in_the_readers_language_shows_the_main_language_first() -> None:
    """The site has Chinese copies of other pages, not of this one: the Chinese reader gets
    its English copy first (OpenTelemetry's OTLP exporter page from a zh_CN desktop)."""
    paths = {
        1: "content/pt/docs/exporter.md",
        2: "content/en/docs/exporter.md",
        3: "content/ja/docs/exporter.md",
        4: "content/zh/docs/intro.md",
        5: "content/en/docs/intro.md",
        6: "content/en/docs/sdk.md",
    }
    fused = [(1, 1.0), (2, 0.8), (3, 0.7), (4, 0.3), (5, 0.2), (6, 0.1)]
    ranked = [c for c, _ in prefer_query_language(fused, paths, "OTEL_X", reader="zh")]
    assert ranked.index(2) < ranked.index(1) and ranked.index(2) < ranked.index(3)
    assert ranked.index(4) < ranked.index(5)  # where a Chinese copy exists, it comes first


def test_a_search_without_a_reader_language_takes_the_locales(
    tmp_path: Path, store_base: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The core's one default: no reader language given means the process's locale (the CLI
    and the agent tool pass none; the language server passes the editor's, if any)."""
    settings = resolve_settings(cwd=write_site(tmp_path / "site"), store_base=store_base)
    index_project(settings)
    k = Knowledge(settings)
    try:
        given = k.search(SearchRequest(IDENTIFIER, 5, "pt_BR.UTF-8")).hits
        monkeypatch.setenv("LANG", "pt_BR.UTF-8")
        assert k.search(SearchRequest(IDENTIFIER, 5)).hits == given
        assert given[0].path.startswith(PORTUGUESE)
        monkeypatch.setenv("LC_ALL", "C")  # says nothing: as no reader language
        assert (
            k.search(SearchRequest(IDENTIFIER, 5)).hits
            == k.search(SearchRequest(IDENTIFIER, 5, "C")).hits
        )
        # An editor's display language wins over the locale.
        assert k.search(SearchRequest(IDENTIFIER, 5, "en-US")).hits[0].path.startswith(ENGLISH)
    finally:
        k.close()


def _query_language_by_definition(text: str) -> str | None:
    """query_language as first written: every character's script counted, and each
    language's function words counted apart."""
    kana = hangul = han = latin = 0
    for ch in text:
        o = ord(ch)
        if 0x3040 <= o <= 0x30FF or 0x31F0 <= o <= 0x31FF:
            kana += 1
        elif 0xAC00 <= o <= 0xD7AF or 0x1100 <= o <= 0x11FF:
            hangul += 1
        elif 0x4E00 <= o <= 0x9FFF or 0x3400 <= o <= 0x4DBF:
            han += 1
        elif (ch.isascii() and ch.isalpha()) or 0xC0 <= o <= 0x24F:
            latin += 1
    if kana:
        return "ja"
    if hangul:
        return "ko"
    if han:
        return "zh"
    if not latin:
        return None
    words = [w.casefold() for w in languages._WORD.findall(text)]
    counts = {lang: sum(w in fw for w in words) for lang, fw in languages._FUNCTION_WORDS.items()}
    best = max(counts.values())
    if best == 0:
        return None
    leaders = [lang for lang, n in counts.items() if n == best]
    if "en" in leaders:
        return "en"
    return leaders[0] if len(leaders) == 1 else None


_FUNCTION_WORD = st.sampled_from(
    sorted({w for fw in languages._FUNCTION_WORDS.values() for w in fw} | {"THE", "Què", "É"})
)


@given(
    st.lists(
        _FUNCTION_WORD
        | st.sampled_from([" ", "?", "'", "span", "42", "か", "한", "中", "À"])
        | st.text(max_size=3),
        max_size=12,
    )
)
def test_query_language_counts_as_its_definition(parts: list[str]) -> None:
    text = " ".join(parts)
    assert query_language(text) == _query_language_by_definition(text)
