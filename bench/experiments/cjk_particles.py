"""CJK queries cut at their function words before bigramming (issue 14), measured, not in the
product.

    VARIANT=ja|zh|both python bench/experiments/cjk_particles.py [devset.py args]

CJK text has no spaces, so a query's particles and question words ("ですか", "には", "的",
"怎样", "为什么") make bigrams with the words around them ("ンの", "么我"), and those match
chunks that share nothing else. Here a query's CJK runs are cut at such words first (the index
is unchanged: every bigram left is still an indexed one).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import devset

from fisk_ls.knowledge import fts
from fisk_ls.knowledge import search as S

VARIANT = os.environ.get("VARIANT", "both")
JA = r"ですか|ますか|でしょうか|ください|には|では|とは|から|まで|ので|ても|でも|が|を|に|で|は|も|の|と|へ|や|か"
ZH = r"为什么|怎么|怎样|如何|什么|哪个|哪些|哪里|我的|的|了|吗|呢|吧|我|你"
parts = [p for v, p in (("ja", JA), ("zh", ZH)) if VARIANT in (v, "both")]
CUT = re.compile("|".join(parts))

original_query_terms = fts.query_terms
original_cjk_bigrams = fts.cjk_bigrams


def cut_bigrams(run: str) -> list[str]:
    grams: list[str] = []
    for piece in CUT.split(run):
        grams.extend(original_cjk_bigrams(piece))
    return grams or original_cjk_bigrams(run)


def query_terms(text: str) -> list[str]:
    fts.cjk_bigrams = cut_bigrams  # type: ignore[assignment]
    try:
        return original_query_terms(text)
    finally:
        fts.cjk_bigrams = original_cjk_bigrams  # type: ignore[assignment]


S.query_terms = query_terms  # type: ignore[assignment]

if __name__ == "__main__":
    raise SystemExit(devset.main())
