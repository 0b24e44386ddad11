"""Writing a document's chunks (format 4): each distinct body is stored once, in ``texts``.

A chunk row points at its body by id; ``texts.key`` (schema.body_key, computed by the worker that
chunked the file) finds a body already stored, e.g. the same paragraph in another versioned copy
of the page. The triggers in schema.py count each body's chunks and drop it with the last one,
and queue new chunks for the full-text flush.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import apsw

    from ..schema import Tables
    from .examine import ChunkRow


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
