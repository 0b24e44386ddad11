"""The database schema, as SQL built by pure functions.

Documents, chunks and their full-text index live in tables suffixed by a *generation* number. The
manifest (``rag_meta``) names the generation readers use. A rebuild (``--reindex``, a model
switch) fills the next generation beside the live one and switches the manifest in one
transaction when it is complete, so readers never see an empty or half-built index and a failed
or killed rebuild leaves the previous generation answering.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

from .digests import blake2b

FORMAT_VERSION = 5
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
   editing a chunk still pending touches only the pending table.
4: one copy of each distinct chunk body (``texts_N``, shared by the chunks that hold it:
   versioned docs repeat most of their text), the document field stored once per document
   (``documents_N.doc``), and a contentless full-text index (``contentless_delete``: a delete
   needs no copy of the old text, so no stale value can corrupt it). The chunk rows are
   ``chunk_rows_N``; ``chunks_N`` is a view with the chunk columns of formats 2-3, so readers
   read every format alike. The PowerShell docs' index shrank from 218 to 120 MB.
5: each document's front-matter tags (``tags_N``: tag, document id), the tag filter of a
   search (scope.py); otherwise format 4. A format-4 store answers every search but one with
   tags until the next writer rebuilds it."""

FTS_TOKENIZER = "porter unicode61 remove_diacritics 2"

# vector_cache.identity holds VectorSpace.cache_key() (vectors/space.py); the column keeps the
# name stores were first written with, so their cached vectors stay valid.
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
    rows: str
    """Where chunks are written: ``chunk_rows_N`` from format 4 (``chunks`` is a view over it
    there), ``chunks`` itself before."""
    texts: str
    """The distinct chunk bodies (format 4; the name is unused before)."""
    tags: str
    """Each document's front-matter tags (format 5; "" before: that layout has none)."""


@functools.lru_cache(maxsize=64)
def names(generation: int, format_version: int = FORMAT_VERSION) -> Tables:
    """Table names of one generation (of ``format_version``'s layout); remembered, as a search
    asks them of its snapshot a few dozen times."""
    g = int(generation)
    return Tables(
        documents=f"documents_{g}",
        chunks=f"chunks_{g}",
        fts=f"chunks_fts_{g}",
        vec=f"chunks_vec_{g}",
        vocab=f"chunks_vocab_{g}",
        vq=f"chunks_vq_{g}",
        pending=f"chunks_pending_{g}",
        rows=f"chunk_rows_{g}" if format_version >= 4 else f"chunks_{g}",
        texts=f"texts_{g}",
        tags=f"tags_{g}" if format_version >= 5 else "",
    )


def required(generation: int, hybrid: bool, format_version: int = FORMAT_VERSION) -> list[str]:
    """What a generation cannot work without (``sqlite_master`` names): its tables and the
    triggers that keep the full-text index in step with the chunks (from format 3 also the
    pending table the insert trigger writes). A writer goes on (and so drops other
    generations) only when the manifest's generation has all of them."""
    n = names(generation, format_version)
    r = n.rows
    triggers = [f"{r}_ai", f"{r}_ad", f"{r}_au"]
    pending = [n.pending] if format_version >= 3 else []
    shared = [n.texts, r, f"{n.documents}_au"] if format_version >= 4 else []
    tags = [n.tags] if n.tags else []
    return [
        n.documents,
        n.chunks,
        n.fts,
        *pending,
        *shared,
        *tags,
        *triggers,
        *([n.vec] if hybrid else []),
    ]


def text_index_name(generation: int) -> str:
    """The name of :func:`text_index_ddl`'s index."""
    return f"{names(generation).rows}_text"


def text_index_ddl(generation: int) -> str:
    """The index on ``chunk_rows.text_id``: deleting a body checks that no chunk still refers to
    it (the foreign key), a scan of every chunk without it, so removing many documents was
    quadratic. Stores made before it get it when a writer opens them, and a first build makes
    it after its rows (``Writer.text_index_after``)."""
    r = names(generation).rows
    return f"CREATE INDEX IF NOT EXISTS {text_index_name(generation)} ON {r}(text_id);"


