"""`fisk-ai knowledge search --tag` in the real process: front-matter tags as a filter."""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest

from tests.support.cli import js, run


def _page(title: str, tags: str, text: str) -> str:
    return f"---\ntitle: {title}\ntags: {tags}\n---\n\n{text}\n"


@pytest.fixture
def site(tmp_path: Path, store_base: Path) -> Path:
    """25 untagged pages say "widget" more often than the one tagged ``rare``: it never reaches
    an unscoped top 20."""
    root = tmp_path / "site"
    (root / ".git").mkdir(parents=True)
    for i in range(25):
        page = root / "common" / f"page{i:02}.md"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(f"# Widget {i}\n\nWidget widget widget number {i}.\n", encoding="utf-8")
    filler = " ".join(f"word{n}" for n in range(300))
    (root / "notes").mkdir()
    (root / "notes" / "rare.md").write_text(
        _page("Rare", "[Rare, '#Howto']", f"{filler} and once a widget."), encoding="utf-8"
    )
    (root / "notes" / "go.md").write_text(
        _page("Go", "go howto", "A widget in Go."), encoding="utf-8"
    )
    (root / "api").mkdir()
    (root / "api" / "go.md").write_text(
        _page("Go API", "[go, api]", "The widget API for Go."), encoding="utf-8"
    )
    js(root, "index")
    return root


def paths(res: dict[str, object]) -> list[str]:
    return sorted(str(h["path"]) for h in res["results"])  # type: ignore[attr-defined]


def test_a_tag_keeps_to_its_pages_and_several_are_a_union(site: Path) -> None:
    unscoped = paths(js(site, "search", "widget", "--top-k", "20"))
    assert "notes/rare.md" not in unscoped
    rare = js(site, "search", "widget", "--tag", "rare")
    assert rare["status"] == "ok" and paths(rare) == ["notes/rare.md"]
    assert paths(js(site, "search", "widget", "--tag", "#RARE")) == ["notes/rare.md"]
    union = js(site, "search", "widget", "--tag", "rare", "--tag", "api", "--top-k", "20")
    assert paths(union) == ["api/go.md", "notes/rare.md"]
    howto = js(site, "search", "widget", "--tag", "howto", "--top-k", "20")
    assert paths(howto) == ["notes/go.md", "notes/rare.md"]  # a list and Jekyll's string alike


def test_tags_and_paths_intersect(site: Path) -> None:
    both = js(site, "search", "widget", "--tag", "go", "--path", "notes", "--top-k", "20")
    assert paths(both) == ["notes/go.md"]
    here = js(site / "api", "search", "widget", "--tag", "howto", "--path", ".")
    assert here["status"] == "ok" and here["results"] == []


def test_a_tag_no_page_has_gives_no_hits_and_no_error(site: Path) -> None:
    res = js(site, "search", "widget", "--tag", "nothing")
    assert res["status"] == "ok" and res["results"] == []


def test_tags_past_the_limits_are_a_usage_error(site: Path) -> None:
    res = js(site, "search", "widget", *["--tag", "x"] * 17, ok=2)
    assert "--tag: at most 16 tags, got 17" in res["error"]
    text = run(site, "knowledge", "search", "widget", "--tag", "x" * 101, ok=2)
    assert "--tag[0]: expected a tag of at most 100 characters" in text.stderr
    assert "Traceback" not in text.stderr


def test_an_index_from_before_tags_says_to_rebuild_and_still_searches(site: Path) -> None:
    store = Path(js(site, "stats")["store"])
    conn = apsw.Connection(str(store / "knowledge.db"))
    try:
        with conn:
            gen = conn.execute("SELECT value FROM rag_meta WHERE key = 'generation'").get
            conn.execute(f"DROP TABLE tags_{gen}")  # as format 4 wrote it
            conn.execute("UPDATE rag_meta SET value = '4' WHERE key = 'format_version'")
    finally:
        conn.close()
    res = js(site, "search", "widget", "--tag", "rare", ok=1)
    assert "built before tags were stored" in res["error"] and "knowledge index" in res["error"]
    assert js(site, "search", "widget")["results"]  # every other search still answers
    js(site, "index")  # rebuilds the older layout
    assert paths(js(site, "search", "widget", "--tag", "rare")) == ["notes/rare.md"]
