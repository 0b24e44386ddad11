"""Fusion rules on the dev set (issue 14): lexical-only, vector-only and several hybrid rules over
one hybrid store, each scored exactly as bench/devset.py scores (section-level Hit@5, MRR@10,
bootstrap intervals).

    python fusion.py --store-base /abs/devstore --builtin MODEL_DIR [--corpus otel] [--rules a,b]
                     [--en-only] [--questions FILE]

The store is the one ``devset.py --builtin MODEL_DIR --store-base /abs/devstore`` built (its
``<corpus>/hybrid`` folder); nothing is re-embedded: only the questions are, once each. Every rule
replaces ``search.fuse_strings`` for the query alone (and, for score fusion, ``search.vector_ids`` so the cosine of each
vector candidate is known) while the questions run. The rules:

* ``lexical``, ``vector``: one arm alone; ``core``: the core's own ``search.fuse``;
* ``rrf60`` (today's default), ``rrf20``, ``rrf100``: plain RRF with that k;
* ``wlex2`` / ``wvec2``: weighted RRF k=60, the lexical / vector list counted twice;
* ``score50`` / ``score30``: convex score fusion, BM25 / best BM25 and (cos - floor) / (best -
  floor) over each list, with the lexical weight 0.5 / 0.3 (the vector list's 100th cosine as
  the floor);
* ``cjkgate``: rrf60, but a query that is mostly CJK skips the vector arm (an English-only model
  cannot read it).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parents[1]))

from devset import score  # noqa: E402
from devset_questions import CORPORA, load  # noqa: E402

from fisk_ls.knowledge import Knowledge, resolve_settings  # noqa: E402
from fisk_ls.knowledge import search as S  # noqa: E402
from fisk_ls.knowledge.config import EmbeddingsConfig  # noqa: E402

Lex = list[tuple[int, float]]
Fuse = Callable[[Lex, list[int]], tuple[list[tuple[int, float]], dict[int, dict[str, int]]]]

PRODUCT = S.fuse_strings


def FUSE0(lex: Lex, vec: list[tuple[int, float]]) -> Any:  # today's rule
    fused, ranks, _ = PRODUCT([(lex, vec)])
    return fused, ranks


def _patched(rule: Fuse) -> Any:
    def fuse_strings(arms: Any) -> Any:
        lex, vec = arms[0]
        fused, ranks = rule(list(lex), [c for c, _ in vec])
        return fused, ranks, PRODUCT(arms)[2]

    return fuse_strings


_COS: dict[int, float] = {}  # the last vector search's cosines (score fusion)
_QUERY = [""]  # the query being searched (cjkgate)
_FANOUT = [0]  # vector candidates (0: the core's FANOUT)


def _ranks(lexical: Lex, vector: list[int]) -> dict[int, dict[str, int]]:
    ranks: dict[int, dict[str, int]] = {}
    for r, (cid, _) in enumerate(lexical, 1):
        ranks.setdefault(cid, {})["lexical"] = r
    for r, cid in enumerate(vector, 1):
        ranks.setdefault(cid, {})["vector"] = r
    return ranks


def weighted_rrf(k: int, wl: float, wv: float) -> Fuse:
    def fuse(lexical: Lex, vector: list[int]) -> Any:
        scores: dict[int, float] = {}
        for r, (cid, _) in enumerate(lexical):
            scores[cid] = scores.get(cid, 0.0) + wl / (k + r + 1)
        for r, cid in enumerate(vector):
            scores[cid] = scores.get(cid, 0.0) + wv / (k + r + 1)
        return sorted(scores.items(), key=lambda x: (-x[1], x[0])), _ranks(lexical, vector)

    return fuse


def core(lexical: Lex, vector: Any) -> Any:
    """The core's own rule (search.fuse), with the vector candidates' cosines."""
    return FUSE0(lexical, [(c, _COS[c]) for c in vector])


def score_fusion(wl: float, floor_rank: int | None = None, lex_minmax: bool = False) -> Fuse:
    def fuse(lexical: Lex, vector: list[int]) -> Any:
        scores: dict[int, float] = {}
        if lexical:
            best, worst = lexical[0][1], lexical[-1][1]
            for cid, s in lexical:
                if lex_minmax:
                    scores[cid] = wl * ((s - worst) / (best - worst) if best != worst else 1.0)
                else:
                    scores[cid] = wl * (s / best if best else 0.0)
        if vector:
            cos = [_COS[c] for c in vector]
            top = cos[0]
            floor = cos[-1] if floor_rank is None else cos[min(floor_rank, len(cos)) - 1]
            span = (top - floor) or 1.0
            for cid, c in zip(vector, cos, strict=True):
                scores[cid] = scores.get(cid, 0.0) + (1 - wl) * max(0.0, c - floor) / span
        return sorted(scores.items(), key=lambda x: (-x[1], x[0])), _ranks(lexical, vector)

    return fuse


def _mostly_cjk(text: str) -> bool:
    letters = [ch for ch in text if ch.isalpha()]
    cjk = sum(1 for ch in letters if ord(ch) >= 0x2E80)
    return bool(letters) and cjk * 2 >= len(letters)


def cjk_gate(inner: Fuse) -> Fuse:
    def fuse(lexical: Lex, vector: list[int]) -> Any:
        return inner(lexical, [] if _mostly_cjk(_QUERY[0]) else vector)

    return fuse


_IDENT = re.compile(r"[A-Za-z0-9][_./:-][A-Za-z0-9]|[a-z][A-Z]|\b[A-Z]{3,}\b|`")


def adaptive(ident: tuple[float, float], prose: tuple[float, float], words: int = 5) -> Fuse:
    """Weighted RRF k=60 by query shape: identifier-like queries lean lexical, questions of at
    least ``words`` words lean on the vector arm."""
    a, b = weighted_rrf(60, *ident), weighted_rrf(60, *prose)
    plain = weighted_rrf(60, 1, 1)

    def fuse(lexical: Lex, vector: list[int]) -> Any:
        q = _QUERY[0]
        if _IDENT.search(q):
            return a(lexical, vector)
        if len(q.split()) >= words:
            return b(lexical, vector)
        return plain(lexical, vector)

    return fuse


RULES: dict[str, Fuse] = {
    "lexical": lambda lex, vec: FUSE0(lex, []),
    "vector": lambda lex, vec: FUSE0([], [(c, _COS[c]) for c in vec]),
    "core": core,
    "rrf60": weighted_rrf(60, 1, 1),
    "rrf20": weighted_rrf(20, 1, 1),
    "rrf100": weighted_rrf(100, 1, 1),
    "wlex2": weighted_rrf(60, 2, 1),
    "wvec2": weighted_rrf(60, 1, 2),
    "wlex15": weighted_rrf(60, 1.5, 1),
    "wvec15": weighted_rrf(60, 1, 1.5),
    "score50": score_fusion(0.5),
    "score30": score_fusion(0.3),
    "score70": score_fusion(0.7),
    "score60": score_fusion(0.6),
    "score65": score_fusion(0.65),
    "score75": score_fusion(0.75),
    "score80": score_fusion(0.8),
    "score90": score_fusion(0.9),
    "score70f20": score_fusion(0.7, floor_rank=20),
    "score70mm": score_fusion(0.7, lex_minmax=True),
    "score60mm": score_fusion(0.6, lex_minmax=True),
    "cjkgate": cjk_gate(weighted_rrf(60, 1, 1)),
    "adapt21": adaptive((2, 1), (1, 1)),
    "adapt2_15": adaptive((2, 1), (1, 1.5)),
    "adapt3_2": adaptive((3, 1), (1, 2)),
}


def _vector_ids_with_cosines(original: Callable[..., list[int]]) -> Callable[..., list[int]]:
    import numpy as np

    def wrapped(snap: Any, vector: Sequence[float], *a: Any, **kw: Any) -> Any:
        if _FANOUT[0]:
            kw["limit"] = _FANOUT[0]
        scored = original(snap, vector, *a, **kw)
        ids = [cid for cid, _ in scored]
        _COS.clear()
        if ids:
            marks = ",".join("?" * len(ids))
            q = np.asarray(vector, dtype=np.float32)
            for cid, blob in snap.conn.execute(
                f"SELECT chunk_id, embedding FROM {snap.tables.vec} WHERE chunk_id IN ({marks})",
                ids,
            ):
                _COS[int(cid)] = float(np.frombuffer(blob, dtype=np.float32) @ q)
        return scored

    return wrapped


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default="otel", choices=list(CORPORA))
    ap.add_argument("--questions", type=Path, help="another question file (devset.py's)")
    ap.add_argument("--store-base", type=Path, required=True)
    ap.add_argument("--builtin", type=Path, required=True, metavar="MODEL_DIR")
    ap.add_argument("--rules", default=",".join(RULES))
    ap.add_argument("--resamples", type=int, default=2000)
    ap.add_argument("--vector-fanout", type=int, default=0, help="vector candidates (0: core's)")
    ap.add_argument(
        "--en-only", action="store_true", help="English questions see content/en hits only"
    )
    args = ap.parse_args()
    corpus = CORPORA[args.corpus]
    questions = load(corpus, args.questions)
    emb = EmbeddingsConfig(
        base_url="",
        provider="builtin",
        model="all-MiniLM-L6-v2",
        model_path=str(args.builtin.resolve()),
    )
    root = corpus.root.resolve()
    settings = resolve_settings(
        cwd=root, store_base=args.store_base / corpus.key / "hybrid", discover=False
    ).with_overrides(embeddings=emb)
    k = Knowledge(settings)
    assert k.embedder is not None
    embed = lru_cache(maxsize=None)(k.embedder.embed_query)
    k.embedder.embed_query = embed  # type: ignore[method-assign]
    original_search = k.search

    lang = {q.query: q.lang for q in questions}

    def search(query: str, top_k: int | None = None, **kw: Any) -> Any:
        _QUERY[0] = query
        if not args.en_only or lang.get(query) != "en":
            return original_search(query, top_k, **kw)
        # Approximates an index of content/en alone (the IDF still counts every language).
        result = original_search(query, 20, **kw)
        hits = [h for h in result.hits if h.path.startswith("content/en/")]
        return dataclasses.replace(result, hits=hits[: top_k or 10])

    k.search = search  # type: ignore[method-assign]
    _FANOUT[0] = args.vector_fanout
    S.vector_ids = _vector_ids_with_cosines(S.vector_ids)  # type: ignore[assignment]
    out: dict[str, Any] = {}
    try:
        for name in args.rules.split(","):
            rule = RULES[name]
            S.fuse_strings = _patched(rule)
            run = score(questions, k, False, args.resamples)
            out[name] = run
            o = run["overall"]
            langs = " ".join(f"{lang} {m['hit@5']:.3f}" for lang, m in run["by_lang"].items())
            kinds = " ".join(f"{kd} {m['hit@5']:.3f}" for kd, m in run["by_kind"].items())
            print(
                f"{name:8} hit@5 {o['hit@5']:.3f} {o['hit@5_ci']} mrr {o['mrr@10']:.3f}"
                f" | {langs} | {kinds}",
                file=sys.stderr,
            )
    finally:
        S.fuse_strings = PRODUCT
        k.close()
    print(json.dumps({n: r["per_question"] for n, r in out.items()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
