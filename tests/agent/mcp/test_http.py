"""`fisk-ai mcp --http`: streamable HTTP on loopback by default; explicit hosts need a token."""

from __future__ import annotations

import contextlib
import re
import select
import socket
import sys
import threading
from pathlib import Path
from urllib.parse import urlsplit

import anyio
import httpx
import pytest

from fisk_ls.agent.tool import NAME
from tests.support.waiting import HANG_GUARD

from .conftest import HEADERS, child_env, error_text, http_server, initialize, outcome, run_cli

TOKEN = "tok-" + "7f3a9c1e5b" * 3
INIT = initialize()


def _listen_addresses(port: int) -> set[str]:
    """Local addresses of LISTEN sockets on ``port`` (Linux /proc/net/tcp{,6})."""
    found: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            local, state = line.split()[1], line.split()[3]
            addr, _, hexport = local.partition(":")
            if state == "0A" and int(hexport, 16) == port:
                found.add(addr)
    return found


async def test_loopback_by_default_and_serves_both_protocol_eras(
    built: Path, tmp_path: Path
) -> None:
    with http_server(built, tmp_path) as server:
        parts = urlsplit(server.url)
        assert parts.hostname == "127.0.0.1" and parts.path == "/mcp"
        if sys.platform.startswith("linux"):
            assert _listen_addresses(parts.port or 0) == {"0100007F"}  # 127.0.0.1 only
        for mode in ("auto", "legacy"):
            async with server.client(mode=mode) as client:
                assert [t.name for t in (await client.list_tools()).tools] == [NAME]
                res = outcome(await client.call_tool(NAME, {"query": "backpressure"}))
                assert res["status"] == "ok" and res["results"][0]["citation"].startswith("docs/")
                bad = await client.call_tool(NAME, {"query": "q", "top_k": 99})
                assert error_text(bad).startswith("invalid knowledge_search input")
        # Concurrent calls over HTTP, from two sessions at once.
        statuses: list[str] = []

        async def session(queries: list[str]) -> None:
            async with server.client() as client, anyio.create_task_group() as tg:
                for q in queries:

                    async def one(q: str = q) -> None:
                        statuses.append(
                            outcome(await client.call_tool(NAME, {"query": q}))["status"]
                        )

                    tg.start_soon(one)

        async with anyio.create_task_group() as tg:
            tg.start_soon(session, ["retries", "broker restart"] * 4)
            tg.start_soon(session, ["widget frames", "backpressure"] * 4)
        assert statuses == ["ok"] * 16


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (["--host", "0.0.0.0"], {}, "bearer token is required"),
        (["--host", "0.0.0.0", "--token-env", "FISK_TEST_TOKEN"], {}, "unset or empty"),
        (["--host", "::"], {}, "bearer token is required"),
    ],
)
def test_explicit_host_without_token_refuses_to_start(
    built: Path, args: list[str], env: dict[str, str], message: str
) -> None:
    proc = run_cli(built, "mcp", "--http", "--port", "0", *args, env=child_env(**env), timeout=30)
    assert proc.returncode != 0 and message in proc.stderr
    assert "listening on" not in proc.stderr and "Traceback" not in proc.stderr


def test_host_and_token_need_http(built: Path) -> None:
    proc = run_cli(built, "mcp", "--host", "127.0.0.1", timeout=30)
    assert proc.returncode != 0 and "--http" in proc.stderr


