"""The best rows of an OR query by FTS5's ``bm25()``, exactly, without scoring the rows that
match only the query's commonest term when that provably changes nothing (a MaxScore split,
Turtle and Flood 1995).

FTS5 scores every row its MATCH expression matches (a ``docsize`` lookup and a walk of position
lists each): one common word ("run", "remove", "new") makes an OR score 20-40k of the 150k
PowerShell chunks to return 200. BM25 is a sum over the query's phrases, and one term adds less
than ``idf * (k1 + 1)`` to any row. So:

1. the query without its commonest term (the *essential* part) is scored over its own rows,
   top ``limit``; a row's partial score is at most its full one, so the ``limit``-th of them,
   θ, is at most the ``limit``-th full score;
2. if the common term's bound is below θ, a row that matches only the common term cannot
   reach the top; ``(essential) AND (common)`` then scores the rows that match both. FTS5
   numbers the phrases of that expression in the full expression's order, so their scores are
   bit-identical to the full query's, and a row of the essential part alone already has its
   full score from step 1 (the missing term adds exactly 0.0);
3. else the full query runs (step 1 was wasted: a small essential part, few rows).

The result (ids, scores, ties by rowid) is the full query's; ``tests/knowledge/test_topk.py``
compares them on random corpora and queries. Measured (``bench/topk.py``, BENCHMARKS.md): p50
0.87x, p95 0.90x of the plain query over the PowerShell dev set's questions; dropping more terms
with an oracle's choice would reach 0.70x at best, because the AND pass scores the rows the
terms share (bench/experiments/maxscore_split.py).

(An earlier attempt re-scored pass-1 rows with ``MATCH … AND rowid IN (…)``, which makes FTS5
re-run the expression once per rowid: seconds. Each step here is one scan.)
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from .fts import or_expression
from .question import MAX_PHRASES, Asked

if TYPE_CHECKING:
    from .store import Snapshot

K1 = 1.2
"""FTS5's bm25 k1 (fts5_aux.c): a term adds at most ``idf * (K1 + 1)`` to a row."""

SLACK = 1e-9
"""Relative margin on every bound: FTS5 sums in C and we in Python, in another order."""

WORTH = 0.25
"""The split must skip at least this share of the query's postings (counting the rows the AND
pass may score as not skipped), else the full query runs at once."""


class Plan(NamedTuple):
    """One OR query over the full-text index: its phrases and its terms, each term with how
    many rows match it (at least that many, when the count was capped), and the index's row
    count (FTS5's own, ``lexical.indexed_rows``)."""

    phrases: tuple[str, ...]
    terms: tuple[str, ...]
    counts: tuple[int, ...]
    total: int

    @classmethod
    def uncounted(cls, phrases: Sequence[str], terms: Sequence[str]) -> Plan:
        """A plan without term statistics (no split is ever proved safe)."""
        return cls(tuple(phrases), tuple(terms), (0,) * len(terms), 0)

    @property
    def ordered(self) -> tuple[str, ...]:
        """The terms rarest first (ties in query order): the non-essential terms are then a
        suffix, and every expression below lists the phrases in one order."""
        order = sorted(range(len(self.terms)), key=lambda i: self.counts[i])
        return tuple(self.terms[i] for i in order)

    def bound(self, term: str) -> float:
        """The most ``term`` can add to one row's BM25 (FTS5's idf of a term matching
        ``counts`` rows, floored at 1e-6 as FTS5 does, times ``K1 + 1``)."""
        if self.total <= 0:  # counts unknown: no term can be proved non-essential
            return math.inf
        n = self.counts[self.terms.index(term)]
        return max(math.log((self.total - n + 0.5) / (n + 0.5)), 1e-6) * (K1 + 1.0)

    def expression(self, terms: Sequence[str] | None = None) -> str:
        """The MATCH string of the phrases and ``terms`` (all of them, rarest first, by
        default): "" without terms, at most ``MAX_PHRASES`` phrases, none that is also a term.
        The one MATCH builder: every search runs the expression of a plan."""
        if not self.terms:
            return ""
        phrases = [p for p in self.phrases[:MAX_PHRASES] if p not in self.terms]
        return or_expression(phrases, self.ordered if terms is None else terms)


