"""Front-matter tags (front_matter.front_matter, schema format 5, scope.documents): read once at index
time, stored per document, and a search's tag filter is a document restriction applied inside
each retriever before its cut, intersected with the paths."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import apsw
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fisk_ls.knowledge import (
    Knowledge,
    SearchRequest,
    Settings,
    index_project,
    remove,
    resolve_settings,
    schema,
)
from fisk_ls.knowledge.errors import IndexOutdated
from fisk_ls.knowledge.index.chunker import chunk_document
from fisk_ls.knowledge.opening import open_writer
from fisk_ls.knowledge.scope import Scope
from fisk_ls.knowledge.settings_checks import SettingError, check_tags
from fisk_ls.knowledge.store_files import db_path
from tests.support.restricted import scoped_and_restricted, scoped_request

WORDS = ("span", "trace", "metric", "exporter", "sampler", "collector")
TAGS = ("api", "guide", "go", "java", "beta")

FILES: dict[str, tuple[tuple[str, ...], str]] = {
    "index.md": ((), "span trace"),
    "guide/setup.md": (("guide",), "trace metric exporter"),
    "guide/go.md": (("guide", "go"), "sampler span span"),
    "guide/java.md": (("guide", "java"), "collector metric"),
    "api/trace.md": (("api",), "trace trace exporter"),
    "api/go.md": (("api", "go", "beta"), "metric metric span"),
    "api/java.md": (("api", "java"), "metric sampler collector"),
    "blog/a.md": (("beta",), "span sampler exporter"),
    "blog/b.md": (("go", "java"), "trace collector span"),
    "notes.txt": ((), "exporter collector metric"),
}
"""One chunk each, every text distinct; the tags in each markdown file's front matter."""


def _page(tags: tuple[str, ...], words: str, i: int) -> str:
    listed = ", ".join(f"'#{t.upper()}'" if j == 0 else t for j, t in enumerate(tags))
    return f"---\ntitle: Page {i}\ntags: [{listed}]\n---\n\nText {words} unique{i}.\n"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Knowledge]:
    root = tmp_path_factory.mktemp("tagged")
    for i, (rel, (tags, words)) in enumerate(FILES.items()):
        path = root / "p" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        text = _page(tags, words, i) if rel.endswith(".md") else f"Text {words} unique{i}.\n"
        path.write_text(text, encoding="utf-8")
    s = resolve_settings(cwd=root / "p", store_base=root / "store", discover=False)
    index_project(s)
    k = Knowledge(s)
    yield k
    k.close()


def test_tags_are_read_from_yaml_and_toml_front_matter() -> None:
    doc = chunk_document("---\ntitle: A\ntags:\n  - Go\n  - '#Beta'\n  - go\n---\nbody\n")
    assert doc.tags == ("go", "beta") and doc.title == "A"
    assert [c.text for c in doc.chunks] == ["body"]  # front matter is not body text
    assert chunk_document("---\ntags: go, java beta\n---\nx\n").tags == ("go", "java", "beta")
    assert chunk_document('+++\ntitle = "T"\ntags = ["Go", "x y"]\n+++\nx\n').tags == ("go", "x y")
    assert chunk_document("---\ntags: [1, true, [x], {a: b}, '']\n---\nx\n").tags == ("1",)
    assert chunk_document("---\ntags: ['" + "x" * 101 + "', ok]\n---\nx\n").tags == ("ok",)
    assert chunk_document("no front matter\n").tags == ()


def test_a_folded_title_is_read_and_front_matter_that_does_not_parse_keeps_its_title() -> None:
    folded = chunk_document("---\ntitle:\n  Announcing the\n  Convergence\n---\n\nText.\n")
    assert folded.title == "Announcing the Convergence"
    broken = chunk_document("---\ntitle: Broken\ntags: [a\n\tb: {{ .x }}\n---\n\nText.\n")
    assert (broken.title, broken.tags, [c.text for c in broken.chunks]) == ("Broken", (), ["Text."])


