"""MCP over HTTP: sessions cannot pile up (issue 17: 2,000 sessions took the server from 76 to
154 MB). The app ``fisk-ai mcp --http`` serves (``http_app``), in-process with short limits: an
idle session expires (its id then answers 404 and its room is free again), and sessions beyond
the cap are refused with 503 while the open ones keep working. Expiry is waited on through the
SDK's own log record of it (a hang guard bounds the wait), never with a fixed sleep."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP suite needs the optional extra fisk-ls[mcp]")

import httpx

from fisk_ls.agent import http_limits
from fisk_ls.agent.mcp import MCP_PATH, build_server, http_app
from tests.support.waiting import wait_until_async

from .conftest import HEADERS, initialize

pytestmark = pytest.mark.anyio
HOST = "127.0.0.1"
INITIALIZE = initialize("2025-06-18")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@asynccontextmanager
async def serving(session_idle: float, max_sessions: int) -> AsyncIterator[httpx.AsyncClient]:
    app: Any = http_app(
        build_server(None), HOST, None, session_idle=session_idle, max_sessions=max_sessions
    )
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=f"http://{HOST}:8080") as c:
            yield c


async def open_session(client: httpx.AsyncClient) -> httpx.Response:
    return await client.post(MCP_PATH, json=INITIALIZE, headers=HEADERS)


async def ping(client: httpx.AsyncClient, session: str) -> int:
    response = await client.post(
        MCP_PATH,
        json={"jsonrpc": "2.0", "id": 2, "method": "ping"},
        headers={**HEADERS, "mcp-session-id": session, "mcp-protocol-version": "2025-06-18"},
    )
    return response.status_code


async def expired(caplog: pytest.LogCaptureFixture, session: str) -> None:
    async def logged() -> bool:
        return any(f"Session {session} idle timeout" in r.getMessage() for r in caplog.records)

    await wait_until_async(logged)


async def test_an_idle_session_expires_and_frees_its_room(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="mcp.server.streamable_http_manager")
    async with serving(session_idle=0.5, max_sessions=1) as client:
        first = await open_session(client)
        assert first.status_code == 200, first.text
        session = first.headers["mcp-session-id"]
        assert await ping(client, session) == 200  # alive while used
        assert (await open_session(client)).status_code == 503  # the one room is taken
        await expired(caplog, session)
        assert await ping(client, session) == 404  # gone: the client must initialize again
        again = await open_session(client)
        assert again.status_code == 200 and again.headers["mcp-session-id"] != session


async def test_sessions_beyond_the_cap_are_refused_and_the_open_ones_keep_working() -> None:
    async with serving(session_idle=600.0, max_sessions=3) as client:
        answers = [await open_session(client) for _ in range(8)]
        codes = [a.status_code for a in answers]
        assert codes == [200, 200, 200, 503, 503, 503, 503, 503]
        for a in answers[:3]:
            assert await ping(client, a.headers["mcp-session-id"]) == 200


def test_the_served_limits_are_finite() -> None:
    """What ``--http`` serves by default: sessions expire and are capped."""
    assert 0 < http_limits.SESSION_IDLE_SECONDS <= 3600
    assert 0 < http_limits.MAX_SESSIONS <= 1000
