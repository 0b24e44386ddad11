"""``fisk-ai lsp``, ``--tcp``, ``--log-file``, and ``exit`` without ``shutdown``."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from fisk_ls.knowledge.location import zero_config_store
from fisk_ls.knowledge.lock import WriterLock
from tests.support.big_corpus import make_corpus
from tests.support.processes import processes_with
from tests.support.waiting import HANG_GUARD

from .conftest import command, copy_fixture, server_env, wait_indexed


async def start(cmd: list[str], base: Path, root: Path) -> LanguageClient:
    client = await ClientServerConfig(server_command=cmd, server_env=server_env(base)).start()
    assert isinstance(client, LanguageClient)
    await client.initialize_session(
        types.InitializeParams(capabilities=client_capabilities("neovim"), root_uri=root.as_uri())
    )
    return client


async def test_fisk_ai_lsp_with_log_file(tmp_path: Path) -> None:
    root = copy_fixture("basic", tmp_path / "basic")
    log = tmp_path / "server.log"
    cmd = [sys.executable, "-m", "fisk_ls.cli", "lsp", "--log-file", str(log)]
    client = await start(cmd, tmp_path, root)
    status = await wait_indexed(client)
    assert status["roots"][0]["documents"] == 4
    await client.shutdown_session()
    await client.stop()  # type: ignore[no-untyped-call]
    assert client._server is not None and client._server.returncode == 0
    assert "fisk_ls" in log.read_text()


async def test_exit_without_shutdown_still_ends_the_process(tmp_path: Path) -> None:
    root = copy_fixture("basic", tmp_path / "basic")
    client = await start([sys.executable, "-m", "fisk_ls.lsp"], tmp_path, root)
    await command(client, "fisk.knowledge.status")
    client.exit(None)
    assert client._server is not None
    assert await asyncio.wait_for(client._server.wait(), HANG_GUARD) == 1
    await client.stop()  # type: ignore[no-untyped-call]


def frame(payload: dict[str, Any]) -> bytes:
    body = json.dumps(payload).encode()
    return f"Content-Length: {len(body)}\r\n\r\n".encode() + body


async def read_message(reader: asyncio.StreamReader) -> dict[str, Any]:
    headers = await reader.readuntil(b"\r\n\r\n")
    length = int(headers.decode().split("Content-Length:")[1].split("\r\n")[0])
    message: dict[str, Any] = json.loads(await reader.readexactly(length))
    return message


TCP_TOKEN = "tcp-" + "5e1f0a9d3c" * 3


def _initialize(msg_id: int, token: str | None, root: Path | None = None) -> dict[str, Any]:
    options = {"watch": False} if token is None else {"watch": False, "token": token}
    params: dict[str, Any] = {"capabilities": {}, "initializationOptions": options}
    if root is not None:
        params["rootUri"] = root.as_uri()
    return {"jsonrpc": "2.0", "id": msg_id, "method": "initialize", "params": params}


async def _tcp_server(tmp_path: Path, *args: str) -> tuple[asyncio.subprocess.Process, int]:
    """``fisk-ls --tcp 127.0.0.1:0 --token-env`` and the port its listening line names."""
    env = server_env(tmp_path) | {"FISK_LS_TEST_TOKEN": TCP_TOKEN}
    server = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "fisk_ls.lsp", "--tcp", "127.0.0.1:0",
        "--token-env", "FISK_LS_TEST_TOKEN", *args,
        env=env, stdin=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert server.stderr is not None
    line = (await asyncio.wait_for(server.stderr.readline(), HANG_GUARD)).decode()
    assert "listening on 127.0.0.1:" in line, line
    return server, int(line.split("listening on 127.0.0.1:")[1].split(";")[0])


async def _refused(port: int, payload: bytes | None) -> dict[str, Any] | None:
    """Connect, send ``payload`` (None: nothing, just close): the error reply, if any, after
    which the server must have closed the connection."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        if payload is None:
            return None
        writer.write(payload)
        reply = await asyncio.wait_for(read_message(reader), HANG_GUARD)
        assert await asyncio.wait_for(reader.read(), HANG_GUARD) == b""  # closed by the server
        return reply
    finally:
        writer.close()


