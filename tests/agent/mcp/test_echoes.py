"""A huge value in every argument of knowledge_search (and as a tool's name) gets a short answer
(under 2 KB) that says what is wrong: 10 MB over stdio; over `fisk-ai mcp --http` the most a
request body may be (the SDK answers a bigger one with a short 413), in both ways the
specification has for invalid arguments."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from mcp.shared.exceptions import MCPError

from fisk_ls.agent.tool import NAME

from .conftest import error_text, http_server, outcome, stdio
from .test_errors import Session


def cases(big: str) -> list[dict[str, Any]]:
    return [
        {"query": big},
        {"query": "x", "top_k": big},
        {"query": "x", "also": big},
        {"query": "x", "also": [big]},
        {"query": "x", "paths": [big]},
        {"query": "x", "paths": big},
        {"query": "x", "tags": [big]},
        {"query": "x", "context": big},
        {"query": "x", big: 1},
    ]


def _short(text: str) -> None:
    assert len(text.encode()) < 2048, text[:500]


async def test_a_10_mb_argument_over_stdio_gets_a_short_answer(built: Path) -> None:
    big = "x" * 10_000_000
    async with stdio(built) as client:
        for arguments in cases(big):
            text = error_text(await client.call_tool(NAME, arguments))
            _short(text)
            assert text.startswith("invalid knowledge_search input"), text
        with pytest.raises(MCPError) as caught:
            await client.call_tool(big, {"query": "x"})
        _short(str(caught.value))
        assert outcome(await client.call_tool(NAME, {"query": "retries"}))["status"] == "ok"


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
def test_a_huge_argument_over_http_gets_a_short_answer(
    built: Path, tmp_path: Path, version: str
) -> None:
    big = "x" * (DEFAULT_MAX_REQUEST_BODY_SIZE - 1000)
    with http_server(built, tmp_path) as server, httpx.Client(timeout=120) as http:
        session = Session(http, server.url, version)
        for arguments in [*cases(big), None]:
            if arguments is None:
                reply = session.call(big, {"query": "x"})  # an unknown tool's name
            else:
                reply = session.call(NAME, arguments)
            shown = json.dumps(reply)
            _short(shown)
            if "error" in reply:
                message = reply["error"]["message"]
            else:
                assert reply["result"]["isError"] is True, shown
                message = reply["result"]["content"][0]["text"]
            assert "\n" not in message
            assert arguments is None or "invalid knowledge_search input" in message, message
        too_big = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": NAME}}
        too_big["params"]["arguments"] = {"query": "x" * 10_000_000}  # type: ignore[index]
        refused = http.post(server.url, json=too_big, headers=session.headers)
        assert refused.status_code == 413 and len(refused.content) < 2048
        ok = session.call(NAME, {"query": "backpressure"})
        assert ok["result"]["isError"] is False
        stderr = server.stderr
    assert "Traceback" not in stderr, stderr[-2000:]
    assert len(stderr) < 20_000, stderr[:2000]
