"""Tool errors as the MCP specification says: an unknown tool is a JSON-RPC protocol error
(-32602) in every version; invalid arguments are one too for a session of 2025-06-18 (or
older), and a tool execution error (``isError``, which the model can correct) from 2025-11-25
on. Spoken in raw JSON-RPC over the real `fisk-ai mcp --http`, so each version is chosen."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from fisk_ls.agent.tool import NAME

from .conftest import HEADERS, http_server, initialize


def _message(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC message of a response, sent as JSON or as one server-sent event."""
    assert response.status_code == 200, response.text
    if response.headers["content-type"].startswith("text/event-stream"):
        data = [line[5:] for line in response.text.splitlines() if line.startswith("data:")]
        decoded: dict[str, Any] = json.loads(data[-1])
        return decoded
    decoded = response.json()
    return decoded


class Session:
    def __init__(self, http: httpx.Client, url: str, version: str) -> None:
        self.http, self.url, self.version = http, url, version
        response = http.post(url, json=initialize(version), headers=HEADERS)
        assert _message(response)["result"]["protocolVersion"] == version
        self.headers = {
            **HEADERS,
            "mcp-session-id": response.headers["mcp-session-id"],
            "mcp-protocol-version": version,
        }
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        http.post(url, json=initialized, headers=self.headers)

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        request = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments},
        }
        return _message(self.http.post(self.url, json=request, headers=self.headers))


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
def test_unknown_tools_and_invalid_arguments_by_protocol_version(
    built: Path, tmp_path: Path, version: str
) -> None:
    with http_server(built, tmp_path) as server, httpx.Client(timeout=30) as http:
        session = Session(http, server.url, version)
        unknown = session.call("frobnicate", {"query": "x"})
        assert unknown["error"]["code"] == -32602, unknown
        assert unknown["error"]["message"] == "Unknown tool: frobnicate"
        bad = session.call(NAME, {"query": "q", "top_k": 99})
        if version == "2025-06-18":
            assert bad["error"]["code"] == -32602, bad
            assert bad["error"]["message"].startswith("invalid knowledge_search input")
        else:
            assert bad["result"]["isError"] is True, bad
            assert bad["result"]["content"][0]["text"].startswith("invalid knowledge_search input")
        ok = session.call(NAME, {"query": "backpressure"})
        assert ok["result"]["isError"] is False
        stderr = server.stderr
    assert "Traceback" not in stderr, stderr
