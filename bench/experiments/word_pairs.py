"""Adjacent word pairs of a longer query as extra phrases (issue 14; a sequential
dependence model's ordered pairs), measured, not in the product.

    MINW=3 python bench/experiments/word_pairs.py [devset.py arguments]

For a query of at least ``MINW`` words apart from stop words, each two neighbouring words that
are both kept terms ("trace id", "log line" in "how can my logs carry the trace id so I can jump
from a log line to the trace") joins the OR expression as a phrase after the product's own
phrases, up to ``fts.MAX_PHRASES``; BM25 then scores each phrase with its own idf.
"""

from __future__ import annotations

import itertools
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import devset

from fisk_ls.knowledge import fts as F

MINW = int(os.environ.get("MINW", "3"))
original = F.Asked.phrases


def with_pairs(self: F.Asked) -> list[str]:
    """``fts.Asked.phrases`` (what ``query.SearchString.parse`` takes a string's phrases from),
    then the string's adjacent pairs of kept terms."""
    out = original(self)
    if any(cjk for _, cjk in self.runs):
        return out
    stop = self.stop
    seq = [w.casefold() for w, _ in self.runs]
    if len([w for w in seq if w not in stop]) < MINW:
        return out
    kept = set(self.terms())
    for a, b in itertools.pairwise(seq):
        if len(out) >= F.MAX_PHRASES:
            break
        pair = f"{a} {b}"
        if a in stop or b in stop or a not in kept or b not in kept or a == b or pair in out:
            continue
        out.append(pair)
    return out


F.Asked.phrases = with_pairs  # type: ignore[method-assign]

if __name__ == "__main__":
    raise SystemExit(devset.main())
