"""The body index (``chunk_rows.text_id``, schema.text_index_ddl) of a first build is made after
its rows, once, however the run ends; every other run keeps it up as it writes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import apsw
import pytest

from fisk_ls.knowledge import Knowledge, SearchRequest, Settings, index_project, schema
from fisk_ls.knowledge.connect import scalar
from fisk_ls.knowledge.index import rows, runs
from fisk_ls.knowledge.manifest import read_manifest
from fisk_ls.knowledge.store_files import db_path


def _has_index(conn: apsw.Connection, generation: int) -> bool:
    name = schema.text_index_name(generation)
    found = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?", (name,))
    return found.fetchone() is not None


def _stored(settings: Settings) -> tuple[bool, int]:
    """Whether the live generation has the index, and how many chunks it holds."""
    conn = apsw.Connection(str(db_path(settings.store_dir)), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        manifest = read_manifest(conn)
        assert manifest is not None
        chunks = scalar(conn, f"SELECT count(*) FROM {manifest.tables.rows}")
        return _has_index(conn, manifest.generation), int(chunks)
    finally:
        conn.close()


def _watch_writes(monkeypatch: pytest.MonkeyPatch, fail_at: int = 0) -> list[bool]:
    """Whether the index existed as each file was written (and a failure at file ``fail_at``)."""
    seen: list[bool] = []
    real = rows.write_document

    def write_document(conn: apsw.Connection, tables: Any, *args: Any, **kwargs: Any) -> None:
        generation = int(tables.rows.rsplit("_", 1)[1])
        seen.append(_has_index(conn, generation))
        if fail_at and len(seen) == fail_at:
            raise OSError("the disk is full")
        real(conn, tables, *args, **kwargs)

    monkeypatch.setattr(runs, "write_document", write_document)
    return seen


def test_a_first_build_writes_without_the_index_and_makes_it_at_the_end(
    settings: Settings, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = _watch_writes(monkeypatch)
    index_project(settings)
    assert seen and not any(seen)
    assert _stored(settings)[0]


def test_an_update_run_keeps_the_index_as_it_writes(
    settings: Settings, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index_project(settings)
    (project / "later.md").write_text("# Later\n\nA page added after the first build.\n")
    seen = _watch_writes(monkeypatch)
    index_project(settings)
    assert seen == [True]
    assert _stored(settings)[0]


def test_a_rebuild_makes_the_new_generation_s_index_at_the_end(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    index_project(settings)
    seen = _watch_writes(monkeypatch)
    index_project(settings, rebuild=True)
    assert seen and not any(seen)
    assert _stored(settings)[0]


def test_a_first_build_that_fails_keeps_what_it_wrote_and_the_index(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    _watch_writes(monkeypatch, fail_at=2)
    with pytest.raises(OSError, match="the disk is full"):
        index_project(settings)
    has_index, chunks = _stored(settings)
    assert has_index and chunks > 0  # the first file stays written


def test_a_store_left_without_the_index_gets_it_from_the_next_writer(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run killed before the end (no ``finally``) leaves the store without the index."""
    index_project(settings)
    conn = apsw.Connection(str(db_path(settings.store_dir)))
    conn.execute(f"DROP INDEX {schema.text_index_name(1)}")
    conn.close()
    assert _stored(settings)[0] is False
    assert Knowledge(settings).search(SearchRequest("queue")).hits  # readers never need it
    index_project(settings)
    assert _stored(settings)[0]


@pytest.mark.parametrize("rebuild", [False, True])
def test_a_dry_run_leaves_the_index_alone(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, rebuild: bool
) -> None:
    from fisk_ls.knowledge.writer import Writer

    if rebuild:
        index_project(settings)
    asked: list[int] = []
    monkeypatch.setattr(Writer, "text_index_after", lambda self, g: asked.append(g))
    index_project(settings, dry_run=True, rebuild=rebuild)
    assert asked == []
