"""Exact top-k BM25 by a MaxScore split inside FTS5 (measured and rejected).

    python maxscore_split.py CORPUS /abs/store [rounds]

BM25 is a sum over the query's phrases and one term adds less than ``idf * (k1 + 1)`` to any
row. With θ a lower bound of the k-th best score, the commonest terms whose bounds sum below θ
(non-essential) cannot lift a row that matches none of the others into the top k. So:
``essential`` (phrases and the other terms, rarest first) is scored over its own rows, top k;
its k-th partial score is θ; then ``(essential) AND (non-essential)`` scores, in full, the rows
matching both (FTS5 lists the phrases in the same order as the full expression, so the scores
are bit-identical; a row of the essential part alone already has its full score, the missing
terms add exactly 0.0). Unlike maxscore.py (re-scoring by ``rowid IN``, which re-runs the
MATCH per rowid) every pass is one scan.

Two ways, against the plain ``ORDER BY bm25(…), rowid LIMIT 200`` over the whole OR, same
term pruning, alternating per query:

* ``one``: the commonest term alone is tried as non-essential (when it holds at least
  WORTH of the postings and the AND would read fewer), else the full query;
* ``oracle``: for each query the best number of dropped terms, timed with no cost for
  choosing it (a ceiling for any rule that picks the split).

Results must be identical (ids and scores) to the plain query; the script counts mismatches.
"""

from __future__ import annotations

import math
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import devset_questions as dq
from speed import QUERIES

from fisk_ls.knowledge import Knowledge, resolve_settings, topk
from fisk_ls.knowledge.fts import MAX_PHRASES, query_phrases, search_terms
from fisk_ls.knowledge.fts import or_expression as expression
from fisk_ls.knowledge.lexical import indexed_rows
from fisk_ls.knowledge.search import BM25_WEIGHTS, DEEPER, FANOUT

K1, SLACK, WORTH, LIMIT = topk.K1, topk.SLACK, topk.WORTH, FANOUT * DEEPER
Scored = list[tuple[int, float]]


def scored(snap, expr: str, limit: int, floor: float | None = None) -> Scored:  # type: ignore[no-untyped-def]
    return topk.scored(snap, expr, BM25_WEIGHTS, limit, floor)


def split(
    snap, phrases: list[str], order: list[str], k: int, bound: Callable[[str], float]
) -> Scored | None:  # type: ignore[no-untyped-def]
    """The exact top LIMIT with the k commonest terms non-essential, or None when θ does not
    prove it (the caller then runs the full query)."""
    ess, rest = order[:-k], order[-k:]
    top = scored(snap, expression(phrases, ess), LIMIT)
    theta = -top[-1][1] if len(top) == LIMIT else 0.0
    if sum(map(bound, rest)) * (1 + SLACK) + SLACK >= theta:
        return None
    merged = dict(top)
    both = f"({expression(phrases, ess)}) AND ({expression((), rest)})"
    merged.update(scored(snap, both, LIMIT, theta))
    return sorted(merged.items(), key=lambda item: (item[1], item[0]))[:LIMIT]


def main() -> None:
    corpus, store = Path(sys.argv[1]).resolve(), Path(sys.argv[2])
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    kb = Knowledge(resolve_settings(cwd=corpus, store_base=store))
    queries = list(dict.fromkeys([q.query for q in dq.load(dq.CORPORA["powershell"])] + QUERIES))
    times: dict[str, list[float]] = {"plain": [], "one": [], "greedy": [], "oracle": []}
    wrong = 0
    with kb.store.snapshot() as snap:
        assert snap is not None
        total = indexed_rows(snap)
        for r in range(rounds + 1):
            for q in queries:
                terms, phrases = kb.term_stats.bound(snap, search_terms(q), query_phrases(q))
                if not terms:
                    continue
                phrases = [p for p in phrases[:MAX_PHRASES] if p not in terms]
                counts = {t: kb.term_stats.count(snap, t, total + 1)[0] for t in terms}
                order = sorted(terms, key=lambda t: counts[t])

                def bound(t: str, counts: dict[str, int] = counts) -> float:
                    n = counts[t]
                    return max(math.log((total - n + 0.5) / (n + 0.5)), 1e-6) * (K1 + 1.0)

                t0 = time.perf_counter()
                plain = scored(snap, expression(phrases, order), LIMIT)
                t1 = time.perf_counter()
                got = None
                kept = sum(counts[t] for t in order[:-1])
                common = counts[order[-1]]
                if (
                    len(order) > 1
                    and kept >= LIMIT
                    and common - min(kept, common) >= WORTH * sum(counts.values())
                ):
                    got = split(snap, phrases, order, 1, bound)
                if got is None:
                    got = scored(snap, expression(phrases, order), LIMIT)
                t2 = time.perf_counter()
                wrong += got != plain
                t4 = time.perf_counter()
                got = None
                postings = sum(counts.values())
                for k in range(len(order) - 1, 0, -1):
                    kept_k = sum(counts[t] for t in order[:-k])
                    skipped = sum(counts[t] for t in order[-k:])
                    if kept_k < LIMIT or skipped - min(kept_k, skipped) < WORTH * postings:
                        continue
                    got = split(snap, phrases, order, k, bound)
                    if got is not None:
                        break
                if got is None:
                    got = scored(snap, expression(phrases, order), LIMIT)
                t5 = time.perf_counter()
                wrong += got != plain
                best = t1 - t0
                for k in range(1, len(order)):
                    t3 = time.perf_counter()
                    exact = split(snap, phrases, order, k, bound)
                    if exact is None:
                        break
                    wrong += exact != plain
                    best = min(best, time.perf_counter() - t3)
                if r:
                    times["plain"].append((t1 - t0) * 1000)
                    times["one"].append((t2 - t1) * 1000)
                    times["greedy"].append((t5 - t4) * 1000)
                    times["oracle"].append(best * 1000)
    for way, ms in times.items():
        p95 = sorted(ms)[int(0.95 * len(ms))]
        print(
            f"{way:7s} p50 {statistics.median(ms):6.2f} ms  p95 {p95:6.2f} ms  ({len(ms)} searches)"
        )
    print(f"results differing from the plain query: {wrong}")


if __name__ == "__main__":
    main()
