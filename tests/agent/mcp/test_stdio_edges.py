"""`fisk-ai mcp` over stdio at its edges, as raw lines (the SDK client never sends them): what
is not JSON, not JSON-RPC or sent before ``initialize`` is answered at once with the JSON-RPC
error; and the tool's output schema declares every key a real result carries."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fisk_ls.agent.stdio import StdioGate, undecodable
from fisk_ls.agent.tool import NAME, OUTPUT_SCHEMA

from .conftest import CLI, child_env, initialize, outcome, stdio, write_config

REPLY_GUARD = 30.0


class RawStdio:
    """`fisk-ai mcp` with stdin/stdout as lines; replies are read on a thread."""

    def __init__(self, cwd: Path) -> None:
        self.proc = subprocess.Popen(
            [*CLI, "mcp"],
            cwd=cwd,
            env=child_env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.lines: queue.Queue[dict[str, Any]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(json.loads(line))

    def send_line(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def send(self, message: Any) -> None:
        self.send_line(json.dumps(message).encode())

    def reply(self) -> dict[str, Any]:
        return self.lines.get(timeout=REPLY_GUARD)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(REPLY_GUARD)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture
def raw(kb: Path) -> Iterator[RawStdio]:
    server = RawStdio(kb)
    try:
        yield server
    finally:
        server.close()


def test_bad_lines_and_early_requests_are_answered_at_once(raw: RawStdio) -> None:
    """Each reply comes before the next line is sent: nothing is held back."""
    raw.send_line(b"not json {")
    assert raw.reply() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": "Parse error: the line is not valid JSON"},
    }
    for message, msg_id in (([], None), (42, None), ({"jsonrpc": "2.0", "id": 8}, 8)):
        raw.send(message)
        reply = raw.reply()
        assert reply["id"] == msg_id and reply["error"]["code"] == -32600, reply
    raw.send({"jsonrpc": "2.0", "id": "a", "method": 5})
    assert raw.reply()["error"]["code"] == -32600
    raw.send({"jsonrpc": "2.0", "id": 7, "method": "tools/list"})
    early = raw.reply()
    assert early["id"] == 7 and early["error"]["code"] == -32600, early
    assert "send initialize first" in early["error"]["message"]
    raw.send({"jsonrpc": "2.0", "id": 9, "method": "ping"})
    assert raw.reply() == {"jsonrpc": "2.0", "id": 9, "result": {}}
    raw.send(initialize())
    assert "result" in raw.reply()
    raw.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    raw.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    tools = raw.reply()
    assert tools["id"] == 2 and [t["name"] for t in tools["result"]["tools"]] == [NAME]
    raw.send_line(b"\xff\xfe")
    assert raw.reply()["error"]["code"] == -32700  # after initialize too


def test_a_request_pipelined_behind_initialize_is_served(raw: RawStdio) -> None:
    raw.send(initialize())
    raw.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    replies = {r["id"]: r for r in (raw.reply(), raw.reply())}
    assert "result" in replies[1] and "tools" in replies[2]["result"]


def test_a_failed_initialize_leaves_the_gate_closed() -> None:
    from mcp.shared.message import SessionMessage
    from mcp_types import JSONRPCError, JSONRPCRequest

    gate = StdioGate()
    init = JSONRPCRequest(jsonrpc="2.0", id=1, method="initialize", params={})
    assert gate.refusal(SessionMessage(init)) is None and gate.state == "pending"
    gate.saw_reply(undecodable(ValueError("x")))  # another id: no change
    assert gate.state == "pending"
    failed = JSONRPCError.model_validate(
        {"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "bad"}}
    )
    gate.saw_reply(failed)
    listed = JSONRPCRequest(jsonrpc="2.0", id=2, method="tools/list")
    refused = gate.refusal(SessionMessage(listed))
    assert refused is not None and refused.error.code == -32600


def undeclared(value: Any, schema: dict[str, Any], where: str = "$") -> list[str]:
    """The keys of ``value`` (recursively) that ``schema`` does not declare."""
    missing: list[str] = []
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        for key, item in value.items():
            if key not in properties:
                missing.append(f"{where}.{key}")
            else:
                missing += undeclared(item, properties[key], f"{where}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            missing += undeclared(item, schema.get("items", {}), f"{where}[{i}]")
    return missing


async def test_every_key_of_a_real_result_is_declared(built: Path) -> None:
    """A result with every optional key: ``found_by`` (``also``), ``context``, ``truncated``
    (a small budget) and ``note`` (no terms)."""
    calls: list[tuple[int | None, dict[str, Any]]] = [  # (budget in tokens, arguments)
        (None, {"query": "widget pipeline stage", "also": ["buffers frames"], "context": 1}),
        (400, {"query": "widget pipeline frames metrics", "top_k": 20}),
        (None, {"query": "?!"}),
    ]
    seen: set[str] = set()
    for budget, args in calls:
        write_config(built, max_injected_tokens=budget)
        async with stdio(built) as client:
            (tool,) = (await client.list_tools()).tools
            assert tool.output_schema == OUTPUT_SCHEMA
            result = outcome(await client.call_tool(NAME, args))
        assert undeclared(result, OUTPUT_SCHEMA) == [], args
        seen |= set(result)
        for item in result["results"]:
            seen |= {f"results.{key}" for key in item}
    wanted = {"note", "results.found_by", "results.context", "results.truncated"}
    assert wanted <= seen, seen


def test_undeclared_finds_a_key_the_schema_lacks() -> None:
    result = {"tier": "t", "status": "ok", "results": [{"citation": "a#1", "score": 1}]}
    assert undeclared(result, OUTPUT_SCHEMA) == ["$.results[0].score"]
