"""Does a second-stage reranker pay? Rerank the lexical top 20 / top 50 and score the result.

Dev sets (bench/devset.py's questions, section-level scoring, MRR@10 / Hit@5 with bootstrap
intervals from devset_stats.py) and BEIR (bench/beir.py's harness, nDCG@10 / Hit@5 with the same
bootstrap), lexical tier. For each scorer in bench/rerankers.py and each depth N the top N
candidates are reordered two ways: ``rerank`` (by the scorer alone) and ``rrf`` (RRF, K = 60, of
the lexical order and the scorer's order). Every variant is compared with the lexical top 10 per
question (paired bootstrap: mean difference and its 95% interval).

Latency: on a fixed sample of queries, the time to encode the query and the N candidates and
score them, without the feature cache (what a user would wait for on top of the search), with
the machine's load average before and after.

    python bench/rerank.py [--corpus otel|powershell|all|none] [--beir scifact|none]
                           [--split test|train] [--scorers nano,minilm] [--depths 20,50]
                           [--store-base DIR] [--cache DIR] [--latency-queries 30]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from beir import build_project, lexical_ids, ndcg_at, read_jsonl, read_qrels, rrf, to_docs
from devset import _rank, section_match
from devset_questions import CORPORA, CORPORA_DIR, KINDS, Question, load
from devset_stats import METRICS, RESAMPLES, bootstrap_ci, paired_diff, summarize
from rerankers import SCORERS, FeatureCache, Scorer

from fisk_ls.knowledge import Hit, Knowledge, SearchRequest, index, resolve_settings
from fisk_ls.knowledge.fts import stop_words
from fisk_ls.knowledge.hits import assemble
from fisk_ls.knowledge.question import Asked
from fisk_ls.knowledge.search import DEEPER, FANOUT, TermStats, query_plan

RRF_K = 60

SEED = 20261201
VARIANTS = ("rerank", "rrf")


def reorder(n: int, scores: Sequence[float] | np.ndarray) -> dict[str, list[int]]:
    """Positions 0..n-1 (lexical order) reordered by the scorer alone and by RRF of both."""
    by_score = sorted(range(n), key=lambda i: (-float(scores[i]), i))
    fused = [i for i, _ in rrf([list(range(n)), by_score], RRF_K)]
    return {"rerank": by_score, "rrf": fused}


def dev_candidates(k: Knowledge, query: str, n: int) -> list[Hit]:
    """The lexical top ``n`` after collapsing copies: the production search up to its limit of
    20, beyond it the same steps (lexical fan-out, deeper read when copies leave it short)."""
    if n <= 20:
        return k.search(SearchRequest(query, top_k=n)).hits
    with k.store.snapshot() as snap:
        if snap is None:
            return []
        plan = query_plan(snap, query, k.term_stats)
        if not plan.terms:
            return []
        heading, stop = Asked.of(query).heading_terms(), stop_words(query)
        lex = lexical_ids(snap, plan, FANOUT, heading, stop)
        hits = assemble(snap, lex, {}, n)
        if len(hits) < n and len(lex) == FANOUT:
            lex = lexical_ids(snap, plan, FANOUT * DEEPER, heading, stop)
            hits = assemble(snap, lex, {}, n)
    return hits


def percentiles(ms: list[float]) -> dict[str, float]:
    s = sorted(ms)
    return {
        "p50": round(statistics.median(s), 1),
        "p95": round(s[min(len(s) - 1, int(0.95 * len(s)))], 1),
        "n": len(s),
    }


def time_scoring(scorer: Scorer, query: str, texts: list[str]) -> float:
    """Milliseconds to encode the query and ``texts`` and score them (no cache)."""
    t0 = time.perf_counter()
    qf = scorer.features([query])[0]
    scorer.score(qf, scorer.features(texts))
    return 1000 * (time.perf_counter() - t0)


def paired(base: list[float], other: list[float], resamples: int) -> dict[str, float | list[float]]:
    d, lo, hi = paired_diff(base, other, resamples)
    return {"delta": round(d, 4), "ci": [round(lo, 4), round(hi, 4)]}


def load_avg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def dev_corpus(
    key: str,
    questions: list[Question],
    scorers: list[Scorer],
    caches: dict[str, FeatureCache],
    depths: list[int],
    base: Path,
    latency_n: int,
    resamples: int,
) -> dict[str, Any]:
    corpus = CORPORA[key]
    settings = resolve_settings(cwd=corpus.root.resolve(), store_base=base / key, discover=False)
    t0 = time.perf_counter()
    index(settings)
    print(f"{key}: indexed in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
    k = Knowledge(settings)
    deepest = max(depths)
    ranks: dict[str, list[int | None]] = {"lexical": []}
    search_ms: list[float] = []
    try:
        for i, q in enumerate(questions):
            t1 = time.perf_counter()
            top20 = dev_candidates(k, q.query, 20)
            search_ms.append(1000 * (time.perf_counter() - t1))
            ranks["lexical"].append(_rank(q, top20[:10], section_match))
            lists = {n: top20[:n] if n <= 20 else dev_candidates(k, q.query, n) for n in depths}
            for scorer in scorers:
                qf = scorer.features([q.query])[0]
                hits = lists[deepest] if deepest > 20 else top20
                feats = caches[scorer.name].features([h.content for h in hits])
                for n in depths:
                    cands = lists[n]
                    # Pointwise scores: the top-n list's rows are the first rows of the deepest
                    # list when both come from the same path, else they are computed afresh.
                    same = [h.chunk_id for h in cands] == [h.chunk_id for h in hits[: len(cands)]]
                    f = (
                        feats[: len(cands)]
                        if same
                        else caches[scorer.name].features([h.content for h in cands])
                    )
                    s = scorer.score(qf, f)
                    for name, order in reorder(len(cands), s).items():
                        top = [cands[j] for j in order[:10]]
                        ranks.setdefault(f"{scorer.name}@{n}:{name}", []).append(
                            _rank(q, top, section_match)
                        )
            if (i + 1) % 50 == 0:
                print(f"{key}: {i + 1}/{len(questions)}", file=sys.stderr)
                for c in caches.values():
                    c.save()
        latency = dev_latency(k, questions, scorers, depths, latency_n)
    finally:
        k.close()
        for c in caches.values():
            c.save()
    return {
        "questions": len(questions),
        "lexical_search_ms": percentiles(search_ms),
        "runs": summarize_runs(ranks, questions, resamples),
        "latency": latency,
    }


def summarize_runs(
    ranks: dict[str, list[int | None]], questions: list[Question], resamples: int
) -> dict[str, Any]:
    base = ranks["lexical"]
    out: dict[str, Any] = {}
    langs = sorted({q.lang for q in questions}, key=lambda x: (x != "en", x))
    for name, rs in ranks.items():
        run: dict[str, Any] = {"overall": summarize(rs, resamples)}
        run["by_lang"] = {
            lang: summarize(
                [r for r, q in zip(rs, questions, strict=True) if q.lang == lang], resamples
            )
            for lang in langs
        }
        run["by_kind"] = {
            kind: summarize(
                [r for r, q in zip(rs, questions, strict=True) if q.kind == kind], resamples
            )
            for kind in KINDS
            if any(q.kind == kind for q in questions)
        }
        if name != "lexical":
            run["vs_lexical"] = {
                m: paired([f(r) for r in base], [f(r) for r in rs], resamples)
                for m, f in METRICS.items()
                if m in ("mrr@10", "hit@5")
            }
            run["moved"] = {
                "up": sum(1 for a, b in zip(base, rs, strict=True) if _better(b, a)),
                "down": sum(1 for a, b in zip(base, rs, strict=True) if _better(a, b)),
            }
        out[name] = run
    return out


def _better(a: int | None, b: int | None) -> bool:
    """Rank ``a`` is better than rank ``b`` (None: not in the top 10)."""
    return a is not None and (b is None or a < b)


def dev_latency(
    k: Knowledge, questions: list[Question], scorers: list[Scorer], depths: list[int], n: int
) -> dict[str, Any]:
    sample = random.Random(SEED).sample(questions, min(n, len(questions)))
    out: dict[str, Any] = {"load_before": load_avg()}
    for scorer in scorers:
        for depth in depths:
            ms = [
                time_scoring(
                    scorer, q.query, [h.content for h in dev_candidates(k, q.query, depth)]
                )
                for q in sample
            ]
            out[f"{scorer.name}@{depth}_ms"] = percentiles(ms)
    out["load_after"] = load_avg()
    return out


def beir_run(
    name: str,
    split: str,
    scorers: list[Scorer],
    caches: dict[str, FeatureCache],
    depths: list[int],
    cache: Path,
    latency_n: int,
    resamples: int,
) -> dict[str, Any]:
    base = CORPORA_DIR / f"beir-{name}"
    qrels = read_qrels(
        base / "qrels" / f"{split}.tsv" if (base / "qrels").is_dir() else base / "qrels.tsv"
    )
    queries = {q["_id"]: q["text"] for q in read_jsonl(base / "queries.jsonl") if q["_id"] in qrels}
    doc_text = {
        d["_id"]: f"{d.get('title') or ''} {d.get('text') or ''}".strip()
        for d in read_jsonl(base / "corpus.jsonl")
    }
    tmp = cache / f"beir-{name}"
    root = tmp / "project"
    if not root.is_dir():
        root.mkdir(parents=True)
        build_project(name, root)
    settings = resolve_settings(cwd=root, store_base=tmp / "store")
    index(settings)
    kb = Knowledge(settings)
    deepest = max(depths)
    per: dict[str, dict[str, list[float]]] = {"ndcg@10": {}, "hit@5": {}}
    lists: dict[str, list[str]] = {}

    def add(run: str, qid: str, ranked: list[str]) -> None:
        rels = qrels[qid]
        per["ndcg@10"].setdefault(run, []).append(ndcg_at(ranked, rels))
        per["hit@5"].setdefault(run, []).append(float(any(rels.get(d, 0) > 0 for d in ranked[:5])))

    try:
        with kb.store.snapshot() as snap:
            assert snap is not None
            t = snap.tables
            chunk_doc = {
                int(cid): Path(str(path)).stem
                for cid, path in snap.conn.execute(
                    f"SELECT c.id, d.path FROM {t.chunks} c"
                    f" JOIN {t.documents} d ON d.id = c.document_id"
                )
            }
            stats = TermStats()
            for i, (qid, text) in enumerate(queries.items()):
                skip = qid if name == "arguana" else None
                plan = query_plan(snap, text, stats)
                lex = [cid for cid, _ in lexical_ids(snap, plan, 200)] if plan.terms else []
                docs = to_docs(lex, chunk_doc, skip)
                lists[qid] = docs
                add("lexical", qid, docs)
                for scorer in scorers:
                    qf = scorer.features([text])[0]
                    feats = caches[scorer.name].features([doc_text[d] for d in docs[:deepest]])
                    for n in depths:
                        cands = docs[:n]
                        s = scorer.score(qf, feats[: len(cands)])
                        for vname, order in reorder(len(cands), s).items():
                            add(f"{scorer.name}@{n}:{vname}", qid, [cands[j] for j in order])
                if (i + 1) % 100 == 0:
                    print(f"{name}: {i + 1}/{len(queries)}", file=sys.stderr)
                    for c in caches.values():
                        c.save()
    finally:
        kb.close()
        for c in caches.values():
            c.save()
    sample = random.Random(SEED).sample(sorted(queries), min(latency_n, len(queries)))
    latency: dict[str, Any] = {"load_before": load_avg()}
    for scorer in scorers:
        for n in depths:
            ms = [
                time_scoring(scorer, queries[q], [doc_text[d] for d in lists[q][:n]])
                for q in sample
            ]
            latency[f"{scorer.name}@{n}_ms"] = percentiles(ms)
    latency["load_after"] = load_avg()
    runs: dict[str, Any] = {}
    for run in per["ndcg@10"]:
        entry: dict[str, Any] = {}
        for metric, values in per.items():
            v = values[run]
            lo, hi = bootstrap_ci(v, resamples)
            entry[metric] = round(sum(v) / len(v), 4)
            entry[f"{metric}_ci"] = [round(lo, 4), round(hi, 4)]
            if run != "lexical":
                entry[f"{metric}_vs_lexical"] = paired(values["lexical"], v, resamples)
        runs[run] = entry
    return {
        "dataset": name,
        "split": split,
        "queries": len(queries),
        "runs": runs,
        "latency": latency,
    }


def _csv(parse: Callable[[str], Any]) -> Callable[[str], list[Any]]:
    return lambda v: [parse(x) for x in v.split(",") if x]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", choices=[*CORPORA, "all", "none"], default="all")
    ap.add_argument("--subset", metavar="LANG", help="only dev questions in this language")
    ap.add_argument("--beir", choices=["scifact", "arguana", "none"], default="scifact")
    ap.add_argument("--split", default="test")
    ap.add_argument("--scorers", type=_csv(str), default=list(SCORERS))
    ap.add_argument("--depths", type=_csv(int), default=[20, 50])
    ap.add_argument("--store-base", type=Path, help="dev-set indexes (reused by later runs)")
    ap.add_argument("--cache", type=Path, help="candidate features and the BEIR project/index")
    ap.add_argument("--latency-queries", type=int, default=30)
    ap.add_argument("--resamples", type=int, default=RESAMPLES)
    args = ap.parse_args(argv)
    unknown = [s for s in args.scorers if s not in SCORERS]
    if unknown or not args.scorers:
        ap.error(f"--scorers: unknown {unknown}; known: {list(SCORERS)}")
    if not args.depths or any(n < 10 for n in args.depths):
        ap.error("--depths: each at least 10 (the scored top 10 comes out of them)")
    keys = [] if args.corpus == "none" else list(CORPORA) if args.corpus == "all" else [args.corpus]
    scratch = Path(os.environ.get("TMPDIR", "/tmp")) / "fisk-rerank"
    store_base = args.store_base or scratch / "stores"
    cache = args.cache or scratch / "cache"
    scorers: list[Scorer] = [SCORERS[s]() for s in args.scorers]
    caches = {s.name: FeatureCache(s, cache / "features") for s in scorers}
    out: dict[str, Any] = {
        "scorers": args.scorers,
        "depths": args.depths,
        "bootstrap": {"resamples": args.resamples, "interval": 0.95},
        "load_start": load_avg(),
        "dev": {},
    }
    for key in keys:
        questions = load(CORPORA[key])
        if args.subset:
            questions = [q for q in questions if q.lang == args.subset]
        if questions:
            out["dev"][key] = dev_corpus(
                key, questions, scorers, caches, args.depths, store_base,
                args.latency_queries, args.resamples,
            )  # fmt: skip
    if args.beir != "none":
        out["beir"] = beir_run(
            args.beir, args.split, scorers, caches, args.depths, cache,
            args.latency_queries, args.resamples,
        )  # fmt: skip
    out["load_end"] = load_avg()
    print(json.dumps(out, indent=2, ensure_ascii=False, default=_np))
    return 0


def _np(o: object) -> object:
    if isinstance(o, np.generic):
        return o.item()
    raise TypeError(type(o).__name__)


if __name__ == "__main__":
    sys.exit(main())
