"""Each further chunk of one document scored down a little (issue 14), measured, not in the
product.

    DECAY=0.9 python bench/experiments/document_decay.py [devset.py arguments]

The soft form of ``per_document_cap.py``: after the language preference, the k-th chunk of a
document (k = 0 for its best) keeps ``DECAY ** k`` of its score, and the list is re-sorted, so
a page's third chunk passes another page's first only when it scored clearly higher.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import devset

from fisk_ls.knowledge import search as S

DECAY = float(os.environ.get("DECAY", "0.9"))
original = S.prefer_query_language


def decayed(
    fused: Sequence[tuple[int, float]],
    paths: dict[int, str],
    query: str,
    reader: str | None = None,
) -> list[tuple[int, float]]:
    ranked = original(fused, paths, query, reader)
    seen: dict[str, int] = {}
    out: list[tuple[int, float]] = []
    for cid, score in ranked:
        path = paths.get(cid, "")
        k = seen.get(path, 0)
        seen[path] = k + 1
        out.append((cid, score * DECAY**k))
    return sorted(out, key=lambda item: (-item[1], item[0]))


S.prefer_query_language = decayed  # type: ignore[assignment]

if __name__ == "__main__":
    raise SystemExit(devset.main())
