"""Every statement a search runs finds its rows through a key or an index, never by scanning
the chunk, body or document tables. Through the format-4 ``chunks`` view a plain self-join or
a count can turn into a scan of every chunk (a heading query once took 240 ms on 150k chunks,
a count 257 ms) while a small fixture stays fast: so the plans are checked, not the time."""

from __future__ import annotations

from pathlib import Path

import apsw

from fisk_ls.knowledge import Knowledge, SearchRequest, Settings, index_project
from fisk_ls.knowledge.store_files import db_path

QUERIES = [
    "what is backpressure",  # definitional: the heading boost's self-join
    "how does backpressure work",
    "Get-Widget",
    "retry budget backpressure queue",
]


def _statements(settings: Settings) -> list[tuple[str, apsw.Bindings | None]]:
    seen: list[tuple[str, apsw.Bindings | None]] = []

    def hook(conn: apsw.Connection) -> None:
        def trace(_cursor: apsw.Cursor, sql: str, bindings: apsw.Bindings | None) -> bool:
            seen.append((sql, bindings))
            return True

        conn.exec_trace = trace

    apsw.connection_hooks.append(hook)
    try:
        kb = Knowledge(settings)
        try:
            for q in QUERIES:
                kb.search(SearchRequest(q, top_k=5))
        finally:
            kb.close()
    finally:
        apsw.connection_hooks.remove(hook)
    return seen


def test_a_search_scans_no_chunk_body_or_document_table(settings: Settings, project: Path) -> None:
    for i in range(30):  # enough rows that the planner's choice matters
        (project / f"more/page{i}.md").parent.mkdir(exist_ok=True)
        (project / f"more/page{i}.md").write_text(
            f"# Backpressure {i}\n\nqueue {i} retry budget\n\n## Detail\n\nmore words {i}\n"
        )
    index_project(settings)
    statements = _statements(settings)
    assert any("LEFT JOIN" in sql for sql, _ in statements)  # the heading boost ran
    conn = _as_if_large(settings, project.parent / "plans.db")
    try:
        scans = []
        for sql, bindings in statements:
            if not sql.lstrip().upper().startswith("SELECT") or "LIMIT 1" in sql:
                continue
            plan = [str(r[3]) for r in conn.execute("EXPLAIN QUERY PLAN " + sql, bindings)]
            scans += [(step, sql[:120]) for step in plan if _scans_a_table(step)]
    finally:
        conn.close()
    assert not scans, scans


def _as_if_large(settings: Settings, path: Path) -> apsw.Connection:
    """A copy of the store whose planner statistics say 150k chunks in 15k documents (on a
    tiny index a scan is the planner's right choice, and would hide the plans that matter)."""
    src = apsw.Connection(str(db_path(settings.store_dir)), flags=apsw.SQLITE_OPEN_READONLY)
    dst = apsw.Connection(str(path))
    with dst.backup("main", src, "main") as b:
        b.step()
    src.close()
    dst.execute("ANALYZE")  # creates sqlite_stat1; its rows are replaced below
    dst.execute("DELETE FROM sqlite_stat1")
    for name, table in dst.execute(
        "SELECT name, tbl_name FROM sqlite_master WHERE type = 'index'"
    ).fetchall():
        width = len(dst.execute(f"PRAGMA index_info('{name}')").fetchall())
        rows = 15_000 if str(table).startswith("documents") else 150_000
        stat = " ".join(
            [str(rows), *(["10"] * (width - 1)), "1"] if width > 1 else [str(rows), "1"]
        )
        dst.execute("INSERT INTO sqlite_stat1 VALUES (?, ?, ?)", (table, name, stat))
    for (table,) in dst.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
        rows = 15_000 if str(table).startswith("documents") else 150_000
        dst.execute("INSERT INTO sqlite_stat1 VALUES (?, NULL, ?)", (table, str(rows)))
    dst.execute("ANALYZE sqlite_schema")  # reload the statistics
    return dst


def _scans_a_table(step: str) -> bool:
    """A full scan of a real table (not FTS5's virtual table, a subquery's result, the
    schema or the manifest, which are small by nature)."""
    if not step.startswith("SCAN ") or "VIRTUAL TABLE" in step:
        return False
    return not any(word in step for word in ("rag_meta", "sqlite_master", "subquery", "CONSTANT"))
