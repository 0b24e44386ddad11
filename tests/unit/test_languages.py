"""Translated copies of a doc site: the query's language, and its copy first."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fisk_ls.knowledge import Knowledge, index, languages, resolve_settings
from fisk_ls.knowledge.languages import (
    NEAR_TIE,
    OTHER_LANGUAGE,
    language_of_path_segment,
    prefer_query_language,
    query_language,
)


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


folders = st.sampled_from(["content/en", "content/pt", "content/ja", "docs", "i18n/fr", "ml"])


@given(
    st.lists(st.tuples(folders, st.floats(0.0, 1.0)), min_size=1, max_size=15),
    st.sampled_from(["what is a span", "o que é um span", "スパンとは", "X_Y"]),
)
def test_preference_only_lowers_scores_and_keeps_every_candidate(
    rows: list[tuple[str, float]], query: str
) -> None:
    fused = sorted(((i, s) for i, (_, s) in enumerate(rows)), key=lambda x: (-x[1], x[0]))
    paths = {i: f"{folder}/page{i}.md" for i, (folder, _) in enumerate(rows)}
    out = prefer_query_language(fused, paths, query)
    assert sorted(c for c, _ in out) == sorted(c for c, _ in fused)
    before = dict(fused)
    assert all(s <= before[c] for c, s in out)
    assert out == sorted(out, key=lambda x: (-x[1], x[0]))


def test_search_answers_an_english_question_from_the_english_copy(
    tmp_path: Path, store_base: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "site"
    pages = {
        # The translation is a little shorter, so BM25 alone ranks it first for the English
        # words, and just ahead for the bare identifier.
        "content/en/docs/exporter.md": """\
            # OTLP exporter

            Configure the OTLP exporter endpoint with OTEL_EXPORTER_OTLP_ENDPOINT. The exporter
            sends traces, metrics and logs to the collector over gRPC or HTTP, and retries when
            the collector is unavailable.
            """,
        "content/pt/docs/exporter.md": """\
            # Exportador OTLP

            Configure o endpoint do exporter OTLP com OTEL_EXPORTER_OTLP_ENDPOINT. O exporter
            envia rastros, métricas e logs ao coletor por gRPC ou HTTP.
            """,
        "content/en/docs/other.md": "# Other\n\nNothing about it.\n",
        "content/en/docs/sdk.md": """\
            # SDK configuration

            Every SDK reads its settings from environment variables, such as the service name,
            the propagators, the samplers, the resource attributes and the batch sizes, and
            OTEL_EXPORTER_OTLP_ENDPOINT for the exporter. The exporter page lists them all, with
            their defaults, their types, and how each language reads them at start-up.
            """,
        "content/pt/docs/sdk.md": "# Configuração do SDK\n\nVeja a página do exportador.\n",
    }
    for rel, text in pages.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    settings = resolve_settings(cwd=root, store_base=store_base, discover=False)
    index(settings)
    k = Knowledge(settings)
    try:
        english = k.search("how do I configure the OTLP exporter endpoint", top_k=5).hits
        assert english[0].path == "content/en/docs/exporter.md"
        portuguese = k.search("como configurar o endpoint do exporter OTLP", top_k=5).hits
        assert portuguese[0].path == "content/pt/docs/exporter.md"
        # An identifier says nothing of its asker: the Portuguese copy scores a little higher
        # (shorter), and the copy in the language most candidates are in wins the near-tie.
        monkeypatch.setattr(languages, "NEAR_TIE", 1.0)
        bare = [h.path for h in k.search("OTEL_EXPORTER_OTLP_ENDPOINT", top_k=5).hits]
        assert bare[:2] == ["content/pt/docs/exporter.md", "content/en/docs/exporter.md"]
        monkeypatch.undo()
        bare = [h.path for h in k.search("OTEL_EXPORTER_OTLP_ENDPOINT", top_k=5).hits]
        assert bare[:2] == ["content/en/docs/exporter.md", "content/pt/docs/exporter.md"]
    finally:
        k.close()
