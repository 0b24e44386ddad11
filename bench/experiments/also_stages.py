"""Where the time of a search with agent strings goes: ``Knowledge.search`` of each English
dev-set question with its three strings, each stage timed by wrapping the functions it calls
(plans, BM25 scans split into their ``topk.scored`` passes, heading boosts, hit assembly,
match location), after a warm-up pass.

    python bench/experiments/also_stages.py --store-base STORES [--corpus powershell|otel]
                                            [--rounds 2] [--alone]

Prints each stage's share of the summed search time and its mean milliseconds per search.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from devset import agent_file, load_agent, store_settings
from devset_questions import CORPORA, load

from fisk_ls.knowledge import (
    Knowledge,
    lexical,
    reader,
    search,
    topk,
)

spent: dict[str, float] = defaultdict(float)
calls: dict[str, int] = defaultdict(int)
depth = [0]


def timed(module: Any, name: str, label: str) -> None:
    fn: Callable[..., Any] = getattr(module, name)

    def wrapper(*a: Any, **kw: Any) -> Any:
        t = time.perf_counter()
        try:
            return fn(*a, **kw)
        finally:
            spent[label] += time.perf_counter() - t
            calls[label] += 1

    setattr(module, name, wrapper)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--store-base", type=Path, required=True)
    ap.add_argument("--corpus", choices=list(CORPORA), default="powershell")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--alone", action="store_true", help="the question alone, no strings")
    args = ap.parse_args()
    corpus = CORPORA[args.corpus]
    questions = [q for q in load(corpus) if q.lang == "en"]
    also = load_agent(agent_file(corpus.questions), questions, None)
    k = Knowledge(store_settings(corpus, args.store_base))
    for q in questions:
        k.search(q.query, 10, also=() if args.alone else also[q.id])
    # Wrapped after the warm-up; names as the callers look them up.
    timed(search, "query_plan", "plan (term stats)")
    timed(lexical, "_Counter", "plan: counter objects")
    timed(topk, "scored", "bm25 scans (topk.scored)")
    timed(search, "boost_headings", "heading boost")
    timed(search, "_hits", "hits (candidates, assemble)")
    timed(search, "fuse_strings", "fusion")
    timed(search, "incomplete", "coverage probe")
    timed(search, "is_empty", "is_empty")
    timed(reader, "_with_match", "match location")
    timed(reader, "fts_tokenizer", "tokenizer")
    timed(reader, "terms_tokens", "terms_tokens")
    timed(reader.Query, "parse", "Query.parse")
    total = 0.0
    n = 0
    for _ in range(args.rounds):
        for q in questions:
            t = time.perf_counter()
            k.search(q.query, 10, also=() if args.alone else also[q.id])
            total += time.perf_counter() - t
            n += 1
    k.close()
    print(f"{n} searches, mean {1000 * total / n:.2f} ms")
    for label, s in sorted(spent.items(), key=lambda x: -x[1]):
        print(
            f"{label:32s} {100 * s / total:5.1f}%  {1000 * s / n:7.2f} ms/search"
            f"  {calls[label] / n:5.1f} calls/search"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
