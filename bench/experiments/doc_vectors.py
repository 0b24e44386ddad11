"""A document-level vector prior for the hybrid tier (issue 14), measured, not in the product.

    DOC_WEIGHT=0.15 DOC_TEXT=summary|headings python bench/experiments/doc_vectors.py [devset.py args]

Each document gets one more vector: its title and front-matter description (``summary``), or
those plus its headings (``headings``). At query time the documents nearest the query (cosine,
top ``FANOUT``) add ``DOC_WEIGHT`` x their rescaled cosine (best 1, the 50th 0) to every fused
candidate of theirs: a paraphrase that names a page's topic, not its words, lifts that page's
chunks. Document vectors are computed once per store and cached next to it in /tmp.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import devset

from fisk_ls.knowledge import reader as R
from fisk_ls.knowledge import search as S

DOC_WEIGHT = float(os.environ.get("DOC_WEIGHT", "0.15"))
DOC_TEXT = os.environ.get("DOC_TEXT", "summary")
_LAST: dict[str, Any] = {}
_DOCS: dict[str, Any] = {}

original_run_search = R.run_search
original_vector_ids = S.vector_ids
original_fuse = S.fuse
_EMBEDDER: list[Any] = []


def _doc_texts(snap: Any) -> tuple[list[int], list[str]]:
    t = snap.tables
    ids, texts = [], []
    heads: dict[int, list[str]] = {}
    if DOC_TEXT == "headings":
        for did, section in snap.conn.execute(
            f"SELECT document_id, section FROM {t.rows} ORDER BY document_id, ordinal"
        ):
            names = heads.setdefault(int(did), [])
            for part in str(section).split(" > ")[1:]:
                for name in part.split("; "):
                    if name and name not in names:
                        names.append(name)
    for did, title, doc, path in snap.conn.execute(
        f"SELECT id, title, doc, path FROM {t.documents}"
    ):
        lines = str(doc or "").split("\n")[:-1]  # the last line is the path
        words = [
            w.replace("-", " ").replace("_", " ").strip()
            for w in str(path).rsplit(".", 1)[0].split("/")
            if w not in ("content", "docs", "index", "_index") and len(w) > 2
        ]
        parts = [" ".join(words), str(title or "")] + [x for x in lines if x and x != title]
        if DOC_TEXT == "headings":
            parts += heads.get(int(did), [])[:20]
        ids.append(int(did))
        texts.append(". ".join(p for p in parts if p))
    return ids, texts


def _doc_matrix(snap: Any) -> tuple[dict[int, int], np.ndarray]:
    if "m" not in _DOCS:
        ids, texts = _doc_texts(snap)
        key = hashlib.sha256(("\n".join(texts) + DOC_TEXT).encode()).hexdigest()[:16]
        cache = Path(f"/tmp/docvec-{key}.npy")
        if cache.exists():
            m = np.load(cache)
        else:
            m = np.asarray(_EMBEDDER[0].embed_documents(texts), dtype=np.float32)
            np.save(cache, m)
        _DOCS["m"], _DOCS["where"] = m, {d: i for i, d in enumerate(ids)}
        _DOCS["ids"] = ids
        _DOCS["doc_of"] = {
            int(c): int(d)
            for c, d in snap.conn.execute(f"SELECT id, document_id FROM {snap.tables.rows}")
        }
    return _DOCS["where"], _DOCS["m"]


def vector_ids(snap: Any, vector: Any, *a: Any, **kw: Any) -> Any:
    _LAST["vector"] = np.asarray(vector, dtype=np.float32)
    _LAST["snap"] = snap
    return original_vector_ids(snap, vector, *a, **kw)


def fuse(lexical: Any, vector: Any) -> list[tuple[int, float]]:
    fused = original_fuse(lexical, vector)
    if not vector or "vector" not in _LAST or not _EMBEDDER:
        return fused
    snap = _LAST["snap"]
    _, m = _doc_matrix(snap)
    cos = m @ _LAST["vector"]
    order = np.argsort(-cos)[: S.FANOUT]
    top, floor = float(cos[order[0]]), float(cos[order[-1]])
    span = top - floor
    near = {_DOCS["ids"][i]: (float(cos[i]) - floor) / span if span > 0 else 1.0 for i in order}
    doc_of = _DOCS["doc_of"]
    out = [(cid, s + DOC_WEIGHT * near.get(doc_of.get(cid, -1), 0.0)) for cid, s in fused]
    return sorted(out, key=lambda item: (-item[1], item[0]))


def run_search(*a: Any, **kw: Any) -> Any:
    _LAST.clear()
    return original_run_search(*a, **kw)


original_embed_query = R.embed_query


def embed_query(embedder: Any, query: str) -> Any:
    if not _EMBEDDER:
        _EMBEDDER.append(embedder)
    return original_embed_query(embedder, query)


R.run_search = run_search  # type: ignore[assignment]
S.vector_ids = vector_ids  # type: ignore[assignment]
S.fuse = fuse  # type: ignore[assignment]
R.embed_query = embed_query  # type: ignore[assignment]

if __name__ == "__main__":
    raise SystemExit(devset.main())
