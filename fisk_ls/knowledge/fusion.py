"""Fusion: each search string's lexical and vector candidates → one ranking. One string is
:func:`fuse` of its two lists (a convex combination of relative BM25 and rescaled cosine);
several are :func:`fuse_strings` (a weighted mean of each string's rescaled scores). Why these
and not Reciprocal Rank Fusion is measured in bench/tuning.md ("fusion", "Agent strings").
"""

from __future__ import annotations

from collections.abc import Sequence

from .query import string_name
from .vectors.knn import Scored

LEXICAL_WEIGHT = 0.7
"""The lexical share of a hybrid score (:func:`fuse`)."""

Arms = tuple[Sequence[tuple[int, float]], Scored]
"""One search string's candidates: (lexical (id, bm25) best first, vector (id, cosine))."""

QUERY_WEIGHT = 1.25
"""How much the question's own score counts against each extra string's (:func:`fuse_strings`):
more than one keeps its exact words (an identifier, a term to define) ahead of an agent's
guesses."""


def fuse_strings(
    arms: Sequence[Arms],
) -> tuple[list[tuple[int, float]], dict[int, dict[str, int]], dict[int, tuple[str, ...]]]:
    """Fused (id, score) best first over every search string's lists, each id's ranks (the
    query's as "lexical" / "vector", an extra string's as "also[i].lexical" ...), and the
    strings that found it. One string is :func:`fuse` of its two lists, unchanged.

    Several: each string scores its candidates as :func:`rescaled` does, and a chunk's score
    is the weighted mean over the strings (the query weighs ``QUERY_WEIGHT``, each extra string
    1; a string that did not find it adds 0). So a chunk that several strings rank high
    outranks one that a single string puts first."""
    ranks: dict[int, dict[str, int]] = {}
    found: dict[int, list[str]] = {}
    for i, (lexical, vector) in enumerate(arms):
        name = string_name(i)
        prefix = "" if i == 0 else f"{name}."
        for tier, ranked in (("lexical", lexical), ("vector", vector)):
            for rank, (cid, _) in enumerate(ranked, 1):
                ranks.setdefault(cid, {})[prefix + tier] = rank
                by = found.setdefault(cid, [])
                if not by or by[-1] != name:
                    by.append(name)
    found_by = {cid: tuple(names) for cid, names in found.items()}
    if len(arms) == 1:
        return fuse(*arms[0]), ranks, found_by
    total: dict[int, float] = {}
    weights = [QUERY_WEIGHT, *([1.0] * (len(arms) - 1))]
    for w, (lexical, vector) in zip(weights, arms, strict=True):
        for cid, score in rescaled(lexical, vector).items():
            total[cid] = total.get(cid, 0.0) + w * score
    norm = sum(weights)
    fused = sorted(((cid, s / norm) for cid, s in total.items()), key=lambda x: (-x[1], x[0]))
    return fused, ranks, found_by


def rescaled(
    lexical: Sequence[tuple[int, float]], vector: Sequence[tuple[int, float]]
) -> dict[int, float]:
    """One string's score of each candidate in [0, 1]: ``LEXICAL_WEIGHT`` x its BM25 and the
    rest x its cosine, each rescaled over that string's own candidates (the best 1, the last
    0), as :func:`fuse` rescales cosines (not relative to the best, as :func:`fuse`'s BM25 is),
    so across strings a string's first hit counts as such."""
    wl = LEXICAL_WEIGHT if vector else 1.0
    wv = 1.0 - LEXICAL_WEIGHT if lexical else 1.0
    scores: dict[int, float] = {}
    for weight, ranked in ((wl, lexical), (wv, vector)):
        if not ranked:
            continue
        top, floor = ranked[0][1], ranked[-1][1]
        span = top - floor
        for cid, x in ranked:
            part = (x - floor) / span if span else 1.0
            scores[cid] = scores.get(cid, 0.0) + weight * part
    return scores


def fuse(
    lexical: Sequence[tuple[int, float]], vector: Sequence[tuple[int, float]]
) -> list[tuple[int, float]]:
    """Convex score fusion: ``LEXICAL_WEIGHT`` x BM25 relative to the best lexical hit plus the
    rest x the cosine rescaled over the vector candidates (the best is 1, the last 0); best first,
    ties by smaller id. A chunk found by one retriever scores nothing from the other. With one
    list alone, that list's relative score (1.0 is its best). Scores, not ranks: how far apart
    a list's scores are counts."""
    scores: dict[int, float] = {}
    wl = LEXICAL_WEIGHT if vector else 1.0
    wv = 1.0 - LEXICAL_WEIGHT if lexical else 1.0
    if lexical:
        best = lexical[0][1]
        for cid, s in lexical:
            scores[cid] = wl * (s / best if best else 0.0)
    if vector:
        top, floor = vector[0][1], vector[-1][1]
        span = top - floor
        for cid, c in vector:
            part = (c - floor) / span if span > 0 else 1.0
            scores[cid] = scores.get(cid, 0.0) + wv * part
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))
