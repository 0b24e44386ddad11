"""At most CAP chunks of one document before every other document's (issue 14), measured, not
in the product.

    CAP=2 python bench/experiments/per_document_cap.py [devset.py arguments] > devset.json

Runs bench/devset.py with ``search.prefer_query_language`` wrapped: after the product's
language preference, a candidate whose document already placed CAP chunks waits until the
candidates of other documents are placed (its order among the waiting kept). "configure the
batch processor in the collector" filled four of the top five with one page's chunks.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import devset

from fisk_ls.knowledge import search as S

CAP = int(os.environ.get("CAP", "0"))
original = S.prefer_query_language


def capped(
    fused: Sequence[tuple[int, float]],
    paths: dict[int, str],
    query: str,
    reader: str | None = None,
) -> list[tuple[int, float]]:
    ranked = original(fused, paths, query, reader)
    if CAP <= 0:
        return ranked
    placed: dict[str, int] = {}
    first: list[tuple[int, float]] = []
    later: list[tuple[int, float]] = []
    for cid, score in ranked:
        path = paths.get(cid, "")
        if placed.get(path, 0) < CAP:
            placed[path] = placed.get(path, 0) + 1
            first.append((cid, score))
        else:
            later.append((cid, score))
    return first + later


S.prefer_query_language = capped  # type: ignore[assignment]

if __name__ == "__main__":
    raise SystemExit(devset.main())
