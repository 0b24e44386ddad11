"""MCP over streamable HTTP against stdio, in the same minute: time per call one by one, and
calls per second with several calls in flight on one session.

    python bench/mcp_speed.py [--corpus otel|powershell] [--store DIR] [--rounds 3]
                              [--calls 40] [--concurrency 8] [--baseline FISK_AI] > mcp.json

Both servers are real ``fisk-ai mcp`` processes over the same store (indexed first when
``--store`` holds no index of the corpus), each driven by the official MCP SDK client on one
session. Each round times, for stdio then HTTP then HTTP then stdio (so drifts in load hit
both alike), ``--calls`` searches one by one and the same searches with ``--concurrency`` in
flight at once; the questions are the corpus's dev-set questions, in order. Prints one JSON
object: medians over the rounds, the ratios HTTP ÷ stdio, and each server's calls per second
in flight ÷ one by one (``concurrent_over_one_by_one``: the same calls' total time each way;
``…_p50``: against 1 ÷ the one-by-one p50, as first reported).

The client runs on the same machine and takes CPU too, so each phase also records the CPU time
per call of the server process (``/proc/PID/stat``, all its threads; its main thread, which
runs the event loop, the SDK and the transport, apart) and of this client process: when the
client's share is the larger, the calls per second measure the client. ``cores_busy`` is both
processes' CPU time over the phase's wall time: one by one is near 1 (each call waits for the
last); in flight it says how much of the machine's two cores the calls kept busy.
``--baseline FISK_AI`` (another checkout's ``fisk-ai``, e.g. ``/work/main/.venv/bin/fisk-ai``)
serves HTTP beside this tree's, timed in the same turns, for an A/B of the two servers.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
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
from dataclasses import dataclass, field
from functools import partial
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


TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int, thread: int | None = None) -> float:
    """User + system CPU time of process ``pid`` so far (all its threads), or of its
    ``thread`` alone (the main thread's id is the process's)."""
    where = f"/proc/{pid}" if thread is None else f"/proc/{pid}/task/{thread}"
    fields = Path(f"{where}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def child_pids() -> set[int]:
    out: set[int] = set()
    for children in Path(f"/proc/{os.getpid()}/task").glob("*/children"):
        out.update(int(p) for p in children.read_text().split())
    return out


@dataclass
class Server:
    """A server under test: its client session and its process."""

    client: Client
    pid: int


@asynccontextmanager
async def stdio_session(root: Path, env: dict[str, str]) -> AsyncIterator[Client]:
    """A client session of a stdio server (bench/agent_latency.py uses it too)."""
    async with stdio_server(root, env) as server:
        yield server.client


@asynccontextmanager
async def stdio_server(root: Path, env: dict[str, str]) -> AsyncIterator[Server]:
    params = StdioServerParameters(command=CLI[0], args=[*CLI[1:], "mcp"], env=env, cwd=root)
    before = child_pids()
    with open(os.devnull, "w") as log:
        async with Client(stdio_client(params, errlog=log), read_timeout_seconds=60) as c:
            (pid,) = child_pids() - before
            yield Server(c, pid)


@asynccontextmanager
async def http_session(
    cmd: list[str], root: Path, env: dict[str, str], err: Path
) -> AsyncIterator[Server]:
    with open(err, "wb") as sink:
        proc = subprocess.Popen(
            [*cmd, "mcp", "--http", "--port", "0"],
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
            yield Server(c, proc.pid)
    finally:
        proc.terminate()
        proc.wait(timeout=20)


async def call(client: Client, query: str) -> None:
    result = await client.call_tool("knowledge_search", {"query": query})
    if result.is_error:
        raise SystemExit(f"search failed: {result.content}")


async def one_by_one(client: Client, queries: list[str]) -> list[float]:
    out = []
    for q in queries:
        t = time.perf_counter()
        await call(client, q)
        out.append((time.perf_counter() - t) * 1000)
    return out


async def concurrent(client: Client, queries: list[str], width: int) -> float:
    """Seconds for the calls with ``width`` in flight at once on the one session."""
    todo = iter(queries)

    async def lane() -> None:
        for q in todo:
            await call(client, q)

    t = time.perf_counter()
    await asyncio.gather(*(lane() for _ in range(width)))
    return time.perf_counter() - t


@dataclass
class Phase:
    """One way of calling, over the rounds: wall and CPU (server, client) per call."""

    p50_ms: list[float] = field(default_factory=list)
    rate: list[float] = field(default_factory=list)
    server_cpu: float = 0.0
    loop_cpu: float = 0.0
    client_cpu: float = 0.0
    wall: float = 0.0
    calls: int = 0

    async def timed(self, server: Server, run: Callable[[], Awaitable[float]], n: int) -> None:
        s, c = cpu_seconds(server.pid), time.process_time()
        loop = cpu_seconds(server.pid, server.pid)
        seconds = await run()
        self.server_cpu += cpu_seconds(server.pid) - s
        self.loop_cpu += cpu_seconds(server.pid, server.pid) - loop
        self.client_cpu += time.process_time() - c
        self.wall += seconds
        self.calls += n
        self.rate.append(n / seconds)

    def cores(self) -> float:
        """The cores server and client kept busy together: their CPU time over the wall."""
        return round((self.server_cpu + self.client_cpu) / self.wall, 2)


async def measure(
    args: argparse.Namespace,
    root: Path,
    env: dict[str, str],
    work: Path,
) -> dict[str, Any]:
    corpus = CORPORA[args.corpus]
    queries = [q.query for q in load(corpus) if q.lang == "en"][: args.calls]
    async with contextlib.AsyncExitStack() as stack:
        servers = {
            "stdio": await stack.enter_async_context(stdio_server(root, env)),
            "http": await stack.enter_async_context(
                http_session(CLI, root, env, work / "http.err")
            ),
        }
        if args.baseline:
            base_env = {k: v for k, v in env.items() if k != "PYTHONPATH"}
            servers["http_baseline"] = await stack.enter_async_context(
                http_session([args.baseline], root, base_env, work / "baseline.err")
            )
        names = list(servers)
        serial = {n: Phase() for n in names}
        parallel = {n: Phase() for n in names}
        for s in servers.values():  # warm: the store opened, the pages read once
            await one_by_one(s.client, queries)
        order = names + names[::-1]  # so drifts in load hit each alike
        for r in range(args.rounds):
            print(f"round {r + 1}, load {os.getloadavg()[0]:.2f}", file=sys.stderr)
            for name in order:
                s, times = servers[name], []

                async def serially(s: Server = s, times: list[float] = times) -> float:
                    times.extend(await one_by_one(s.client, queries))
                    return sum(times) / 1000

                await serial[name].timed(s, serially, len(queries))
                serial[name].p50_ms.append(statistics.median(times))
            for name in order:
                s = servers[name]
                await parallel[name].timed(
                    s, partial(concurrent, s.client, queries, args.concurrency), len(queries)
                )

    def med(v: list[float]) -> float:
        return round(statistics.median(v), 2)

    def ms(seconds: float, calls: int) -> float:
        return round(seconds * 1000 / calls, 2)

    one = {k: med(v.p50_ms) for k, v in serial.items()}
    rate = {k: med(v.rate) for k, v in parallel.items()}
    return {
        "corpus": args.corpus,
        "calls": len(queries),
        "rounds": args.rounds,
        "concurrency": args.concurrency,
        "one_by_one_ms_p50": one,
        "one_by_one_calls_per_s": {k: med(v.rate) for k, v in serial.items()},
        "concurrent_calls_per_s": rate,
        "http_over_stdio_one_by_one": round(one["http"] / one["stdio"], 2),
        "http_over_stdio_concurrent_rate": round(rate["http"] / rate["stdio"], 2),
        # calls/s in flight ÷ calls/s one by one, both over the same calls; ÷ 1 / (one
        # call's p50) instead, as first reported, flatters one by one (the p50 is below the mean)
        "concurrent_over_one_by_one": {k: round(rate[k] / med(serial[k].rate), 2) for k in names},
        "concurrent_over_one_by_one_p50": {k: round(rate[k] * one[k] / 1000, 2) for k in names},
        "cpu_ms_per_call": {
            k: {
                "server_one_by_one": ms(serial[k].server_cpu, serial[k].calls),
                "server_concurrent": ms(parallel[k].server_cpu, parallel[k].calls),
                "server_main_thread_one_by_one": ms(serial[k].loop_cpu, serial[k].calls),
                "server_main_thread_concurrent": ms(parallel[k].loop_cpu, parallel[k].calls),
                "client_one_by_one": ms(serial[k].client_cpu, serial[k].calls),
                "client_concurrent": ms(parallel[k].client_cpu, parallel[k].calls),
            }
            for k in names
        },
        # server + client CPU ÷ wall time: on this 2-core machine, how far from both cores
        "cores_busy": {
            k: {"one_by_one": serial[k].cores(), "concurrent": parallel[k].cores()} for k in names
        },
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", choices=list(CORPORA), default="otel")
    ap.add_argument("--store", type=Path, help="store base to reuse (default: a temporary one)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--calls", type=int, default=40)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument(
        "--baseline",
        metavar="FISK_AI",
        help="another checkout's fisk-ai: its HTTP server is timed beside this tree's",
    )
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="fisk-mcp-bench-"))
    try:
        store = args.store or work / "store"
        root = project(CORPORA[args.corpus].root, work)
        env = {**os.environ, "FISK_AI_STORE_DIR": str(store), "PYTHONPATH": str(REPO)}
        subprocess.run(  # its progress lines must not reach the JSON on stdout
            [*CLI, "knowledge", "index"], cwd=root, env=env, check=True, stdout=subprocess.DEVNULL
        )
        result = asyncio.run(measure(args, root, env, work))
        result["load_avg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
