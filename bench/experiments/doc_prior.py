"""Dated posts ranked below the reference pages: tried, rejected (bench/tuning.md,
"Clitics, the near-tie language rule", the dated-posts row).

    FACTOR=0.7 python bench/experiments/doc_prior.py [devset.py arguments] > devset.json

Runs bench/devset.py with ``search._hits`` patched: a candidate whose path has a folder of
posts (``blog``, ``blogs``, ``news``, ``posts``, ``_posts``) keeps FACTOR of its fused score
before the language preference and the top k. FACTOR 1 is the product's ranking. An
environment variable, not an argument: the index's spawned workers import this module again.
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

FACTOR = float(os.environ.get("FACTOR", "1"))
POST = re.compile(r"(?:^|/)(?:blogs?|news|_?posts)/", re.IGNORECASE)
original = S._hits


def _hits(
    snap: Any, query: Any, fused: list[tuple[int, float]], ranks: Any, found: Any, locate: Any
) -> Any:
    if FACTOR != 1 and fused:
        paths = {cid: c.path for cid, c in S._candidates(snap, fused).items()}
        fused = sorted(
            ((cid, s * FACTOR if POST.search(paths.get(cid, "")) else s) for cid, s in fused),
            key=lambda item: (-item[1], item[0]),
        )
    return original(snap, query, fused, ranks, found, locate)


S._hits = _hits  # type: ignore[assignment]

if __name__ == "__main__":
    raise SystemExit(devset.main())
