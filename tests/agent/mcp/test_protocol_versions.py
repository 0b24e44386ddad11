"""Both MCP protocol eras, negotiated, through the real `fisk-ai mcp` process and the official
SDK client of each: 2025-11-25 (the ``initialize`` handshake, HTTP sessions) and 2026-07-28 (no
handshake, ``server/discover``, stateless HTTP with no session id)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP suite needs the optional extra fisk-ls[mcp]")

import httpx

from fisk_ls.agent.mcp import MCP_PATH, build_server, http_app
from fisk_ls.agent.tool import NAME

from .conftest import HEADERS, error_text, http_server, initialize, outcome, stdio

pytestmark = pytest.mark.anyio
HOST = "127.0.0.1"
TOKEN = "a-test-token"

MODES = [("legacy", "2025-11-25"), ("2026-07-28", "2026-07-28"), ("auto", "2026-07-28")]
"""The client's ``mode`` and the protocol version it must end up speaking."""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize(("mode", "version"), MODES)
async def test_stdio_speaks_each_version(built: Path, mode: str, version: str) -> None:
    async with stdio(built, "--config", str(built / "agent.yaml"), mode=mode) as client:
        assert client.protocol_version == version
        assert [t.name for t in (await client.list_tools()).tools] == [NAME]
        res = outcome(await client.call_tool(NAME, {"query": "backpressure"}))
        assert res["status"] == "ok" and res["results"][0]["citation"].startswith("docs/")
        bad = await client.call_tool(NAME, {"query": "q", "top_k": 99})
        assert error_text(bad).startswith("invalid knowledge_search input")


@pytest.mark.parametrize(("mode", "version"), MODES)
async def test_http_speaks_each_version(
    built: Path, tmp_path: Path, mode: str, version: str
) -> None:
    with http_server(built, tmp_path) as server:
        async with server.client(mode=mode) as client:
            assert client.protocol_version == version
            assert [t.name for t in (await client.list_tools()).tools] == [NAME]
            res = outcome(await client.call_tool(NAME, {"query": "backpressure"}))
            assert res["status"] == "ok" and res["results"][0]["citation"].startswith("docs/")


MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "raw-http-test", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def modern(rid: int, method: str) -> tuple[dict[str, Any], dict[str, str]]:
    """A raw 2026-07-28 request and its headers (no session, the method named in a header)."""
    body = {"jsonrpc": "2.0", "id": rid, "method": method, "params": {"_meta": MODERN_META}}
    return body, {**HEADERS, "mcp-protocol-version": "2026-07-28", "mcp-method": method}


async def test_the_http_limits_hold_for_both_versions() -> None:
    """The app ``--http`` serves, in process, with a token and room for one session: a
    2026-07-28 request needs the token as a 2025-11-25 one does, opens no session (none is
    named in its reply) and so is answered while the one session's room is taken, when a
    second handshake is refused."""
    app: Any = http_app(build_server(None), HOST, TOKEN, max_sessions=1)
    async with app.app.router.lifespan_context(app.app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=f"http://{HOST}:8080") as c:
            body, headers = modern(1, "server/discover")
            refused = await c.post(MCP_PATH, json=body, headers=headers)
            assert refused.status_code == 401 and "resource_metadata" in refused.headers.get(
                "www-authenticate", ""
            )
            auth = {"authorization": f"Bearer {TOKEN}"}
            opened = await c.post(MCP_PATH, json=initialize(), headers={**HEADERS, **auth})
            assert opened.status_code == 200 and opened.headers.get("mcp-session-id")
            again = await c.post(MCP_PATH, json=initialize(), headers={**HEADERS, **auth})
            assert again.status_code == 503  # the one session's room is taken
            for rid, method in enumerate(["server/discover", "tools/list"] * 3, 2):
                body, headers = modern(rid, method)
                answer = await c.post(MCP_PATH, json=body, headers={**headers, **auth})
                assert answer.status_code == 200 and "mcp-session-id" not in answer.headers
                assert answer.json()["result"]["resultType"] == "complete"
                if method == "server/discover":
                    assert "2026-07-28" in answer.json()["result"]["supportedVersions"]
