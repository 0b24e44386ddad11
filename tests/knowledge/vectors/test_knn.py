"""The quantized KNN path (vectors/knn.py): recall against exact KNN on a structured set,
exact fallback for small indexes, incremental refresh of the in-memory matrix."""

from __future__ import annotations

from collections.abc import Iterator

import apsw
import numpy as np
import pytest

from fisk_ls.knowledge import schema
from fisk_ls.knowledge.connect import load_vec
from fisk_ls.knowledge.manifest import Manifest
from fisk_ls.knowledge.store import Snapshot
from fisk_ls.knowledge.vectors import knn

DIM = 384


def clustered(n: int, clusters: int, seed: int) -> np.ndarray:
    """Unit vectors in ``clusters`` groups of different spreads, as topics in a corpus are
    (random vectors would be a much easier, uniform case), with a shared offset direction
    (real embeddings are not centred at zero, which is what hurts sign bits)."""
    rng = np.random.default_rng(seed)
    offset = rng.standard_normal(DIM) * 0.6
    centres = rng.standard_normal((clusters, DIM)) + offset
    which = rng.integers(0, clusters, n)
    spread = rng.uniform(0.4, 1.2, clusters)[which][:, None]
    x = centres[which] + spread * rng.standard_normal((n, DIM))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x.astype(np.float32)


@pytest.fixture
def snap() -> Iterator[Snapshot]:
    conn = apsw.Connection(":memory:")
    load_vec(conn)
    conn.execute(schema.generation_ddl(1))
    conn.execute(schema.vec_ddl(1, DIM))
    yield Snapshot(conn, Manifest(generation=1, model="m", dimension=DIM, normalized=True))
    conn.close()


def add(snap: Snapshot, vectors: np.ndarray, first_id: int = 1) -> None:
    rows = [(first_id + i, v.tobytes()) for i, v in enumerate(vectors)]
    with snap.conn:
        snap.conn.executemany(
            f"INSERT INTO {snap.tables.vec}(chunk_id, embedding) VALUES (?, ?)", rows
        )
        knn.insert(snap.conn, snap.tables, rows)


def ids(scored: knn.Scored) -> list[int]:
    return [cid for cid, _ in scored]


def recall(found: list[int], truth: list[int]) -> float:
    return len(set(found) & set(truth)) / len(truth)


@pytest.mark.slow
def test_quantized_recall_at_10(snap: Snapshot) -> None:
    data = clustered(8000, 60, seed=1)
    add(snap, data)
    queries = clustered(60, 60, seed=2)  # fresh points from other draws of the same shape
    coarse = knn.CoarseIndex()
    scores = []
    for q in queries:
        truth = ids(knn.exact(snap, q.tolist(), 10))
        found = ids(knn.nearest(snap, q.tolist(), 10, coarse, exact_below=1000))
        scores.append(recall(found, truth))
    assert coarse.loads == 1
    assert np.mean(scores) >= 0.98, np.mean(scores)


def test_ranking_matches_exact_order(snap: Snapshot) -> None:
    data = clustered(3000, 20, seed=3)
    add(snap, data)
    q = data[17].tolist()
    found = knn.nearest(snap, q, 5, knn.CoarseIndex(), exact_below=100)
    assert found[0][0] == 18  # the vector itself (ids start at 1)
    truth = knn.exact(snap, q, 5)
    assert ids(found) == ids(truth)
    # Both passes give the true cosine (vec0's L2 distance converted, or the float re-score).
    x = np.asarray(q, dtype=np.float32)
    for (cid, got), (_, want) in zip(found, truth, strict=True):
        assert got == pytest.approx(float(data[cid - 1] @ x), abs=1e-5)
        assert want == pytest.approx(got, abs=1e-5)
    assert found[0][1] == pytest.approx(1.0, abs=1e-5)


def test_small_indexes_are_searched_exactly(snap: Snapshot) -> None:
    add(snap, clustered(500, 5, seed=4))
    coarse = knn.CoarseIndex()
    q = clustered(1, 5, seed=5)[0].tolist()
    assert coarse.search(snap, q, 10, exact_below=knn.EXACT_BELOW) is None
    assert ids(knn.nearest(snap, q, 10, coarse)) == ids(knn.exact(snap, q, 10))
    assert coarse.loads == 0  # nothing was loaded for a small index


def test_other_dimensions_are_searched_exactly() -> None:
    conn = apsw.Connection(":memory:")
    load_vec(conn)
    conn.execute(schema.generation_ddl(1))
    conn.execute(schema.vec_ddl(1, 100))
    s = Snapshot(conn, Manifest(generation=1, model="m", dimension=100, normalized=True))
    x = np.random.default_rng(0).standard_normal((50, 100)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    rows = [(i + 1, v.tobytes()) for i, v in enumerate(x)]
    conn.executemany(f"INSERT INTO {s.tables.vec}(chunk_id, embedding) VALUES (?, ?)", rows)
    knn.insert(conn, s.tables, rows)
    assert conn.execute(f"SELECT count(*) FROM {s.tables.vq}").get == 0
    assert knn.nearest(s, x[3].tolist(), 3, knn.CoarseIndex(), exact_below=1)[0][0] == 4
    conn.close()


def test_refresh_appends_and_reloads_after_many_deletes(snap: Snapshot) -> None:
    data = clustered(2000, 10, seed=6)
    add(snap, data[:1500])
    coarse = knn.CoarseIndex()
    q = data[1700].tolist()
    knn.nearest(snap, q, 5, coarse, exact_below=100)
    add(snap, data[1500:], first_id=1501)
    assert ids(knn.nearest(snap, q, 1, coarse, exact_below=100)) == [1701]  # the new row
    assert coarse.loads == 1  # appended, not reloaded
    with snap.conn:
        snap.conn.execute(f"DELETE FROM {snap.tables.vq} WHERE chunk_id > 1000")
        snap.conn.execute(f"DELETE FROM {snap.tables.vec} WHERE chunk_id > 1000")
    found = ids(knn.nearest(snap, q, 5, coarse, exact_below=100))
    assert coarse.loads == 2 and all(cid <= 1000 for cid in found)
    assert found == ids(knn.exact(snap, q, 5))


def test_a_scope_is_applied_before_the_cut(snap: Snapshot) -> None:
    """Exact for a narrow scope, the coarse passes over the scope's chunks for a wide one:
    never the survivors of an unscoped top ``limit``."""
    vectors = clustered(1200, 12, seed=5)
    add(snap, vectors)
    rng = np.random.default_rng(6)
    coarse = knn.CoarseIndex()
    for trial in range(5):
        query = vectors[int(rng.integers(0, len(vectors)))]
        everything = knn.exact(snap, query, len(vectors))
        narrow = sorted(int(i) for i in rng.choice(np.arange(1, 1201), 40, replace=False))
        want = [(c, s) for c, s in everything if c in set(narrow)][:10]
        got = knn.nearest(snap, query, 10, coarse, exact_below=500, within=narrow)
        assert ids(got) == ids(want)
        wide = [cid for cid in range(1, 1201) if cid % 3 != trial % 3]
        found = knn.nearest(snap, query, 10, coarse, exact_below=500, within=wide)
        truth = [c for c, _ in everything if c in set(wide)][:10]
        assert len(found) == 10 and set(ids(found)) <= set(wide)
        assert recall(ids(found), truth) >= 0.8
    assert coarse.loads == 1  # the wide scopes took the coarse path
    assert knn.nearest(snap, vectors[0], 10, coarse, within=[]) == []
