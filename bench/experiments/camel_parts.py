"""A camel-case word in a query also searches for its parts (issue 14), measured, not in the
product.

    python bench/experiments/camel_parts.py [devset.py args]

The reverse of ``fts.compound_terms``: "BatchSpanProcessor" or "NetAdapter" is one token in the
index, so a query typing the identifier cannot reach prose that names it in words ("the batch
span processor"). Here each camel-case word of the query adds its parts as terms
(``fts.Asked.search_terms`` wrapped: ``query.SearchString.parse`` takes every search string's
terms from it).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import devset

from fisk_ls.knowledge import fts

_CAMEL = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
original_search_terms = fts.Asked.search_terms


def search_terms(self: fts.Asked) -> list[str]:
    terms = original_search_terms(self)
    extra: list[str] = []
    for token in re.findall(r"[A-Za-z0-9]+", self.text):
        if re.search(r"[a-z][A-Z]", token):
            extra += [p.casefold() for p in _CAMEL.findall(token)]
    extra = [e for e in dict.fromkeys(extra) if e not in terms and e not in self.stop]
    return [*terms, *extra][: fts.MAX_TERMS]


fts.Asked.search_terms = search_terms  # type: ignore[method-assign]

if __name__ == "__main__":
    raise SystemExit(devset.main())
