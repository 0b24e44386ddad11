"""Conversational filler words as stop words (issue 14), measured, not in the product.

    python bench/experiments/filler_words.py [devset.py arguments] > devset.json

Runs bench/devset.py with ``fts.STOP_WORDS`` extended by words that carry no topic in a
question ("should I even bother", "is it actually possible", "someone else"). BM25 gives a rare
filler word a high IDF, so it pulled in whichever chunk happened to use it.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import devset

from fisk_ls.knowledge import fts

FILLER = frozenset(
    [
        "need",
        "needs",
        "want",
        "wants",
        "possible",
        "able",
        "really",
        "actually",
        "exactly",
        "bother",
        "just",
        "even",
        "still",
        "maybe",
        "something",
        "anything",
        "someone",
        "somebody",
        "anyone",
        "anybody",
        "thing",
        "things",
        "lot",
        "lots",
        "kind",
        "sort",
        "okay",
        "ok",
        "sure",
        "ever",
        "somehow",
        "whatever",
        "instead",
        "already",
        "else",
    ]
)
fts.STOP_WORDS = fts.STOP_WORDS | FILLER

if __name__ == "__main__":
    raise SystemExit(devset.main())
