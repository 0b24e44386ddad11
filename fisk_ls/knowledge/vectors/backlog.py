"""The embedding backlog: chunks written to the lexical index that have no vector yet.

A file is written (and lexically searchable) as soon as it is chunked; its chunks start with
``embedded = 0`` unless the vector cache already holds their vectors. Embedding then works
through the backlog in id order. Each round's vectors are written in one transaction together
with their cache rows and the ``embedded`` flags, so a kill at any moment loses no vector that
was written and leaves exactly the chunks without one in the backlog (vec0's primary key makes
a duplicate impossible). Writing checks that each chunk still exists with the same text, so a
round computed while a file changed stores nothing stale.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..connect import scalar
from ..display import display_text
from . import knn

if TYPE_CHECKING:
    import apsw

    from ..schema import Tables


@dataclass(frozen=True)
class Coverage:
    """How many chunks of the live generation have a vector."""

    embedded: int
    chunks: int

    @property
    def backlog(self) -> int:
        return self.chunks - self.embedded

    @property
    def complete(self) -> bool:
        return self.embedded >= self.chunks

    def as_dict(self) -> dict[str, int]:
        return {"embedded": self.embedded, "chunks": self.chunks}

    def describe(self) -> str:
        """``2,310 of 6,628 chunks embedded``."""
        return f"{self.embedded:,} of {self.chunks:,} chunks embedded"


@dataclass(frozen=True)
class Pending:
    chunk_id: int
    hash: str
    text: str
    """What the chunk is embedded as: breadcrumb, blank line, body."""
    title: str


def coverage(conn: apsw.Connection, tables: Tables, chunks: int | None = None) -> Coverage:
    total = int(scalar(conn, f"SELECT count(*) FROM {tables.rows}")) if chunks is None else chunks
    waiting = int(scalar(conn, f"SELECT count(*) FROM {tables.rows} WHERE embedded = 0"))
    return Coverage(total - waiting, total)


def coverage_within(conn: apsw.Connection, tables: Tables, keys: Sequence[str]) -> Coverage:
    """The coverage of the documents under ``keys`` only: folder keys ending in ``/`` (every
    document below) or document keys (that one), as ``location.key_prefix`` and
    ``document_key`` give them (``watch docs/`` reports the backlog of docs/, not the
    store's)."""
    tests: list[str] = []
    args: list[object] = []
    for key in keys:
        if key.endswith("/"):
            tests.append("substr(d.path, 1, ?) = ?")
            args += [len(key), key]
        else:
            tests.append("d.path = ?")
            args.append(key)
    if not tests:
        return Coverage(0, 0)
    row = conn.execute(
        f"SELECT count(*), coalesce(sum(c.embedded), 0) FROM {tables.rows} c"
        f" JOIN {tables.documents} d ON d.id = c.document_id WHERE {' OR '.join(tests)}",
        args,
    ).fetchone()
    total, embedded = (int(row[0]), int(row[1])) if row else (0, 0)
    return Coverage(embedded, total)


def incomplete(conn: apsw.Connection, tables: Tables) -> Coverage | None:
    """The coverage when some chunks still wait for a vector, else None (cheap when complete:
    one lookup in the partial index)."""
    waiting = int(scalar(conn, f"SELECT count(*) FROM {tables.rows} WHERE embedded = 0"))
    if not waiting:
        return None
    total = int(scalar(conn, f"SELECT count(*) FROM {tables.rows}"))
    return Coverage(total - waiting, total)


def pending(conn: apsw.Connection, tables: Tables, limit: int, after: int = 0) -> list[Pending]:
    """Up to ``limit`` chunks without a vector, lowest id first, with id > ``after``."""
    rows = conn.execute(
        f"SELECT c.id, c.hash, c.section, c.body, d.title FROM {tables.chunks} c"
        f" JOIN {tables.documents} d ON d.id = c.document_id"
        " WHERE c.embedded = 0 AND c.id > ? ORDER BY c.id LIMIT ?",
        (after, limit),
    ).fetchall()
    return [
        Pending(int(r[0]), str(r[1]), display_text(str(r[2]), str(r[3])) or " ", str(r[4]))  # type: ignore[arg-type]
        for r in rows
    ]


def store(
    conn: apsw.Connection, tables: Tables, items: Iterable[Pending], vectors: dict[str, bytes]
) -> int:
    """Write vec0 rows for the items that are still waiting with the same text (inside the
    caller's transaction); returns how many were written."""
    written = 0
    for item in items:
        blob = vectors.get(item.hash)
        if blob is None:
            continue
        changed = conn.execute(  # the view compares the hash as text, whatever the format
            f"UPDATE {tables.rows} SET embedded = 1 WHERE id = ? AND embedded = 0 AND EXISTS"
            f" (SELECT 1 FROM {tables.chunks} c WHERE c.id = ? AND c.hash = ?) RETURNING id",
            (item.chunk_id, item.chunk_id, item.hash),
        ).fetchall()
        if changed:
            conn.execute(
                f"INSERT INTO {tables.vec}(chunk_id, embedding) VALUES (?, ?)",
                (item.chunk_id, blob),
            )
            knn.insert(conn, tables, [(item.chunk_id, blob)])
            written += 1
    return written


def store_chunk_vectors(
    conn: apsw.Connection, tables: Tables, doc_id: int, vectors: dict[str, bytes]
) -> int:
    """vec0 rows for the chunks of one just-written document whose vectors are known (the
    vector cache); the others stay in the backlog. Inside the caller's transaction."""
    rows = conn.execute(
        f"SELECT id, hash FROM {tables.chunks} WHERE document_id = ? AND embedded = 0",
        (doc_id,),
    ).fetchall()
    known = [(int(cid), vectors[str(h)]) for cid, h in rows if str(h) in vectors]  # type: ignore[arg-type]
    if known:
        conn.executemany(f"INSERT INTO {tables.vec}(chunk_id, embedding) VALUES (?, ?)", known)
        knn.insert(conn, tables, known)
        conn.executemany(
            f"UPDATE {tables.rows} SET embedded = 1 WHERE id = ?", [(cid,) for cid, _ in known]
        )
    return len(known)
