"""What an agent's extra strings cost: in-process ``Knowledge.search`` of each dev-set question
alone, with its three agent strings (``also``) as the reader runs them (the lexical arms side
by side, arms.py) and with the arms one after another (``Knowledge.arms`` off), timed
alternately in one process after a warm-up pass, so the three are measured on the same machine
state. Both ways must return the same result (checked on every search).

Beside each question, two SHA-256 passes over 2 MiB (the GIL released) are timed on one thread
and on two: ``two_core_speedup`` is their ratio over the run (2.0: a second core was free; 1.0:
other processes held it, and side-by-side arms cannot gain).

    python bench/agent_latency.py --store-base STORES [--corpus powershell|otel]
                                  [--builtin MODEL_DIR] [--rounds 3] [--out FILE]

The stores are bench/devset.py's (``--store-base``); ``--builtin`` times the hybrid store (the
query and its strings embedded in one model call). Prints (and with ``--out`` writes) one JSON
object: p50 / p95 milliseconds of each and their ratio.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from devset import agent_file, load_agent, store_settings
from devset_questions import CORPORA, load

from fisk_ls.knowledge import Knowledge, SearchRequest


def _quantiles(ms: list[float]) -> dict[str, float]:
    ms = sorted(ms)
    return {
        "p50": round(statistics.median(ms), 2),
        "p95": round(ms[min(len(ms) - 1, int(0.95 * len(ms)))], 2),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store-base", type=Path, required=True)
    ap.add_argument("--corpus", choices=list(CORPORA), default="powershell")
    ap.add_argument("--builtin", type=Path, help="model directory: time the hybrid store")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    corpus = CORPORA[args.corpus]
    questions = [q for q in load(corpus) if q.lang == "en"]
    also = load_agent(agent_file(corpus.questions), questions, None)
    settings = store_settings(corpus, args.store_base, args.builtin)
    k = Knowledge(settings)
    arms = k.arms
    alone: list[float] = []
    fused: list[float] = []
    one_by_one: list[float] = []
    one_thread = two_threads = 0.0
    data = os.urandom(2 << 20)
    helper = ThreadPoolExecutor(1)

    def timed(q: Any, strings: Any) -> tuple[float, Any]:
        t = time.perf_counter()
        result = k.search(SearchRequest(q.query, 10, also=strings))
        return (time.perf_counter() - t) * 1000, result

    try:
        for q in questions:  # warm-up: pages, term statistics, the model's session
            k.search(SearchRequest(q.query, 10))
            k.search(SearchRequest(q.query, 10, also=also[q.id]))
        for _ in range(args.rounds):
            for q in questions:
                alone.append(timed(q, ())[0])
                ms, side_by_side = timed(q, also[q.id])
                fused.append(ms)
                k.arms = None
                try:
                    ms, sequential = timed(q, also[q.id])
                finally:
                    k.arms = arms
                one_by_one.append(ms)
                if side_by_side != sequential:
                    raise SystemExit(f"{q.id}: side-by-side arms ranked otherwise")
                t = time.perf_counter()
                hashlib.sha256(data).digest()
                hashlib.sha256(data).digest()
                one_thread += time.perf_counter() - t
                t = time.perf_counter()
                other = helper.submit(hashlib.sha256, data)
                hashlib.sha256(data).digest()
                other.result()
                two_threads += time.perf_counter() - t
        tier = k.tier()
    finally:
        helper.shutdown()
        k.close()
    a, f, s = _quantiles(alone), _quantiles(fused), _quantiles(one_by_one)
    out: dict[str, Any] = {
        "corpus": args.corpus,
        "tier": tier,
        "questions": len(questions),
        "rounds": args.rounds,
        "machine": f"{platform.machine()} {platform.processor() or ''}".strip(),
        "query_alone_ms": a,
        "with_three_also_ms": f,
        "ratio_p50": round(f["p50"] / a["p50"], 2),
        "ratio_p95": round(f["p95"] / a["p95"], 2),
        "workers": arms.workers if arms is not None else 0,
        "arms_one_by_one_ms": s,
        "one_by_one_ratio_p50": round(s["p50"] / a["p50"], 2),
        "one_by_one_ratio_p95": round(s["p95"] / a["p95"], 2),
        "two_core_speedup": round(one_thread / two_threads, 2),
        "load_avg_at_end": [round(x, 2) for x in os.getloadavg()],
    }
    text = json.dumps(out, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
