"""Score fusion with both scores known for every candidate (issue 14), measured, not in the
product.

    VARIANT=both|lexical|vector python bench/experiments/complete_scores.py [devset.py args]

Today a chunk found by one retriever scores nothing from the other (``search.fuse``), so with
the lexical weight at 0.7 a chunk that only the vector arm found can reach at most 0.3, below
every confident lexical candidate. Here the missing score is filled in: ``vector`` gives a
vector-only candidate its BM25 when it is among the 200 lexical candidates read anyway;
``lexical`` gives a lexical-only candidate its exact cosine (rescaled like the vector list's,
clamped at 0 below the 50th); ``both`` does both. Cosines come from the store's vectors, loaded
once. ``search.lexical_arm`` calls ``boost_headings`` and ``run_search`` calls ``vector_ids``
by name, so the wrappers see every candidate; one search string per question (no ``--agent``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import devset

from fisk_ls.knowledge import search as S

VARIANT = os.environ.get("VARIANT", "both")
_LAST: dict[str, Any] = {}
_MATRIX: dict[str, Any] = {}

original_boost = S.boost_headings
original_vector_ids = S.vector_ids
original_fuse = S.fuse


def boost_headings(snap: Any, ranked: Any, *a: Any, **kw: Any) -> Any:
    out = original_boost(snap, ranked, *a, **kw)  # the query's lexical candidates, boosted
    _LAST["deep"] = out
    _LAST["snap"] = snap
    return out


def vector_ids(snap: Any, vector: Any, *a: Any, **kw: Any) -> Any:
    _LAST["vector"] = np.asarray(vector, dtype=np.float32)
    return original_vector_ids(snap, vector, *a, **kw)


def _cosines(snap: Any, ids: list[int], q: Any) -> dict[int, float]:
    if "index" not in _MATRIX:
        rows = snap.conn.execute(f"SELECT chunk_id, embedding FROM {snap.tables.vec}").fetchall()
        _MATRIX["index"] = {int(r[0]): i for i, r in enumerate(rows)}
        _MATRIX["m"] = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(
            len(rows), -1
        )
    where = _MATRIX["index"]
    return {c: float(_MATRIX["m"][where[c]] @ q) for c in ids if c in where}


def fuse(lexical: Any, vector: Any) -> list[tuple[int, float]]:
    if not lexical or not vector:
        return original_fuse(lexical, vector)
    wl = S.LEXICAL_WEIGHT
    best = lexical[0][1]
    deep = {cid: s for cid, s in _LAST.get("deep", [])}
    lex = {cid: s / best for cid, s in lexical}
    top, floor = vector[0][1], vector[-1][1]
    span = top - floor
    vec = {cid: (c - floor) / span if span > 0 else 1.0 for cid, c in vector}
    if VARIANT in ("both", "vector"):
        for cid in vec:
            if cid not in lex and cid in deep:
                lex[cid] = deep[cid] / best
    if VARIANT in ("both", "lexical") and "vector" in _LAST:
        missing = [cid for cid in lex if cid not in vec]
        for cid, c in _cosines(_LAST["snap"], missing, _LAST["vector"]).items():
            vec[cid] = max(0.0, (c - floor) / span) if span > 0 else 0.0
    scores = {cid: wl * lex.get(cid, 0.0) + (1 - wl) * vec.get(cid, 0.0) for cid in lex | vec}
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


S.boost_headings = boost_headings  # type: ignore[assignment]
S.vector_ids = vector_ids  # type: ignore[assignment]
S.fuse = fuse  # type: ignore[assignment]  # search.fuse_strings calls it by name

if __name__ == "__main__":
    raise SystemExit(devset.main())
