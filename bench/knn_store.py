"""Exact vs quantized KNN over a real hybrid store: every vector a real chunk embedding.

    python bench/devset.py --corpus otel --builtin MODEL_DIR --store-base DIR   # builds it
    python bench/knn_store.py --store-base DIR --builtin MODEL_DIR > bench/results/knn-store.json

The store is the OTel site (about 14k chunks, all embedded by the built-in provider), queried with
the OTel dev-set questions (their real query embeddings). The quantized path is forced on (the
index is above ``knn.EXACT_BELOW`` anyway); exact is vec0's brute force. Both run in alternating
rounds in one process, so their latencies are comparable with each other, not across machines.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from devset_questions import CORPORA, load  # noqa: E402

from fisk_ls.knowledge import Project, resolve_settings  # noqa: E402
from fisk_ls.knowledge.config import EmbeddingsConfig  # noqa: E402
from fisk_ls.knowledge.vectors import knn  # noqa: E402


def _summary(lat: list[float]) -> dict[str, float]:
    lat = sorted(lat)
    return {
        "p50_ms": round(1000 * statistics.median(lat), 2),
        "p95_ms": round(1000 * lat[min(len(lat) - 1, int(0.95 * len(lat)))], 2),
        "n": len(lat),
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--store-base", type=Path, required=True)
    ap.add_argument("--builtin", type=Path, required=True, metavar="MODEL_DIR")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    corpus = CORPORA["otel"]
    questions = load(corpus, None)
    emb = EmbeddingsConfig(
        base_url="",
        provider="builtin",
        model="all-MiniLM-L6-v2",
        model_path=str(args.builtin.resolve()),
    )
    settings = resolve_settings(
        cwd=corpus.root.resolve(), store_base=args.store_base / "otel" / "hybrid", discover=False
    ).with_overrides(embeddings=emb)
    k = Project(settings).reader
    assert k.embedder is not None
    vectors = [k.embedder.embed_query(q.query) for q in questions]
    coarse = knn.CoarseIndex()
    exact_lat: list[float] = []
    coarse_lat: list[float] = []
    recalls: list[float] = []
    with k.store.snapshot() as snap:
        assert snap is not None
        k.store.ensure_vec(snap.conn)
        n = int(snap.conn.execute(f"SELECT count(*) FROM {snap.tables.vec}").fetchone()[0])
        t0 = time.perf_counter()
        knn.nearest(snap, vectors[0], 10, coarse, exact_below=1)
        load_s = time.perf_counter() - t0
        for _ in range(args.rounds):
            for v in vectors:
                t = time.perf_counter()
                truth = [c for c, _ in knn.exact(snap, v, 10)]
                exact_lat.append(time.perf_counter() - t)
                t = time.perf_counter()
                found = [c for c, _ in knn.nearest(snap, v, 10, coarse, exact_below=1)]
                coarse_lat.append(time.perf_counter() - t)
                recalls.append(len(set(found) & set(truth)) / len(truth))
    k.close()
    out: dict[str, Any] = {
        "machine": {
            "cores": os.cpu_count(),
            "python": platform.python_version(),
            "load_avg_at_end": [round(x, 2) for x in os.getloadavg()],
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        },
        "set": "OTel site, every chunk embedded by the built-in all-MiniLM-L6-v2 (int8 ONNX)",
        "vectors": n,
        "queries": len(vectors),
        "recall_at_10": round(statistics.mean(recalls), 4),
        "recall_at_10_min": round(min(recalls), 2),
        "first_query_load_s": round(load_s, 2),
        "exact_knn": _summary(exact_lat),
        "quantized_knn": _summary(coarse_lat),
    }
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