@pytest.mark.parametrize(
    "front",
    [
        "a: &a [*a, *a]\nb: &b [*a, *a]\nc: &c [*b, *b]\ntags: [*c, *c, ok]",  # aliases fan out
        "tags: " + "[" * 5000 + "]" * 5000,  # deep nesting
        "tags: !!python/object:os.system x",  # not the safe loader's
        "date: 2023-99-99\ntags: [ok]",  # a date that is not one
        "tags: [" + ", ".join(f"t{i}" for i in range(500)) + "]",
    ],
)
def test_hostile_front_matter_is_bounded(front: str) -> None:
    doc = chunk_document(f"---\ntitle: T\n{front}\n---\n\nText.\n")
    assert [c.text for c in doc.chunks] == ["Text."]
    assert len(doc.tags) <= 64 and all(isinstance(t, str) for t in doc.tags)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('+++\ntitle = "T"\ntags = ["go"]\nn = ' + "9" * 5000 + "\n+++\nx\n", "does not parse"),
        ("---\ntitle: T\ntags: [go]\nn: " + "9" * 5000 + "\n---\nx\n", "does not parse"),
        ("---\ntitle: T\ntags: {go: 1}\n---\nx\n", "tags are a mapping"),
        ("---\ntags: [go, [x], {a: b}]\n---\nx\n", "2 that are not text"),
        ("---\ntags: ['" + "x" * 101 + "', ok]\n---\nx\n", "1 over 100 characters"),
        ("---\n- a\n- b\n---\nx\n", "is a list"),
        ("---\ntags: x\n" + f"y: {'z' * 60}\n" * 1500 + "---\nx\n", "over 65,536 characters"),
    ],
    ids=[
        "toml 5000 digits",
        "yaml 5000 digits",
        "tags map",
        "odd items",
        "long tag",
        "list",
        "long",
    ],
)
def test_front_matter_that_cannot_be_read_is_dropped_with_a_note(
    text: str, said: str, tmp_path: Path, store_base: Path
) -> None:
    """TOML front matter with a 5,000-digit number dropped its tags without a word."""
    assert said in chunk_document(text).problem
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "page.md").write_text(text, encoding="utf-8")
    (tmp_path / "docs" / "plain.md").write_text("---\ntags: [go]\n---\nx\n", encoding="utf-8")
    stats = index_project(resolve_settings(cwd=tmp_path / "docs", store_base=store_base))
    assert stats.added == 2  # the page is indexed all the same
    (note,) = stats.notes
    assert note.startswith("page.md: ") and said in note and "\n" not in note and len(note) < 400


@pytest.mark.slow
@given(st.text(max_size=300))
@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
def test_a_front_matter_note_is_one_short_line(front: str) -> None:
    for fence in ("---", "+++"):
        problem = chunk_document(f"{fence}\n{front}\n{fence}\nx\n").problem
        assert "\n" not in problem and len(problem) < 400


def test_the_request_limits_are_the_contract_s() -> None:
    assert check_tags(["#Go", " go ", "", "Java"]) == ("go", "java")
    with pytest.raises(SettingError, match="at most 16 tags"):
        check_tags([f"t{i}" for i in range(17)])
    with pytest.raises(SettingError, match=r"tags\[0\]: expected a tag of at most 100"):
        check_tags(["x" * 101])
    with pytest.raises(SettingError, match="expected a list"):
        check_tags("go")
    assert Scope.build(tags=["", "#"]) is None  # no tag left: no filter


def _tagged(path: str, tags: tuple[str, ...]) -> bool:
    return not tags or bool(set(FILES[path][0]) & set(tags))


def _in(scope: Scope | None, path: str) -> bool:
    return scope is None or (scope.contains(path) and _tagged(path, scope.tags))


