"""MCP over streamable HTTP against stdio, in the same minute: time per call one by one, and
calls per second with several calls in flight on one session.

    python bench/mcp_speed.py [--corpus otel|powershell] [--store DIR] [--rounds 3]
                              [--calls 40] [--concurrency 8] > mcp.json

Both servers are real ``fisk-ai mcp`` processes over the same store (indexed first when
``--store`` holds no index of the corpus), each driven by the official MCP SDK client on one
session. Each round times, for stdio then HTTP then HTTP then stdio (so drifts in load hit
both alike), ``--calls`` searches one by one and the same searches with ``--concurrency`` in
flight at once; the questions are the corpus's dev-set questions, in order. Prints one JSON
object: medians over the rounds and the ratios HTTP ÷ stdio.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from devset_questions import CORPORA, load
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

REPO = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "fisk_ls.cli"]
CONFIG = 'harness:\n  knowledge:\n    enabled: true\nexpose:\n  agent:\n    mcp:\n      builtins: ["knowledge_search"]\n'


def project(corpus_dir: Path, work: Path) -> Path:
    """A hard-link mirror of the corpus that is a project of its own, allowlisting the tool."""
    root = work / "project"
    subprocess.run(["cp", "-al", str(corpus_dir), str(root)], check=True)
    root.chmod(root.stat().st_mode | 0o200)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "agent.yaml").write_text(CONFIG)
    return root


@asynccontextmanager
async def stdio_session(root: Path, env: dict[str, str]) -> AsyncIterator[Client]:
    params = StdioServerParameters(command=CLI[0], args=[*CLI[1:], "mcp"], env=env, cwd=root)
    with open(os.devnull, "w") as log:
        async with Client(stdio_client(params, errlog=log), read_timeout_seconds=60) as c:
            yield c


@asynccontextmanager
async def http_session(root: Path, env: dict[str, str], work: Path) -> AsyncIterator[Client]:
    err = work / "http.err"
    with open(err, "wb") as sink:
        proc = subprocess.Popen(
            [*CLI, "mcp", "--http", "--port", "0"],
            cwd=root,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=sink,
        )
    try:
        url = None
        deadline = time.monotonic() + 60
        while url is None:
            if m := re.search(r"listening on (http://\S+)", err.read_text(errors="replace")):
                url = m.group(1)
            elif proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the HTTP server did not start: {err.read_text()}")
            else:
                await asyncio.sleep(0.05)
        async with (
            create_mcp_http_client() as http,
            Client(streamable_http_client(url, http_client=http)) as c,
        ):
            yield c
    finally:
        proc.terminate()
        proc.wait(timeout=20)


async def one_by_one(client: Client, queries: list[str]) -> list[float]:
    out = []
    for q in queries:
        t = time.perf_counter()
        result = await client.call_tool("knowledge_search", {"query": q})
        out.append((time.perf_counter() - t) * 1000)
        if result.is_error:
            raise SystemExit(f"search failed: {result.content}")
    return out


async def concurrent(client: Client, queries: list[str], width: int) -> float:
    """Calls per second with ``width`` calls in flight on the one session."""
    todo = iter(queries)

    async def lane() -> None:
        for q in todo:
            result = await client.call_tool("knowledge_search", {"query": q})
            if result.is_error:
                raise SystemExit(f"search failed: {result.content}")

    t = time.perf_counter()
    await asyncio.gather(*(lane() for _ in range(width)))
    return len(queries) / (time.perf_counter() - t)


async def measure(args: argparse.Namespace, root: Path, env: dict[str, str], work: Path) -> Any:
    corpus = CORPORA[args.corpus]
    queries = [q.query for q in load(corpus) if q.lang == "en"][: args.calls]
    per_call: dict[str, list[float]] = {"stdio": [], "http": []}
    rate: dict[str, list[float]] = {"stdio": [], "http": []}
    async with stdio_session(root, env) as s, http_session(root, env, work) as h:
        clients = {"stdio": s, "http": h}
        for c in clients.values():  # warm: the store opened, the pages read once
            await one_by_one(c, queries)
        order: list[str] = ["stdio", "http", "http", "stdio"]
        for r in range(args.rounds):
            print(f"round {r + 1}, load {os.getloadavg()[0]:.2f}", file=sys.stderr)
            for name in order:
                per_call[name].append(statistics.median(await one_by_one(clients[name], queries)))
            for name in order:
                rate[name].append(await concurrent(clients[name], queries, args.concurrency))

    def med(v: list[float]) -> float:
        return round(statistics.median(v), 2)

    return {
        "corpus": args.corpus,
        "calls": len(queries),
        "rounds": args.rounds,
        "concurrency": args.concurrency,
        "one_by_one_ms_p50": {k: med(v) for k, v in per_call.items()},
        "concurrent_calls_per_s": {k: med(v) for k, v in rate.items()},
        "http_over_stdio_one_by_one": round(med(per_call["http"]) / med(per_call["stdio"]), 2),
        "http_over_stdio_concurrent_rate": round(med(rate["http"]) / med(rate["stdio"]), 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", choices=list(CORPORA), default="otel")
    ap.add_argument("--store", type=Path, help="store base to reuse (default: a temporary one)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--calls", type=int, default=40)
    ap.add_argument("--concurrency", type=int, default=8)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="fisk-mcp-bench-"))
    try:
        store = args.store or work / "store"
        root = project(CORPORA[args.corpus].root, work)
        env = {**os.environ, "FISK_AI_STORE_DIR": str(store), "PYTHONPATH": str(REPO)}
        subprocess.run(  # its progress lines must not reach the JSON on stdout
            [*CLI, "knowledge", "index"], cwd=root, env=env, check=True, stdout=subprocess.DEVNULL
        )
        run: Callable[[], Awaitable[Any]] = lambda: measure(args, root, env, work)  # noqa: E731
        result = asyncio.run(run())
        result["load_avg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
