"""MCP: searches run on the server's own threads, which last as long as the server (each keeps
its read connection), and a search its caller gave up on while it waited for a thread never
runs. The official SDK client, in process; searches wait on a barrier or an event, so what is
asserted is which threads ran which searches, never how long anything took."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

import anyio
import pytest

pytest.importorskip("mcp", reason="the MCP suite needs the optional extra fisk-ls[mcp]")

from anyio._backends import _asyncio as anyio_asyncio
from mcp import Client

from fisk_ls.agent.mcp import MAX_CONCURRENT_SEARCHES, build_server
from fisk_ls.agent.tool import NAME, KnowledgeTool
from fisk_ls.knowledge import Deadline, SearchRequest, index_project, resolve_settings
from tests.support.waiting import HANG_GUARD

from .conftest import error_text, outcome

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class RecordingTool:
    """The real tool; notes the thread and query of each search. With ``together``, a search
    first waits until that many are running at once; the query ``HELD`` waits for ``release``."""

    HELD = "held search"

    def __init__(self, real: KnowledgeTool, together: int = 0) -> None:
        self.real = real
        self.barrier = threading.Barrier(together) if together else None
        self.release = threading.Event()
        self.inside = threading.Event()
        self.threads: list[threading.Thread] = []
        self.queries: list[str] = []
        self._lock = threading.Lock()

    def parse(self, raw: Mapping[str, Any], deadline: Deadline | None = None) -> SearchRequest:
        return self.real.parse(raw, deadline)

    def search(self, request: SearchRequest) -> dict[str, Any]:
        with self._lock:
            self.queries.append(request.query)
            if threading.current_thread() not in self.threads:
                self.threads.append(threading.current_thread())
        if self.barrier is not None:
            self.barrier.wait(HANG_GUARD)
        if request.query == self.HELD:
            self.inside.set()
            assert self.release.wait(HANG_GUARD)
        return self.real.search(request)

    def close(self) -> None:
        self.real.close()


@pytest.fixture
def real(project: Path, store_base: Path) -> Any:
    settings = resolve_settings(cwd=project, store_base=store_base)
    index_project(settings)
    tool = KnowledgeTool(settings)
    yield tool
    tool.close()


async def test_bursts_of_calls_run_on_the_same_threads(
    real: KnowledgeTool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """anyio's pool ends a thread idle for 10 s; the store keeps one connection per thread, so
    each burst after a pause opened new, cold connections and left the old ones open. Here
    anyio ends idle threads at once, and three bursts still run on the server's threads."""
    monkeypatch.setattr(anyio_asyncio.WorkerThread, "MAX_IDLE_TIME", 0)
    tool = RecordingTool(real, together=MAX_CONCURRENT_SEARCHES)
    burst = 2 * MAX_CONCURRENT_SEARCHES
    answers: list[Any] = []
    async with Client(build_server(cast(KnowledgeTool, tool))) as client:

        async def one() -> None:
            answers.append(await client.call_tool(NAME, {"query": "backpressure"}))

        for _ in range(3):
            async with anyio.create_task_group() as tg:
                for _ in range(burst):
                    tg.start_soon(one)
    assert [outcome(a)["status"] for a in answers] == ["ok"] * 3 * burst
    assert len(tool.threads) == MAX_CONCURRENT_SEARCHES


async def test_a_search_given_up_while_it_waited_for_a_thread_never_runs(
    real: KnowledgeTool,
) -> None:
    tool = RecordingTool(real)
    server = build_server(cast(KnowledgeTool, tool), max_concurrent=1, timeout=0.5)
    try:
        async with Client(server) as client:
            answers: dict[str, Any] = {}
            async with anyio.create_task_group() as tg:

                async def call(query: str) -> None:
                    answers[query] = await client.call_tool(NAME, {"query": query})

                tg.start_soon(call, RecordingTool.HELD)
                assert await anyio.to_thread.run_sync(tool.inside.wait, HANG_GUARD)
                tg.start_soon(call, "backpressure")  # waits for the one thread, then times out
            assert all("took longer than 0.5s" in error_text(a) for a in answers.values())
            tool.release.set()
            # The thread's next search is this one: the one given up was not left in line.
            assert outcome(await client.call_tool(NAME, {"query": "widget"}))["status"] == "ok"
    finally:
        tool.release.set()
    assert tool.queries == [RecordingTool.HELD, "widget"]