async def test_token_required_when_host_given(built: Path, tmp_path: Path) -> None:
    env = child_env(FISK_TEST_TOKEN=TOKEN)
    args = ("--host", "127.0.0.1", "--token-env", "FISK_TEST_TOKEN")
    with http_server(built, tmp_path, *args, env=env) as server:
        async with httpx.AsyncClient(timeout=10) as http:
            for auth in (None, "Bearer wrong", f"Basic {TOKEN}", f"Bearer {TOKEN}x", "Bearer"):
                headers = dict(HEADERS)
                if auth is not None:
                    headers["Authorization"] = auth
                resp = await http.post(server.url, json=INIT, headers=headers)
                assert resp.status_code == 401, auth
                assert resp.headers["www-authenticate"].startswith("Bearer")
            ok = await http.post(
                server.url, json=INIT, headers={**HEADERS, "Authorization": f"Bearer {TOKEN}"}
            )
            assert ok.status_code == 200
        async with server.client(token=TOKEN) as client:
            assert [t.name for t in (await client.list_tools()).tools] == [NAME]
            assert outcome(await client.call_tool(NAME, {"query": "retries"}))["status"] == "ok"
        stderr = server.stderr
    assert "WARNING: --host 127.0.0.1" in stderr and "bearer token required" in stderr
    assert TOKEN not in stderr


