"""What an agent's extra strings cost: in-process ``Knowledge.search`` of each dev-set question
alone and with its three agent strings (``also``), timed alternately in one process after a
warm-up pass, so the two are measured side by side on the same machine state.

    python bench/agent_latency.py --store-base STORES [--corpus powershell|otel]
                                  [--builtin MODEL_DIR] [--rounds 3] [--out FILE]

The stores are bench/devset.py's (``--store-base``); ``--builtin`` times the hybrid store (the
query and its strings embedded in one model call). Prints (and with ``--out`` writes) one JSON
object: p50 / p95 milliseconds of each and their ratio.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from pathlib import Path
from typing import Any

from devset import agent_file, load_agent, store_settings
from devset_questions import CORPORA, load

from fisk_ls.knowledge import Knowledge


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
    alone: list[float] = []
    fused: list[float] = []
    try:
        for q in questions:  # warm-up: pages, term statistics, the model's session
            k.search(q.query, 10)
            k.search(q.query, 10, also=also[q.id])
        for _ in range(args.rounds):
            for q in questions:
                t = time.perf_counter()
                k.search(q.query, 10)
                alone.append((time.perf_counter() - t) * 1000)
                t = time.perf_counter()
                k.search(q.query, 10, also=also[q.id])
                fused.append((time.perf_counter() - t) * 1000)
        tier = k.tier()
    finally:
        k.close()
    a, f = _quantiles(alone), _quantiles(fused)
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
    }
    text = json.dumps(out, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
