"""One MiniLM vector per heading path beside each chunk's own vector (issue 14), measured,
not in the product.

    python bench/experiments/heading_vectors.py embed STORE.db MODEL_DIR OUT.npz
    MODE=sum LAMBDA=0.6 python bench/experiments/heading_vectors.py devset STORE.db OUT.npz \
        --corpus otel --store-base /abs/devstore --builtin MODEL_DIR

``embed`` embeds every distinct chunk label of the hybrid dev-set store (``<store-base>/otel/hybrid/*/
knowledge.db``: "Resiliency > Circumstances of data loss", title first) with the built-in model
(1m15s for 9,259 labels). ``devset`` replaces ``search.vector_ids``: the vector arm ranks every
chunk exactly by cos(chunk) + LAMBDA x cos(label) (``MODE=sum``) or by the larger of the two
(``MODE=max``); everything after that is the product. ``LAMBDA=0`` reproduces the product's ranks.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import apsw
import numpy as np
import sqlite_vec

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def open_store(path: str) -> apsw.Connection:
    conn = apsw.Connection(path, flags=apsw.SQLITE_OPEN_READONLY)
    conn.enable_load_extension(True)
    conn.load_extension(sqlite_vec.loadable_path())
    return conn


def embed(store: str, model: str, out: str) -> int:
    from fisk_ls.knowledge.vectors.builtin import BuiltinEmbedder

    rows = (
        open_store(store)
        .execute(
            "SELECT v.chunk_id, r.section FROM chunks_vec_1 v"
            " JOIN chunk_rows_1 r ON r.id = v.chunk_id"
        )
        .fetchall()
    )
    labels = sorted({str(r[1]) for r in rows})
    print(len(rows), "chunks,", len(labels), "labels", file=sys.stderr)
    emb = BuiltinEmbedder("all-MiniLM-L6-v2", model_dir=Path(model), threads=2)
    vecs: list[list[float]] = []
    try:
        for i in range(0, len(labels), 256):
            vecs.extend(emb.embed_documents(labels[i : i + 256]))
    finally:
        emb.close()
    index = {label: i for i, label in enumerate(labels)}
    np.savez(
        out,
        ids=np.array([int(r[0]) for r in rows], dtype=np.int64),
        which=np.array([index[str(r[1])] for r in rows], dtype=np.int64),
        vecs=np.asarray(vecs, dtype=np.float32),
    )
    return 0


def run_devset(store: str, npz: str, argv: list[str]) -> int:
    import devset

    from fisk_ls.knowledge import search as S

    rows = open_store(store).execute("SELECT chunk_id, embedding FROM chunks_vec_1").fetchall()
    ids = np.array([int(r[0]) for r in rows], dtype=np.int64)
    chunks = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
    saved = np.load(npz)
    where = {int(c): i for i, c in enumerate(saved["ids"])}
    heads = saved["vecs"][saved["which"][[where[int(c)] for c in ids]]]
    mode = os.environ.get("MODE", "sum")
    lam = float(os.environ.get("LAMBDA", "0.6"))

    def vector_ids(
        snap: Any, vector: Any, limit: int = S.FANOUT, coarse: Any = None, within: Any = None
    ) -> list[tuple[int, float]]:
        assert within is None  # the dev sets search no scope
        v = np.asarray(vector, dtype=np.float32)
        a, b = chunks @ v, heads @ v
        score = a + lam * b if mode == "sum" else np.maximum(a, b)
        top = np.argsort(-score, kind="stable")[:limit]
        return [(int(ids[i]), float(score[i])) for i in top]

    S.vector_ids = vector_ids  # type: ignore[assignment]
    return int(devset.main(argv))


if __name__ == "__main__":
    if sys.argv[1] == "embed":
        raise SystemExit(embed(*sys.argv[2:5]))
    raise SystemExit(run_devset(sys.argv[2], sys.argv[3], sys.argv[4:]))
