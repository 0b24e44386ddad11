"""Compound identifiers from a query's words (issue 14), measured, not in the product.

    JOIN=pairs|all MAX_WORDS=3 python bench/experiments/joined_terms.py [devset.py args]
    JOIN=pairs|all MAX_WORDS=3 python bench/experiments/joined_terms.py beir [beir.py args]

The index tokenizer keeps ``PrefixLength``, ``BatchSpanProcessor`` or ``SpanContext`` as one
token, so "prefix length" or "batch span processor" cannot match them. Here a short query also
searches for its adjacent words joined (``pairs``: "prefixlength"; ``all`` adds the run of the
first three or four words: "batchspanprocessor"). A joined word that no chunk holds costs
nothing.

Written against 97db2c8, where ``search.query_plan`` called ``query_terms``; the rule landed as
``fts.compound_terms`` (``JOIN=all MAX_WORDS=3``), so on later trees this patch changes nothing.
"""

from __future__ import annotations

import itertools
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import devset

from fisk_ls.knowledge import fts
from fisk_ls.knowledge import search as S

JOIN = os.environ.get("JOIN", "all")
MAX_WORDS = int(os.environ.get("MAX_WORDS", "6"))
original_query_terms = fts.query_terms


def query_terms(text: str) -> list[str]:
    terms = original_query_terms(text)
    plain = [t for t in terms if not fts.has_cjk(t) and t.isalnum()]
    if not 2 <= len(plain) <= MAX_WORDS or len(plain) != len(terms):
        return terms
    extra = [a + b for a, b in itertools.pairwise(plain)]
    if JOIN == "all":
        extra += ["".join(plain[i : i + n]) for n in (3, 4) for i in range(len(plain) - n + 1)]
    return list(dict.fromkeys([*terms, *extra]))[: fts.MAX_TERMS]


S.query_terms = query_terms  # type: ignore[assignment]

if __name__ == "__main__":
    if sys.argv[1:2] == ["beir"]:
        import beir

        sys.argv = [sys.argv[0], *sys.argv[2:]]
        raise SystemExit(beir.main())
    raise SystemExit(devset.main())
