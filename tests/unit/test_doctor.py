from __future__ import annotations

from fisk_ls.knowledge import Settings, index, open_writer
from fisk_ls.knowledge.doctor import Check, run_checks


def by_name(settings: Settings) -> dict[str, object]:
    return {c.name: c for c in run_checks(settings)}


def test_not_built(settings: Settings) -> None:
    checks = run_checks(settings)
    assert not checks[0].ok and "not built" in checks[0].detail
    assert not any(c.broken for c in checks)


def test_healthy_index(settings: Settings) -> None:
    index(settings)
    checks = run_checks(settings)
    assert all(c.ok for c in checks), [c for c in checks if not c.ok]
    names = {c.name for c in checks}
    assert {"SQLite integrity", "FTS consistency", "knowledge.db mode", "writer lock"} <= names


def test_lock_state_and_broken_fts(settings: Settings) -> None:
    index(settings)
    with open_writer(settings.store_dir) as w:
        assert any(
            c.name == "writer lock" and "a writer is active" in c.detail
            for c in run_checks(settings)
        )
        t = w.manifest.tables
        # Corrupt the full-text index behind the triggers' back.
        w.conn.execute(f"DELETE FROM {t.fts}_docsize")
    checks = run_checks(settings)
    fts = next(c for c in checks if c.name == "FTS consistency")
    assert not fts.ok and fts.fatal


def test_loose_modes_are_reported(settings: Settings) -> None:
    index(settings)
    (settings.store_dir / "knowledge.db").chmod(0o644)
    checks = run_checks(settings)
    mode = next(c for c in checks if c.name == "knowledge.db mode")
    assert not mode.ok and "0644" in mode.detail


def test_a_full_text_index_that_disagrees_with_its_chunks_is_reported(settings: Settings) -> None:
    """Same number of rows, different words: a chunk's text changed behind the triggers' back
    (bodies are never updated in place, so no trigger watches them). A count cannot see it; a
    fresh index of the chunks' text compared with the store's does, and doctor builds it
    without writing to the store."""
    from fisk_ls.knowledge.store import db_path

    index(settings)
    with open_writer(settings.store_dir) as w:
        t = w.manifest.tables.texts
        w.conn.execute(f"UPDATE {t} SET body = 'walrus words' WHERE id = (SELECT min(id) FROM {t})")
    before = db_path(settings.store_dir).read_bytes()
    fts = by_name(settings)["FTS consistency"]
    assert isinstance(fts, Check)
    assert not fts.ok and fts.fatal
    assert "does not match the chunks" in fts.detail and "--reindex" in fts.detail
    assert db_path(settings.store_dir).read_bytes() == before  # doctor wrote nothing
    index(settings, rebuild=True)  # the recovery it names works
    assert by_name(settings)["FTS consistency"].ok  # type: ignore[attr-defined]
