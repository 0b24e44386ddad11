"""Layouts of older formats, verbatim, to build the stores an older fisk-ls left behind (the
current code must read them, and its next writer rebuild them)."""

from __future__ import annotations

from pathlib import Path

import apsw

from fisk_ls.knowledge import schema
from fisk_ls.knowledge.store_files import db_path

# schema.generation_ddl of format 3 ({d} documents, {c} chunks, {p} pending, {f} fts, {v} vocab).
FORMAT_3_DDL = """
CREATE TABLE IF NOT EXISTS {d} (
  id INTEGER PRIMARY KEY,
  path TEXT NOT NULL UNIQUE,
  title TEXT NOT NULL DEFAULT '',
  size INTEGER NOT NULL DEFAULT 0,
  mtime_ns INTEGER NOT NULL DEFAULT 0,
  inode INTEGER NOT NULL DEFAULT 0,
  hash TEXT NOT NULL DEFAULT '',
  chunk_count INTEGER NOT NULL DEFAULT 0,
  indexed_at REAL NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS {c} (
  id INTEGER PRIMARY KEY,
  document_id INTEGER NOT NULL REFERENCES {d}(id) ON DELETE CASCADE,
  ordinal INTEGER NOT NULL,
  section TEXT NOT NULL DEFAULT '',
  body TEXT NOT NULL,
  cjk TEXT,
  start_line INTEGER NOT NULL,
  end_line INTEGER NOT NULL,
  hash TEXT NOT NULL,
  doc TEXT NOT NULL DEFAULT '',
  near TEXT NOT NULL DEFAULT '',
  embedded INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS {c}_doc ON {c}(document_id, ordinal);
CREATE INDEX IF NOT EXISTS {c}_backlog ON {c}(id) WHERE embedded = 0;
CREATE TABLE IF NOT EXISTS {p} (id INTEGER PRIMARY KEY);
CREATE VIRTUAL TABLE IF NOT EXISTS {f} USING fts5(
  section, body, cjk, doc, content='{c}', content_rowid='id', tokenize='porter unicode61 remove_diacritics 2'
);
INSERT INTO {f}({f}, rank) VALUES ('automerge', 8);
CREATE VIRTUAL TABLE IF NOT EXISTS {v} USING fts5vocab({f}, 'row');
CREATE TRIGGER IF NOT EXISTS {c}_ai AFTER INSERT ON {c} BEGIN
  INSERT INTO {p}(id) VALUES (new.id);
END;
CREATE TRIGGER IF NOT EXISTS {c}_ad AFTER DELETE ON {c} BEGIN
  INSERT INTO {f}({f}, rowid, section, body, cjk, doc)
  SELECT 'delete', old.id, old.section, old.body, old.cjk, old.doc
  WHERE NOT EXISTS (SELECT 1 FROM {p} WHERE id = old.id);
  DELETE FROM {p} WHERE id = old.id;
END;
CREATE TRIGGER IF NOT EXISTS {c}_au AFTER UPDATE OF section, body, cjk, doc ON {c}
WHEN NOT EXISTS (SELECT 1 FROM {p} WHERE id = old.id) BEGIN
  INSERT INTO {f}({f}, rowid, section, body, cjk, doc)
  VALUES ('delete', old.id, old.section, old.body, old.cjk, old.doc);
  INSERT INTO {f}(rowid, section, body, cjk, doc)
  VALUES (new.id, new.section, new.body, new.cjk, new.doc);
END;
"""


def write_format_3_store(store_dir: Path, documents: dict[str, list[str]]) -> None:
    """A store as format 3 wrote it: generation 1 with ``documents`` (path -> chunk bodies),
    every chunk flushed into the full-text index, and a manifest saying format 3."""
    store_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    n = schema.names(1, format_version=3)
    conn = apsw.Connection(str(db_path(store_dir)))
    try:
        with conn:
            conn.execute(schema.BASE_DDL)
            conn.execute(
                FORMAT_3_DDL.format(d=n.documents, c=n.chunks, p=n.pending, f=n.fts, v=n.vocab)
            )
            for path, bodies in documents.items():
                doc = conn.execute(
                    f"INSERT INTO {n.documents}(path, title, chunk_count) VALUES (?, ?, ?)"
                    " RETURNING id",
                    (path, path, len(bodies)),
                ).get
                for i, body in enumerate(bodies):
                    conn.execute(
                        f"INSERT INTO {n.chunks}(document_id, ordinal, section, body, start_line,"
                        " end_line, hash, doc) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        (doc, i, path, body, i + 1, i + 1, f"h{doc}-{i}", path),
                    )
            for sql in schema.fts_flush_sql(1):
                conn.execute(sql)
            conn.executemany(
                "INSERT INTO rag_meta(key, value) VALUES (?, ?)",
                [("format_version", "3"), ("generation", "1")],
            )
    finally:
        conn.close()
