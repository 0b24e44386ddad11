"""Where the vector arm ranks the answer of each question the hybrid run misses (issue 14).

    python bench/experiments/vector_ranks.py STORE.db MODEL_DIR DEVSET.json [--corpus otel] [--questions FILE]

STORE.db is the hybrid dev-set store (``<store-base>/otel/hybrid/*/knowledge.db``), DEVSET.json a
``bench/devset.py`` result over it. For every English question outside the hybrid top 5, prints
the exact cosine rank among all chunks of the first chunk holding the target heading (None when
no chunk does), with the best and the 50th cosine: a rank past 50 is out of any fusion's reach.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import apsw
import numpy as np
import sqlite_vec

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from devset_questions import CORPORA, load

from fisk_ls.knowledge.vectors.builtin import BuiltinEmbedder


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("store", type=Path)
    ap.add_argument("model_dir", type=Path)
    ap.add_argument("devset", type=Path)
    ap.add_argument("--corpus", default="otel")
    ap.add_argument("--questions", type=Path, help="the question file DEVSET.json was run with")
    args = ap.parse_args()
    conn = apsw.Connection(str(args.store), flags=apsw.SQLITE_OPEN_READONLY)
    conn.enable_load_extension(True)
    conn.load_extension(sqlite_vec.loadable_path())
    suffix = conn.execute(
        "SELECT substr(name, 12) FROM sqlite_master WHERE name LIKE 'chunk_rows_%'"
    ).fetchone()[0]
    rows = conn.execute(
        f"SELECT v.embedding, d.path, r.start_line, r.end_line FROM chunks_vec_{suffix} v"
        f" JOIN chunk_rows_{suffix} r ON r.id = v.chunk_id"
        f" JOIN documents_{suffix} d ON d.id = r.document_id"
    ).fetchall()
    matrix = np.frombuffer(b"".join(r[0] for r in rows), dtype=np.float32).reshape(len(rows), -1)
    spans = [(str(r[1]), int(r[2]), int(r[3])) for r in rows]
    run = json.loads(args.devset.read_text())["corpora"][args.corpus]["runs"]["hybrid"]
    ranks = run["per_question"]
    emb = BuiltinEmbedder("all-MiniLM-L6-v2", model_dir=args.model_dir, threads=2)
    try:
        for q in load(CORPORA[args.corpus], args.questions):
            rank = ranks[q.id]["rank"]
            if q.lang != "en" or (rank is not None and rank <= 5):
                continue
            cos = matrix @ np.asarray(emb.embed_query(q.query), dtype=np.float32)
            order = np.argsort(-cos)
            position = np.empty(len(order), dtype=np.int64)
            position[order] = np.arange(1, len(order) + 1)
            t = q.targets[0]
            hits = [i for i, (p, s, e) in enumerate(spans) if p == t.path and s <= t.line <= e]
            best = min((int(position[i]) for i in hits), default=None)
            print(
                f"{q.id} {q.kind:12} vector rank {best} | best {cos[order[0]]:.3f}"
                f" 50th {cos[order[49]]:.3f} | {q.query}"
            )
    finally:
        emb.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
