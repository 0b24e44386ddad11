"""A query whose language is unknown (an identifier, a bare term) prefers one language's copies
(issue 14), measured, not in the product.

    VARIANT=plurality|en|group python bench/experiments/source_language.py [devset.py args] > out.json

Runs bench/devset.py with ``search.prefer_query_language`` patched: when ``query_language``
says nothing, ``plurality`` takes the language folder most of the query's candidates sit in
(ties: no preference), ``en`` takes English; ``FACTOR`` (default: the product's ``OTHER_LANGUAGE``, 0.5) is the weight of the other
languages' copies for those queries (0.98: only near-ties change). ``group`` leaves the order
alone but, among the
copies of one page, gives the first of their positions to the copy in that most common
language. Anything else is the product's rule.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import devset

from fisk_ls.knowledge import languages as L
from fisk_ls.knowledge import search as S

VARIANT = os.environ.get("VARIANT", "")
original = L.prefer_query_language


def prefer(
    fused: Sequence[tuple[int, float]],
    paths: dict[int, str],
    query: str,
    reader: str | None = None,
) -> list:
    if (
        L.query_language(query) is not None
        or reader is not None
        or VARIANT not in ("plurality", "en", "group")
    ):
        return original(fused, paths, query, reader)
    if VARIANT == "group":
        return group_source_first(list(fused), paths)
    if VARIANT == "en":
        want = "en"
    else:
        votes = Counter(
            lang for cid, _ in fused for _, lang in L.copies_language(paths.get(cid, ""))[:1]
        )
        top = votes.most_common(2)
        if not top or (len(top) == 2 and top[0][1] == top[1][1]):
            return list(fused)
        want = top[0][0]
    saved, factor = L.query_language, L.OTHER_LANGUAGE
    L.query_language = lambda text: want  # type: ignore[assignment]
    L.OTHER_LANGUAGE = float(os.environ.get("FACTOR", str(factor)))
    try:
        return original(fused, paths, query)
    finally:
        L.query_language, L.OTHER_LANGUAGE = saved, factor  # type: ignore[assignment]


def group_source_first(fused: list[tuple[int, float]], paths: dict[int, str]) -> list:
    """Copies of one page keep the positions they hold, but the copy in the candidates' most
    common language takes the first of them."""
    where: dict[int, tuple[str, str, str]] = {}
    votes: Counter[str] = Counter()
    for cid, _ in fused:
        path = paths.get(cid, "")
        found = L.copies_language(path)
        if found:
            parent, lang = found[0]
            rest = (
                path.split("/", len(parent.split("/")) + 1)[-1]
                if parent
                else path.split("/", 1)[-1]
            )
            where[cid] = (parent, rest, lang)
            votes[lang] += 1
    top = votes.most_common(2)
    if not top or (len(top) == 2 and top[0][1] == top[1][1]):
        return fused
    source = top[0][0]
    groups: dict[tuple[str, str], list[int]] = {}
    for i, (cid, _) in enumerate(fused):
        if cid in where:
            parent, rest, _ = where[cid]
            groups.setdefault((parent, rest), []).append(i)
    out = list(fused)
    for slots in groups.values():
        members = [fused[i][0] for i in slots]
        if len({where[c][2] for c in members}) < 2:
            continue
        ordered = sorted(members, key=lambda c: where[c][2] != source)  # stable
        for i, cid in zip(slots, ordered, strict=True):
            out[i] = (cid, fused[i][1])
    return out


S.prefer_query_language = prefer  # type: ignore[assignment]

if __name__ == "__main__":
    raise SystemExit(devset.main())
