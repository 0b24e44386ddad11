"""What match location (the part of a hit that matched, its snippet and highlights) adds to a
search, over the PowerShell docs (~150k chunks), in-process, measured side by side.

    python bench/match_speed.py [--store DIR] [--rounds N] > match.json

Each query runs the search without match location (``run_search`` on one snapshot) and then
what ``Knowledge.search`` adds for its hits, alternating, so the added cost is measured under the
same load: the index's tokenizer, the query's tokens (once per search) and ``locate`` for each
hit. Prints p50/p95 of the search and of the addition.
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

from devset_questions import CORPORA_DIR as CORPORA
from speed import QUERIES

from fisk_ls.knowledge import Knowledge, SearchRequest, index, resolve_settings
from fisk_ls.knowledge.match import fts_tokenizer, locate, query_tokens
from fisk_ls.knowledge.query import Query
from fisk_ls.knowledge.search import run_search

PS = CORPORA / "windows-powershell-docs"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path, default=Path(".bench/match-store"))
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--top-k", type=int, default=10)
    args = parser.parse_args()
    if not PS.is_dir():
        sys.exit(f"corpus not found: {PS}")
    settings = resolve_settings(cwd=PS, store_base=args.store.resolve())
    built = index(settings)
    kb = Knowledge(settings)
    search_ms: list[float] = []
    match_ms: list[float] = []
    try:
        for _ in range(args.rounds):
            for query in QUERIES:
                with kb.store.snapshot() as snap:
                    t0 = time.perf_counter()
                    parsed = Query.of(SearchRequest(query, args.top_k), args.top_k)
                    result = run_search(snap, parsed, term_stats=kb.term_stats, locate=False)
                    t1 = time.perf_counter()
                    tokenize = fts_tokenizer(snap.conn)  # type: ignore[union-attr]
                    terms = query_tokens(query, tokenize)  # as Knowledge.search: once
                    for hit in result.hits:
                        locate(
                            hit.text, hit.section, (hit.start_line, hit.end_line), terms, tokenize
                        )
                    t2 = time.perf_counter()
                search_ms.append((t1 - t0) * 1000)
                match_ms.append((t2 - t1) * 1000)
    finally:
        kb.close()
    out = {
        "corpus": "windows-powershell-docs",
        "chunks": built.chunks,
        "queries": len(QUERIES),
        "rounds": args.rounds,
        "top_k": args.top_k,
        "search_p50_ms": round(statistics.median(search_ms), 2),
        "search_p95_ms": round(percentile(search_ms, 0.95), 2),
        "match_p50_ms": round(statistics.median(match_ms), 3),
        "match_p95_ms": round(percentile(match_ms, 0.95), 3),
        "loadavg": os.getloadavg(),
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
