"""What an agent's extra strings cost: in-process ``Knowledge.search`` of each dev-set question
alone, with its three agent strings (``also``) as the reader runs them (extra strings anchored
on their rarest terms, anchored.py; the lexical arms side by side, arms.py), with the strings
scored over every row their OR matches (``search.ANCHORED`` off, as before anchoring) and with
the arms one after another (``Knowledge.arms`` off), timed alternately in one process after a
warm-up pass, so all are measured on the same machine state. Side by side and one after another
must return the same result (checked on every search); how many questions' top ten differ
between anchored and full strings is counted.

Beside each question, two SHA-256 passes over 2 MiB (the GIL released) are timed on one thread
and on two: ``two_core_speedup`` is their ratio over the run (2.0: a second core was free; 1.0:
other processes held it, and side-by-side arms cannot gain).

With ``--mcp``, the same questions also go through one MCP stdio session (a real
``fisk-ai mcp`` process and the MCP SDK's client, over a hard-link mirror of the corpus indexed
into a temporary store, or ``--mcp-store``): a call with the three strings and one without,
alternately; ``mcp`` holds their p50 and ratio.

    python bench/agent_latency.py --store-base STORES [--corpus powershell|otel]
                                  [--builtin MODEL_DIR] [--rounds 3] [--mcp]
                                  [--mcp-store DIR] [--out FILE]

The stores are bench/devset.py's (``--store-base``); ``--builtin`` times the hybrid store (the
query and its strings embedded in runs grouped by length, beside the lexical arms once the
model is loaded). Prints (and with ``--out`` writes) one JSON
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

from fisk_ls.knowledge import Knowledge, Project, SearchRequest, search


def _quantiles(ms: list[float]) -> dict[str, float]:
    ms = sorted(ms)
    return {
        "p50": round(statistics.median(ms), 2),
        "p95": round(ms[min(len(ms) - 1, int(0.95 * len(ms)))], 2),
    }


def _mcp(
    corpus: Any, questions: list[Any], also: dict[str, Any], store: Path | None, rounds: int
) -> dict[str, Any]:
    """p50 of a ``knowledge_search`` call through one MCP stdio session with the three strings
    and without, alternately, after a warm-up pass."""
    import asyncio
    import shutil
    import subprocess
    import sys
    import tempfile

    from mcp_speed import CLI, REPO, project, stdio_session

    async def measure(root: Path, env: dict[str, str]) -> dict[str, Any]:
        alone: list[float] = []
        fused: list[float] = []
        async with stdio_session(root, env) as client:

            async def call(arguments: dict[str, Any]) -> float:
                t = time.perf_counter()
                result = await client.call_tool("knowledge_search", arguments)
                if result.is_error:
                    raise SystemExit(f"search failed: {result.content}")
                return (time.perf_counter() - t) * 1000

            for q in questions:
                await call({"query": q.query})
                await call({"query": q.query, "also": list(also[q.id])})
            for _ in range(rounds):
                print(f"mcp round, load {os.getloadavg()[0]:.2f}", file=sys.stderr)
                for q in questions:
                    alone.append(await call({"query": q.query}))
                    fused.append(await call({"query": q.query, "also": list(also[q.id])}))
        a, f = _quantiles(alone), _quantiles(fused)
        return {
            "query_alone_ms": a,
            "with_three_also_ms": f,
            "ratio_p50": round(f["p50"] / a["p50"], 2),
            "ratio_p95": round(f["p95"] / a["p95"], 2),
        }

    work = Path(tempfile.mkdtemp(prefix="fisk-agent-mcp-"))
    try:
        root = project(corpus.root, work)
        env = {
            **os.environ,
            "FISK_AI_STORE_DIR": str(store or work / "store"),
            "PYTHONPATH": str(REPO),
        }
        subprocess.run(  # its progress lines must not reach the JSON on stdout
            [*CLI, "knowledge", "index"], cwd=root, env=env, check=True, stdout=subprocess.DEVNULL
        )
        return asyncio.run(measure(root, env))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store-base", type=Path, required=True)
    ap.add_argument("--corpus", choices=list(CORPORA), default="powershell")
    ap.add_argument("--builtin", type=Path, help="model directory: time the hybrid store")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--mcp", action="store_true", help="also time calls through MCP stdio")
    ap.add_argument("--mcp-store", type=Path, help="--mcp: store base to reuse")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    corpus = CORPORA[args.corpus]
    questions = [q for q in load(corpus) if q.lang == "en"]
    also = load_agent(agent_file(corpus.questions), questions, None)
    settings = store_settings(corpus, args.store_base, args.builtin)
    k = Knowledge(settings, Project(settings).embedder())  # the project's one embedder
    if args.builtin is not None and not k.tier().startswith("hybrid"):
        k.close()
        raise SystemExit(
            f"--builtin: the store is not hybrid ({k.tier()}); run bench/devset.py first"
        )
    arms = k.arms
    alone: list[float] = []
    fused: list[float] = []
    full: list[float] = []
    one_by_one: list[float] = []
    moved: set[str] = set()
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
                search.ANCHORED = False
                try:
                    ms, every_row = timed(q, also[q.id])
                finally:
                    search.ANCHORED = True
                full.append(ms)
                if [h.citation for h in side_by_side.hits] != [h.citation for h in every_row.hits]:
                    moved.add(q.id)
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
    a, f, s, e = _quantiles(alone), _quantiles(fused), _quantiles(one_by_one), _quantiles(full)
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
        "every_row_ms": e,
        "every_row_ratio_p50": round(e["p50"] / a["p50"], 2),
        "every_row_ratio_p95": round(e["p95"] / a["p95"], 2),
        "top10_differs_from_every_row": len(moved),
        "workers": arms.workers if arms is not None else 0,
        "arms_one_by_one_ms": s,
        "one_by_one_ratio_p50": round(s["p50"] / a["p50"], 2),
        "one_by_one_ratio_p95": round(s["p95"] / a["p95"], 2),
        "two_core_speedup": round(one_thread / two_threads, 2),
    }
    if args.mcp:
        out["mcp"] = _mcp(corpus, questions, also, args.mcp_store, args.rounds)
    out["load_avg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    text = json.dumps(out, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
