"""Shorter texts for the vector arm (issue 14), measured, not in the product.

A chunk is ~1,200 characters (~300 MiniLM tokens): the model keeps 256 tokens and was trained
on sentence pairs, so one vector per chunk blurs a long chunk and drops its tail. Here each
chunk whose text is longer than WINDOW characters also gets one vector per window (its lines
packed up to WINDOW characters, each window embedded with the chunk's breadcrumb), and a chunk
scores the best cosine of its own vector and its windows'.

    WINDOW=500 python bench/experiments/window_vectors.py embed STORE.db MODEL_DIR OUT.npz
    WINDOWS=OUT.npz python bench/experiments/window_vectors.py devset [devset.py args] > out.json

``embed`` writes the window vectors (resumable: it appends to OUT.npz's batches); ``devset``
runs bench/devset.py with ``search.vector_ids`` replaced by an exact search over the chunk
vectors and the window vectors (max per chunk).
"""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

WINDOW = int(os.environ.get("WINDOW", "500"))
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def windows(body: str, size: int = WINDOW) -> list[str]:
    """``body``'s lines packed into pieces of at most ``size`` characters (a longer line is cut
    at sentence ends, then hard)."""
    parts: list[str] = []
    for line in body.splitlines():
        if len(line) <= size:
            parts.append(line)
            continue
        for sentence in _SENTENCE.split(line):
            while len(sentence) > size:
                parts.append(sentence[:size])
                sentence = sentence[size:]
            parts.append(sentence)
    out: list[str] = []
    cur = ""
    for p in parts:
        if cur and len(cur) + 1 + len(p) > size:
            out.append(cur)
            cur = p
        else:
            cur = f"{cur}\n{p}" if cur else p
    if cur.strip():
        out.append(cur)
    return [w for w in out if w.strip()]


def chunk_rows(db: str) -> list[tuple[int, str, str]]:
    """(id, section, body) of every chunk of a store, by id (read-only)."""
    import apsw

    conn = apsw.Connection(db, flags=apsw.SQLITE_OPEN_READONLY)
    (view,) = conn.execute(
        "SELECT name FROM sqlite_master WHERE type='view' AND name LIKE 'chunks\\_%' ESCAPE '\\'"
        " AND name NOT LIKE '%pending%'"
    ).fetchone()
    rows = conn.execute(f"SELECT id, section, body FROM {view} ORDER BY id").fetchall()
    conn.close()
    return [(int(i), str(s), str(b)) for i, s, b in rows]


def embed(db: str, model_dir: str, out: str) -> None:
    from fisk_ls.knowledge.display import display_text
    from fisk_ls.knowledge.vectors.builtin import BuiltinEmbedder

    rows = chunk_rows(db)
    items: list[tuple[int, str]] = []
    for cid, section, body in rows:
        if len(display_text(section, body)) <= WINDOW + 100:
            continue
        for w in windows(body):
            items.append((int(cid), display_text(section, w)))
    print(f"{len(rows)} chunks, {len(items)} windows of <= {WINDOW} chars", file=sys.stderr)
    emb = BuiltinEmbedder("all-MiniLM-L6-v2", model_dir=Path(model_dir), threads=2, nice=0)
    ids: list[int] = []
    vecs: list[list[float]] = []
    t0 = time.monotonic()
    for i in range(0, len(items), 256):
        batch = items[i : i + 256]
        vecs.extend(emb.embed_documents([t for _, t in batch]))
        ids.extend(c for c, _ in batch)
        rate = len(ids) / (time.monotonic() - t0)
        print(f"{len(ids)}/{len(items)} {rate:.1f}/s", file=sys.stderr, flush=True)
    emb.close()
    np.savez(out, ids=np.array(ids, dtype=np.int64), vecs=np.array(vecs, dtype=np.float32))


def devset_main() -> int:
    import devset

    from fisk_ls.knowledge import search as S

    data = np.load(os.environ["WINDOWS"])
    w_ids, w_vecs = data["ids"], data["vecs"]
    cache: dict[str, Any] = {}

    def vector_ids(
        snap: Any, vector: Any, limit: int = S.FANOUT, coarse: Any = None, within: Any = None
    ) -> Any:
        assert within is None  # the dev sets search no scope
        if "m" not in cache:
            rows = snap.conn.execute(
                f"SELECT chunk_id, embedding FROM {snap.tables.vec}"
            ).fetchall()
            c_ids = np.array([r[0] for r in rows], dtype=np.int64)
            c_vecs = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(
                len(rows), -1
            )
            cache["ids"] = np.concatenate([c_ids, w_ids])
            cache["m"] = np.concatenate([c_vecs, w_vecs])
        cos = cache["m"] @ np.asarray(vector, dtype=np.float32)
        best: dict[int, float] = {}
        for j in np.argsort(-cos)[: limit * 8]:
            cid = int(cache["ids"][j])
            if cid not in best:
                best[cid] = float(cos[j])
        ranked = sorted(best.items(), key=lambda r: (-r[1], r[0]))[:limit]
        return ranked

    S.vector_ids = vector_ids  # type: ignore[assignment]
    return devset.main(sys.argv[2:])


if __name__ == "__main__":
    if sys.argv[1] == "embed":
        embed(*sys.argv[2:5])
    else:
        raise SystemExit(devset_main())
