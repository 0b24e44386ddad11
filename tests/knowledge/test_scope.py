"""A search's scope (scope.py): patterns anchored where they are given, applied inside each
retriever before its cut, so a scoped search is the full ranking restricted to the scope."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fisk_ls.knowledge import Knowledge, SearchRequest, Settings, index_project, resolve_settings
from fisk_ls.knowledge.scope import Scope, documents
from fisk_ls.knowledge.settings_checks import SettingError
from tests.support.restricted import scoped_and_restricted, scoped_request

WORDS = ("span", "trace", "metric", "exporter", "sampler", "collector", "baggage", "resource")

FILES = {
    "index.md": "span trace",
    "guide/setup.md": "trace metric exporter",
    "guide/advanced/tuning.md": "sampler span span",
    "guide/advanced/notes.txt": "collector metric",
    "guide/faq.md": "baggage span resource",
    "api/trace.md": "trace trace exporter",
    "api/metrics/counter.md": "metric metric metric",
    "api/metrics/gauge.md": "metric resource sampler",
    "api/logs.txt": "collector exporter span",
    "blog/2024/a.md": "span sampler baggage",
    "blog/2024/b.md": "resource trace",
    "blog/2025/c.md": "exporter collector metric span",
    "content/en/docs/intro.md": "span resource",
    "content/en/docs/deep/more.md": "trace sampler collector",
}
"""One chunk each (no headings), every text distinct: nothing collapses, no language folder."""

PATTERNS = (
    "guide",
    "guide/",
    "guide/advanced",
    "api/**/*.md",
    "**/*.txt",
    "*.md",
    "blog/202?",
    "blog/2024/a.md",
    "content/en",
    "**/docs/**",
    "api/metrics/counter.md",
    "nowhere",
    ".",
)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Knowledge]:
    root = tmp_path_factory.mktemp("scoped")
    for i, (rel, words) in enumerate(FILES.items()):
        path = root / "p" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"Text {words} unique{i}.\n", encoding="utf-8")
    s = resolve_settings(cwd=root / "p", store_base=root / "store", discover=False)
    index_project(s)
    k = Knowledge(s)
    yield k
    k.close()


def test_patterns_are_anchored_where_they_are_given() -> None:
    s = Scope.build(["docs"], base="content/en")
    assert s is not None and s.include == ("/content/en/docs",)
    assert s.contains("content/en/docs/a.md") and s.contains("content/en/docs/x/y.md")
    assert not s.contains("other/content/en/docs/a.md") and not s.contains("content/en/a.md")
    glob = Scope.build(["**/*.md"], base="guide")
    assert glob is not None and glob.contains("guide/a/b.md") and not glob.contains("x/b.md")
    up = Scope.build(["../api"], base="guide")
    assert up is not None and up.include == ("/api",)
    assert Scope.build([], []) is None
    whole = Scope.build(["."], ["*.txt"])
    assert whole is not None and whole.contains("a/b.md") and not whole.contains("c.txt")
    assert whole.contains("a/c.txt")  # "*.txt" is anchored at the root


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("../outside", "outside the project root"),
        ("a/../../x", "outside the project root"),
        ("/etc", "absolute"),
        ("!guide", "exclude"),
    ],
)
def test_patterns_outside_the_root_are_refused(pattern: str, message: str) -> None:
    with pytest.raises(SettingError, match=message):
        Scope.build([pattern])


def _in(scope: Scope | None, path: str) -> bool:
    return scope is None or scope.contains(path)


scopes = st.builds(
    lambda inc, exc: Scope.build(inc, exc),
    st.lists(st.sampled_from(PATTERNS), max_size=3),
    st.lists(st.sampled_from(PATTERNS[:-1]), max_size=2),
)
queries = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(scope=scopes, query=queries, limit=st.integers(1, 8))
def test_the_lexical_arm_is_the_full_ranking_restricted_to_the_scope(
    corpus: Knowledge, scope: Scope | None, query: str, limit: int
) -> None:
    scoped, restricted = scoped_and_restricted(
        corpus, scope, query, limit, lambda path: _in(scope, path)
    )
    assert scoped == restricted


@pytest.mark.slow
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(scope=scopes, query=queries, top_k=st.integers(1, 20))
def test_a_scoped_search_is_the_unscoped_ranking_restricted_to_the_scope(
    corpus: Knowledge, scope: Scope | None, query: str, top_k: int
) -> None:
    full = corpus.search(
        SearchRequest(query, 20)
    )  # the corpus has fewer chunks: every match is here
    scoped = corpus.search(scoped_request(query, top_k, scope))
    assert scoped.status == "ok"
    want = [h.citation for h in full.hits if _in(scope, h.path)][:top_k]
    assert [h.citation for h in scoped.hits] == want


def test_an_empty_scope_answers_no_hits_and_no_error(corpus: Knowledge) -> None:
    result = corpus.search(scoped_request("span", 5, Scope.build(["nowhere"])))
    assert (result.status, result.hits) == ("ok", [])
    everything = Scope.build(["guide"], ["guide"])
    assert corpus.search(scoped_request("span", 5, everything)).hits == []


def test_a_folder_scope_reads_only_its_documents(corpus: Knowledge) -> None:
    scope = Scope.build(["api/metrics", "blog/2025/"])
    assert scope is not None and scope.prefixes() == ("api/metrics", "blog/2025")
    with corpus.store.snapshot() as snap:
        assert snap is not None
        docs = documents(snap, scope)
        assert docs is not None
        names = {
            str(p)
            for (p,) in snap.conn.execute(
                f"SELECT path FROM {snap.tables.documents} WHERE id IN ({','.join(map(str, docs))})"
            )
        }
    assert names == {"api/metrics/counter.md", "api/metrics/gauge.md", "blog/2025/c.md"}


def test_a_folder_named_like_a_glob_is_literal(tmp_path: Path, store_base: Path) -> None:
    for rel in ("[draft]/a.md", "d/b.md"):
        (tmp_path / "p" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "p" / rel).write_text("span here\n", encoding="utf-8")
    s: Settings = resolve_settings(cwd=tmp_path / "p", store_base=store_base, discover=False)
    index_project(s)
    k = Knowledge(s)
    try:
        hits = k.search(scoped_request("span", 5, Scope.build(["*.md"], base="[draft]"))).hits
        assert [h.path for h in hits] == ["[draft]/a.md"]
    finally:
        k.close()
