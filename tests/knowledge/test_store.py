"""Lexical store end to end in-process (checklist 18–29) plus modes, symlinks, rebuilds."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import pytest

from fisk_ls.knowledge import (
    IndexLocked,
    Knowledge,
    SearchRequest,
    Settings,
    StoreError,
    index_project,
    open_writer,
    reset,
)
from fisk_ls.knowledge.index.runs import Indexer
from fisk_ls.knowledge.store_files import db_path
from fisk_ls.knowledge.store_id import read_marker, stored_id, write_marker


def test_index_and_search(settings: Settings) -> None:  # 18
    stats = index_project(settings)
    assert stats.added == 3 and stats.chunks >= 3
    kb = Knowledge(settings)
    assert kb.built
    result = kb.search(SearchRequest("how does backpressure work in the client"))
    assert result.status == "ok"
    assert result.hits[0].path == "docs/design.md"
    assert re.fullmatch(r"docs/design\.md#\d+", result.hits[0].citation)
    hit = result.hits[0]
    lines = (settings.project_root / hit.path).read_text().splitlines()
    assert "backpressure" in "\n".join(lines[hit.start_line - 1 : hit.end_line])
    assert 0 < hit.score <= 1 and hit.retrievers == {"lexical": 1}


def test_not_built_is_soft(settings: Settings) -> None:  # 19
    kb = Knowledge(settings)
    assert not kb.built
    assert kb.search(SearchRequest("anything")).status == "index_not_built"
    assert kb.sources() is None


def test_reconcile_removes_deleted(settings: Settings, project: Path) -> None:  # 20
    index_project(settings)
    (project / "notes.txt").unlink()
    stats = index_project(settings)
    assert stats.removed == 1 and stats.skipped == 2
    assert all(
        h.path != "notes.txt" for h in Knowledge(settings).search(SearchRequest("cats dogs")).hits
    )


def test_reconcile_only_under_walked_roots(settings: Settings, project: Path) -> None:  # 21, better
    index_project(settings)
    index_project(settings, [project / "docs" / "ops"])
    kb = Knowledge(settings)
    assert {s.path for s in kb.sources() or []} == {
        "docs/design.md",
        "docs/ops/runbook.md",
        "notes.txt",
    }


def test_second_writer_is_refused(settings: Settings) -> None:  # 22
    with open_writer(settings.store_dir), pytest.raises(IndexLocked, match="another writer"):
        open_writer(settings.store_dir)


def test_modes_even_under_umask_000(settings: Settings) -> None:  # 23, extended
    old = os.umask(0)
    try:
        index_project(settings)
        kb = Knowledge(settings)
        kb.search(SearchRequest("queue"))  # a reader creates -shm/-wal as needed
        for suffix in ("", "-wal", "-shm"):
            p = Path(f"{db_path(settings.store_dir)}{suffix}")
            if p.exists():
                assert stat.S_IMODE(p.stat().st_mode) == 0o600, p
        assert stat.S_IMODE(settings.store_dir.stat().st_mode) == 0o700
        lock = settings.store_dir / "knowledge.lock"
        assert stat.S_IMODE(lock.stat().st_mode) == 0o600
        kb.close()
    finally:
        os.umask(old)


def test_symlink_at_store_path_refused(settings: Settings, tmp_path: Path) -> None:
    settings.store_dir.mkdir(parents=True)
    target = tmp_path / "elsewhere.db"
    target.write_bytes(b"")
    os.symlink(target, db_path(settings.store_dir))
    with pytest.raises(StoreError, match="symlink"):
        index_project(settings)


def test_symlinked_store_dir_refused(settings: Settings, tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    settings.store_dir.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(real, settings.store_dir)
    with pytest.raises(StoreError, match="symlink"):
        index_project(settings)


def test_reader_opened_before_index_sees_it(settings: Settings, project: Path) -> None:  # 24, 31
    kb = Knowledge(settings)
    assert kb.search(SearchRequest("queue")).status == "index_not_built"
    index_project(settings)
    assert kb.search(SearchRequest("queue")).status == "ok"
    (project / "new.md").write_text("# Fresh\n\nzebra crossings everywhere\n")
    index_project(settings)
    assert kb.search(SearchRequest("zebra")).hits[0].path == "new.md"


def test_rm_and_reset(settings: Settings) -> None:  # 25–28
    assert not db_path(settings.store_dir).exists()
    index_project(settings)
    assert db_path(settings.store_dir).exists()
    with open_writer(settings.store_dir) as w:
        assert Indexer(w, settings.project_root).remove(["notes.txt"]) == ["notes.txt"]
        assert Indexer(w, settings.project_root).remove(["nope.md"]) == []
        assert w.counts()[0] == 2
        assert Indexer(w, settings.project_root).remove(["docs"]) == [
            "docs/design.md",
            "docs/ops/runbook.md",
        ]
        w.reset()
        assert w.counts() == (0, 0)
    assert Knowledge(settings).search(SearchRequest("queue")).status == "index_empty"


@pytest.mark.slow
def test_reset_shrinks_file(settings: Settings, project: Path) -> None:  # 29
    for i in range(200):
        (project / f"pad{i}.md").write_text(f"# Pad {i}\n\n" + ("lorem ipsum dolor " * 300))
    index_project(settings)
    with open_writer(settings.store_dir) as w:
        w.vacuum()
        peak = db_path(settings.store_dir).stat().st_size
        w.reset()
    assert db_path(settings.store_dir).stat().st_size < peak / 2


def test_rebuild_keeps_readers_answering(settings: Settings) -> None:
    index_project(settings)
    kb = Knowledge(settings)
    before = kb.search(SearchRequest("backpressure")).hits
    assert before
    stats = index_project(settings, rebuild=True)
    assert stats.added == 3
    assert kb.search(SearchRequest("backpressure")).hits[0].path == before[0].path


def test_interrupted_rebuild_leaves_old_index(settings: Settings) -> None:
    from fisk_ls.knowledge import IndexReporter

    index_project(settings)

    class Boom(IndexReporter):
        def on_file(self, done: int, key: str) -> None:
            raise RuntimeError("killed")

    with pytest.raises(RuntimeError):
        index_project(settings, rebuild=True, reporter=Boom())
    kb = Knowledge(settings)
    assert kb.search(SearchRequest("backpressure")).hits
    stats = index_project(settings)
    assert stats.skipped == 3  # the live generation is intact and leftovers were dropped


def test_format_too_new_refused(settings: Settings) -> None:
    from fisk_ls.knowledge import FormatTooNew

    index_project(settings)
    with open_writer(settings.store_dir) as w, w.transaction() as c:
        c.execute("UPDATE rag_meta SET value='99' WHERE key='format_version'")
    with pytest.raises(FormatTooNew, match="upgrade"):
        Knowledge(settings).search(SearchRequest("x"))


def test_scores_and_ties_are_deterministic(settings: Settings, project: Path) -> None:
    for name in ("b.md", "a.md", "c.md"):
        (project / name).write_text("# Same\n\nidentical words here\n")
    index_project(settings)
    kb = Knowledge(settings)

    def shown() -> list[str]:  # identical chunks are one hit carrying the other locations
        return [
            c
            for h in kb.search(SearchRequest("identical words")).hits
            for c in (h.citation, *(a.citation for a in h.copies))
        ]

    first = shown()
    assert first == shown()
    assert first == ["a.md#0", "b.md#0", "c.md#0"]  # ties by id (files are indexed in path order)


def test_status_no_terms(settings: Settings) -> None:
    index_project(settings)
    assert Knowledge(settings).search(SearchRequest("?!")).status == "no_terms"


def test_cjk_search(settings: Settings, project: Path) -> None:
    (project / "zh.md").write_text("# 采样\n\n如何配置采样率：使用环境变量设置采样器。\n")
    (project / "ja.md").write_text("# トレース\n\nトレースはリクエストの経路を示します。\n")
    index_project(settings)
    kb = Knowledge(settings)
    assert kb.search(SearchRequest("采样率")).hits[0].path == "zh.md"
    assert kb.search(SearchRequest("リクエスト")).hits[0].path == "ja.md"


def test_very_common_terms_are_pruned_without_changing_the_top(
    settings: Settings, project: Path
) -> None:
    from fisk_ls.knowledge.search import TermStats

    for i in range(20):
        (project / f"c{i}.md").write_text(f"# Common {i}\n\nubiquitous words everywhere {i}\n")
    (project / "rare.md").write_text("# Rare\n\nubiquitous and platypus\n")
    index_project(settings)
    kb = Knowledge(settings)
    with kb.store.snapshot() as snap:
        assert snap is not None
        assert TermStats().prune(snap, ["ubiquitous", "platypus"]) == ["platypus"]
        assert TermStats().prune(snap, ["ubiquitous"]) == ["ubiquitous"]
    assert kb.search(SearchRequest("ubiquitous platypus")).hits[0].path == "rare.md"
    assert kb.search(SearchRequest("ubiquitous")).hits


def test_an_older_format_is_rebuilt_by_the_next_writer(tmp_path: Path) -> None:
    """A store written by an older fisk-ls keeps answering, and the next run (even an editor's
    one-file update) rebuilds it into the current layout."""
    from fisk_ls.knowledge import resolve_settings, schema, update_paths
    from tests.support.old_layouts import write_format_3_store

    (tmp_path / "a.md").write_text("# Alpha\n\nmarmalade recipe\n")
    settings = resolve_settings(cwd=tmp_path, store_base=tmp_path / "stores")
    write_format_3_store(settings.store_dir, {"a.md": ["marmalade recipe"]})
    with open_writer(settings.store_dir) as w:
        assert w.outdated
    kb = Knowledge(settings)
    try:
        assert kb.search(SearchRequest("marmalade")).hits  # still readable before the rebuild
    finally:
        kb.close()
    stats = update_paths(settings, [tmp_path / "a.md"])
    assert stats.first_build
    with open_writer(settings.store_dir) as w:
        assert not w.outdated
        assert w.manifest.format_version == schema.FORMAT_VERSION
        assert w.manifest.generation == 2


@pytest.mark.parametrize("left", ["file", "folder"])
def test_reset_force_leaves_no_marker_temp_behind(settings: Settings, left: str) -> None:
    """A killed writer's ``.knowledge.id.tmp`` (a file, or a folder at that name) is gone after
    ``reset --force``, which says what it moved; the marker still names the store."""
    index_project(settings)
    tmp = settings.store_dir / ".knowledge.id.tmp"
    if left == "file":
        tmp.write_text("half-written\n")
    else:
        tmp.mkdir()
    notes: list[str] = []
    assert reset(settings, force=True, notes=notes) is not None
    assert not os.path.lexists(tmp)
    assert [n for n in notes if ".knowledge.id.tmp" in n] == ([] if left == "file" else [notes[0]])
    with open_writer(settings.store_dir) as w:
        assert read_marker(settings.store_dir) == stored_id(w.conn)


def test_a_marker_that_cannot_be_written_leaves_no_temp(settings: Settings) -> None:
    index_project(settings)
    marker = settings.store_dir / "knowledge.id"
    marker.unlink()
    marker.mkdir()  # the rename onto it fails
    with pytest.raises(OSError):
        write_marker(settings.store_dir, "0" * 32)
    assert sorted(p.name for p in settings.store_dir.iterdir() if p.name.startswith(".")) == []


def test_the_writer_keeps_statement_journals_in_memory(settings: Settings) -> None:
    """Each file's savepoint journal stays in memory (spilled to temporary files it was most of
    a first build's writes)."""
    from fisk_ls.knowledge import open_writer

    with open_writer(settings.store_dir) as w:
        assert w.conn.execute("PRAGMA temp_store").get == 2  # MEMORY
