"""Dated posts ranked below the reference pages (issue 14), measured, not in the product.

    FACTOR=0.8 python bench/experiments/doc_prior.py [devset.py arguments] > devset.json

Runs bench/devset.py with ``search._hits`` patched: a candidate whose path has a dated-post
folder (``blog``, ``news``, ``posts``, ``releases``, ``changelog``, or a year folder such as
``/2023/``) keeps FACTOR of its fused score before the top k is taken. FACTOR 1 is the
product's ranking.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import devset

from fisk_ls.knowledge import search as S

FACTOR = float(os.environ.get("FACTOR", "1"))  # not argv: spawned index workers re-run this
POST = re.compile(r"(?:^|/)(?:blog|blogs|news|posts|releases|changelog|(?:19|20)\d\d)/", re.I)
original = S._hits


def _hits(snap: Any, query: str, fused: list[tuple[int, float]], ranks: Any, k: int) -> Any:
    if FACTOR != 1 and fused:
        paths = {cid: c.path for cid, c in S._candidates(snap, fused).items()}
        fused = sorted(
            ((cid, s * FACTOR if POST.search(paths.get(cid, "")) else s) for cid, s in fused),
            key=lambda item: (-item[1], item[0]),
        )
    return original(snap, query, fused, ranks, k)


S._hits = _hits  # type: ignore[assignment]

if __name__ == "__main__":
    raise SystemExit(devset.main())
