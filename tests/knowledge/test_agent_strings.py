"""A caller's extra search strings (``also``): searched beside the query, fused into one
ranking, each hit naming the strings that found it; a search without them is unchanged."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fisk_ls.knowledge import Knowledge, SearchRequest, check_request, resolve_settings
from fisk_ls.knowledge.config import EmbeddingsConfig
from fisk_ls.knowledge.fusion import fuse, fuse_strings
from fisk_ls.knowledge.settings_checks import SettingError, check_also
from tests.support.agent_strings import ALSO, KEYWORDS, QUESTION, write_site
from tests.support.fake_embed_server import FakeEmbedServer
from tests.support.hybrid import index_project, reader


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return write_site(tmp_path / "site")


@pytest.fixture
def kb(root: Path, store_base: Path) -> Iterator[Knowledge]:
    s = resolve_settings(cwd=root, store_base=store_base, discover=False)
    index_project(s)
    k = reader(s)
    yield k
    k.close()


def hybrid(root: Path, store_base: Path, server: FakeEmbedServer) -> Knowledge:
    cfg = EmbeddingsConfig(
        base_url=server.base_url, model="fake-embed", timeout=5.0, query_timeout=0.5
    )
    s = resolve_settings(cwd=root, store_base=store_base / "hybrid", discover=False)
    h = s.with_overrides(embeddings=cfg)
    index_project(h)
    return reader(h)


def test_an_agent_string_finds_what_the_question_s_words_miss(kb: Knowledge) -> None:
    plain = kb.search(SearchRequest(QUESTION, 3))
    assert plain.hits and plain.hits[0].path == "docs/display.md"
    assert all(h.found_by == ("query",) for h in plain.hits)
    helped = kb.search(SearchRequest(QUESTION, 3, also=ALSO))
    assert helped.hits[0].path == "docs/naming.md"
    assert "also[0]" in helped.hits[0].found_by
    assert "also[0].lexical" in helped.hits[0].retrievers
    # highlights come from the strings that found the hit: here the keywords' words
    match = helped.hits[0].match
    assert match is not None and match.highlights
    marked = {match.snippet[a:b].lower() for a, b in match.highlights}
    assert marked & {"otel_service_name", "service", "name", "resource", "attribute"}
    only_query = next(h for h in helped.hits if h.path == "docs/display.md")
    assert only_query.found_by == ("query",) and set(only_query.retrievers) == {"lexical"}


def test_no_also_ranks_exactly_as_the_query_alone(kb: Knowledge) -> None:
    for q in (QUESTION, "sampling", "OTEL_SERVICE_NAME", "   "):
        a, b = kb.search(SearchRequest(q, 5)), kb.search(SearchRequest(q, 5, also=[]))
        assert a == b
        assert kb.search(SearchRequest(q, 5, also=["", "  "])) == a  # blank strings find nothing


def test_limits_name_the_contract() -> None:
    assert check_also(None) == ()
    assert check_also(["a", "b", "c", "d"]) == ("a", "b", "c", "d")
    with pytest.raises(SettingError, match="at most 4 strings, got 5"):
        check_also(["x"] * 5)
    with pytest.raises(SettingError, match=r"also\[1\]: .*at most 2,000 characters"):
        check_also(["ok", "x" * 2001])
    with pytest.raises(SettingError, match="expected a list of at most 4 strings"):
        check_also("one string")
    with pytest.raises(SettingError, match="expected a list"):
        check_also([1, 2])


def test_the_core_refuses_too_many_strings() -> None:
    with pytest.raises(SettingError, match="also: at most 4"):
        check_request({"query": QUESTION, "also": ["a"] * 5})


def test_every_string_is_embedded_in_one_request(
    root: Path, store_base: Path, fake_embed: FakeEmbedServer
) -> None:
    k = hybrid(root, store_base, fake_embed)
    try:
        fake_embed.reset_stats()
        result = k.search(
            SearchRequest(QUESTION, 3, also=[KEYWORDS, "Set OTEL_SERVICE_NAME.", "rename app"])
        )
        stats = fake_embed.stats()
        assert stats["requests"] == 1, stats
        assert result.hits and not result.degraded
        assert any(key.endswith("vector") for h in result.hits for key in h.retrievers)
        fake_embed.reset_stats()
        k.search(SearchRequest(QUESTION, 3))  # the query alone: one request of one input, as before
        assert fake_embed.stats()["requests"] == 1
    finally:
        k.close()


def test_a_failed_embedding_degrades_every_string_to_lexical(
    root: Path, store_base: Path, fake_embed: FakeEmbedServer
) -> None:
    k = hybrid(root, store_base, fake_embed)
    try:
        fake_embed.set_mode("status", status=500)
        result = k.search(SearchRequest(QUESTION, 3, also=ALSO))
        assert result.degraded and result.hits[0].path == "docs/naming.md"
    finally:
        k.close()


lists = st.lists(
    st.tuples(st.integers(1, 30), st.floats(-20, -0.1)), max_size=8, unique_by=lambda t: t[0]
).map(lambda xs: sorted(xs, key=lambda t: (t[1], t[0])))
vectors = st.lists(
    st.tuples(st.integers(1, 30), st.floats(0.0, 1.0)), max_size=8, unique_by=lambda t: t[0]
).map(lambda xs: sorted(xs, key=lambda t: (-t[1], t[0])))


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(arms=st.lists(st.tuples(lists, vectors), min_size=1, max_size=5))
def test_fusion_keeps_every_candidate_and_says_who_found_it(
    arms: list[tuple[list[tuple[int, float]], list[tuple[int, float]]]],
) -> None:
    fused, ranks, found = fuse_strings(arms)
    ids = [cid for cid, _ in fused]
    assert len(ids) == len(set(ids))
    expected = {cid for lexical, vector in arms for cid, _ in (*lexical, *vector)}
    assert set(ids) == expected == set(found)
    for cid in ids:
        names = found[cid]
        assert names and len(names) == len(set(names))
        for i, (lexical, vector) in enumerate(arms):
            name = "query" if i == 0 else f"also[{i - 1}]"
            assert (name in names) == any(c == cid for c, _ in (*lexical, *vector))
        assert all(0.0 <= s <= 1.0 + 1e-9 for _, s in fused)
    if len(arms) == 1:
        assert fused == fuse(*arms[0])
    assert [s for _, s in fused] == sorted((s for _, s in fused), reverse=True)
    assert ranks.keys() == set(ids)
