"""A document-level BM25 beside the chunk-level one (issue 14, "ranking that knows documents").

    python bench/experiments/doc_bm25.py WEIGHT DETAIL --store-base /abs/stores > devset.json

Runs bench/devset.py (lexical) with ``search.bm25_ids`` patched. For each store it builds, once,
a side database (next to the store, never inside it) with one FTS5 row per document: its
document field, every chunk's label and body; ``DETAIL`` is FTS5's ``detail`` option (full,
column, none). A search reads its chunk candidates as usual, then scores the documents with
the same MATCH expression (without its phrases unless DETAIL is full); each candidate's BM25 becomes ``s * (1 + WEIGHT * d)``, ``d`` its
document's BM25 relative to the best document (0 when the document does not match).
WEIGHT 0 is the product's ranking.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import apsw

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import devset

from fisk_ls.knowledge import search as S
from fisk_ls.knowledge.fts import or_expression
from fisk_ls.knowledge.schema import FTS_TOKENIZER

WEIGHT = float(sys.argv.pop(1))
DETAIL = sys.argv.pop(1)
original = S.bm25_ids
sides: dict[str, apsw.Connection] = {}


def side(snap: Any) -> apsw.Connection:
    main = snap.conn.execute("PRAGMA database_list").fetchone()[2]
    conn = sides.get(main)
    if conn is not None:
        return conn
    store = Path(main).parent
    path = store.with_name(f"{store.name}-docs-{DETAIL}.db")
    fresh = not path.exists()
    conn = apsw.Connection(str(path))
    if fresh:
        conn.execute(
            f"CREATE VIRTUAL TABLE docs USING fts5(text, tokenize='{FTS_TOKENIZER}',"
            f" detail={DETAIL})"
        )
        t = snap.tables
        rows: dict[int, list[str]] = {}
        for did, doc, section, body in snap.conn.execute(
            f"SELECT document_id, doc, section, body FROM {t.chunks} ORDER BY document_id, ordinal"
        ):
            parts = rows.setdefault(int(did), [doc or ""])
            parts += [section or "", body or ""]
        with conn:
            for did, parts in rows.items():
                conn.execute("INSERT INTO docs(rowid, text) VALUES (?, ?)", (did, "\n".join(parts)))
    sides[main] = conn
    return conn


def bm25_ids(snap: Any, plan: Any, limit: int, within: Any = None) -> list[tuple[int, float]]:
    ranked = original(snap, plan, limit, within)
    if not ranked or WEIGHT == 0:
        return ranked
    docs = {
        int(d): float(s)
        for d, s in side(snap).execute(
            "SELECT rowid, bm25(docs) FROM docs WHERE docs MATCH ?",
            (plan.expression() if DETAIL == "full" else or_expression((), plan.ordered),),
        )
    }
    best = min(docs.values(), default=0.0)
    marks = ",".join("?" * len(ranked))
    doc_of = dict(
        snap.conn.execute(
            f"SELECT id, document_id FROM {snap.tables.rows} WHERE id IN ({marks})",
            [cid for cid, _ in ranked],
        )
    )
    out = [
        (cid, s * (1 + WEIGHT * (docs.get(doc_of.get(cid, -1), 0.0) / best if best else 0.0)))
        for cid, s in ranked
    ]
    return sorted(out, key=lambda item: (item[1], item[0]))


S.bm25_ids = bm25_ids  # type: ignore[assignment]
devset.main()
