"""MCP over HTTP against slow bodies: a request body has a deadline that dribbling does not
extend, connections still receiving a body give way to new ones, and warnings are throttled.

Real sockets on 127.0.0.1: the real `fisk-ai mcp --http` process for the cap, an in-process
uvicorn with ``GuardedH11`` and a short body deadline for the deadline itself (the test waits
for the server to close the connection, an event; the bound is a hang guard). The throttle
runs on an injected clock."""

from __future__ import annotations

import logging
import select
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

pytest.importorskip("uvicorn")

import uvicorn

from fisk_ls.agent.http_limits import MAX_PER_CLIENT, GuardedH11, LogThrottle
from fisk_ls.agent.tool import NAME
from tests.support.waiting import HANG_GUARD

from .conftest import http_server, outcome


def _dribbler(host: str, port: int) -> socket.socket:
    """A connection that sent a request head and one byte of its 1,000-byte body."""
    s = socket.create_connection((host, port), timeout=5)
    s.sendall(
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{"
    )
    return s


async def test_dribbling_bodies_do_not_keep_a_client_out(built: Path, tmp_path: Path) -> None:
    """As many connections as one address may hold, each with a body still arriving: a real
    client from the same address is served (it was refused for as long as they went on), and
    no line is written per connection."""
    with http_server(built, tmp_path) as server:
        parts = urlsplit(server.url)
        host, port = parts.hostname or "127.0.0.1", parts.port or 0
        socks = [_dribbler(host, port) for _ in range(MAX_PER_CLIENT)]
        try:
            async with server.client() as client:
                res = outcome(await client.call_tool(NAME, {"query": "backpressure"}))
                assert res["status"] == "ok" and res["results"]
        finally:
            for s in socks:
                s.close()
        assert "refusing a connection" not in server.stderr, server.stderr


class QuickDeadlines(GuardedH11):
    header_timeout = 60.0
    body_timeout = 0.2


async def _echo(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Reads the whole body and answers 200 with it."""
    body, more = b"", True
    while more:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
        body += message.get("body", b"")
        more = message.get("more_body", False)
    headers = [(b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


@pytest.fixture
def quick_server() -> Iterator[tuple[str, int]]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    config = uvicorn.Config(
        _echo, http=QuickDeadlines, log_config=None, lifespan="off", access_log=False
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        yield sock.getsockname()[:2]
    finally:
        server.should_exit = True
        thread.join(HANG_GUARD)
        sock.close()


def _closed_while_dribbling(s: socket.socket) -> bytes:
    """Send a body byte at a time until the server closes the connection; what it sent."""
    got = b""
    s.setblocking(False)
    for _ in range(int(HANG_GUARD / 0.05)):
        try:
            s.send(b" ")
        except OSError:
            return got
        readable, _, _ = select.select([s], [], [], 0.05)
        if readable:
            try:
                chunk = s.recv(4096)
            except OSError:
                return got
            if not chunk:
                return got
            got += chunk
    pytest.fail("the server kept a connection whose body never arrived")


def test_a_dribbled_body_is_cut_off_at_its_deadline(quick_server: tuple[str, int]) -> None:
    host, port = quick_server
    slow = socket.create_connection((host, port), timeout=5)
    try:
        slow.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n")
        assert b"200" not in _closed_while_dribbling(slow)  # closed, never answered
    finally:
        slow.close()
    with socket.create_connection((host, port), timeout=HANG_GUARD) as whole:
        whole.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
        assert whole.recv(4096).startswith(b"HTTP/1.1 200")


def _record(msg: str, *args: Any, level: int = logging.WARNING) -> logging.LogRecord:
    return logging.LogRecord("fisk_ls.agent.http_limits", level, __file__, 1, msg, args, None)


def test_warnings_are_throttled_with_a_count_of_those_left_out() -> None:
    now = [100.0]
    throttle = LogThrottle(interval=10.0, clock=lambda: now[0])
    refusal = "refusing a connection from %s: %d open, all busy with requests"
    assert throttle.filter(_record(refusal, "127.0.0.1", 255))
    passed = [throttle.filter(_record(refusal, "127.0.0.1", 255)) for _ in range(1800)]
    assert not any(passed)
    assert throttle.filter(_record("another kind of warning"))  # throttled per kind
    assert throttle.filter(_record(refusal, "127.0.0.1", 1, level=logging.INFO))  # not throttled
    now[0] += 10.0
    record = _record(refusal, "127.0.0.1", 255)
    assert throttle.filter(record)
    assert record.getMessage() == (
        "refusing a connection from 127.0.0.1: 255 open, all busy with requests "
        "(1800 more like this in the 10 s before, not shown)"
    )
    now[0] += 10.0
    quiet = _record(refusal, "127.0.0.1", 3)
    assert throttle.filter(quiet) and "not shown" not in quiet.getMessage()
