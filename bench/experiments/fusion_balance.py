"""The score-fusion balance on the dev sets (issue 14), measured, not in the product.

    LW=0.75 VF=100 python bench/experiments/fusion_balance.py [devset.py arguments]

``LW`` replaces ``search.LEXICAL_WEIGHT`` (0.7) and ``VF`` the number of vector candidates the
vector arm returns (``search.FANOUT``, 50; the int8 pass re-scores at most ``knn.CANDIDATES``,
100, so larger values act as 100). The cosine is rescaled over those candidates, so ``VF`` also
moves the floor of the rescaling.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import devset

from fisk_ls.knowledge import search as S

S.LEXICAL_WEIGHT = float(os.environ.get("LW", str(S.LEXICAL_WEIGHT)))  # type: ignore[misc]
VF = int(os.environ.get("VF", str(S.FANOUT)))
original = S.vector_ids


def vector_ids(
    snap: Any, vector: Any, limit: int = S.FANOUT, coarse: Any = None, within: Any = None
) -> Any:
    return original(snap, vector, VF, coarse, within)


S.vector_ids = vector_ids  # type: ignore[assignment]

if __name__ == "__main__":
    raise SystemExit(devset.main())
