"""The database schema, as SQL built by pure functions.

Documents, chunks and their full-text index live in tables suffixed by a *generation* number. The
manifest (``rag_meta``) names the generation readers use. A rebuild (``--reindex``, a model
switch) fills the next generation beside the live one and switches the manifest in one
transaction when it is complete, so readers never see an empty or half-built index and a failed
or killed rebuild leaves the previous generation answering.
"""

from __future__ import annotations

from typing import NamedTuple

FORMAT_VERSION = 3
"""Bumped when the layout changes; readers refuse a newer one, and the next writer rebuilds an
older one into a new generation (readers keep the old one until the switch).

1: the first release.
2: chunks lost ``heading_line`` (it always equalled ``start_line``) and gained ``doc`` (the
   document's title, description and path, also a full-text column), ``near`` (the
   near-duplicate key of collapse.py) and ``embedded`` (1 once its vec0 row exists: the backlog
   is ``embedded = 0``); hybrid generations gain ``chunks_vq_N`` (an int8 and a float32 copy of
   each vector) for the coarse KNN pass of large indexes (vectors/knn.py).
3: full-text rows are written once per transaction, not per chunk: the insert trigger records
   the new chunk's id in ``chunks_pending_N`` and the writer moves every pending chunk into
   ``chunks_fts_N`` in one statement just before each commit (writer.flush_fts); deleting or
   editing a chunk still pending touches only the pending table."""

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
    vq: str
    """int8 + float32 copy of each vector: the coarse KNN pass (vectors/knn.py)."""
    pending: str
    """Ids of chunks written since the last commit and not yet in ``fts`` (format 3)."""


def names(generation: int) -> Tables:
    """Table names of one generation."""
    g = int(generation)
    return Tables(
        documents=f"documents_{g}",
        chunks=f"chunks_{g}",
        fts=f"chunks_fts_{g}",
        vec=f"chunks_vec_{g}",
        vocab=f"chunks_vocab_{g}",
        vq=f"chunks_vq_{g}",
        pending=f"chunks_pending_{g}",
    )


def required(generation: int, hybrid: bool, format_version: int = FORMAT_VERSION) -> list[str]:
    """What a generation cannot work without (``sqlite_master`` names): its tables and the
    triggers that keep the full-text index in step with the chunks (from format 3 also the
    pending table the insert trigger writes). A writer goes on (and so drops other
    generations) only when the manifest's generation has all of them."""
    n = names(generation)
    c = n.chunks
    triggers = [f"{c}_ai", f"{c}_ad", f"{c}_au"]
    pending = [n.pending] if format_version >= 3 else []
    return [n.documents, c, n.fts, *pending, *triggers, *([n.vec] if hybrid else [])]


def generation_ddl(generation: int) -> str:
    """Tables, indexes and triggers of one generation.

    ``chunks.cjk`` holds CJK bigrams (NULL for text without CJK) so that Chinese and Japanese are
    searchable with the unicode61 tokenizer; see fts.py. ``chunks.doc`` holds what names the
    whole document (title, front-matter description, path), the same for each of its chunks, so
    words that name a page rank its chunks (BM25 weights in search.py). ``chunks.embedded`` is
    set in the same transaction that writes the chunk's vec0 row; the partial index makes the
    backlog (chunks still without a vector) and its count cheap at any size.

    Full-text rows: FTS5 pays a fixed cost per write statement, so a per-row insert trigger
    made the first build of 150k chunks several times slower than the chunking. A new chunk's
    id goes into ``pending`` instead (a plain table, cheap), and ``fts_flush_sql`` moves all
    pending chunks into the FTS table in one statement before each commit. The invariant, in
    every transaction and at every savepoint: the FTS table holds exactly the chunks that are
    not pending, with their current text. So a deleted or edited chunk is removed from the FTS
    table only when it is not pending (a pending one is simply dropped from ``pending`` or
    flushed later with its new text), and a rolled-back savepoint undoes both tables together.
    A chunk's id never changes once written (nothing updates it; the triggers assume so).
    """
    n = names(generation)
    d, c, f, p = n.documents, n.chunks, n.fts, n.pending
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
  near TEXT NOT NULL DEFAULT '',
  embedded INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS {c}_doc ON {c}(document_id, ordinal);
CREATE INDEX IF NOT EXISTS {c}_backlog ON {c}(id) WHERE embedded = 0;
CREATE TABLE IF NOT EXISTS {p} (id INTEGER PRIMARY KEY);
CREATE VIRTUAL TABLE IF NOT EXISTS {f} USING fts5(
  section, body, cjk, doc, content='{c}', content_rowid='id', tokenize='{FTS_TOKENIZER}'
);
INSERT INTO {f}({f}, rank) VALUES ('automerge', 8);
CREATE VIRTUAL TABLE IF NOT EXISTS {n.vocab} USING fts5vocab({f}, 'row');
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


def fts_flush_sql(generation: int) -> tuple[str, str]:
    """The two statements that move every pending chunk of a generation into its FTS table
    (run them in this order, inside the transaction, just before its commit)."""
    n = names(generation)
    # CROSS JOIN keeps the pending table as the outer loop: with a plain JOIN, once ANALYZE
    # (PRAGMA optimize) has counted the chunks, the planner scanned all of them for each
    # commit (0.13 s per commit on 150k chunks, even with nothing pending).
    return (
        f"INSERT INTO {n.fts}(rowid, section, body, cjk, doc) "
        f"SELECT c.id, c.section, c.body, c.cjk, c.doc FROM {n.pending} AS p "
        f"CROSS JOIN {n.chunks} AS c ON c.id = p.id ORDER BY p.id",
        f"DELETE FROM {n.pending}",
    )


def vec_ddl(generation: int, dimension: int) -> str:
    """The vector tables of one generation: vec0 for exact KNN, and the coarse-pass table
    (``seq`` only grows, so a reader's cached bit matrix can append what is new)."""
    n = names(generation)
    return (
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {n.vec} "
        f"USING vec0(chunk_id INTEGER PRIMARY KEY, embedding float[{int(dimension)}]);\n"
        f"CREATE TABLE IF NOT EXISTS {n.vq} (\n"
        "  seq INTEGER PRIMARY KEY AUTOINCREMENT,\n"
        "  chunk_id INTEGER NOT NULL UNIQUE,\n"
        "  q8 BLOB NOT NULL,\n"
        "  scale REAL NOT NULL,\n"
        "  embedding BLOB NOT NULL\n"
        ");"
    )


def drop_generation_sql(generation: int) -> list[str]:
    n = names(generation)
    return [
        f"DROP TABLE IF EXISTS {n.vocab}",
        f"DROP TABLE IF EXISTS {n.vq}",
        f"DROP TABLE IF EXISTS {n.vec}",
        f"DROP TABLE IF EXISTS {n.fts}",
        f"DROP TABLE IF EXISTS {n.pending}",
        f"DROP TABLE IF EXISTS {n.chunks}",
        f"DROP TABLE IF EXISTS {n.documents}",
    ]