def generation_ddl(generation: int) -> str:
    """Tables, view, indexes and triggers of one generation.

    ``chunk_rows.cjk`` holds CJK bigrams (NULL for text without CJK) so that Chinese and
    Japanese are searchable with the unicode61 tokenizer; see fts.py. ``documents.doc`` holds
    what names the whole document (title, front-matter description, path), indexed with each
    of its chunks, so words that name a page rank its chunks (BM25 weights in search.py).
    ``tags`` holds each document's front-matter tags (normalised: settings_checks.normal_tag),
    keyed by tag first, so a tag filter reads only its documents; removing a document removes
    its tags (the foreign key).
    ``chunk_rows.embedded`` is set in the same transaction that writes the chunk's vec0 row (the
    backlog's partial index is made with the vector tables, vec_ddl). ``hash`` (the chunk's
    digest, the vector cache's key) and ``near`` (collapse.py's key) are stored as bytes and
    read through the view as the hex text of earlier formats.

    Bodies: ``texts`` keeps one copy of each distinct body (``key`` is its digest, written by
    the indexer); a chunk points at its body and the triggers count the references, dropping a
    body with its last chunk. ``chunks`` is the view readers use: the chunk columns of formats
    2-3 (LEFT JOINs on primary keys, so a query that reads no body or document field costs no
    join).

    Full-text rows: FTS5 pays a fixed cost per write statement, so a per-row insert trigger
    made the first build of 150k chunks several times slower than the chunking. A new chunk's
    id goes into ``pending`` instead (a plain table, cheap), and ``fts_flush_sql`` moves all
    pending chunks into the FTS table in one statement before each commit. The invariant, in
    every transaction and at every savepoint: the FTS table holds exactly the chunks that are
    not pending, with their current text. A deleted chunk leaves the (contentless) FTS table
    by rowid unless it is still pending; a chunk or document field that changes puts the chunk
    back in ``pending`` (its FTS row removed), so the flush writes its current text; a rolled
    back savepoint undoes all the tables together. A chunk's id never changes once written.
    """
    n = names(generation)
    d, c, r, t, f, p = n.documents, n.chunks, n.rows, n.texts, n.fts, n.pending
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
  indexed_at REAL NOT NULL DEFAULT 0,
  doc TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS {n.tags} (
  tag TEXT NOT NULL,
  document_id INTEGER NOT NULL REFERENCES {d}(id) ON DELETE CASCADE,
  PRIMARY KEY (tag, document_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS {n.tags}_doc ON {n.tags}(document_id);
CREATE TABLE IF NOT EXISTS {t} (
  id INTEGER PRIMARY KEY,
  key BLOB NOT NULL UNIQUE,
  body TEXT NOT NULL,
  refs INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS {r} (
  id INTEGER PRIMARY KEY,
  document_id INTEGER NOT NULL REFERENCES {d}(id) ON DELETE CASCADE,
  ordinal INTEGER NOT NULL,
  section TEXT NOT NULL DEFAULT '',
  text_id INTEGER NOT NULL REFERENCES {t}(id),
  cjk TEXT,
  start_line INTEGER NOT NULL,
  end_line INTEGER NOT NULL,
  hash BLOB NOT NULL,
  near BLOB NOT NULL,
  embedded INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS {r}_doc ON {r}(document_id, ordinal);
{text_index_ddl(generation)}
CREATE VIEW IF NOT EXISTS {c} AS
SELECT r.id AS id, r.document_id AS document_id, r.ordinal AS ordinal, r.section AS section,
       t.body AS body, r.cjk AS cjk, r.start_line AS start_line, r.end_line AS end_line,
       lower(hex(r.hash)) AS hash, d.doc AS doc, 'n:' || lower(hex(r.near)) AS near,
       r.embedded AS embedded
FROM {r} AS r LEFT JOIN {t} AS t ON t.id = r.text_id LEFT JOIN {d} AS d ON d.id = r.document_id;
CREATE TABLE IF NOT EXISTS {p} (id INTEGER PRIMARY KEY);
CREATE VIRTUAL TABLE IF NOT EXISTS {f} USING fts5(
  section, body, cjk, doc, content='', contentless_delete=1, tokenize='{FTS_TOKENIZER}'
);
INSERT INTO {f}({f}, rank) VALUES ('automerge', 8);
CREATE VIRTUAL TABLE IF NOT EXISTS {n.vocab} USING fts5vocab({f}, 'row');
CREATE TRIGGER IF NOT EXISTS {r}_ai AFTER INSERT ON {r} BEGIN
  INSERT INTO {p}(id) VALUES (new.id);
  UPDATE {t} SET refs = refs + 1 WHERE id = new.text_id;
END;
CREATE TRIGGER IF NOT EXISTS {r}_ad AFTER DELETE ON {r} BEGIN
  DELETE FROM {f} WHERE rowid = old.id AND NOT EXISTS (SELECT 1 FROM {p} WHERE id = old.id);
  DELETE FROM {p} WHERE id = old.id;
  UPDATE {t} SET refs = refs - 1 WHERE id = old.text_id;
  DELETE FROM {t} WHERE id = old.text_id AND refs <= 0;
END;
CREATE TRIGGER IF NOT EXISTS {r}_au AFTER UPDATE OF section, text_id, cjk, document_id ON {r}
BEGIN
  DELETE FROM {f} WHERE rowid = old.id AND NOT EXISTS (SELECT 1 FROM {p} WHERE id = old.id);
  INSERT OR IGNORE INTO {p}(id) VALUES (new.id);
  UPDATE {t} SET refs = refs + 1 WHERE id = new.text_id AND new.text_id <> old.text_id;
  UPDATE {t} SET refs = refs - 1 WHERE id = old.text_id AND new.text_id <> old.text_id;
  DELETE FROM {t} WHERE id = old.text_id AND refs <= 0;
END;
CREATE TRIGGER IF NOT EXISTS {d}_au AFTER UPDATE OF doc ON {d}
WHEN new.doc IS NOT old.doc BEGIN
  DELETE FROM {f} WHERE rowid IN (
    SELECT id FROM {r} WHERE document_id = new.id AND id NOT IN (SELECT id FROM {p})
  );
  INSERT OR IGNORE INTO {p}(id) SELECT id FROM {r} WHERE document_id = new.id;
END;
"""


def body_key(body: str) -> bytes:
    """``texts.key``: the digest that finds a body's one stored copy."""
    return blake2b(body.encode(), digest_size=16).digest()


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
    """The vector tables of one generation: the backlog's index (chunks still without a
    vector: its count is cheap at any size), vec0 for exact KNN, and the coarse-pass table
    (``seq`` only grows, so a reader's cached bit matrix can append what is new)."""
    n = names(generation)
    backlog = f"CREATE INDEX IF NOT EXISTS {n.rows}_backlog ON {n.rows}(id) WHERE embedded = 0;\n"
    return (
        backlog + f"CREATE VIRTUAL TABLE IF NOT EXISTS {n.vec} "
        f"USING vec0(chunk_id INTEGER PRIMARY KEY, embedding float[{int(dimension)}]);\n"
        f"CREATE TABLE IF NOT EXISTS {n.vq} (\n"
        "  seq INTEGER PRIMARY KEY AUTOINCREMENT,\n"
        "  chunk_id INTEGER NOT NULL UNIQUE,\n"
        "  q8 BLOB NOT NULL,\n"
        "  scale REAL NOT NULL,\n"
        "  embedding BLOB NOT NULL\n"
        ");"
    )


def drop_generation_sql(generation: int, views: frozenset[str] = frozenset()) -> list[str]:
    """Drop every table of a generation, of any format (``views``: which of its names are
    views in this database: ``chunks_N`` from format 4)."""
    n = names(generation)
    tags = f"tags_{int(generation)}"  # of format 5 on; IF EXISTS covers the older ones
    every = (n.vocab, n.vq, n.vec, n.chunks, n.fts, n.pending, tags, n.rows, n.texts, n.documents)
    return [f"DROP {'VIEW' if t in views else 'TABLE'} IF EXISTS {t}" for t in every]
