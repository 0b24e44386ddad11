"""BM25 column weights (section, body, cjk, doc) on the dev sets (issue 14), measured,
not in the product.

    W=3,1,1,2 python bench/experiments/bm25_weights.py [devset.py arguments]

Replaces ``search.BM25_WEIGHTS`` (the product's 3/1/1/2, chosen earlier on a 114-question
set before the ``doc`` column existed) and runs bench/devset.py; compare the result with a
plain run by ``devset_compare.py``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import devset

from fisk_ls.knowledge import search as S

S.BM25_WEIGHTS = tuple(float(x) for x in os.environ.get("W", "3,1,1,2").split(","))  # type: ignore[misc]

if __name__ == "__main__":
    raise SystemExit(devset.main())
