"""Pseudo-relevance feedback for the lexical arm (issue 14), measured, not in the product.

    FB_DOCS=3 FB_TERMS=10 FB_WEIGHT=0.3 python bench/experiments/feedback_terms.py [devset.py args]

RM3-style query expansion: the first BM25 pass's top ``FB_DOCS`` chunks vote for terms (each
chunk's term frequency over its length, times the term's idf); the ``FB_TERMS`` best terms that
are not already query terms form a second OR query, and every candidate scores its first-pass
BM25 plus ``FB_WEIGHT`` x its BM25 for the expansion (so rows that only the expansion finds can
enter). Aimed at paraphrases, whose words are not the answer's words: the first pass often
finds the right page's neighbours, whose vocabulary names the answer.
"""

from __future__ import annotations

import math
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import apsw
import devset

from fisk_ls.knowledge import search as S
from fisk_ls.knowledge.fts import STOP_WORDS

FB_DOCS = int(os.environ.get("FB_DOCS", "3"))
FB_TERMS = int(os.environ.get("FB_TERMS", "10"))
FB_WEIGHT = float(os.environ.get("FB_WEIGHT", "0.3"))
MAX_DF = float(os.environ.get("FB_MAX_DF", "0.1"))  # skip terms in more than this share of rows

original_bm25_ids = S.bm25_ids
_TOK: list[Any] = []


def _tokens(text: str) -> list[str]:
    if not _TOK:
        c = apsw.Connection(":memory:")
        _TOK.append(c.fts5_tokenizer("porter", ["unicode61", "remove_diacritics", "2"]))
        _TOK.append(c)
    return [t[2] for t in _TOK[0](text.encode(), apsw.FTS5_TOKENIZE_DOCUMENT, None)]


def _stemmed_stop_words() -> set[str]:
    if len(_TOK) < 3:
        _tokens("")
        _TOK.append({x for w in STOP_WORDS for x in _tokens(w)})
    return _TOK[2]  # type: ignore[no-any-return]


def bm25_ids(snap: Any, plan: Any, limit: int, within: Any = None) -> list[tuple[int, float]]:
    first = original_bm25_ids(snap, plan, limit, within)
    if not first or FB_WEIGHT == 0:
        return first
    t = snap.tables
    ids = [cid for cid, _ in first[:FB_DOCS]]
    marks = ",".join("?" * len(ids))
    texts = [
        f"{sec}\n{body}"
        for sec, body in snap.conn.execute(
            f"SELECT section, body FROM {t.chunks} WHERE id IN ({marks})", ids
        )
    ]
    query = set(_tokens(" ".join(plan.ordered)))
    stop = _stemmed_stop_words()
    rows = int(snap.conn.execute(f"SELECT count(*) FROM {t.rows}").fetchone()[0])
    votes: Counter[str] = Counter()
    for text in texts:
        toks = [x for x in _tokens(text) if x not in stop and not x.isdigit() and len(x) > 2]
        if not toks:
            continue
        for term, n in Counter(toks).items():
            votes[term] += n / len(toks)
    scored: list[tuple[float, str]] = []
    for term, v in votes.items():
        if term in query:
            continue
        got = snap.conn.execute(f"SELECT doc FROM {t.vocab} WHERE term = ?", (term,)).fetchone()
        df = int(got[0]) if got else 0
        if not df or df > MAX_DF * rows:
            continue
        scored.append((v * math.log(1 + rows / df), term))
    scored.sort(reverse=True)
    extra = [term for _, term in scored[:FB_TERMS]]
    if not extra:
        return first
    expr = " OR ".join('"' + x.replace('"', '""') + '"' for x in extra)
    second = snap.conn.execute(
        f"SELECT rowid, bm25({t.fts}, {', '.join(map(str, S.BM25_WEIGHTS))}) AS s"
        f" FROM {t.fts} WHERE {t.fts} MATCH ? ORDER BY s LIMIT ?",
        (expr, limit),
    ).fetchall()
    scores = {cid: s for cid, s in first}
    for cid, s in second:
        scores[int(cid)] = scores.get(int(cid), 0.0) + FB_WEIGHT * float(s)
    return sorted(scores.items(), key=lambda item: (item[1], item[0]))[:limit]


S.bm25_ids = bm25_ids  # type: ignore[assignment]

if __name__ == "__main__":
    raise SystemExit(devset.main())
