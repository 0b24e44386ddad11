"""The database schema, as SQL built by pure functions.

Documents, chunks and their full-text index live in tables suffixed by a *generation* number. The
manifest (``rag_meta``) names the generation readers use. A rebuild (``--reindex``, a model
switch) fills the next generation beside the live one and switches the manifest in one
transaction when it is complete, so readers never see an empty or half-built index and a failed
or killed rebuild leaves the previous generation answering.
"""

from __future__ import annotations

from typing import NamedTuple

FORMAT_VERSION = 4
"""Bumped when the layout changes; readers refuse a newer one, and the next writer rebuilds an
older one into a new generation (readers keep the old one until the switch).

2: chunks lost ``heading_line`` (it always equalled ``start_line``).
3: chunks and their full-text index gained ``doc`` (the document's title, description, path).
4: chunks gained ``near`` (the near-duplicate key of collapse.py)."""

FTS_TOKENIZER = "porter unicode61 remove_diacritics 2"

BASE_DDL = """
CREATE TABLE IF NOT EXISTS rag_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS vector_cache (
  identity TEXT NOT NULL,
  hash TEXT NOT NULL,
  embedding BLOB NOT NULL,
  PRIMARY KEY (identity, hash)
) WITHOUT ROWID;
"""


class Tables(NamedTuple):
    """The table names of one generation."""

    documents: str
    chunks: str
    fts: str
    vec: str
    vocab: str


def names(generation: int) -> Tables:
    """Table names of one generation."""
    g = int(generation)
    return Tables(
        documents=f"documents_{g}",
        chunks=f"chunks_{g}",
        fts=f"chunks_fts_{g}",
        vec=f"chunks_vec_{g}",
        vocab=f"chunks_vocab_{g}",
    )


def generation_ddl(generation: int) -> str:
    """Tables, index and FTS triggers of one generation.

    ``chunks.cjk`` holds CJK bigrams (NULL for text without CJK) so that Chinese and Japanese are
    searchable with the unicode61 tokenizer; see fts.py. ``chunks.doc`` holds what names the
    whole document (title, front-matter description, path), the same for each of its chunks, so
    words that name a page rank its chunks (BM25 weights in search.py).
    """
    n = names(generation)
    d, c, f = n.documents, n.chunks, n.fts
    return f"""
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
  near TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS {c}_doc ON {c}(document_id, ordinal);
CREATE VIRTUAL TABLE IF NOT EXISTS {f} USING fts5(
  section, body, cjk, doc, content='{c}', content_rowid='id', tokenize='{FTS_TOKENIZER}'
);
INSERT INTO {f}({f}, rank) VALUES ('automerge', 8);
CREATE VIRTUAL TABLE IF NOT EXISTS {n.vocab} USING fts5vocab({f}, 'row');
CREATE TRIGGER IF NOT EXISTS {c}_ai AFTER INSERT ON {c} BEGIN
  INSERT INTO {f}(rowid, section, body, cjk, doc)
  VALUES (new.id, new.section, new.body, new.cjk, new.doc);
END;
CREATE TRIGGER IF NOT EXISTS {c}_ad AFTER DELETE ON {c} BEGIN
  INSERT INTO {f}({f}, rowid, section, body, cjk, doc)
  VALUES ('delete', old.id, old.section, old.body, old.cjk, old.doc);
END;
CREATE TRIGGER IF NOT EXISTS {c}_au AFTER UPDATE ON {c} BEGIN
  INSERT INTO {f}({f}, rowid, section, body, cjk, doc)
  VALUES ('delete', old.id, old.section, old.body, old.cjk, old.doc);
  INSERT INTO {f}(rowid, section, body, cjk, doc)
  VALUES (new.id, new.section, new.body, new.cjk, new.doc);
END;
"""


def vec_ddl(generation: int, dimension: int) -> str:
    return (
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {names(generation).vec} "
        f"USING vec0(chunk_id INTEGER PRIMARY KEY, embedding float[{int(dimension)}])"
    )


def drop_generation_sql(generation: int) -> list[str]:
    n = names(generation)
    return [
        f"DROP TABLE IF EXISTS {n.vocab}",
        f"DROP TABLE IF EXISTS {n.vec}",
        f"DROP TABLE IF EXISTS {n.fts}",
        f"DROP TABLE IF EXISTS {n.chunks}",
        f"DROP TABLE IF EXISTS {n.documents}",
    ]
