"""Full-text rows written once per commit (schema format 3): whatever the sequence of inserts,
deletes, edits and rolled-back savepoints, the FTS table holds exactly the chunks' current text
after every commit, and an index of the older per-row-trigger layout is rebuilt."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import apsw
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fisk_ls.knowledge import Settings, index, remove, resolve_settings, schema, update_paths
from fisk_ls.knowledge.schema import Tables
from fisk_ls.knowledge.store import db_path, scalar
from fisk_ls.knowledge.writer import Writer, open_writer

WORDS = [f"w{i}" for i in range(8)]  # unicode61 + porter leave these tokens as they are


def fts_ids(conn: apsw.Connection, tables: Tables, word: str) -> set[int]:
    sql = f"SELECT rowid FROM {tables.fts} WHERE {tables.fts} MATCH ?"
    return {int(r[0]) for r in conn.execute(sql, (word,))}


def content_ids(conn: apsw.Connection, tables: Tables, word: str) -> set[int]:
    rows = conn.execute(f"SELECT id, section, body, coalesce(cjk, ''), doc FROM {tables.chunks}")
    return {int(r[0]) for r in rows if word in " ".join(r[1:]).split()}


def assert_consistent(conn: apsw.Connection, tables: Tables) -> None:
    """FTS5's own check against the content table, no chunk left pending, and every word
    finds exactly the chunks whose text holds it."""
    conn.execute(f"INSERT INTO {tables.fts}({tables.fts}, rank) VALUES ('integrity-check', 1)")
    assert scalar(conn, f"SELECT count(*) FROM {tables.pending}") == 0
    chunks = scalar(conn, f"SELECT count(*) FROM {tables.chunks}")
    assert scalar(conn, f"SELECT count(*) FROM {tables.fts}_docsize") == chunks
    for word in WORDS:
        assert fts_ids(conn, tables, word) == content_ids(conn, tables, word), word


@contextmanager
def fresh_writer() -> Iterator[Writer]:
    with tempfile.TemporaryDirectory() as tmp, open_writer(Path(tmp) / "store") as w:
        yield w


texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)
op = st.one_of(
    st.tuples(st.just("insert"), texts),
    st.tuples(st.just("delete"), st.integers(0, 50)),
    st.tuples(st.just("edit"), st.integers(0, 50), texts),
    st.tuples(st.just("failed_unit"), st.lists(st.tuples(st.just("insert"), texts), max_size=3)),
    st.just(("commit",)),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(op, max_size=30))
def test_any_sequence_of_chunk_writes_leaves_fts_equal_to_chunks(ops: list[tuple]) -> None:
    with fresh_writer() as w:
        t = w.manifest.tables
        conn = w.conn
        doc = scalar(conn, f"INSERT INTO {t.documents}(path) VALUES ('a.md') RETURNING id")

        def existing(i: int) -> int | None:
            ids = [int(r[0]) for r in conn.execute(f"SELECT id FROM {t.chunks} ORDER BY id")]
            return ids[i % len(ids)] if ids else None

        def insert(text: str) -> None:
            conn.execute(
                f"INSERT INTO {t.chunks}(document_id, ordinal, section, body, start_line,"
                " end_line, hash) VALUES (?, 0, '', ?, 1, 1, '')",
                (doc, text),
            )

        conn.execute("BEGIN IMMEDIATE")
        for o in ops:
            if o[0] == "insert":
                insert(o[1])
            elif o[0] == "delete" and (cid := existing(o[1])) is not None:
                conn.execute(f"DELETE FROM {t.chunks} WHERE id = ?", (cid,))
            elif o[0] == "edit" and (cid := existing(o[1])) is not None:
                conn.execute(f"UPDATE {t.chunks} SET body = ? WHERE id = ?", (o[2], cid))
            elif o[0] == "failed_unit":
                with pytest.raises(RuntimeError), w.transaction():  # a savepoint
                    for _, text in o[1]:
                        insert(text)
                    raise RuntimeError("this file failed")
            elif o[0] == "commit":
                w.commit()
                assert_consistent(conn, t)
                conn.execute("BEGIN IMMEDIATE")
        w.commit()
        assert_consistent(conn, t)


files = st.sampled_from(["a.md", "b.md", "sub/c.md", "d.txt"])
body = st.lists(st.sampled_from(WORDS), min_size=1, max_size=40).map(
    lambda ws: "\n\n".join(" ".join(ws[i : i + 5]) for i in range(0, len(ws), 5))
)
edit = st.one_of(
    st.tuples(st.just("write"), files, body, st.sampled_from(["index", "update"])),
    st.tuples(st.just("unlink"), files, st.sampled_from(["index", "update", "remove"])),
    st.tuples(st.just("headings"), files, body),  # a markdown heading changes every chunk
)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(edit, min_size=1, max_size=8))
def test_index_runs_over_edit_sequences_keep_fts_equal_to_chunks(edits: list[tuple]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "project"
        root.mkdir()
        s = resolve_settings(cwd=root, store_base=Path(tmp) / "stores")
        for e in edits:
            path = root / e[1]
            if e[0] == "unlink":
                path.unlink(missing_ok=True)
                how = e[2]
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                text = e[2] if e[0] == "write" else f"# {e[2].split()[0]}\n\n{e[2]}\n"
                path.write_text(text)
                how = e[3] if e[0] == "write" else "index"
            if how == "index":
                index(s)
            elif how == "update":
                update_paths(s, [path])
            else:
                remove(s, [e[1]], cwd=root)
            check_store(s)


def check_store(s: Settings) -> None:
    with open_writer(s.store_dir) as w:
        assert_consistent(w.conn, w.manifest.tables)


# The format-2 triggers: a full-text row per chunk, written by the insert trigger.
OLD_TRIGGERS = """
DROP TRIGGER {c}_ai; DROP TRIGGER {c}_ad; DROP TRIGGER {c}_au; DROP TABLE {p};
CREATE TRIGGER {c}_ai AFTER INSERT ON {c} BEGIN
  INSERT INTO {f}(rowid, section, body, cjk, doc)
  VALUES (new.id, new.section, new.body, new.cjk, new.doc);
