"""Exact top-k BM25 (``fisk_ls.knowledge.topk.best``, MaxScore) against the plain FTS5 query it
replaces, over the PowerShell docs (~150k chunks), in-process, alternating, same load.

    python bench/topk.py [--store DIR] [--rounds N] > topk.json

Queries: the PowerShell dev set's and bench/speed.py's. For each, both ways read the
``FANOUT * DEEPER`` candidates search reads, after the same term pruning; the plain way is
``ORDER BY bm25(…), rowid LIMIT n`` over the whole OR. Prints p50/p95 of each, their ratio, how
many queries skipped rows (some term was proved non-essential), and how many results differ
(ids or scores): that must be 0.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import devset_questions as dq
from match_speed import PS, percentile
from speed import QUERIES

from fisk_ls.knowledge import Knowledge, index_project, resolve_settings
from fisk_ls.knowledge.search import BM25_WEIGHTS, DEEPER, FANOUT, query_plan
from fisk_ls.knowledge.topk import best, scored


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path, default=Path(".bench/match-store"))
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if not PS.is_dir():
        sys.exit(f"corpus not found: {PS}")
    settings = resolve_settings(cwd=PS, store_base=args.store.resolve())
    built = index_project(settings)
    queries = list(dict.fromkeys([q.query for q in dq.load(dq.CORPORA["powershell"])] + QUERIES))
    limit = FANOUT * DEEPER
    kb = Knowledge(settings)
    plain_ms: list[float] = []
    best_ms: list[float] = []
    differ: list[str] = []
    pruned = 0
    try:
        with kb.store.snapshot() as snap:
            assert snap is not None
            plans = {q: query_plan(snap, q, kb.term_stats) for q in queries}
            plans = {q: p for q, p in plans.items() if p.terms}
            for round_ in range(args.rounds + 1):  # round 0 warms the pages
                for i, (query, plan) in enumerate(plans.items()):
                    timed = []
                    ways = [
                        lambda plan=plan: scored(snap, plan.expression(), BM25_WEIGHTS, limit),
                        lambda plan=plan: best(snap, plan, limit, BM25_WEIGHTS),
                    ]
                    if (i + round_) % 2:
                        ways.reverse()
                    results = []
                    for way in ways:
                        t0 = time.perf_counter()
                        results.append(way())
                        timed.append((time.perf_counter() - t0) * 1000)
                    if (i + round_) % 2:
                        timed.reverse()
                        results.reverse()
                    if round_ == 0:
                        if results[0] != results[1]:
                            differ.append(query)
                        continue
                    plain_ms.append(timed[0])
                    best_ms.append(timed[1])
            pruned = sum(1 for p in plans.values() if len(p.terms) > 1)
    finally:
        kb.close()
    out = {
        "corpus": "windows-powershell-docs",
        "chunks": built.chunks,
        "queries": len(plans),
        "queries_with_two_terms_or_more": pruned,
        "rounds": args.rounds,
        "limit": limit,
        "plain_p50_ms": round(statistics.median(plain_ms), 2),
        "plain_p95_ms": round(percentile(plain_ms, 0.95), 2),
        "topk_p50_ms": round(statistics.median(best_ms), 2),
        "topk_p95_ms": round(percentile(best_ms, 0.95), 2),
        "p50_ratio": round(statistics.median(best_ms) / statistics.median(plain_ms), 3),
        "results_that_differ": differ,
        "loadavg": os.getloadavg(),
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
