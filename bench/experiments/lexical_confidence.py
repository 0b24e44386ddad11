"""A per-query lexical weight from how much of the query the best lexical hit matches (issue 14),
measured, not in the product.

    LO=0.5 HI=0.75 python bench/experiments/lexical_confidence.py [devset.py args]
    LO=0.5 HI=0.75 python bench/experiments/lexical_confidence.py beir [beir.py args]

``search.fuse`` weighs BM25 0.7 for every query. A paraphrase's best lexical hit often matches a
few of its common words only, while an exact question's matches all of them. Here the weight is
``LO + (HI - LO) x coverage``, where coverage is the idf-weighted share of the query's terms
that the best lexical chunk contains (FTS5's idf, ``Plan.bound``).
"""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import devset

from fisk_ls.knowledge import search as S
from fisk_ls.knowledge.fts import or_expression

LO = float(os.environ.get("LO", "0.5"))
HI = float(os.environ.get("HI", "0.75"))
_LAST: dict[str, Any] = {}

original_query_plan = S.query_plan
original_bm25_ids = S.bm25_ids
original_fuse = S.fuse


def query_plan(snap: Any, query: Any, term_stats: Any, budget: Any = None) -> Any:
    plan = original_query_plan(snap, query, term_stats, budget)
    _LAST["plan"], _LAST["snap"] = plan, snap
    return plan


def coverage(snap: Any, plan: Any, cid: int) -> float:
    f = snap.tables.fts
    weights = {t: plan.bound(t) for t in plan.terms}
    if not weights or any(math.isinf(w) for w in weights.values()):
        return 1.0
    got = 0.0
    for term, w in weights.items():
        hit = snap.conn.execute(
            f"SELECT 1 FROM {f} WHERE {f} MATCH ? AND rowid = ?",
            (or_expression((), [term]), cid),
        ).fetchone()
        if hit:
            got += w
    total = sum(weights.values())
    return got / total if total else 1.0


def fuse(lexical: Any, vector: Any) -> list[tuple[int, float]]:
    if not lexical or not vector or "plan" not in _LAST:
        return original_fuse(lexical, vector)
    c = coverage(_LAST["snap"], _LAST["plan"], lexical[0][0])
    saved = S.LEXICAL_WEIGHT
    S.LEXICAL_WEIGHT = LO + (HI - LO) * c
    try:
        return original_fuse(lexical, vector)
    finally:
        S.LEXICAL_WEIGHT = saved


S.query_plan = query_plan  # type: ignore[assignment]
S.fuse = fuse  # type: ignore[assignment]

if __name__ == "__main__":
    if sys.argv[1:2] == ["beir"]:
        import beir

        beir.query_plan = query_plan  # type: ignore[assignment]
        beir.fuse = fuse  # type: ignore[assignment]
        sys.argv = [sys.argv[0], *sys.argv[2:]]
        raise SystemExit(beir.main())
    raise SystemExit(devset.main())
