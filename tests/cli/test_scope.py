"""`fisk-ai knowledge search --path/--exclude` and `show --context` in the real process."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import js, run


@pytest.fixture
def site(tmp_path: Path, store_base: Path) -> Path:
    """A project (the folder holding .git) whose ``common/`` pages all say "widget" more
    often than the one page under ``rare/``: that page never reaches an unscoped top 20."""
    root = tmp_path / "site"
    (root / ".git").mkdir(parents=True)
    for i in range(25):
        page = root / "common" / f"page{i:02}.md"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(f"# Widget {i}\n\nWidget widget widget number {i}.\n", encoding="utf-8")
    rare = root / "rare" / "deep" / "only.md"
    rare.parent.mkdir(parents=True)
    filler = " ".join(f"word{n}" for n in range(300))
    rare.write_text(f"# Notes\n\n{filler} and once a widget.\n", encoding="utf-8")
    guide = root / "guide" / "steps.md"
    guide.parent.mkdir(parents=True)
    long = " ".join(f"filler{n}" for n in range(120))  # sections too long to be merged
    sections = "\n\n".join(
        f"## Step {n}\n\nStep {n} turns the widget crank. {long}" for n in range(1, 6)
    )
    guide.write_text(f"# Steps\n\n{sections}\n", encoding="utf-8")
    (root / "guide" / "notes.txt").write_text("A widget note in plain text.\n", encoding="utf-8")
    js(root, "index")
    return root


def paths(res: dict[str, object]) -> list[str]:
    return [str(h["path"]) for h in res["results"]]  # type: ignore[attr-defined]


def test_folder_glob_union_and_exclude_keep_to_the_scope(site: Path) -> None:
    unscoped = paths(js(site, "search", "widget", "--top-k", "20"))
    assert "rare/deep/only.md" not in unscoped
    rare = js(site, "search", "widget", "--path", "rare")
    assert rare["status"] == "ok" and paths(rare) == ["rare/deep/only.md"]
    glob = paths(js(site, "search", "widget", "--path", "**/*.txt", "--top-k", "20"))
    assert glob == ["guide/notes.txt"]
    union = paths(
        js(site, "search", "widget", "--path", "rare", "--path", "guide", "--top-k", "20")
    )
    assert union and all(p.startswith(("rare/", "guide/")) for p in union)
    assert "rare/deep/only.md" in union and "guide/notes.txt" in union
    minus = paths(
        js(site, "search", "widget", "--path", "guide", "--exclude", "*/*.txt", "--top-k", "20")
    )
    assert minus and all(p == "guide/steps.md" for p in minus)


def test_a_relative_path_from_a_subfolder(site: Path) -> None:
    res = js(site / "rare", "search", "widget", "--path", "deep")
    assert paths(res) == ["rare/deep/only.md"]
    up = js(site / "rare" / "deep", "search", "widget", "--path", "../../guide/*.txt")
    assert paths(up) == ["guide/notes.txt"]
    here = js(site / "guide", "search", "widget", "--path", ".", "--top-k", "20")
    assert paths(here) and all(p.startswith("guide/") for p in paths(here))
    absolute = js(site / "common", "search", "widget", "--path", str(site / "rare"))
    assert paths(absolute) == ["rare/deep/only.md"]


def test_an_empty_scope_gives_no_hits_and_no_error(site: Path) -> None:
    res = js(site, "search", "widget", "--path", "nowhere")
    assert res["status"] == "ok" and res["results"] == []
    text = run(site, "knowledge", "search", "widget", "--path", "nowhere")
    assert text.returncode == 0


def test_a_path_outside_the_root_is_a_usage_error(site: Path) -> None:
    res = js(site, "search", "widget", "--path", "../elsewhere", ok=2)
    assert "--path" in res["error"] and "outside the project root" in res["error"]
    many = ["--path", "x"] * 17
    res = js(site, "search", "widget", *many, ok=2)
    assert "at most 16" in res["error"]
    text = run(site, "knowledge", "search", "widget", "--exclude", "/etc", ok=2)
    assert "--exclude" in text.stderr and "Traceback" not in text.stderr


def test_show_context_prints_the_neighbours(site: Path) -> None:
    middle = js(site, "show", "guide/steps.md#2", "--context", "1")
    assert middle["citation"] == "guide/steps.md#2" and "Step 3 turns" in middle["content"]
    assert [c["citation"] for c in middle["before"]] == ["guide/steps.md#1"]
    assert [c["citation"] for c in middle["after"]] == ["guide/steps.md#3"]
    assert "Step 2 turns" in middle["before"][0]["content"]
    assert "Step 4 turns" in middle["after"][0]["content"]
    assert middle["before"][0]["end_line"] < middle["start_line"] < middle["after"][0]["start_line"]
    (doc,) = [d for d in js(site, "sources")["sources"] if d["path"] == "guide/steps.md"]
    first = js(site, "show", "guide/steps.md#0", "--context", "5")
    assert first["before"] == [] and len(first["after"]) == min(5, doc["chunks"] - 1)
    text = run(site, "knowledge", "show", "guide/steps.md#2", "--context", "1").stdout
    heads = [line for line in text.splitlines() if line.startswith("== ")]
    assert heads[1].startswith("== guide/steps.md#2 (lines ") and heads[1].endswith("<- cited")
    assert [h.split()[1] for h in heads] == [f"guide/steps.md#{n}" for n in (1, 2, 3)]
    plain = js(site, "show", "guide/steps.md#2")
    assert "before" not in plain and plain["citation"] == "guide/steps.md#2"
    assert "0<=x<=5" in js(site, "show", "guide/steps.md#2", "--context", "6", ok=2)["error"]
    missing = js(site, "show", "guide/steps.md#99", "--context", "1", ok=1)
    assert "no chunk matches" in missing["error"]
