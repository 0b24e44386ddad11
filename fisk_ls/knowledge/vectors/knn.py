"""Nearest chunks to a query vector: exact KNN for small indexes, a binary coarse pass with
exact re-scoring for large ones.

sqlite-vec's ``vec0`` KNN is brute force over float32: at 150k chunks and 384 dimensions it
reads 230 MB per query. Large indexes therefore also keep, per chunk, the sign bits of its
vector (``vec_quantize_binary``: 48 bytes at 384 dimensions) and a float32 copy in a plain
table keyed by chunk id (``Tables.vq``). A query then

1. ranks every chunk by Hamming distance between sign bits, in memory (numpy, popcount over
   ``uint64`` words: ~7 MB at 150k chunks), keeping the best ``CANDIDATES``;
2. re-scores those candidates by their exact float32 distance (a primary-key read each) and
   returns the best ``limit``.

Why not ``vec0``'s own ``bit[N]`` column: its top-k selection costs O(rows x k), so a coarse
pass of a few hundred candidates is barely faster than the exact float scan. Why a float copy:
reading one vector out of ``vec0`` by id walks the overflow chain of a 1.5 MB chunk blob.

The bit matrix is cached by a long-lived reader (:class:`CoarseIndex`) and refreshed
incrementally: rows carry an ever-increasing ``seq``, so new rows are appended; rows deleted
since are found by count and cleaned up by a full reload once they are more than a tenth. A
deleted chunk among the candidates is simply not found when re-scored.

Measured on real all-MiniLM-L6-v2 vectors (bench/knn.py, results in bench/results/knn.json):
recall@10 against exact KNN, and the threshold below which exact KNN is as fast.
Without numpy (it comes with ``fisk-ls[embed]`` and is a dependency) every search is exact.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..schema import Tables
from .pack import pack

if TYPE_CHECKING:
    import apsw

    from ..store import Snapshot

EXACT_BELOW = 20_000
"""Indexes with fewer vectors than this are searched exactly (bench/knn.py: exact is as fast)."""
CANDIDATES = 400
"""Chunks the coarse pass keeps for exact re-scoring."""
STALE_FRACTION = 0.1
"""Deleted rows tolerated in the cached bit matrix before it is reloaded."""


def insert(conn: apsw.Connection, tables: Tables, rows: Sequence[tuple[int, bytes]]) -> None:
    """Coarse-pass rows for (chunk id, packed float32 vector) pairs (caller's transaction).

    The coarse pass works on 64-bit words, so an index whose dimension is not a multiple of 64
    keeps no coarse rows and is always searched exactly.
    """
    usable = [(cid, blob) for cid, blob in rows if (len(blob) // 4) % 64 == 0]
    conn.executemany(
        f"INSERT OR REPLACE INTO {tables.vq}(chunk_id, bits, embedding)"
        " VALUES (?, vec_quantize_binary(?), ?)",
        [(cid, blob, blob) for cid, blob in usable],
    )


def delete_document(conn: apsw.Connection, tables: Tables, doc_id: int) -> None:
    conn.execute(
        f"DELETE FROM {tables.vq} WHERE chunk_id IN "
        f"(SELECT id FROM {tables.chunks} WHERE document_id = ?)",
        (doc_id,),
    )


def exact(snap: Snapshot, vector: Sequence[float], limit: int) -> list[int]:
    """Brute-force vec0 KNN; ties by id."""
    v = snap.tables.vec
    rows = snap.conn.execute(
        f"SELECT chunk_id, distance FROM {v} WHERE embedding MATCH ? AND k = ? ORDER BY distance",
        (pack(vector), limit),
    ).fetchall()
    ranked = sorted((float(d), int(c)) for c, d in rows)  # type: ignore[arg-type]
    return [cid for _, cid in ranked]


def nearest(
    snap: Snapshot,
    vector: Sequence[float],
    limit: int,
    coarse: CoarseIndex | None = None,
    *,
    exact_below: int = EXACT_BELOW,
    candidates: int = CANDIDATES,
) -> list[int]:
    """The ``limit`` chunks nearest to ``vector`` (a unit vector), best first, ties by id."""
    if coarse is not None:
        found = coarse.search(snap, vector, limit, exact_below, candidates)
        if found is not None:
            return found
    return exact(snap, vector, limit)


class CoarseIndex:
    """The in-memory sign-bit matrix of one store's live generation (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._key: tuple[str, int] = ("", 0)  # (vq table, dimension words)
        self._seq = 0  # highest seq loaded
        self._ids: Any = None  # numpy int64 [n]
        self._bits: Any = None  # numpy uint64 [n, words]
        self._rows = 0
        self.loads = 0
        """Full loads so far (tests check that a refresh appends instead of reloading)."""

    def search(
        self,
        snap: Snapshot,
        vector: Sequence[float],
        limit: int,
        exact_below: int,
        candidates: int,
    ) -> list[int] | None:
        """Coarse pass + exact re-scoring; None when exact KNN should answer instead."""
        try:
            import numpy as np
        except ImportError:
            return None
        if len(vector) % 64 or not _has_table(snap.conn, snap.tables.vq):
            return None
        row: Any = snap.conn.execute(
            f"SELECT count(*), coalesce(max(seq), 0) FROM {snap.tables.vq}"
        ).fetchone()
        count, top = int(row[0]), int(row[1])
        if count < max(exact_below, 1) or count <= limit:
            return None
        ids, bits = self._refresh(snap, count, top, len(vector) // 64)
        query = np.asarray(vector, dtype=np.float32)
        qbits = np.packbits(query > 0, bitorder="little").view(np.uint64)
        distances = np.bitwise_count(bits ^ qbits).sum(axis=1, dtype=np.uint16)
        keep = min(candidates, len(ids))
        picked = np.argpartition(distances, keep - 1)[:keep]
        chosen = sorted({int(cid) for cid in ids[picked]})
        return _rescore(snap, query, chosen, limit)

    def _refresh(self, snap: Snapshot, count: int, top: int, words: int) -> tuple[Any, Any]:
        import numpy as np

        key = (snap.tables.vq, words)
        with self._lock:
            stale = self._rows - count
            if key != self._key or stale > STALE_FRACTION * max(count, 1) or top < self._seq:
                self._key, self._seq, self._rows = key, 0, 0
                self._ids = np.zeros(0, dtype=np.int64)
                self._bits = np.zeros((0, words), dtype=np.uint64)
                self.loads += 1
            if top > self._seq:
                rows: list[Any] = snap.conn.execute(
                    f"SELECT seq, chunk_id, bits FROM {snap.tables.vq} WHERE seq > ? ORDER BY seq",
                    (self._seq,),
                ).fetchall()
                new_ids = np.fromiter((r[1] for r in rows), dtype=np.int64, count=len(rows))
                raw = b"".join(bytes(r[2]) for r in rows)
                new_bits = np.frombuffer(raw, dtype=np.uint64).reshape(len(rows), words)
                self._ids = np.concatenate([self._ids, new_ids])
                self._bits = np.concatenate([self._bits, new_bits])
                self._seq = int(rows[-1][0]) if rows else top
                self._rows += len(rows)
            return self._ids, self._bits


def _rescore(snap: Snapshot, query: Any, chosen: list[int], limit: int) -> list[int]:
    import numpy as np

    found: list[int] = []
    blobs: list[bytes] = []
    stmt = f"SELECT embedding FROM {snap.tables.vq} WHERE chunk_id = ?"
    for cid in chosen:
        row: Any = snap.conn.execute(stmt, (cid,)).fetchone()
        if row is not None:  # a chunk deleted since the bit matrix was loaded
            found.append(cid)
            blobs.append(bytes(row[0]))
    if not found:
        return []
    matrix = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(found), -1)
    # Unit vectors: squared L2 distance is 2 - 2 cos, so the largest dot product is nearest.
    scores = matrix @ query
    order = sorted(range(len(found)), key=lambda i: (-float(scores[i]), found[i]))
    return [found[i] for i in order[:limit]]


def _has_table(conn: apsw.Connection, name: str) -> bool:
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type='table' AND name = ?", (name,)
    ).fetchone()
    return row is not None