async def test_tcp(tmp_path: Path) -> None:
    """Connections without the token are refused and leave the server listening; the holder
    is served; while its session lasts another holder is refused; its exit ends the server."""
    root = copy_fixture("basic", tmp_path / "basic")
    server, port = await _tcp_server(tmp_path)
    try:
        assert await _refused(port, None) is None  # connect and vanish
        for payload in (
            frame(_initialize(1, None)),  # no token
            frame(_initialize(2, "wrong")),
            frame({"jsonrpc": "2.0", "id": 3, "method": "workspace/symbol", "params": {}}),
            b"Content-Length: 9\r\n\r\nnot json!",
        ):
            reply = await _refused(port, payload)
            assert reply is not None and reply["error"]["code"] == -32600, reply
            assert "initializationOptions.token" in reply["error"]["message"]
        assert reply is not None and reply["id"] is None and server.returncode is None

        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(frame(_initialize(1, TCP_TOKEN, root)))
        response = await asyncio.wait_for(read_message(reader), HANG_GUARD)
        assert response["id"] == 1
        commands = response["result"]["capabilities"]["executeCommandProvider"]["commands"]
        assert "fisk.knowledge.search" in commands
        writer.write(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        second = await _refused(port, frame(_initialize(1, TCP_TOKEN)))
        assert second is not None and "one client at a time" in second["error"]["message"]
        status = {"command": "fisk.knowledge.status", "arguments": []}
        writer.write(
            frame({"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand",
                   "params": status})
        )  # fmt: skip
        while (reply := await asyncio.wait_for(read_message(reader), HANG_GUARD)).get("id") != 2:
            pass
        assert reply is not None and reply["result"]["roots"][0]["root"] == str(root)
        writer.write(frame({"jsonrpc": "2.0", "id": 3, "method": "shutdown"}))
        while (await asyncio.wait_for(read_message(reader), HANG_GUARD)).get("id") != 3:
            pass
        writer.write(frame({"jsonrpc": "2.0", "method": "exit"}))
        await writer.drain()
        writer.close()
        assert await asyncio.wait_for(server.wait(), HANG_GUARD) == 0
        assert server.stderr is not None
        assert TCP_TOKEN not in (await server.stderr.read()).decode()
    finally:
        if server.returncode is None:
            server.kill()
            await server.wait()


@pytest.mark.parametrize(
    ("args", "env", "said"),
    [
        (["--tcp", "127.0.0.1:0"], {}, "--tcp needs a token"),
        (["--tcp", "127.0.0.1:0", "--token-env", "UNSET_VAR"], {}, "unset or empty"),
        (["--token-env", "X"], {"X": "y"}, "applies to --tcp only"),
    ],
)
def test_tcp_needs_a_token(args: list[str], env: dict[str, str], said: str, tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "fisk_ls.lsp", *args],
        env=server_env(tmp_path) | env,
        capture_output=True,
        text=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode != 0 and said in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("address", ["0.0.0.0:0", "[::]:0", "192.0.2.1:0", "example.org:1"])
def test_tcp_listens_on_loopback_only(address: str, tmp_path: Path) -> None:
    """Another user read a root-only file through a port bound to every address (before the
    token): only loopback, even with a token."""
    proc = subprocess.run(
        [sys.executable, "-m", "fisk_ls.lsp", "--tcp", address, "--token-env", "T"],
        env=server_env(tmp_path) | {"T": "secret"},
        capture_output=True,
        text=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode != 0 and "loopback only" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


async def test_sigint_closes_the_stores_and_exits(tmp_path: Path) -> None:
    root = copy_fixture("basic", tmp_path / "basic")
    server = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "fisk_ls.lsp",
        env=server_env(tmp_path), stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert server.stdin is not None and server.stdout is not None and server.stderr is not None
    try:
        init: dict[str, Any] = {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}
        server.stdin.write(
            frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
        )
        server.stdin.write(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        status = {"command": "fisk.knowledge.status", "arguments": []}
        request = {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand"}
        server.stdin.write(frame({**request, "params": status}))
        await server.stdin.drain()
        while (await asyncio.wait_for(read_message(server.stdout), HANG_GUARD)).get("id") != 2:
            pass  # the projects are open
        server.send_signal(signal.SIGINT)
        assert await asyncio.wait_for(server.wait(), HANG_GUARD) == 130
        err = (await server.stderr.read()).decode()
        assert "interrupted" in err and "Traceback" not in err, err
    finally:
        if server.returncode is None:
            server.kill()
            await server.wait()
    store = zero_config_store(root, tmp_path / "stores")
    with WriterLock(store):  # released: the server closed its store
        pass


async def test_client_vanishing_mid_index_leaves_nothing_behind(tmp_path: Path) -> None:
    root = make_corpus(tmp_path / "big", files=600)
    env = server_env(tmp_path)
    server = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "fisk_ls.lsp", env=env,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert server.stdin is not None and server.stdout is not None
    capabilities = {"window": {"workDoneProgress": True}}
    init = {"capabilities": capabilities, "rootUri": root.as_uri(), "processId": None}
    server.stdin.write(frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}))
    server.stdin.write(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
    try:
        while (message := await asyncio.wait_for(read_message(server.stdout), HANG_GUARD)).get(
            "method"
        ) != "$/progress":  # the first progress message comes once the run has begun
            if message.get("method") == "window/workDoneProgress/create":
                server.stdin.write(frame({"jsonrpc": "2.0", "id": message["id"], "result": None}))
        server.stdin.close()
        await asyncio.wait_for(server.wait(), HANG_GUARD)
    finally:
        if server.returncode is None:
            server.kill()
            await server.wait()
    assert not processes_with(env["FISK_AI_STORE_DIR"])
