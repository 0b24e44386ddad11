"""Full-text rows written once per commit (schema format 3 on) and bodies shared between chunks
(format 4): whatever the sequence of inserts, deletes, edits and rolled-back savepoints, the FTS
table holds exactly the chunks' current text after every commit, every stored body is the body
of as many chunks as it counts and of at least one, and an index of an older layout is read and
then rebuilt."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import apsw
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fisk_ls.knowledge import (
    Settings,
    index_project,
    remove,
    resolve_settings,
    schema,
    update_paths,
)
from fisk_ls.knowledge.connect import scalar
from fisk_ls.knowledge.fts_check import fts_mismatch
from fisk_ls.knowledge.index.examine import ChunkRow
from fisk_ls.knowledge.index.rows import insert_chunks
from fisk_ls.knowledge.opening import open_writer
from fisk_ls.knowledge.schema import Tables, body_key
from fisk_ls.knowledge.store_files import db_path
from fisk_ls.knowledge.writer import Writer
from tests.support.old_layouts import write_format_3_store

WORDS = [f"w{i}" for i in range(8)]  # unicode61 + porter leave these tokens as they are


def fts_ids(conn: apsw.Connection, tables: Tables, word: str) -> set[int]:
    sql = f"SELECT rowid FROM {tables.fts} WHERE {tables.fts} MATCH ?"
    return {int(r[0]) for r in conn.execute(sql, (word,))}


def content_ids(conn: apsw.Connection, tables: Tables, word: str) -> set[int]:
    rows = conn.execute(f"SELECT id, section, body, coalesce(cjk, ''), doc FROM {tables.chunks}")
    return {int(r[0]) for r in rows if word in " ".join(r[1:]).split()}


def assert_consistent(conn: apsw.Connection, tables: Tables) -> None:
    """FTS5's own check, no chunk left pending, every word finds exactly the chunks whose text
    holds it, the fresh-index comparison doctor runs agrees, and the bodies' counts are right."""
    conn.execute(f"INSERT INTO {tables.fts}({tables.fts}) VALUES ('integrity-check')")
    assert fts_mismatch(conn, tables) is None
    assert scalar(conn, f"SELECT count(*) FROM {tables.pending}") == 0
    if tables.rows != tables.chunks:
        refs = list(
            conn.execute(
                f"SELECT t.refs, (SELECT count(*) FROM {tables.rows} r WHERE r.text_id = t.id)"
                f" FROM {tables.texts} t"
            )
        )
        assert all(stored == real > 0 for stored, real in refs), refs
        orphans = f"SELECT count(*) FROM {tables.rows} WHERE text_id NOT IN (SELECT id FROM {tables.texts})"
        assert scalar(conn, orphans) == 0
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
    st.tuples(st.just("retitle"), texts),
    st.tuples(st.just("failed_unit"), st.lists(st.tuples(st.just("insert"), texts), max_size=3)),
    st.just(("commit",)),
)


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(st.lists(op, max_size=30))
def test_any_sequence_of_chunk_writes_leaves_fts_equal_to_chunks(
    ops: list[tuple[Any, ...]],
) -> None:
    with fresh_writer() as w:
        t = w.manifest.tables
        conn = w.conn
        doc = scalar(conn, f"INSERT INTO {t.documents}(path) VALUES ('a.md') RETURNING id")

        def existing(i: int) -> int | None:
            ids = [int(r[0]) for r in conn.execute(f"SELECT id FROM {t.chunks} ORDER BY id")]
            return ids[i % len(ids)] if ids else None

        def insert(text: str) -> None:
            insert_chunks(
                conn,
                t,
                doc,
                [ChunkRow(0, "", text, None, 1, 1, "ab" * 16, "n:" + "cd" * 16, body_key(text))],
            )

        conn.execute("BEGIN IMMEDIATE")
        for o in ops:
            if o[0] == "insert":
                insert(o[1])
            elif o[0] == "delete" and (cid := existing(o[1])) is not None:
                conn.execute(f"DELETE FROM {t.rows} WHERE id = ?", (cid,))
            elif o[0] == "edit" and (cid := existing(o[1])) is not None:
                conn.execute(
                    f"INSERT INTO {t.texts}(key, body) VALUES (?, ?) ON CONFLICT DO NOTHING",
                    (body_key(o[2]), o[2]),
                )
                conn.execute(
                    f"UPDATE {t.rows} SET text_id = (SELECT id FROM {t.texts} WHERE key = ?)"
                    " WHERE id = ?",
                    (body_key(o[2]), cid),
                )
            elif o[0] == "retitle":  # the document field, indexed with each of its chunks
                conn.execute(f"UPDATE {t.documents} SET doc = ? WHERE id = ?", (o[1], doc))
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