END;
CREATE TRIGGER {c}_ad AFTER DELETE ON {c} BEGIN
  INSERT INTO {f}({f}, rowid, section, body, cjk, doc)
  VALUES ('delete', old.id, old.section, old.body, old.cjk, old.doc);
END;
CREATE TRIGGER {c}_au AFTER UPDATE OF section, body, cjk, doc ON {c} BEGIN
  INSERT INTO {f}({f}, rowid, section, body, cjk, doc)
  VALUES ('delete', old.id, old.section, old.body, old.cjk, old.doc);
  INSERT INTO {f}(rowid, section, body, cjk, doc)
  VALUES (new.id, new.section, new.body, new.cjk, new.doc);
END;
UPDATE rag_meta SET value = '2' WHERE key = 'format_version';
"""


def test_a_format_2_index_is_written_through_its_triggers_then_rebuilt(
    settings: Settings, project: Path
) -> None:
    index(settings)
    t = schema.names(1)
    raw = apsw.Connection(str(db_path(settings.store_dir)))  # behind the writer's back
    try:
        with raw:
            raw.execute(OLD_TRIGGERS.format(c=t.chunks, f=t.fts, p=t.pending))
    finally:
        raw.close()
    assert remove(settings, ["notes.txt"], cwd=project)  # the old layout, still consistent
    with open_writer(settings.store_dir) as w:
        assert w.outdated
        conn, t = w.conn, w.manifest.tables
        conn.execute(f"INSERT INTO {t.fts}({t.fts}, rank) VALUES ('integrity-check', 1)")
        assert not fts_ids(conn, t, "cats")
    (project / "notes.txt").write_text("cats again\n")
    stats = update_paths(settings, [project / "notes.txt"])
    assert stats.first_build  # rebuilt whole into the new layout
    with open_writer(settings.store_dir) as w:
        assert not w.outdated and w.manifest.format_version == schema.FORMAT_VERSION == 3
        assert_consistent(w.conn, w.manifest.tables)
        assert fts_ids(w.conn, w.manifest.tables, "cats")
        assert fts_ids(w.conn, w.manifest.tables, "backpressure")


def test_the_flush_reads_only_the_pending_chunks(settings: Settings) -> None:
    """The flush runs before every commit: its plan must walk the pending ids and look each
    chunk up by id, never scan the chunks (it did once ANALYZE had counted them)."""
    index(settings)
    with open_writer(settings.store_dir) as w:
        w.conn.execute("ANALYZE")
        insert = schema.fts_flush_sql(w.manifest.generation)[0]
        select = insert[insert.index("SELECT") :]
        plan = [str(r[3]) for r in w.conn.execute("EXPLAIN QUERY PLAN " + select)]
    assert plan[0] == "SCAN p"
    assert plan[1].startswith("SEARCH c USING INTEGER PRIMARY KEY")


def test_a_format_3_generation_without_its_pending_table_is_incomplete() -> None:
    assert schema.names(4).pending in schema.required(4, hybrid=False)
    assert schema.names(4).pending not in schema.required(4, hybrid=False, format_version=2)
