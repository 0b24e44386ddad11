"""``fisk-ai lsp``, ``--tcp``, ``--log-file``, and ``exit`` without ``shutdown``."""

from __future__ import annotations

import asyncio
import json
import signal
import socket
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
    await client.stop()
    assert client._server is not None and client._server.returncode == 0
    assert "fisk_ls" in log.read_text()


async def test_exit_without_shutdown_still_ends_the_process(tmp_path: Path) -> None:
    root = copy_fixture("basic", tmp_path / "basic")
    client = await start([sys.executable, "-m", "fisk_ls.lsp"], tmp_path, root)
    await command(client, "fisk.knowledge.status")
    client.exit(None)
    assert client._server is not None
    assert await asyncio.wait_for(client._server.wait(), 10) == 1
    await client.stop()


def frame(payload: dict[str, Any]) -> bytes:
    body = json.dumps(payload).encode()
    return f"Content-Length: {len(body)}\r\n\r\n".encode() + body


async def read_message(reader: asyncio.StreamReader) -> dict[str, Any]:
    headers = await reader.readuntil(b"\r\n\r\n")
    length = int(headers.decode().split("Content-Length:")[1].split("\r\n")[0])
    message: dict[str, Any] = json.loads(await reader.readexactly(length))
    return message


async def test_tcp(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "fisk_ls.lsp", "--tcp", f"127.0.0.1:{port}",
        env=server_env(tmp_path), stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        for _ in range(200):
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                break
            except OSError:
                await asyncio.sleep(0.05)
        else:
            raise AssertionError("the TCP server never listened")
        writer.write(
            frame(
                {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}
            )
        )
        response = await asyncio.wait_for(read_message(reader), 10)
        assert response["id"] == 1
        assert (
            "fisk.knowledge.search"
            in response["result"]["capabilities"]["executeCommandProvider"]["commands"]
        )
        writer.write(frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
        while (await asyncio.wait_for(read_message(reader), 10)).get("id") != 2:
            pass
        writer.write(frame({"jsonrpc": "2.0", "method": "exit"}))
        await writer.drain()
        writer.close()
        await asyncio.wait_for(server.wait(), 10)
        assert server.stderr is not None
        assert "no authentication" in (await server.stderr.read()).decode()  # the warning
    finally:
        if server.returncode is None:
            server.kill()
            await server.wait()


@pytest.mark.parametrize("address", ["0.0.0.0:0", "[::]:0", "192.0.2.1:0", "example.org:1"])
def test_tcp_listens_on_loopback_only(address: str, tmp_path: Path) -> None:
    """The port has no authentication: another user read a root-only file through one bound
    to every address."""
    proc = subprocess.run(
        [sys.executable, "-m", "fisk_ls.lsp", "--tcp", address],
        env=server_env(tmp_path),
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
        init = {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}
        server.stdin.write(
            frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
        )
        server.stdin.write(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        status = {"command": "fisk.knowledge.status", "arguments": []}
        request = {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand"}
        server.stdin.write(frame({**request, "params": status}))
        await server.stdin.drain()
        while (await asyncio.wait_for(read_message(server.stdout), 30)).get("id") != 2:
            pass  # the projects are open
        server.send_signal(signal.SIGINT)
        assert await asyncio.wait_for(server.wait(), 30) == 130
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
        while (message := await asyncio.wait_for(read_message(server.stdout), 10)).get(
            "method"
        ) != "$/progress":  # the first progress message comes once the run has begun
            if message.get("method") == "window/workDoneProgress/create":
                server.stdin.write(frame({"jsonrpc": "2.0", "id": message["id"], "result": None}))
        server.stdin.close()
        await asyncio.wait_for(server.wait(), 10)
    finally:
        if server.returncode is None:
            server.kill()
            await server.wait()
    assert not processes_with(env["FISK_AI_STORE_DIR"])
