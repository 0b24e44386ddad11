"""fisk-ls's in-process search latency, in a process of its own (as bench/qmd_latency.mjs times
qmd): ``Knowledge.search`` timed around each call, after one warm-up pass.

    python bench/fisk_latency.py PROJECT_ROOT STORE_BASE ROUNDS TOP_K QUERY...

Prints one JSON object: {"ms": [per-call milliseconds], "hits": {query: count}}. bench/peers.py
runs it once per block, so nothing the benchmark process holds (the other corpus's results, its
objects for the garbage collector) is timed with it.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from fisk_ls.knowledge import Knowledge, SearchRequest, resolve_settings


def main() -> None:
    root, base, rounds, top_k, *queries = sys.argv[1:]
    kb = Knowledge(resolve_settings(cwd=Path(root), store_base=Path(base)))
    try:
        hits = {q: len(kb.search(SearchRequest(q, top_k=int(top_k))).hits) for q in queries}
        ms: list[float] = []
        for _ in range(int(rounds)):
            for q in queries:
                t = time.perf_counter()
                kb.search(SearchRequest(q, top_k=int(top_k)))
                ms.append((time.perf_counter() - t) * 1000)
    finally:
        kb.close()
    print(json.dumps({"ms": ms, "hits": hits}))


if __name__ == "__main__":
    main()
