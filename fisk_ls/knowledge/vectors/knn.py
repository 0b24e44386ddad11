"""Nearest chunks to a query vector: exact KNN for small indexes, a quantized coarse pass with
exact re-scoring for large ones.

sqlite-vec's ``vec0`` KNN is brute force over float32: at 150k chunks and 384 dimensions it
reads 230 MB per query. Large indexes therefore also keep, per chunk, an int8 copy of its vector
(scaled by its largest component) and a float32 copy, in a plain table keyed by chunk id
(``Tables.vq``). A long-lived reader holds the int8 matrix in memory (384 bytes a chunk: 58 MB
at 150k) with the sign bits derived from it, and a query

1. ranks every chunk by Hamming distance between sign bits (popcount over ``uint64`` words)
   and keeps the best ``HAMMING_SHARE`` of the index (at least ``HAMMING_MIN``);
2. scores those by the dot product of the float query with their int8 vectors and keeps the
   best ``CANDIDATES``;
3. re-scores the candidates by their exact float32 distance (a primary-key read each) and
   returns the best ``limit``.

Sign bits alone lose too much at 384 dimensions (recall@10 0.90 at 400 candidates over 150k,
bench/knn.py), and the int8 pass over the Hamming survivors recovers all of it; the int8 scores
alone rank almost exactly, so few float reads are needed. Why not ``vec0``'s own ``bit[N]`` or
``int8[N]`` columns: its top-k selection costs O(rows x k), so a coarse pass of a few hundred
candidates is barely faster than the exact scan. Why a float copy: reading one vector out of
``vec0`` by id walks the overflow chain of a 1.5 MB chunk blob.

The matrix is refreshed incrementally: rows carry an ever-increasing ``seq``, so new rows are
appended; rows deleted since are found by count and cleaned up by a full reload once they are
more than a tenth. A deleted chunk among the candidates is simply not found when re-scored.
Without numpy every search is exact.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..connect import scalar
from ..schema import Tables
from .pack import pack

if TYPE_CHECKING:
    import apsw

    from ..store import Snapshot

Scored = list[tuple[int, float]]
"""(chunk id, cosine similarity to the query), best first, ties by id."""

EXACT_BELOW = 5_000
"""Indexes with fewer vectors than this are searched exactly: there both take a few ms, and
above it exact grows linearly while the coarse pass stays flat (``bench/knn.py --sweep``)."""

HAMMING_SHARE = 0.125
"""Share of the index the sign-bit pass keeps for the int8 pass."""
HAMMING_MIN = 4000
CANDIDATES = 100
"""Chunks the int8 pass keeps for exact re-scoring."""
STALE_FRACTION = 0.1
"""Deleted rows tolerated in the cached bit matrix before it is reloaded."""


def insert(conn: apsw.Connection, tables: Tables, rows: Sequence[tuple[int, bytes]]) -> None:
    """Coarse-pass rows for (chunk id, packed float32 unit vector) pairs (caller's transaction).

    The sign bits work on 64-bit words, so an index whose dimension is not a multiple of 64
    keeps no coarse rows and is always searched exactly; so does one written without numpy.
    """
    usable = [(cid, blob) for cid, blob in rows if (len(blob) // 4) % 64 == 0]
    if not usable:
        return
    try:
        import numpy as np
    except ImportError:
        return
    matrix = np.frombuffer(b"".join(blob for _, blob in usable), dtype=np.float32)
    matrix = matrix.reshape(len(usable), -1)
    largest = np.abs(matrix).max(axis=1)
    largest[largest == 0] = 1.0
    q8 = np.round(matrix / largest[:, None] * 127).astype(np.int8)
    conn.executemany(
        f"INSERT OR REPLACE INTO {tables.vq}(chunk_id, q8, scale, embedding) VALUES (?, ?, ?, ?)",
        [
            (cid, q8[i].tobytes(), float(largest[i]) / 127, blob)
            for i, (cid, blob) in enumerate(usable)
        ],
    )


def delete_document(conn: apsw.Connection, tables: Tables, doc_id: int) -> None:
    conn.execute(
        f"DELETE FROM {tables.vq} WHERE chunk_id IN "
        f"(SELECT id FROM {tables.chunks} WHERE document_id = ?)",
        (doc_id,),
    )


def exact(
    snap: Snapshot, vector: Sequence[float], limit: int, within: Sequence[int] | None = None
) -> Scored:
    """Brute-force vec0 KNN; ties by id. vec0 gives the L2 distance d between unit vectors,
    so the cosine is 1 - d²/2. ``within``: only these chunks (vec0 filters by id before its
    top-k cut)."""
    v = snap.tables.vec
    sql = f"SELECT chunk_id, distance FROM {v} WHERE embedding MATCH ? AND k = ?"
    args: list[object] = [pack(vector), limit]
    if within is not None:
        sql += " AND chunk_id IN (SELECT value FROM json_each(?))"
        args.append(json.dumps(list(within)))
    rows = snap.conn.execute(sql + " ORDER BY distance", args).fetchall()
    ranked = sorted((float(d), int(c)) for c, d in rows)  # type: ignore[arg-type]
    return [(cid, 1.0 - d * d / 2) for d, cid in ranked]


def nearest(
    snap: Snapshot,
    vector: Sequence[float],
    limit: int,
    coarse: CoarseIndex | None = None,
    *,
    exact_below: int | None = None,
    within: Sequence[int] | None = None,
) -> Scored:
    """The ``limit`` chunks nearest to ``vector`` (a unit vector) with their cosine similarity,
    best first, ties by id.

    ``exact_below`` defaults to ``EXACT_BELOW`` (read at call time, so a benchmark can move it).
    ``within``: only these chunks (a search's scope). A narrow scope (fewer than
    ``exact_below`` chunks) is searched exactly, a wide one by the coarse passes over its
    chunks alone: either way before the cut, never by filtering an unscoped top ``limit``.
    """
    if within is not None and not within:
        return []
    if coarse is not None:
        below = EXACT_BELOW if exact_below is None else exact_below
        if within is None or len(within) >= below:
            found = coarse.search(snap, vector, limit, below, within)
            if found is not None:
                return found
    return exact(snap, vector, limit, within)


class CoarseIndex:
    """The in-memory int8 matrix and sign bits of one store's live generation (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._key: tuple[str, int] = ("", 0)  # (vq table, dimension)
        self._seq = 0  # highest seq loaded
        self._ids: Any = None  # int64 [n]
        self._q8: Any = None  # int8 [n, dim]
        self._scale: Any = None  # float32 [n]
        self._bits: Any = None  # uint64 [n, dim / 64]
        self._rows = 0
        self.loads = 0
        """Full loads so far (tests check that a refresh appends instead of reloading)."""

    def search(
        self,
        snap: Snapshot,
        vector: Sequence[float],
        limit: int,
        exact_below: int,
        within: Sequence[int] | None = None,
    ) -> Scored | None:
        """The three passes (over the chunks ``within`` alone, when given); None when exact
        KNN should answer instead."""
        try:
            import numpy as np
        except ImportError:
            return None
        if len(vector) % 64 or not _has_table(snap.conn, snap.tables.vq):
            return None
        vq = snap.tables.vq
        row: Any = snap.conn.execute(f"SELECT coalesce(max(seq), 0) FROM {vq}").fetchone()
        top = int(row[0])  # seq only grows: fewer rows than this were ever written
        if top < max(exact_below, 1):
            return None
        ids, q8, scale, bits = self._refresh(snap, top, len(vector))
        if len(ids) < max(exact_below, 1) or len(ids) <= limit:
            return None
        query = np.asarray(vector, dtype=np.float32)
        qbits = np.packbits(query > 0, bitorder="little").view(np.uint64)
        ones = np.bitwise_count(bits ^ qbits)  # uint8 [n, words]
        hamming = ones[:, 0].astype(np.uint16)
        for word in range(1, ones.shape[1]):  # faster than a sum along the short axis
            hamming += ones[:, word]
        n = len(ids)
        if within is not None:  # out of scope: farther than any chunk can be (dim + 1)
            inside = np.isin(ids, np.asarray(within, dtype=np.int64))
            n = int(inside.sum())
            if n <= limit:
                return None
            hamming[~inside] = len(vector) + 1
        keep = min(n, max(HAMMING_MIN, int(n * HAMMING_SHARE)))
        survivors = np.sort(_best(hamming, keep, largest=False))  # sorted: memory order
        # einsum, not BLAS: OpenBLAS's threads spin against a busy CPU (10x slower measured
        # while other processes ran; an embedding worker is exactly that).
        rows = np.take(q8, survivors, axis=0)
        scores = np.einsum("ij,j->i", rows, query) * np.take(scale, survivors)
        picked = survivors[_best(scores, min(CANDIDATES, len(survivors)), largest=True)]
        chosen = sorted({int(cid) for cid in ids[picked]})
        return _rescore(snap, query, chosen, limit)

    def _refresh(self, snap: Snapshot, top: int, dim: int) -> tuple[Any, Any, Any, Any]:
        """The matrix as of this snapshot (``top`` is its highest seq). Costs nothing when no
        row was added; rows deleted while none were added stay in place (re-scoring skips
        them)."""
        import numpy as np

        key = (snap.tables.vq, dim)
        vq = snap.tables.vq
        with self._lock:
            if key == self._key and top == self._seq:
                return self._ids, self._q8, self._scale, self._bits
            count = int(scalar(snap.conn, f"SELECT count(*) FROM {vq}"))
            stale = self._rows - count
            if key != self._key or stale > STALE_FRACTION * max(count, 1) or top < self._seq:
                self._key, self._seq, self._rows = key, 0, 0
                self._ids = np.zeros(0, dtype=np.int64)
                self._q8 = np.zeros((0, dim), dtype=np.int8)
                self._scale = np.zeros(0, dtype=np.float32)
                self._bits = np.zeros((0, dim // 64), dtype=np.uint64)
                self.loads += 1
            if top > self._seq:
                rows: list[Any] = snap.conn.execute(
                    f"SELECT seq, chunk_id, q8, scale FROM {snap.tables.vq}"
                    " WHERE seq > ? ORDER BY seq",
                    (self._seq,),
                ).fetchall()
                n = len(rows)
                new_ids = np.fromiter((r[1] for r in rows), dtype=np.int64, count=n)
                raw = b"".join(bytes(r[2]) for r in rows)
                new_q8 = np.frombuffer(raw, dtype=np.int8).reshape(n, dim)
                new_scale = np.fromiter((r[3] for r in rows), dtype=np.float32, count=n)
                new_bits = np.packbits(new_q8 > 0, axis=1, bitorder="little").view(np.uint64)
                self._ids = np.concatenate([self._ids, new_ids])
                self._q8 = np.concatenate([self._q8, new_q8])
                self._scale = np.concatenate([self._scale, new_scale])
                self._bits = np.concatenate([self._bits, new_bits])
                self._seq = int(rows[-1][0]) if rows else top
                self._rows += n
            return self._ids, self._q8, self._scale, self._bits


def _best(values: Any, n: int, *, largest: bool) -> Any:
    """Indexes of the ``n`` largest (or smallest) values, in no particular order."""
    import numpy as np

    if n >= len(values):
        return np.arange(len(values))
    keyed = -values if largest else values
    return np.argpartition(keyed, n - 1)[:n]


def _rescore(snap: Snapshot, query: Any, chosen: list[int], limit: int) -> Scored:
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
    scores = np.einsum("ij,j->i", matrix, query)
    order = sorted(range(len(found)), key=lambda i: (-float(scores[i]), found[i]))
    return [(found[i], float(scores[i])) for i in order[:limit]]


def _has_table(conn: apsw.Connection, name: str) -> bool:
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type='table' AND name = ?", (name,)
    ).fetchone()
    return row is not None
