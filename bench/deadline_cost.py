"""What a search's deadline costs (deadline.py: the progress handler on the read connection and
the checks between stages): ``Knowledge.search`` without a deadline and with one (30 s, as the
MCP server's tool timeout), in-process, alternating per query, same load, over the PowerShell
docs (~150k chunks).

    python bench/deadline_cost.py [--store DIR] [--rounds N] > deadline.json

Queries: the PowerShell dev set's and bench/speed.py's. Prints p50/p95 of each way, their
ratio, and how many times a search looked at its deadline (the median over the queries).
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

from fisk_ls.knowledge import Deadline, Knowledge, SearchRequest, index, resolve_settings


class Counted:
    """``time.monotonic``, counting the calls (each look at a deadline not yet passed)."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self) -> float:
        self.calls += 1
        return time.monotonic()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path, default=Path(".bench/match-store"))
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if not PS.is_dir():
        sys.exit(f"corpus not found: {PS}")
    settings = resolve_settings(cwd=PS, store_base=args.store.resolve())
    built = index(settings)
    queries = list(dict.fromkeys([q.query for q in dq.load(dq.CORPORA["powershell"])] + QUERIES))
    kb = Knowledge(settings)
    plain_ms: list[float] = []
    timed_ms: list[float] = []
    looks: list[int] = []
    try:
        for round_ in range(args.rounds + 1):  # round 0 warms the pages and the term counts
            for i, query in enumerate(queries):
                clock = Counted()
                ways = [
                    lambda q=query: kb.search(SearchRequest(q, 10)),
                    lambda q=query, c=clock: kb.search(
                        SearchRequest(q, 10, deadline=Deadline.after(30, clock=c))
                    ),
                ]
                if (i + round_) % 2:
                    ways.reverse()
                timed = []
                for way in ways:
                    t0 = time.perf_counter()
                    way()
                    timed.append((time.perf_counter() - t0) * 1000)
                if (i + round_) % 2:
                    timed.reverse()
                if round_ == 0:
                    continue
                plain_ms.append(timed[0])
                timed_ms.append(timed[1])
                looks.append(clock.calls - 1)  # the first call set the deadline
    finally:
        kb.close()
    out = {
        "corpus": "windows-powershell-docs",
        "chunks": built.chunks,
        "queries": len(queries),
        "rounds": args.rounds,
        "no_deadline_p50_ms": round(statistics.median(plain_ms), 2),
        "no_deadline_p95_ms": round(percentile(plain_ms, 0.95), 2),
        "deadline_p50_ms": round(statistics.median(timed_ms), 2),
        "deadline_p95_ms": round(percentile(timed_ms, 0.95), 2),
        "p50_ratio": round(statistics.median(timed_ms) / statistics.median(plain_ms), 3),
        "looks_per_search_p50": statistics.median(looks),
        "looks_per_search_max": max(looks),
        "loadavg": os.getloadavg(),
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
