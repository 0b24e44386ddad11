"""MCP: a search past the tool timeout is answered with the timeout's error *and stopped* (its
deadline is set, deadline.py), and the server answers other requests while a search runs. The
official SDK client, in process; the held search waits on its deadline's event, so what is
asserted is what was answered and that the search's thread ended, never how long anything took.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

import anyio
import pytest

pytest.importorskip("mcp", reason="the MCP suite needs the optional extra fisk-ls[mcp]")

from mcp import Client

from fisk_ls.agent.mcp import build_server
from fisk_ls.agent.tool import NAME, KnowledgeTool
from fisk_ls.knowledge import (
    Deadline,
    SearchCancelled,
    SearchRequest,
    index_project,
    resolve_settings,
)
from tests.support.waiting import HANG_GUARD

from .conftest import error_text, outcome

pytestmark = pytest.mark.anyio
HELD = "held search"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class HeldTool:
    """The real tool; the query ``HELD`` runs until its deadline is set (as a costly search
    stops at it), then raises as the core does."""

    def __init__(self, real: KnowledgeTool) -> None:
        self.real = real
        self.inside = threading.Event()
        self.ended = threading.Event()
        self.deadline: Deadline | None = None

    def parse(self, raw: Mapping[str, Any], deadline: Deadline | None = None) -> SearchRequest:
        return self.real.parse(raw, deadline)

    def search(self, request: SearchRequest) -> dict[str, Any]:
        if request.query != HELD:
            return self.real.search(request)
        deadline = request.deadline
        assert deadline is not None
        self.deadline = deadline
        self.inside.set()
        try:
            assert deadline.event.wait(HANG_GUARD)
            deadline.check()
            raise AssertionError("check() returned past the deadline")
        finally:
            self.ended.set()

    def close(self) -> None:
        self.real.close()


@pytest.fixture
def held(project: Path, store_base: Path) -> Any:
    settings = resolve_settings(cwd=project, store_base=store_base)
    index_project(settings)
    tool = HeldTool(KnowledgeTool(settings))
    yield tool
    tool.close()


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_search_past_the_timeout_is_answered_and_stopped(held: HeldTool, mode: str) -> None:
    server = build_server(cast(KnowledgeTool, held), timeout=0.5)
    async with Client(server, mode=mode) as client:
        async with anyio.create_task_group() as tg:
            answers: list[Any] = []

            async def costly() -> None:
                answers.append(await client.call_tool(NAME, {"query": HELD}))

            tg.start_soon(costly)
            assert await anyio.to_thread.run_sync(held.inside.wait, HANG_GUARD)
            # While it runs, the server answers other requests, searches included.
            assert [t.name for t in (await client.list_tools()).tools] == [NAME]
            found = outcome(await client.call_tool(NAME, {"query": "backpressure"}))
            assert found["status"] == "ok" and found["results"]
        assert "took longer than 0.5s" in error_text(answers[0])
    assert held.deadline is not None and held.deadline.expired()
    assert await anyio.to_thread.run_sync(held.ended.wait, HANG_GUARD)  # the thread ended


async def test_the_core_stops_a_real_search_at_the_deadline(held: HeldTool) -> None:
    """The real tool with a deadline already passed raises the core's SearchCancelled, which
    the server answers as its timeout."""
    gone = Deadline()
    gone.cancel()
    with pytest.raises(SearchCancelled):
        held.real.call({"query": "backpressure"}, gone)
