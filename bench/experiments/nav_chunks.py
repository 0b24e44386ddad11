"""Link-list chunks ("RELATED LINKS", "See also": every line a link) ranked lower (issue 14).

    python bench/experiments/nav_chunks.py FACTOR --store-base /abs/stores > devset.json

Runs bench/devset.py (lexical) with ``search.bm25_ids`` patched: a candidate whose body is only
links (each non-blank line outside headings is one or more markdown links, with an optional
list marker) keeps FACTOR of its BM25. Such a chunk is short, so BM25's length normalisation
lifts it on a cmdlet's name or a linked page's title, though it holds no answer. FACTOR 1 is
the product's ranking.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import devset

from fisk_ls.knowledge import search as S

FACTOR = float(sys.argv.pop(1))
LINK_LINE = re.compile(r"^\s*(?:[-*+]\s+|\d+[.)]\s+)?(?:\[[^\]]*\]\([^)]*\)[\s,;.]*)+$")
original = S.bm25_ids
seen = {"nav": 0, "all": 0}


def is_links(body: str) -> bool:
    lines = [ln for ln in body.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    return bool(lines) and all(LINK_LINE.match(ln) for ln in lines)


def bm25_ids(snap: Any, plan: Any, limit: int, within: Any = None) -> list[tuple[int, float]]:
    ranked = original(snap, plan, limit, within)
    if not ranked or FACTOR == 1:
        return ranked
    marks = ",".join("?" * len(ranked))
    bodies = dict(
        snap.conn.execute(
            f"SELECT id, body FROM {snap.tables.chunks} WHERE id IN ({marks})",
            [cid for cid, _ in ranked],
        )
    )
    out = []
    for cid, s in ranked:
        nav = is_links(bodies.get(cid) or "")
        seen["nav"] += nav
        seen["all"] += 1
        out.append((cid, s * FACTOR if nav else s))
    return sorted(out, key=lambda item: (item[1], item[0]))


S.bm25_ids = bm25_ids  # type: ignore[assignment]
try:
    devset.main()
finally:
    print(f"link-list candidates: {seen['nav']} of {seen['all']}", file=sys.stderr)