def plan_of(text: str) -> Plan:
    """The plan of ``text`` before term statistics: its search terms (``Asked.search_terms``) and
    phrases, uncounted. ``TermStats.plan`` prunes and bounds it against an index."""
    asked = Asked.of(text)
    return Plan.uncounted(asked.phrases(), asked.search_terms())


def best(
    snap: Snapshot,
    plan: Plan,
    limit: int,
    weights: Sequence[float],
    within: Sequence[int] | None = None,
) -> list[tuple[int, float]]:
    """(rowid, bm25) of the ``limit`` best rows of ``plan``'s full expression, best first
    (bm25 is negative: lower is better), ties by rowid: what ``ORDER BY bm25(…), rowid LIMIT
    limit`` over the full expression returns, computed as the module docstring says when that
    should read fewer postings (``WORTH``).

    ``within``: only the chunks of these documents (a search's scope, scope.py). Every pass
    below keeps to them and BM25's statistics stay the index's, so the answer is the full
    ranking restricted to them, and the split's bound holds as before."""
    inside = None if within is None else json.dumps(list(within))
    full = plan.expression()
    order = plan.ordered
    if len(order) < 2 or limit <= 0:
        return scored(snap, full, weights, limit, None, inside)
    counts = dict(zip(plan.terms, plan.counts, strict=True))
    common = order[-1]
    kept = sum(counts[t] for t in order[:-1])
    if kept < limit or counts[common] - min(kept, counts[common]) < WORTH * sum(plan.counts):
        return scored(snap, full, weights, limit, None, inside)
    essential = plan.expression(order[:-1])
    # Partial scores: every row's is at most its full one, so θ bounds the limit-th full score.
    top = scored(snap, essential, weights, limit, None, inside)
    theta = -top[-1][1] if len(top) == limit else 0.0
    if plan.bound(common) * (1 + SLACK) + SLACK >= theta:
        return scored(snap, full, weights, limit, None, inside)  # a common-term row might rank
    # A row matching no term of the rest has its full score in ``top``; one that matches some
    # is scored in full by the AND. Either way it ranks no higher in ``top`` than in the full
    # query, so ``top`` and the AND's top ``limit`` hold every row of the answer.
    merged = dict(top)
    merged.update(
        scored(
            snap,
            f"({essential}) AND ({or_expression((), [common])})",
            weights,
            limit,
            theta,
            inside,
        )
    )
    return sorted(merged.items(), key=lambda item: (item[1], item[0]))[:limit]


def scored(
    snap: Snapshot,
    expression: str,
    weights: Sequence[float],
    limit: int | None,
    floor: float | None = None,
    within: str | None = None,
) -> list[tuple[int, float]]:
    """(rowid, bm25) of the rows ``expression`` matches, best first, ties by rowid; at most
    ``limit``; with ``floor``, only rows scoring at least ``floor`` (minus ``SLACK``); with
    ``within`` (a JSON array of document ids), only those documents' chunks.

    The scope is a join the full-text index drives (CROSS JOIN: FTS5 stays the outer loop and
    each row it matches costs one primary-key lookup of its chunk; ``rowid IN (…)`` would make
    FTS5 run the expression once per id). ``bm25()`` is computed only for the rows that pass,
    so a narrow scope scores fewer rows than the unscoped query (bench/scope_speed.py)."""
    f = snap.tables.fts
    w = ", ".join(str(x) for x in weights)
    sql = f"SELECT {f}.rowid AS id, bm25({f}, {w}) AS s FROM {f}"
    args: list[object] = [expression]
    if within is None:
        sql += f" WHERE {f} MATCH ?"
    else:
        sql += (
            f" CROSS JOIN {snap.tables.rows} AS r ON r.id = {f}.rowid WHERE {f} MATCH ?"
            " AND r.document_id IN (SELECT value FROM json_each(?))"
        )
        args.append(within)
    if floor is not None:
        sql = f"SELECT id, s FROM ({sql}) WHERE s <= ?"
        args.append(-(floor - abs(floor) * SLACK - SLACK))
    sql += " ORDER BY s, id"
    if limit is not None:
        sql += " LIMIT ?"
        args.append(limit)
    return [(int(r[0]), float(r[1])) for r in snap.conn.execute(sql, args)]
