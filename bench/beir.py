"""Retrieval quality on BEIR SciFact and ArguAna: nDCG@10 and Recall@100 (trec_eval semantics).

Each BEIR document becomes one markdown file (``# title`` + text) in a temporary project, indexed
by the real indexer; a query runs the real retrievers (FTS5 query builder + BM25, sqlite-vec KNN,
the core's score fusion, and RRF K=60 for comparison) at depth 100, chunk hits are folded to
documents (best chunk wins). For ArguAna a hit whose id equals the query id is dropped, as BEIR
does.

    python bench/beir.py scifact|arguana [--split test|train] [--cache DIR]
                         [--embed-url URL --model M | --builtin MODEL_DIR]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from devset_questions import CORPORA_DIR as CORPORA

from fisk_ls.knowledge import Knowledge, index, resolve_settings
from fisk_ls.knowledge.config import EmbeddingsConfig
from fisk_ls.knowledge.fts import STOP_WORDS, heading_key
from fisk_ls.knowledge.fusion import fuse, fuse_strings
from fisk_ls.knowledge.query import SearchString
from fisk_ls.knowledge.search import (
    TermStats,
    bm25_ids,
    boost_headings,
    lexical_arm,
    query_plan,
    vector_ids,
)
from fisk_ls.knowledge.store import Snapshot
from fisk_ls.knowledge.topk import Plan

DEPTH = 100


def rrf(lists: Sequence[Sequence[int]], k: int = 60) -> list[tuple[int, float]]:
    """Reciprocal Rank Fusion (the reference's rule, K = 60): (id, score) by score, ties by
    smaller id."""
    scores: dict[int, float] = {}
    for ranked in lists:
        for rank, cid in enumerate(ranked):
            scores[cid] = scores.get(cid, 0.0) + 1.0 / (k + rank + 1)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


def lexical_ids(
    snap: Snapshot,
    plan: Plan,
    limit: int,
    heading: Sequence[str] = (),
    stop: frozenset[str] = STOP_WORDS,
) -> list[tuple[int, float]]:
    """(chunk id, bm25) best first of ``plan``'s OR query, the heading boost applied for the
    query's ``heading`` words (the product's lexical arm without its fixed depth)."""
    want = heading_key(" ".join(heading), stop)
    return boost_headings(snap, bm25_ids(snap, plan, limit), want, stop)


def read_jsonl(path: Path) -> Iterable[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8") as fh:
        next(fh)
        for line in fh:
            q, d, s = line.rstrip("\n").split("\t")
            qrels.setdefault(q, {})[d] = int(s)
    return qrels


def ndcg_at(ranked: list[str], rels: dict[str, int], k: int = 10) -> float:
    dcg = sum((2 ** rels.get(d, 0) - 1) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted((g for g in rels.values() if g > 0), reverse=True)[:k]
    idcg = sum((2**g - 1) / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at(ranked: list[str], rels: dict[str, int], k: int = 100) -> float:
    relevant = {d for d, g in rels.items() if g > 0}
    return len(relevant & set(ranked[:k])) / len(relevant) if relevant else 0.0


def build_project(name: str, root: Path) -> int:
    corpus = CORPORA / f"beir-{name}" / "corpus.jsonl"
    n = 0
    for doc in read_jsonl(corpus):
        title = doc.get("title") or ""
        text = doc.get("text") or ""
        body = f"# {title}\n\n{text}\n" if title else f"{text}\n"
        (root / f"{doc['_id']}.md").write_text(body, encoding="utf-8")
        n += 1
    return n


def to_docs(chunk_ids: list[int], chunk_doc: dict[int, str], skip: str | None) -> list[str]:
    seen: dict[str, None] = {}
    for cid in chunk_ids:
        d = chunk_doc.get(cid)
        if d is not None and d != skip and d not in seen:
            seen[d] = None
    return list(seen)


def evaluate(
    name: str,
    split: str = "test",
    embed_url: str | None = None,
    model: str | None = None,
    query_prefix: str = "",
    document_prefix: str = "",
    cache: Path | None = None,
    builtin: Path | None = None,
    progress: Callable[[str], None] = lambda s: print(s, file=sys.stderr),
    agent: Path | None = None,
) -> dict[str, Any]:
    """``agent``: a file of agent strings (bench/devset/agent-strings.md) for the queries; adds
    the runs ``lexical_agent`` and ``hybrid_agent``, each query fused with its strings as
    ``fusion.fuse_strings`` fuses them."""
    base = CORPORA / f"beir-{name}"
    qrels = read_qrels(
        base / "qrels" / f"{split}.tsv" if (base / "qrels").is_dir() else base / "qrels.tsv"
    )
    queries = {q["_id"]: q["text"] for q in read_jsonl(base / "queries.jsonl") if q["_id"] in qrels}
    # With a cache folder the project and its index persist, so a re-run re-embeds nothing.
    tmp = cache / f"beir-{name}" if cache else Path(tempfile.mkdtemp(prefix=f"beir-{name}-"))
    root = tmp / "project"
    if not root.is_dir() or cache is None:
        root.mkdir(parents=True, exist_ok=True)
        ndocs = build_project(name, root)
    else:
        ndocs = sum(1 for _ in root.glob("*.md"))
    settings = resolve_settings(cwd=root, store_base=tmp / "store")
    if builtin is not None:
        settings = settings.with_overrides(
            embeddings=EmbeddingsConfig(
                base_url="",
                provider="builtin",
                model=model or "all-MiniLM-L6-v2",
                model_path=str(builtin.resolve()),
                threads=os.cpu_count() or 1,
                query_prefix=query_prefix,
                document_prefix=document_prefix,
            )
        )
    elif embed_url:
        settings = settings.with_overrides(
            embeddings=EmbeddingsConfig(
                base_url=embed_url,
                model=model or "",
                timeout=120.0,
                query_timeout=30.0,
                query_prefix=query_prefix,
                document_prefix=document_prefix,
            )
        )
    t0 = time.perf_counter()
    stats = index(settings)
    index_s = time.perf_counter() - t0
    progress(f"{name}: indexed {ndocs} docs, {stats.chunks} chunks in {index_s:.1f}s")
    kb = Knowledge(settings)
    runs: dict[str, dict[str, list[str]]] = {
        "lexical": {},
        "vector": {},
        "hybrid": {},
        "hybrid_rrf60": {},
        "lexical_agent": {},
        "hybrid_agent": {},
    }
    strings: dict[str, list[str]] = {}
    if agent is not None:
        for line in agent.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                strings[str(row["id"])] = [str(x) for x in row["also"]]
    lat: list[float] = []
    with kb.store.snapshot() as snap:
        assert snap is not None
        t = snap.tables
        chunk_doc = {
            int(cid): Path(str(path)).stem
            for cid, path in snap.conn.execute(
                f"SELECT c.id, d.path FROM {t.chunks} c JOIN {t.documents} d ON d.id = c.document_id"
            )
        }
        if kb.embedder is not None:
            kb.store.ensure_vec(snap.conn)
        stats_cache = TermStats()
        for qid, text in queries.items():
            skip = qid if name == "arguana" else None
            q0 = time.perf_counter()
            plan = query_plan(snap, text, stats_cache)
            scored = lexical_ids(snap, plan, DEPTH * 2) if plan.terms else []
            lex = [cid for cid, _ in scored]
            lat.append(time.perf_counter() - q0)
            runs["lexical"][qid] = to_docs(lex, chunk_doc, skip)
            if kb.embedder is not None:
                qv = kb.embedder.embed_query(text)  # a unit vector
                near = vector_ids(snap, qv, DEPTH * 2)
                vec = [cid for cid, _ in near]
                runs["vector"][qid] = to_docs(vec, chunk_doc, skip)
                fused = [cid for cid, _ in fuse(scored, near)]
                runs["hybrid"][qid] = to_docs(fused, chunk_doc, skip)
                by_rank = [cid for cid, _ in rrf([lex, vec])]
                runs["hybrid_rrf60"][qid] = to_docs(by_rank, chunk_doc, skip)
            if qid in strings:
                texts = [text, *strings[qid]]
                parsed = [SearchString.parse(x) for x in texts]
                deeps = [lexical_arm(snap, x, query_plan(snap, x, stats_cache)) for x in parsed]
                lexical_only = [(d, []) for d in deeps]
                fused_ids = [cid for cid, _ in fuse_strings(lexical_only)[0]]
                runs["lexical_agent"][qid] = to_docs(fused_ids, chunk_doc, skip)
                if kb.embedder is not None:
                    vectors = kb.embedder.embed_queries(texts)
                    arms = [
                        (d, vector_ids(snap, v, DEPTH * 2))
                        for d, v in zip(deeps, vectors, strict=True)
                    ]
                    fused_ids = [cid for cid, _ in fuse_strings(arms)[0]]
                    runs["hybrid_agent"][qid] = to_docs(fused_ids, chunk_doc, skip)
    kb.close()
    out: dict[str, Any] = {
        "dataset": name,
        "split": split,
        "queries": len(queries),
        "docs": ndocs,
        "chunks": stats.chunks,
        "index_seconds": round(index_s, 1),
        "lexical_query_ms_p50": round(statistics.median(lat) * 1000, 2),
        "lexical_query_ms_p95": round(sorted(lat)[int(len(lat) * 0.95)] * 1000, 2),
    }
    for kind, run in runs.items():
        if not run:
            continue
        out[kind] = {
            "ndcg@10": round(statistics.mean(ndcg_at(run[q], qrels[q]) for q in queries), 4),
            "recall@100": round(statistics.mean(recall_at(run[q], qrels[q]) for q in queries), 4),
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dataset", choices=["scifact", "arguana"])
    ap.add_argument("--split", default="test")
    ap.add_argument("--embed-url")
    ap.add_argument("--model")
    ap.add_argument("--builtin", type=Path, metavar="MODEL_DIR", help="the built-in provider")
    ap.add_argument("--query-prefix", default="")
    ap.add_argument("--document-prefix", default="")
    ap.add_argument(
        "--cache", type=Path, help="keep projects and indexes here (re-runs reuse vectors)"
    )
    ap.add_argument("--agent", type=Path, help="agent strings for the queries (adds *_agent runs)")
    args = ap.parse_args()
    if not (CORPORA / f"beir-{args.dataset}").is_dir():
        sys.exit(f"corpus not found under {CORPORA}")
    os.environ.setdefault("FISK_AI_STORE_DIR", tempfile.mkdtemp())
    print(
        json.dumps(
            evaluate(
                args.dataset,
                args.split,
                args.embed_url,
                args.model,
                args.query_prefix,
                args.document_prefix,
                cache=args.cache,
                builtin=args.builtin,
                agent=args.agent,
            ),
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
