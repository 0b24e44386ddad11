"""The MCP server's stdio transport, with the replies JSON-RPC asks for at its edges.

The SDK's ``stdio_server`` drops a line it cannot decode without a word (the client waits for a
reply that never comes) and answers a request sent before ``initialize`` with -32602 "Invalid
request parameters", which sends its author looking at the params. Between that transport and
the server, ``StdioGate`` answers instead, at once:

- a line that is not JSON: -32700 Parse error (``id`` null);
- JSON that is not a JSON-RPC 2.0 message (a list, a number, an id with no method, a method
  that is not a string): -32600 Invalid Request, with the message's id when it has one;
- a request other than ``initialize`` and ``ping`` before ``initialize`` was answered:
  -32600 Invalid Request saying to send ``initialize`` first.

A request pipelined behind ``initialize`` (sent before its reply arrived) is passed on, as the
SDK serves ``initialize`` first; so are requests of the 2026-07-28 protocol, which has no
handshake (their ``_meta`` names the protocol version).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Literal

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import (
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
)
from pydantic import ValidationError

log = logging.getLogger("fisk_ls.mcp.stdio")

EXEMPT = frozenset({"initialize", "ping"})
"""Requests served before ``initialize`` was answered (the specification allows ``ping``)."""
MODERN_META_KEY = "io.modelcontextprotocol/protocolVersion"
"""The ``_meta`` key of a 2026-07-28 request, a protocol version without a handshake."""

Inbound = SessionMessage | Exception


def _error(msg_id: Any, code: int, message: str) -> JSONRPCError:
    return JSONRPCError(jsonrpc="2.0", id=msg_id, error=ErrorData(code=code, message=message))


def _id_of(exc: ValidationError) -> str | int | None:
    """The id of a JSON object that is not a JSON-RPC message, when it has a usable one."""
    for error in exc.errors():
        given = error.get("input")
        if isinstance(given, Mapping):
            msg_id = given.get("id")
            if isinstance(msg_id, str | int) and not isinstance(msg_id, bool):
                return msg_id
    return None


def undecodable(exc: Exception) -> JSONRPCError:
    """The reply to a line the transport could not read as a JSON-RPC message."""
    if isinstance(exc, ValidationError):
        if any(e.get("type") == "json_invalid" for e in exc.errors()):
            return _error(None, PARSE_ERROR, "Parse error: the line is not valid JSON")
        return _error(
            _id_of(exc),
            INVALID_REQUEST,
            'Invalid Request: not a JSON-RPC 2.0 message (one object with "jsonrpc": "2.0" '
            "and a string method, or a result or error)",
        )
    return _error(None, PARSE_ERROR, f"Parse error: {type(exc).__name__}")


def _modern(params: Mapping[str, Any] | None) -> bool:
    meta = params.get("_meta") if params else None
    return isinstance(meta, Mapping) and MODERN_META_KEY in meta


class StdioGate:
    """What reaches the server: answers what it should not see (``refusal``) and follows the
    handshake from both sides (``saw_reply``: was ``initialize`` answered with a result?)."""

    def __init__(self) -> None:
        self.state: Literal["waiting", "pending", "open"] = "waiting"
        self._initialize_id: Any = None

    def refusal(self, item: Inbound) -> JSONRPCError | None:
        """The error to answer ``item`` with, or None to pass it to the server."""
        if isinstance(item, Exception):
            return undecodable(item)
        message = item.message
        if isinstance(message, JSONRPCNotification):
            if message.method == "notifications/initialized" and self.state == "waiting":
                self.state = "open"  # the SDK lets a bare one open the session too
            return None
        if not isinstance(message, JSONRPCRequest):
            return None
        if message.method == "initialize":
            if self.state == "waiting":
                self.state, self._initialize_id = "pending", message.id
            return None
        if self.state != "waiting" or message.method in EXEMPT or _modern(message.params):
            return None
        method = message.method if len(message.method) <= 100 else message.method[:100] + "…"
        return _error(
            message.id,
            INVALID_REQUEST,
            f"Invalid Request: {method} before initialize; send initialize first",
        )

    def saw_reply(self, message: JSONRPCMessage) -> None:
        if self.state != "pending" or not isinstance(message, JSONRPCResponse | JSONRPCError):
            return
        if message.id == self._initialize_id:
            self.state = "open" if isinstance(message, JSONRPCResponse) else "waiting"


async def relay_inbound(
    gate: StdioGate,
    wire: Any,
    to_server: MemoryObjectSendStream[Inbound],
    replies: MemoryObjectSendStream[SessionMessage],
) -> None:
    """Client → server, answering what the gate refuses; closes both streams at the end."""
    async with to_server, replies:
        try:
            async for item in wire:
                refused = gate.refusal(item)
                if refused is None:
                    await to_server.send(item)
                else:
                    log.debug("answered %s", refused.error.message)
                    await replies.send(SessionMessage(refused))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass  # the server is gone


async def relay_outbound(
    gate: StdioGate, from_server: MemoryObjectReceiveStream[SessionMessage], wire: Any
) -> None:
    """Server → client, watching for the reply to ``initialize``; closes the wire at the end."""
    try:
        async with from_server:
            async for item in from_server:
                gate.saw_reply(item.message)
                await wire.send(item)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
        pass  # the client is gone
    finally:
        await wire.aclose()


async def serve_stdio(server: Server[Any]) -> None:
    """Run ``server`` on stdin/stdout until the client closes stdin."""
    async with stdio_server() as (wire_in, wire_out):
        gate = StdioGate()
        to_server, server_in = anyio.create_memory_object_stream[Inbound](0)
        server_out, from_server = anyio.create_memory_object_stream[SessionMessage](0)
        async with anyio.create_task_group() as tg:
            tg.start_soon(relay_inbound, gate, wire_in, to_server, server_out.clone())
            tg.start_soon(relay_outbound, gate, from_server, wire_out)
            await server.run(server_in, server_out, server.create_initialization_options())
