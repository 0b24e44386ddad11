"""An extra search string's best rows by FTS5's ``bm25()``, over the rows that match its rarest
terms (its *anchors*): every term still scores those rows, but the rows that match only its
common terms are not scored.

An agent's extra strings (``also``) are long and made of the docs' own vocabulary (a
hypothetical answer holds ten terms that each match thousands of chunks), so scoring every row
their OR matches cost three to four times the question's own scan. So, with the terms rarest
first:

1. the anchors are the rarest terms while their postings stay within a budget (at least one
   term); the rest are the *common* terms;
2. the anchors' expression (with every phrase) is scored over its own rows, top ``limit``: a
   row that matches no common term has its full score there (a missing term adds exactly 0.0);
3. ``(anchors) AND (common)`` scores the rows that match both with the full expression's
   phrases in its order, so their scores are the full query's, bit for bit (as in topk.py);
   the best ``limit`` of the two passes is the answer.

What it leaves out is the rows that match only common terms (so a string whose anchors match
fewer than ``limit`` rows gives that many candidates). When the common terms' bounds sum below
the ``limit``-th score of step 2, no such row can rank and the answer is the full query's
(MaxScore's argument, topk.py); otherwise it may differ there (how often, and what it costs:
bench/anchored.py; bench/tuning.md, "Agent strings: anchored extra strings").
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .fts import or_expression
from .topk import SLACK, Plan, best, scored

if TYPE_CHECKING:
    from .store import Snapshot

ANCHOR_POSTINGS = 2_000
"""Postings an extra string's anchors (its rarest terms) may read together; its rarest term is
an anchor whatever it reads."""


def anchored(
    snap: Snapshot,
    plan: Plan,
    limit: int,
    weights: Sequence[float],
    within: Sequence[int] | None = None,
    postings: int | None = None,
) -> tuple[list[tuple[int, float]], bool]:
    """(rowid, bm25) of the ``limit`` best rows of ``plan``'s full expression among those that
    match its anchors, best first, ties by rowid; and whether that is provably the full query's
    top ``limit`` (``topk.best``'s). A plan whose terms all fit the budget, or without term
    statistics, is ``topk.best``'s. ``within``: only the chunks of these documents."""
    order = plan.ordered
    if plan.total <= 0 or len(order) < 2 or limit <= 0:
        return best(snap, plan, limit, weights, within), True
    postings = ANCHOR_POSTINGS if postings is None else postings
    counts = dict(zip(plan.terms, plan.counts, strict=True))
    cut, read = 1, counts[order[0]]
    while cut < len(order) and read + counts[order[cut]] <= postings:
        read += counts[order[cut]]
        cut += 1
    if cut == len(order):
        return best(snap, plan, limit, weights, within), True
    inside = None if within is None else json.dumps(list(within))
    anchors = plan.expression(order[:cut])
    top = scored(snap, anchors, weights, limit, None, inside)
    theta = -top[-1][1] if len(top) == limit else 0.0
    merged = dict(top)
    both = f"({anchors}) AND ({or_expression((), order[cut:])})"
    merged.update(scored(snap, both, weights, limit, theta or None, inside))
    ranked = sorted(merged.items(), key=lambda item: (item[1], item[0]))[:limit]
    common = sum(plan.bound(t) for t in order[cut:])
    return ranked, common * (1 + SLACK) + SLACK < theta
