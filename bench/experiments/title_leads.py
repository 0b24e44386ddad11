"""The heading boost for a page's first chunk when the page's title *holds* the query's term
(issue 14), measured, not in the product.

    VARIANT=always|fallback FACTOR=1.4 python bench/experiments/title_leads.py [devset.py args]

The product boosts a document's first chunk when its title *is* the term (lexical.py,
``started_headings``). Here a first chunk whose title merely contains the term's words in
order ("Build a custom Collector with OpenTelemetry Collector Builder" for "what is the
OpenTelemetry Collector Builder") keeps ``FACTOR`` x its BM25, either always or only when no
candidate is headed by the term (``fallback``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import devset

from fisk_ls.knowledge import search as S
from fisk_ls.knowledge.fts import STOP_WORDS, heading_key

VARIANT = os.environ.get("VARIANT", "always")
FACTOR = float(os.environ.get("FACTOR", "1.4"))
original = S.boost_headings


def _holds(key: tuple[str, ...], want: tuple[str, ...]) -> bool:
    n = len(want)
    return any(key[i : i + n] == want for i in range(len(key) - n + 1))


def boosted(
    snap: Any,
    ranked: list[tuple[int, float]],
    want: tuple[str, ...],
    stop: frozenset[str] = STOP_WORDS,
) -> list[tuple[int, float]]:
    """``search.boost_headings`` (``want``: the query's heading key), then the title rule."""
    out = original(snap, ranked, want, stop)
    if not want or not ranked:
        return out
    before = dict(ranked)
    if VARIANT == "fallback" and any(s != before[c] for c, s in out):
        return out
    c = snap.tables.rows
    marks = ",".join("?" * len(out))
    leads = {
        int(cid)
        for cid, section in snap.conn.execute(
            f"SELECT id, section FROM {c} WHERE ordinal = 0 AND id IN ({marks})",
            [cid for cid, _ in out],
        )
        if _holds(heading_key(str(section).split(" > ")[0], stop), want)
    }
    again = [(cid, s * FACTOR if cid in leads and s == before[cid] else s) for cid, s in out]
    return sorted(again, key=lambda item: (item[1], item[0]))


S.boost_headings = boosted  # type: ignore[assignment]

if __name__ == "__main__":
    raise SystemExit(devset.main())