def test_port_in_use_is_a_clear_error(built: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        proc = run_cli(built, "mcp", "--http", "--port", str(port), timeout=30)
    assert proc.returncode != 0 and f"cannot listen on 127.0.0.1:{port}" in proc.stderr


async def test_half_open_connections_cannot_starve_clients(built: Path, tmp_path: Path) -> None:
    """250 connections that send only a request line are closed by the server (header timeout,
    connection cap); a real client is served afterwards. Bounded waits are hang guards."""
    from fisk_ls.agent.http_limits import HEADER_TIMEOUT

    with http_server(built, tmp_path) as server:
        parts = urlsplit(server.url)
        socks = []
        for _ in range(250):
            s = socket.create_connection((parts.hostname, parts.port or 0), timeout=5)
            s.sendall(b"POST /mcp HTTP/1.1\r\n")
            socks.append(s)
        try:
            for s in socks:  # each one is closed by the server, none left hanging
                s.settimeout(HEADER_TIMEOUT * 6)
                try:
                    while s.recv(1024):  # whatever it answers, it must then close
                        pass
                except ConnectionResetError:
                    pass
                except TimeoutError:
                    pytest.fail("a half-open connection was kept open")
        finally:
            for s in socks:
                s.close()
        async with server.client() as client:
            res = outcome(await client.call_tool(NAME, {"query": "backpressure"}))
            assert res["status"] == "ok"


class HalfOpen:
    """``count`` connections that send part of a request head and never finish it, each
    re-opened as soon as the server closes it, until stopped (an attacker without the token)."""

    def __init__(self, host: str, port: int, count: int) -> None:
        self.address = (host, port)
        self.socks = [self._open() for _ in range(count)]
        self.stop = threading.Event()
        self.reopened = 0
        self.thread = threading.Thread(target=self._keep_open, daemon=True)
        self.thread.start()

    def _open(self) -> socket.socket:
        s = socket.create_connection(self.address, timeout=5)
        s.sendall(b"POST /mcp HTTP/1.1\r\nHost: x\r\n")
        return s

    def _keep_open(self) -> None:
        while not self.stop.is_set():
            readable, _, _ = select.select(self.socks, [], [], 0.05)
            for s in readable:  # readable: the server closed it (or answered): re-open
                self.socks.remove(s)
                s.close()
                with contextlib.suppress(OSError):
                    self.socks.append(self._open())
                    self.reopened += 1

    def close(self) -> None:
        self.stop.set()
        self.thread.join(HANG_GUARD)
        for s in self.socks:
            s.close()


def test_half_open_connections_without_the_token_leave_room_for_its_holder(
    built: Path, tmp_path: Path
) -> None:
    """70 half-open connections re-opened as fast as they are closed let 2 of 50 initializes
    through when new connections were refused at the cap; a waiting connection now gives up
    its room to a new one."""
    env = child_env(FISK_TEST_TOKEN=TOKEN)
    args = ("--host", "127.0.0.1", "--token-env", "FISK_TEST_TOKEN")
    with http_server(built, tmp_path, *args, env=env) as server:
        parts = urlsplit(server.url)
        attack = HalfOpen(parts.hostname or "", parts.port or 0, 70)
        ok = 0
        try:
            headers = {**HEADERS, "Authorization": f"Bearer {TOKEN}", "Connection": "close"}
            for _ in range(50):
                # a new connection each time
                with httpx.Client(timeout=10) as http, contextlib.suppress(httpx.HTTPError):
                    ok += http.post(server.url, json=INIT, headers=headers).status_code == 200
        finally:
            attack.close()
    assert ok >= 40, f"{ok} of 50 initializes answered"


async def test_no_event_stream_holds_a_connection(built: Path, tmp_path: Path) -> None:
    """GET /mcp answers 405 (the transport allows it for a server that sends nothing
    unprompted): 64 idle streams on valid sessions kept every new client out."""
    with http_server(built, tmp_path) as server:
        async with httpx.AsyncClient(timeout=10) as http:
            init = await http.post(server.url, json=INIT, headers=HEADERS)
            session = {
                **HEADERS,
                "mcp-session-id": init.headers["mcp-session-id"],
                "mcp-protocol-version": "2025-11-25",
            }
            stream = await http.get(server.url, headers=session)
            assert stream.status_code == 405 and stream.headers["allow"] == "POST, DELETE"
        async with server.client(mode="legacy") as client:  # the SDK client copes with it
            res = outcome(await client.call_tool(NAME, {"query": "backpressure"}))
            assert res["status"] == "ok"


async def test_401_points_at_resource_metadata_and_closes(built: Path, tmp_path: Path) -> None:
    """As the MCP authorization specification asks (RFC 9728): the 401 names the metadata,
    which lists no authorization server (the token is a header the user sets)."""
    env = child_env(FISK_TEST_TOKEN=TOKEN)
    args = ("--host", "127.0.0.1", "--token-env", "FISK_TEST_TOKEN")
    with http_server(built, tmp_path, *args, env=env) as server:
        async with httpx.AsyncClient(timeout=10) as http:
            bare = await http.post(server.url, json=INIT, headers=HEADERS)
            wrong = await http.post(
                server.url, json=INIT, headers={**HEADERS, "Authorization": "Bearer nope"}
            )
            for resp in (bare, wrong):
                assert resp.status_code == 401 and resp.headers["connection"] == "close"
            challenge = bare.headers["www-authenticate"]
            assert "error=" not in challenge  # no credentials sent: no error code (RFC 6750)
            assert 'error="invalid_token"' in wrong.headers["www-authenticate"]
            url = re.search(r'resource_metadata="([^"]+)"', challenge)
            assert url is not None
            metadata = (await http.get(url.group(1))).json()
    assert metadata["resource"] == server.url
    assert metadata["authorization_servers"] == []
    assert metadata["bearer_methods_supported"] == ["header"]


def test_a_sessions_calls_are_answered_as_json_bodies_with_several_in_flight(
    built: Path, tmp_path: Path
) -> None:
    """Each call's reply is one JSON body (no event stream per call), and a session's calls
    sent together on separate connections are all answered, each with its own id."""
    with http_server(built, tmp_path) as server, httpx.Client(timeout=30) as http:
        response = http.post(server.url, json=INIT, headers=HEADERS)
        assert response.headers["content-type"].startswith("application/json")
        headers = {
            **HEADERS,
            "mcp-session-id": response.headers["mcp-session-id"],
            "mcp-protocol-version": "2025-11-25",
        }
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert http.post(server.url, json=initialized, headers=headers).status_code == 202
        queries = ["retries", "broker restart", "widget frames", "backpressure"] * 2
        answers: dict[int, httpx.Response] = {}

        def call(i: int, q: str) -> None:
            with httpx.Client(timeout=30) as own:
                request = {
                    "jsonrpc": "2.0",
                    "id": i,
                    "method": "tools/call",
                    "params": {"name": NAME, "arguments": {"query": q}},
                }
                answers[i] = own.post(server.url, json=request, headers=headers)

        threads = [threading.Thread(target=call, args=(i, q)) for i, q in enumerate(queries)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(answers) == list(range(len(queries)))
        for i, r in answers.items():
            assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
            message = r.json()
            assert message["id"] == i and message["result"]["structuredContent"]["status"] == "ok"