scopes = st.builds(
    lambda inc, tags: Scope.build(inc, tags=tags),
    st.lists(st.sampled_from(("guide", "api", "**/*.md", "blog/b.md", "nowhere")), max_size=2),
    st.lists(st.sampled_from((*TAGS, "none")).map(str.upper), max_size=3),
)
queries = st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join)


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(scope=scopes, query=queries, limit=st.integers(1, 6))
def test_the_lexical_arm_is_the_full_ranking_restricted_to_the_tags(
    corpus: Knowledge, scope: Scope | None, query: str, limit: int
) -> None:
    scoped, restricted = scoped_and_restricted(
        corpus, scope, query, limit, lambda path: _in(scope, path)
    )
    assert scoped == restricted


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(scope=scopes, query=queries, top_k=st.integers(1, 20))
def test_a_tagged_search_is_the_unscoped_ranking_restricted_to_the_tags(
    corpus: Knowledge, scope: Scope | None, query: str, top_k: int
) -> None:
    full = corpus.search(SearchRequest(query, 20))  # fewer chunks than 20: every match is here
    scoped = corpus.search(scoped_request(query, top_k, scope))
    assert scoped.status == "ok"
    assert [h.citation for h in scoped.hits] == [
        h.citation for h in full.hits if _in(scope, h.path)
    ][:top_k]


def test_a_tag_no_document_has_answers_no_hits_and_no_error(corpus: Knowledge) -> None:
    result = corpus.search(scoped_request("span", 5, Scope.build(tags=["nothing"])))
    assert (result.status, result.hits) == ("ok", [])


def _project(tmp_path: Path, store_base: Path, files: dict[str, str]) -> Settings:
    for rel, text in files.items():
        (tmp_path / "p" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "p" / rel).write_text(text, encoding="utf-8")
    return resolve_settings(cwd=tmp_path / "p", store_base=store_base, discover=False)


def _tag_paths(k: Knowledge, tag: str) -> list[str]:
    return sorted(
        h.path for h in k.search(scoped_request("span", 20, Scope.build(tags=[tag]))).hits
    )


def test_re_indexing_a_file_replaces_its_tags_and_removing_it_drops_them(
    tmp_path: Path, store_base: Path
) -> None:
    s = _project(tmp_path, store_base, {"a.md": _page(("go",), "span", 1), "b.md": "span\n"})
    index_project(s)
    k = Knowledge(s)
    try:
        assert _tag_paths(k, "go") == ["a.md"]
        (tmp_path / "p" / "a.md").write_text(_page(("java",), "span here", 1), encoding="utf-8")
        index_project(s)
        assert (_tag_paths(k, "go"), _tag_paths(k, "java")) == ([], ["a.md"])
        remove(s, ["a.md"], cwd=tmp_path / "p")
        assert _tag_paths(k, "java") == []
        with k.store.snapshot() as snap:
            assert snap is not None
            assert snap.conn.execute(f"SELECT count(*) FROM {snap.tables.tags}").fetchone() == (0,)
    finally:
        k.close()


def _as_format_4(s: Settings) -> None:
    """The store as format 4 left it: the same layout without the tag table."""
    with open_writer(s.store_dir) as w:
        n = w.manifest.tables
    conn = apsw.Connection(str(db_path(s.store_dir)))
    try:
        with conn:
            conn.execute(f"DROP TABLE {n.tags}")
            conn.execute("UPDATE rag_meta SET value = '4' WHERE key = 'format_version'")
    finally:
        conn.close()


def test_a_format_4_store_answers_until_rebuilt_and_a_tag_filter_says_why_not(
    tmp_path: Path, store_base: Path
) -> None:
    s = _project(tmp_path, store_base, {"a.md": _page(("go",), "span", 1), "b.md": "span\n"})
    index_project(s)
    _as_format_4(s)
    k = Knowledge(s)
    try:
        assert sorted(h.path for h in k.search(SearchRequest("span", 5)).hits) == ["a.md", "b.md"]
        assert [
            h.path for h in k.search(scoped_request("span", 5, Scope.build(["b.md"]))).hits
        ] == ["b.md"]
        with pytest.raises(IndexOutdated, match=r"built before tags.*format 4.*knowledge index"):
            k.search(scoped_request("span", 5, Scope.build(tags=["go"])))
        stats = index_project(s)  # the next writer rebuilds the older layout whole
        assert stats.first_build
        with open_writer(s.store_dir) as w:
            assert w.manifest.format_version == schema.FORMAT_VERSION == 5
        assert _tag_paths(k, "go") == ["a.md"]
    finally:
        k.close()
