"""Why is our ArguAna vector-only nDCG@10 (0.4995) not MTEB's 0.502 for all-MiniLM-L6-v2?

MTEB embeds each whole document as "title text" truncated at the model's 256 tokens, and ranks
documents by that one vector; bench/beir.py indexes each document as a markdown file, so a
long document is cut into several chunks (each embedded as "breadcrumb\\n\\nbody") and a
document scores by its best chunk. This script takes the chunk vectors already in a
``bench/beir.py --cache`` store (nothing re-embedded but the queries and the split documents)
and ranks documents four ways, exact cosine, the query's own document skipped (as BEIR does):

* ``best-chunk``: what bench/beir.py measures (a document = its best chunk);
* ``first-chunk``: a document = its first chunk (about MTEB's first 256 tokens);
* ``whole-doc``: a document = one vector of "title text" truncated at 256 tokens (MTEB's input;
  one-chunk documents keep their chunk vector, which is the same text up to whitespace);
* ``mean-chunks``: a document = the normalised mean of its chunk vectors;
* ``best-rechunked`` (with ``--rechunk``): best chunk, the documents that were split cut again
  by the current chunker (``chunk_document``) and embedded, e.g. to measure a change in how a
  long paragraph is split without re-indexing.

Usage: python bench/experiments/arguana_whole_docs.py --cache /abs/beircache --builtin MODEL_DIR
"""

from __future__ import annotations

import argparse
import glob
import json
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

import apsw
import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from beir import CORPORA, ndcg_at, read_jsonl, read_qrels  # noqa: E402

from fisk_ls.knowledge.index.chunker import chunk_document  # noqa: E402
from fisk_ls.knowledge.vectors.builtin import BuiltinEmbedder  # noqa: E402