@pytest.mark.slow
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(edit, min_size=1, max_size=8))
def test_index_runs_over_edit_sequences_keep_fts_equal_to_chunks(
    edits: list[tuple[Any, ...]],
) -> None:
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
                index_project(s)
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
    write_format_3_store(settings.store_dir, {"notes.txt": ["cats here"], "a.md": ["dogs"]})
    t = schema.names(1, format_version=2)
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
        assert not fts_ids(conn, t, "cats") and fts_ids(conn, t, "dogs")
    (project / "notes.txt").write_text("cats again\n")
    stats = update_paths(settings, [project / "notes.txt"])
    assert stats.first_build  # rebuilt whole into the new layout
    with open_writer(settings.store_dir) as w:
        assert not w.outdated and w.manifest.format_version == schema.FORMAT_VERSION == 5
        assert_consistent(w.conn, w.manifest.tables)
        assert fts_ids(w.conn, w.manifest.tables, "cats")
        assert fts_ids(w.conn, w.manifest.tables, "backpressure")


def test_the_flush_reads_only_the_pending_chunks(settings: Settings) -> None:
    """The flush runs before every commit: its plan must walk the pending ids and look each
    chunk up by id, never scan the chunks (it did once ANALYZE had counted them)."""
    index_project(settings)
    with open_writer(settings.store_dir) as w:
        w.conn.execute("ANALYZE")
        insert = schema.fts_flush_sql(w.manifest.generation)[0]
        select = insert[insert.index("SELECT") :]
        plan = [str(r[3]) for r in w.conn.execute("EXPLAIN QUERY PLAN " + select)]
    assert plan[0] == "SCAN p"
    assert plan[1].startswith("SEARCH r USING INTEGER PRIMARY KEY")  # the chunk rows
    assert all(step.startswith("SEARCH") for step in plan[1:]), plan  # body, document by id


def test_a_format_3_generation_without_its_pending_table_is_incomplete() -> None:
    assert schema.names(4).pending in schema.required(4, hybrid=False)
    assert schema.names(4).pending not in schema.required(4, hybrid=False, format_version=2)


def test_versioned_copies_share_one_stored_body(settings: Settings, project: Path) -> None:
    """The same page in two version folders: its bodies are stored once, each copy is found,
    and a body goes only with the last chunk that holds it."""
    page = "# Get-Widget\n\nGets a widget.\n\n## Examples\n\nGet-Widget -Name zebrafish\n"
    for version in ("v1", "v2"):
        (project / version).mkdir()
        (project / version / "get-widget.md").write_text(page)
    index_project(settings)

    def state() -> tuple[int, int, set[str]]:
        with open_writer(settings.store_dir) as w:
            t = w.manifest.tables
            bodies = scalar(w.conn, f"SELECT count(*) FROM {t.texts} WHERE body LIKE '%zebrafish%'")
            rows = scalar(
                w.conn,
                f"SELECT count(*) FROM {t.chunks} WHERE body LIKE '%zebrafish%'",
            )
            paths = {
                str(r[0])
                for r in w.conn.execute(
                    f"SELECT d.path FROM {t.fts} f JOIN {t.chunks} c ON c.id = f.rowid"
                    f" JOIN {t.documents} d ON d.id = c.document_id WHERE {t.fts} MATCH 'zebrafish'"
                )
            }
            assert_consistent(w.conn, t)
            return int(bodies), int(rows), paths

    assert state() == (1, 2, {"v1/get-widget.md", "v2/get-widget.md"})
    remove(settings, ["v1"], cwd=project)
    assert state() == (1, 1, {"v2/get-widget.md"})
    (project / "v2" / "get-widget.md").write_text(page.replace("zebrafish", "okapi"))
    update_paths(settings, [project / "v2" / "get-widget.md"])
    assert state() == (0, 0, set())


def test_a_long_batch_moves_its_chunks_into_the_fts_table_between_commits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A batch that commits every 2 s still flushes every ``FLUSH_SECONDS`` (a short commit
    keeps the chunking worker busy), inside its transaction, and only then."""
    import time

    from fisk_ls.knowledge import writer as writer_module

    now = [100.0]
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    with fresh_writer() as w:
        tables = w.manifest.tables

        def write(word: str) -> None:
            with w.transaction() as conn:
                doc = scalar(
                    conn, f"INSERT INTO {tables.documents}(path) VALUES (?) RETURNING id", (word,)
                )
                row = ChunkRow(0, "", word, None, 1, 1, "00" * 16, "n:" + "00" * 8, body_key(word))
                insert_chunks(conn, tables, doc, [row])

        def pending() -> int:
            return int(scalar(w.conn, f"SELECT count(*) FROM {tables.pending}"))

        commits = scalar(w.conn, "SELECT value FROM rag_meta WHERE key = 'commits'")
        with w.batch(4096, 2.0) as batch:
            batch.tick()  # opens the transaction
            write("w0")
            now[0] += 0.1
            batch.tick()
            assert pending() == 1  # not yet due
            write("w1")
            now[0] += writer_module.FLUSH_SECONDS
            batch.tick()
            assert pending() == 0 and fts_ids(w.conn, tables, "w1") == {2}
            assert w.conn.in_transaction  # flushed, not committed
            assert scalar(w.conn, "SELECT value FROM rag_meta WHERE key = 'commits'") == commits
        assert_consistent(w.conn, tables)
