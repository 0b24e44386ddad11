"""AND of the kept terms first, the OR expression when the AND finds fewer than 50 chunks.

    python bench/experiments/and_first.py {or,and} --store-base /abs/stores > devset.json

Runs bench/devset.py (lexical) with ``query_expression``/``bm25_ids`` patched; see tuning.md,
"AND of the kept terms first" (rejected).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import devset

from fisk_ls.knowledge import search as S
from fisk_ls.knowledge.fts import match_expression

AT_LEAST = 50
mode = sys.argv.pop(1)
terms_of: dict[str, list[str]] = {}
original = S.bm25_ids


def query_expression(snap: Any, query: str, stats: Any) -> str:
    terms, phrases = S.query_terms(query), S.query_phrases(query)
    if stats is not None:
        terms, phrases = stats.bound(snap, terms, phrases)
    expression = match_expression(query, terms=terms, phrases=phrases)
    terms_of[expression] = terms
    return expression


def bm25_ids(snap: Any, expression: str, limit: int) -> list[tuple[int, float]]:
    terms = terms_of.get(expression, [])
    if mode == "and" and len(terms) > 1:
        rows = original(snap, " AND ".join(f'"{t}"' for t in terms), limit)
        if len(rows) >= AT_LEAST:
            return rows
    return original(snap, expression, limit)


S.query_expression, S.bm25_ids = query_expression, bm25_ids  # type: ignore[assignment]
sys.exit(devset.main(sys.argv[1:]))
