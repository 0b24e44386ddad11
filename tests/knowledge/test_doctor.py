from __future__ import annotations

import pytest

from fisk_ls.knowledge import Settings, index_project, open_writer
from fisk_ls.knowledge.connect import connect_reader
from fisk_ls.knowledge.doctor import Check, run_checks
from fisk_ls.knowledge.fts_check import SOUND, CpuBudget, Stopped, fts_mismatch
from fisk_ls.knowledge.store_files import db_path


def by_name(settings: Settings) -> dict[str, object]:
    return {c.name: c for c in run_checks(settings)}


def test_not_built(settings: Settings) -> None:
    checks = run_checks(settings)
    assert not checks[0].ok and "not built" in checks[0].detail
    assert not any(c.broken for c in checks)


def test_healthy_index(settings: Settings) -> None:
    index_project(settings)
    checks = run_checks(settings)
    assert all(c.ok for c in checks), [c for c in checks if not c.ok]
    names = {c.name for c in checks}
    assert {"SQLite integrity", "FTS consistency", "knowledge.db mode", "writer lock"} <= names


def test_lock_state_and_broken_fts(settings: Settings) -> None:
    index_project(settings)
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
    index_project(settings)
    (settings.store_dir / "knowledge.db").chmod(0o644)
    checks = run_checks(settings)
    mode = next(c for c in checks if c.name == "knowledge.db mode")
    assert not mode.ok and "0644" in mode.detail


def test_a_full_text_index_that_disagrees_with_its_chunks_is_reported(settings: Settings) -> None:
    """Same number of rows, different words: a chunk's text changed behind the triggers' back
    (bodies are never updated in place, so no trigger watches them). A count cannot see it; a
    fresh index of the chunks' text compared with the store's does, and doctor builds it
    without writing to the store."""
    index_project(settings)
    with open_writer(settings.store_dir) as w:
        t = w.manifest.tables.texts
        w.conn.execute(f"UPDATE {t} SET body = 'walrus words' WHERE id = (SELECT min(id) FROM {t})")
    before = db_path(settings.store_dir).read_bytes()
    fts = by_name(settings)["FTS consistency"]
    assert isinstance(fts, Check)
    assert not fts.ok and fts.fatal
    assert "does not match the chunks" in fts.detail and "--reindex" in fts.detail
    assert db_path(settings.store_dir).read_bytes() == before  # doctor wrote nothing
    index_project(settings, rebuild=True)  # the recovery it names works
    assert by_name(settings)["FTS consistency"].ok  # type: ignore[attr-defined]


def test_a_comparison_past_its_budget_stops_with_a_non_fatal_line(settings: Settings) -> None:
    """The full-text comparison runs on a CPU budget (the clock is injected): past it, doctor
    says the comparison stopped and how to finish it, and a sound index is not called broken."""
    index_project(settings)
    calls = iter(range(10**6))
    checks = run_checks(settings, clock=lambda: 1000.0 * next(calls))  # past it at once
    named = {c.name: c for c in checks}
    assert named["FTS consistency"].ok
    stopped = named["FTS comparison"]
    assert not stopped.ok and not stopped.fatal and not any(c.broken for c in checks)
    assert "stopped after 5 s of CPU" in stopped.detail
    assert "did not finish" in stopped.detail and "doctor --full" in stopped.detail
    full = {c.name: c for c in run_checks(settings, full=True, clock=lambda: 1000.0 * next(calls))}
    assert "FTS comparison" not in full and "agree" in full["FTS consistency"].detail


class PassesOnceSound(CpuBudget):
    """A budget spent as soon as the index has been found internally sound."""

    def passed(self) -> bool:
        return self.done == SOUND


def test_a_damaged_index_is_found_within_the_budget(settings: Settings) -> None:
    """The index's own soundness is checked first, so a damaged index is found even when the
    budget runs out right after; the comparison with the text is what a budget cuts short."""
    index_project(settings)
    with open_writer(settings.store_dir) as w:
        tables = w.manifest.tables
        t = tables.texts
        w.conn.execute(f"UPDATE {t} SET body = 'walrus words' WHERE id = (SELECT min(id) FROM {t})")
    conn = connect_reader(db_path(settings.store_dir))
    try:
        with pytest.raises(Stopped) as stop:  # changed text: in the part the budget cut off
            fts_mismatch(conn, tables, PassesOnceSound(5.0))
        assert stop.value.done == SOUND
        assert fts_mismatch(conn, tables) is not None  # found without a budget
    finally:
        conn.close()
    with open_writer(settings.store_dir) as w:
        w.conn.execute(
            f"UPDATE {tables.fts}_data SET block = zeroblob(length(block)) "
            f"WHERE id = (SELECT max(id) FROM {tables.fts}_data)"
        )
    conn = connect_reader(db_path(settings.store_dir))
    try:
        found = fts_mismatch(conn, tables, PassesOnceSound(5.0))
    finally:
        conn.close()
    assert found is not None and found.startswith("FTS5 integrity-check: ")


def test_an_index_with_deleted_rows_is_sound(settings: Settings) -> None:
    """Deletes leave tombstones in a contentless_delete index; the copy FTS5 compares with the
    text reads them as the store does, so an edited and shrunk index still agrees."""
    index_project(settings)
    docs = settings.project_root / "docs"
    (docs / "design.md").write_text("# Design\n\nNothing but walruses now.\n")
    (docs / "ops" / "runbook.md").unlink()
    index_project(settings)
    fts = by_name(settings)["FTS consistency"]
    assert isinstance(fts, Check) and fts.ok and "agree" in fts.detail
