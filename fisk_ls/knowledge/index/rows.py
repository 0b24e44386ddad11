"""Writing and deleting a document's rows: its document row, chunks, tags and vectors, inside
the caller's transaction.

Chunks (format 4): each distinct body is stored once, in ``texts``.

A chunk row points at its body by id; ``texts.key`` (schema.body_key, computed by the worker that
chunked the file) finds a body already stored, e.g. the same paragraph in another versioned copy
of the page. The triggers in schema.py count each body's chunks and drop it with the last one,
and queue new chunks for the full-text flush.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..connect import scalar
from ..vectors.backlog import store_chunk_vectors
from ..vectors.tier import delete_vectors

if TYPE_CHECKING:
    import apsw

    from ..schema import Tables
    from .examine import ChunkRow, Prepared


def insert_chunks(
    conn: apsw.Connection, tables: Tables, document_id: int, rows: Sequence[ChunkRow]
) -> None:
    """Write ``rows`` as chunks of ``document_id`` (inside the caller's transaction)."""
    t = tables.texts
    conn.executemany(
        f"INSERT INTO {t}(key, body) VALUES (?, ?) ON CONFLICT(key) DO NOTHING",
        [(row.key, row.body) for row in rows],
    )
    conn.executemany(
        f"INSERT INTO {tables.rows}(document_id, ordinal, section, text_id, cjk, start_line,"
        f" end_line, hash, near) VALUES (?, ?, ?, (SELECT id FROM {t} WHERE key = ?), ?, ?, ?,"
        " ?, ?)",
        [
            (
                document_id,
                row.ordinal,
                row.section,
                row.key,
                row.cjk,
                row.start_line,
                row.end_line,
                bytes.fromhex(row.hash),
                bytes.fromhex(row.near.removeprefix("n:")),
            )
            for row in rows
        ],
    )


def write_document(
    conn: apsw.Connection,
    tables: Tables,
    prep: Prepared,
    vectors: dict[str, bytes] | None,
    *,
    has_vectors: bool,
) -> None:
    """One file's document row and chunks (and the chunks' cached ``vectors``), replacing what
    the document held. A body already stored (another chunk's, e.g. a versioned copy of the
    page) is shared. ``has_vectors``: the generation has its vector table."""
    d, r = tables.documents, tables.rows
    cand = prep.candidate
    doc_id = scalar(
        conn,
        f"INSERT INTO {d}(path, title, size, mtime_ns, inode, hash, chunk_count,"
        " indexed_at, doc) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(path) DO UPDATE"
        " SET title=excluded.title, size=excluded.size, mtime_ns=excluded.mtime_ns,"
        " inode=excluded.inode, hash=excluded.hash, chunk_count=excluded.chunk_count,"
        " indexed_at=excluded.indexed_at, doc=excluded.doc RETURNING id",
        (
            prep.key,
            prep.title,
            cand.size,
            cand.mtime_ns,
            cand.inode,
            prep.digest,
            len(prep.rows),
            time.time(),
            prep.about,
        ),
    )
    if prep.existing is not None:
        if has_vectors:
            delete_vectors(conn, tables, doc_id)
        conn.execute(f"DELETE FROM {r} WHERE document_id = ?", (doc_id,))
        if tables.tags:
            conn.execute(f"DELETE FROM {tables.tags} WHERE document_id = ?", (doc_id,))
    insert_chunks(conn, tables, doc_id, prep.rows)
    if tables.tags and prep.tags:
        conn.executemany(
            f"INSERT INTO {tables.tags}(tag, document_id) VALUES (?, ?)",
            [(tag, doc_id) for tag in prep.tags],
        )
    if vectors:
        store_chunk_vectors(conn, tables, doc_id, vectors)


def delete_document(conn: apsw.Connection, tables: Tables, key: str, *, has_vectors: bool) -> None:
    """The document ``key`` with its chunks (and vectors); nothing when it is not indexed."""
    d, r = tables.documents, tables.rows
    row = conn.execute(f"SELECT id FROM {d} WHERE path = ?", (key,)).fetchone()
    if row is None:
        return
    if has_vectors:
        delete_vectors(conn, tables, row[0])
    conn.execute(f"DELETE FROM {r} WHERE document_id = ?", (row[0],))
    conn.execute(f"DELETE FROM {d} WHERE id = ?", (row[0],))
