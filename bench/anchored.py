"""An agent's extra strings anchored on their rarest terms (``fisk_ls.knowledge.anchored``)
against the full OR query they stand for (``topk.best``), in-process, alternating, same load.

    python bench/anchored.py --store-base STORES [--corpus powershell|otel] [--rounds 2]
                             [--limit 200] [--postings 2000]

The stores are bench/devset.py's. For every agent string of the corpus's English dev
questions (bench/devset/*-agent.jsonl), both ways read ``--limit`` candidates after the same
term pruning. Prints the summed milliseconds of each and of the questions' own arms, their
ratio, how many strings got the same top ``--limit`` (ids and scores), how many were proved
so, and how many of each full top ten the anchored list holds.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parent))

from devset import agent_file, load_agent, store_settings
from devset_questions import CORPORA, load

from fisk_ls.knowledge import Knowledge
from fisk_ls.knowledge.anchored import ANCHOR_POSTINGS, anchored
from fisk_ls.knowledge.search import BM25_WEIGHTS, DEEPER, FANOUT, query_plan
from fisk_ls.knowledge.topk import best

T = TypeVar("T")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store-base", type=Path, required=True)
    ap.add_argument("--corpus", choices=list(CORPORA), default="powershell")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--limit", type=int, default=FANOUT * DEEPER)
    ap.add_argument("--postings", type=int, default=ANCHOR_POSTINGS)
    args = ap.parse_args()
    corpus = CORPORA[args.corpus]
    questions = [q for q in load(corpus) if q.lang == "en"]
    also = load_agent(agent_file(corpus.questions), questions, None)
    kb = Knowledge(store_settings(corpus, args.store_base))
    ms = {"question": 0.0, "full": 0.0, "anchored": 0.0}
    strings = same = proved = kept = shown = 0

    Ranked = list[tuple[int, float]]

    def timed(key: str, run: Callable[[], T]) -> T:
        t = time.perf_counter()
        out = run()
        ms[key] += (time.perf_counter() - t) * 1000
        return out

    try:
        with kb.store.snapshot() as snap:
            assert snap is not None
            for round_ in range(args.rounds + 1):  # round 0 warms the pages
                for i, q in enumerate(questions):
                    plan = query_plan(snap, q.query, kb.term_stats)
                    if plan.terms:
                        timed("question", partial(best, snap, plan, args.limit, BM25_WEIGHTS))
                    for text in also[q.id]:
                        p = query_plan(snap, text, kb.term_stats)
                        if not p.terms:
                            continue
                        full: Ranked = []
                        mine: tuple[Ranked, bool] = ([], False)
                        for way in (
                            ("anchored", "full") if (i + round_) % 2 else ("full", "anchored")
                        ):
                            if way == "full":
                                full = timed(way, partial(best, snap, p, args.limit, BM25_WEIGHTS))
                            else:
                                mine = timed(
                                    way,
                                    partial(
                                        anchored,
                                        snap,
                                        p,
                                        args.limit,
                                        BM25_WEIGHTS,
                                        None,
                                        args.postings,
                                    ),
                                )
                        if round_ != 1:
                            continue
                        strings += 1
                        same += mine[0] == full
                        proved += mine[1]
                        top = {cid for cid, _ in full[:10]}
                        kept += len(top & {cid for cid, _ in mine[0]})
                        shown += len(top)
                if round_ == 0:
                    ms = dict.fromkeys(ms, 0.0)
    finally:
        kb.close()
    out = {
        "corpus": args.corpus,
        "limit": args.limit,
        "postings": args.postings,
        "rounds": args.rounds,
        "strings": strings,
        "question_arms_ms": round(ms["question"]),
        "full_ms": round(ms["full"]),
        "anchored_ms": round(ms["anchored"]),
        "anchored_over_full": round(ms["anchored"] / ms["full"], 3),
        "strings_over_question_full": round(ms["full"] / ms["question"], 2),
        "strings_over_question_anchored": round(ms["anchored"] / ms["question"], 2),
        "same_top": same,
        "proved": proved,
        "full_top10_kept": round(kept / max(shown, 1), 4),
        "loadavg": [round(x, 2) for x in os.getloadavg()],
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
