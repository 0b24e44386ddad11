"""MCP: long queries never hold up ordinary ones (as the language server's lanes). The app
``--http`` serves, in-process, over a real index; long searches block on an event, so what is
asserted is which searches could run, never how long anything took."""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

import anyio
import pytest

pytest.importorskip("mcp", reason="the MCP suite needs the optional extra fisk-ls[mcp]")

import httpx

from fisk_ls.agent.mcp import MAX_CONCURRENT_LONG, MCP_PATH, build_server, http_app
from fisk_ls.agent.tool import NAME, KnowledgeTool
from fisk_ls.knowledge import SearchRequest, index_project, resolve_settings
from tests.support.waiting import HANG_GUARD

from .conftest import HEADERS
from .test_sessions import HOST, INITIALIZE

pytestmark = pytest.mark.anyio
LONG = " ".join(f"word{i}-pair{i}" for i in range(100))
VERSION = {"mcp-protocol-version": "2025-06-18"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class GatedTool:
    """The real tool; long queries first wait for ``release``."""

    def __init__(self, real: KnowledgeTool) -> None:
        self.real = real
        self.release = threading.Event()
        self.inside = threading.Semaphore(0)
        self.entered = 0

    def parse(self, raw: Mapping[str, Any], deadline: Any = None) -> SearchRequest:
        return self.real.parse(raw, deadline)

    def search(self, request: SearchRequest) -> dict[str, Any]:
        if request.long:
            self.entered += 1
            self.inside.release()
            assert self.release.wait(HANG_GUARD)
        return self.real.search(request)

    def close(self) -> None:
        self.real.close()


def _data(response: httpx.Response) -> dict[str, Any]:
    if response.headers.get("content-type", "").startswith("application/json"):
        return cast(dict[str, Any], response.json())
    lines = [ln[5:].strip() for ln in response.text.splitlines() if ln.startswith("data:")]
    return cast(dict[str, Any], json.loads(lines[-1]))


async def test_a_short_search_is_answered_while_long_ones_hold_their_lane(
    project: Path, store_base: Path
) -> None:
    settings = resolve_settings(cwd=project, store_base=store_base)
    index_project(settings)
    tool = GatedTool(KnowledgeTool(settings))
    app: Any = http_app(build_server(cast(KnowledgeTool, tool)), HOST, None)
    try:
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url=f"http://{HOST}:8080") as c:
                opened = await c.post(MCP_PATH, json=INITIALIZE, headers=HEADERS)
                headers = {**HEADERS, **VERSION, "mcp-session-id": opened.headers["mcp-session-id"]}
                note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
                assert (await c.post(MCP_PATH, json=note, headers=headers)).status_code == 202

                async def call(rid: int, query: str) -> dict[str, Any]:
                    body = {
                        "jsonrpc": "2.0",
                        "id": rid,
                        "method": "tools/call",
                        "params": {"name": NAME, "arguments": {"query": query}},
                    }
                    return _data(await c.post(MCP_PATH, json=body, headers=headers))

                longs: list[dict[str, Any]] = []
                async with anyio.create_task_group() as tg:
                    for i in range(6):

                        async def one(rid: int = 100 + i) -> None:
                            longs.append(await call(rid, LONG))

                        tg.start_soon(one)
                    for _ in range(MAX_CONCURRENT_LONG):  # the long lane is full
                        assert await anyio.to_thread.run_sync(
                            lambda: tool.inside.acquire(timeout=HANG_GUARD)
                        )
                    with anyio.fail_after(HANG_GUARD):
                        short = await call(1, "backpressure")
                    outcome = short["result"]["structuredContent"]
                    assert outcome["status"] == "ok" and outcome["results"]
                    assert tool.entered == MAX_CONCURRENT_LONG and not longs  # the rest queue
                    tool.release.set()
                assert len(longs) == 6 and all("result" in r for r in longs)
    finally:
        tool.release.set()
        tool.close()