def unit(m: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(m, axis=-1, keepdims=True)
    return m / np.clip(n, 1e-12, None)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cache", type=Path, required=True)
    ap.add_argument("--builtin", type=Path, required=True)
    ap.add_argument("--queries", type=Path, help="cache the query vectors in this .npy file")
    ap.add_argument("--rechunk", action="store_true", help="also the best-rechunked variant")
    ap.add_argument("--skip-whole", action="store_true", help="skip embedding whole documents")
    args = ap.parse_args()
    base = CORPORA / "beir-arguana"
    qrels = read_qrels(base / "qrels" / "test.tsv")
    queries = {q["_id"]: q["text"] for q in read_jsonl(base / "queries.jsonl") if q["_id"] in qrels}
    corpus = {d["_id"]: d for d in read_jsonl(base / "corpus.jsonl")}
    (db,) = glob.glob(str(args.cache / "beir-arguana" / "store" / "*" / "knowledge.db"))
    conn = apsw.Connection(db, flags=apsw.SQLITE_OPEN_READONLY)
    g = next(
        int(name.split("_")[2])
        for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE name LIKE 'chunks_vq_%'")
    )
    rows = conn.execute(
        f"SELECT d.path, c.ordinal, v.embedding FROM chunks_vq_{g} v"
        f" JOIN chunks_{g} c ON c.id = v.chunk_id JOIN documents_{g} d ON d.id = c.document_id"
    ).fetchall()
    chunks: dict[str, list[tuple[int, np.ndarray]]] = defaultdict(list)
    for path, ordinal, blob in rows:
        chunks[Path(str(path)).stem].append((int(ordinal), np.frombuffer(blob, dtype=np.float32)))
    for v in chunks.values():
        v.sort(key=lambda x: x[0])
    docs = sorted(chunks)
    split = [d for d in docs if len(chunks[d]) > 1]
    print(f"{len(docs)} docs, {len(rows)} chunks, {len(split)} docs in 2+ chunks", file=sys.stderr)

    emb = BuiltinEmbedder("all-MiniLM-L6-v2", model_dir=args.builtin, threads=1)
    t0 = time.perf_counter()
    if args.skip_whole:
        whole_split = [chunks[d][0][1] for d in split]
    else:
        whole_split = emb.embed_documents(
            [(corpus[d].get("title", "") + " " + corpus[d].get("text", "")).strip() for d in split]
        )
        print(
            f"embedded {len(split)} whole docs in {time.perf_counter() - t0:.0f}s", file=sys.stderr
        )
        # The same text for a sample of one-chunk documents: does our input equal MTEB's?
        single = [d for d in docs if len(chunks[d]) == 1][:200]
        again = np.array(
            emb.embed_documents(
                [
                    (corpus[d].get("title", "") + " " + corpus[d].get("text", "")).strip()
                    for d in single
                ]
            )
        )
        same = np.sum(again * np.array([chunks[d][0][1] for d in single]), axis=1)
        print(
            f"one-chunk docs, ours vs MTEB input: cosine {same.min():.4f} min, {same.mean():.4f} mean"
        )
    rechunked: dict[str, list[np.ndarray]] = {}
    if args.rechunk:
        project = args.cache / "beir-arguana" / "project"
        texts: list[tuple[str, str]] = []
        for d in split:
            doc = chunk_document((project / f"{d}.md").read_text(encoding="utf-8"))
            texts += [(d, c.content) for c in doc.chunks]
        t0 = time.perf_counter()
        vecs = emb.embed_documents([t for _, t in texts])
        print(
            f"embedded {len(texts)} re-cut chunks in {time.perf_counter() - t0:.0f}s",
            file=sys.stderr,
        )
        for (d, _), v in zip(texts, vecs, strict=True):
            rechunked.setdefault(d, []).append(np.array(v, dtype=np.float32))

    qids = list(queries)
    if args.queries is not None and args.queries.exists():
        qv = np.load(args.queries)
    else:
        t0 = time.perf_counter()
        qv = np.array([emb.embed_query(queries[q]) for q in qids], dtype=np.float32)
        print(f"embedded {len(qids)} queries in {time.perf_counter() - t0:.0f}s", file=sys.stderr)
        if args.queries is not None:
            np.save(args.queries, qv)
    emb.close()

    whole = dict(zip(split, whole_split, strict=True))
    variants = {
        "first-chunk": np.array([chunks[d][0][1] for d in docs]),
        "whole-doc": np.array([whole.get(d, chunks[d][0][1]) for d in docs]),
        "mean-chunks": unit(np.array([np.mean([v for _, v in chunks[d]], axis=0) for d in docs])),
    }
    index_of = {d: i for i, d in enumerate(docs)}

    def chunk_matrix(cut: dict[str, list[np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
        flat = [(d, v) for d in docs for v in (cut.get(d) or [v for _, v in chunks[d]])]
        return np.array([index_of[d] for d, _ in flat]), np.array([v for _, v in flat])

    by_chunk = {"best-chunk": chunk_matrix({})}
    if rechunked:
        by_chunk["best-rechunked"] = chunk_matrix(rechunked)
        cuts = [len(v) for v in rechunked.values()]
        print(f"re-cut: {len(rechunked)} docs into {sum(cuts)} chunks", file=sys.stderr)
    if args.skip_whole:
        variants = {k: v for k, v in variants.items() if k != "whole-doc"}
    out: dict[str, float] = {}
    per_q: dict[str, list[float]] = {}
    for name in [*by_chunk, *variants]:
        scores = []
        for i, q in enumerate(qids):
            if name in by_chunk:
                chunk_doc, chunk_m = by_chunk[name]
                sims = chunk_m @ qv[i]
                best = np.full(len(docs), -2.0, dtype=np.float32)
                np.maximum.at(best, chunk_doc, sims)
            else:
                best = variants[name] @ qv[i]
            if q in index_of:
                best[index_of[q]] = -3.0  # ArguAna: the query's own document is not an answer
            top = np.argsort(-best, kind="stable")[:10]
            scores.append(ndcg_at([docs[j] for j in top], qrels[q]))
        out[name] = round(statistics.mean(scores), 4)
        per_q[name] = scores
    # Paired bootstrap of each variant against best-chunk.
    rng = np.random.default_rng(20261201)
    base_s = np.array(per_q["best-chunk"])
    deltas = {}
    for name in [n for n in per_q if n != "best-chunk"]:
        d = np.array(per_q[name]) - base_s
        boots = [d[rng.integers(0, len(d), len(d))].mean() for _ in range(1000)]
        lo, hi = np.percentile(boots, [2.5, 97.5])
        deltas[name] = [round(float(d.mean()), 4), round(float(lo), 4), round(float(hi), 4)]
    split_q = [i for i, q in enumerate(qids) if any(len(chunks.get(r, [])) > 1 for r in qrels[q])]
    print(
        json.dumps(
            {
                "ndcg@10": out,
                "delta_vs_best_chunk": deltas,
                "queries": len(qids),
                "queries_whose_answer_is_split": len(split_q),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
