"""The real `fisk-ai mcp` process, driven by the official MCP SDK client (stdio and HTTP)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import pytest

pytest.importorskip("mcp", reason="the MCP suite needs the optional extra fisk-ls[mcp]")

from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import CallToolResult, TextContent

from tests.support.waiting import HANG_GUARD

REPO = Path(__file__).resolve().parents[3]
CLI = [sys.executable, "-m", "fisk_ls.cli"]
ALLOWLIST = ["knowledge_search"]
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
"""What a streamable HTTP client sends with every POST."""


def initialize(version: str = "2025-11-25") -> dict[str, Any]:
    """A raw JSON-RPC ``initialize`` request of protocol ``version``."""
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "raw-http-test", "version": "0"},
        },
    }


LONG_DOCS = {
    f"docs/long{i}.md": f"# Long {i}\n\n"
    + "\n\n".join(
        f"## Part {j}\n\nThe widget pipeline stage {j} of file {i} buffers widget frames, "
        "flushes them downstream and reports widget metrics to the collector. " * 6
        for j in range(3)
    )
    + "\n"
    for i in range(4)
}


def child_env(**extra: str) -> dict[str, str]:
    """What the server process needs: the test store base and cache, and nothing secret."""
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", ""),
        "PYTHONPATH": str(REPO),
        "FISK_AI_STORE_DIR": os.environ["FISK_AI_STORE_DIR"],
        "XDG_CACHE_HOME": os.environ.get("XDG_CACHE_HOME", ""),
    }
    env.update(extra)
    return env


def write_config(
    root: Path,
    *,
    builtins: list[str] | None = ALLOWLIST,
    enabled: bool = True,
    max_injected_tokens: int | None = None,
    top_k: int | None = None,
) -> Path:
    lines = ["harness:", "  knowledge:", f"    enabled: {'true' if enabled else 'false'}"]
    if max_injected_tokens is not None:
        lines.append(f"    max_injected_tokens: {max_injected_tokens}")
    if top_k is not None:
        lines.append(f"    top_k: {top_k}")
    if builtins is not None:
        lines += ["expose:", "  agent:", "    mcp:", f"      builtins: {json.dumps(builtins)}"]
    path = root / "agent.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run_cli(
    cwd: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args],
        cwd=cwd,
        env=env or child_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def index(root: Path) -> None:
    proc = run_cli(root, "knowledge", "index", "--json")
    assert proc.returncode == 0, proc.stderr


def text_of(result: CallToolResult) -> str:
    """The one text content item of a tool result."""
    assert len(result.content) == 1
    item = result.content[0]
    assert isinstance(item, TextContent)
    return item.text


def outcome(result: CallToolResult) -> dict[str, Any]:
    """The tool's JSON: text content and structured content must be the same object."""
    assert not result.is_error, result.content
    text = text_of(result)
    decoded = json.loads(text)
    assert isinstance(decoded, dict), "text content must be the JSON object, not a JSON string"
    assert decoded == result.structured_content
    return decoded


def error_text(result: CallToolResult) -> str:
    assert result.is_error
    text = text_of(result)
    assert "\n" not in text and "Traceback" not in text, text
    return text


@asynccontextmanager
async def stdio(
    cwd: Path, *args: str, errlog: TextIO | None = None, mode: str = "auto"
) -> AsyncIterator[Client]:
    """A Client talking to `fisk-ai mcp ARGS` started over stdio in ``cwd``."""
    params = StdioServerParameters(
        command=CLI[0], args=[*CLI[1:], "mcp", *args], env=child_env(), cwd=cwd
    )
    with open(os.devnull, "w") if errlog is None else nullcontext(errlog) as log:
        async with Client(
            stdio_client(params, errlog=log), mode=mode, read_timeout_seconds=30
        ) as c:
            yield c


@dataclass
class HttpServer:
    proc: subprocess.Popen[bytes]
    url: str
    stderr_path: Path

    @property
    def stderr(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")

    @asynccontextmanager
    async def client(self, token: str | None = None, mode: str = "auto") -> AsyncIterator[Client]:
        headers = {"Authorization": f"Bearer {token}"} if token else None
        async with (
            create_mcp_http_client(headers=headers) as http,
            Client(streamable_http_client(self.url, http_client=http), mode=mode) as c,
        ):
            yield c


@contextmanager
def http_server(
    cwd: Path, tmp: Path, *args: str, env: dict[str, str] | None = None
) -> Iterator[HttpServer]:
    """`fisk-ai mcp --http --port 0 ARGS` running; its URL read from the listening line."""
    err = tmp / f"mcp-http-{time.monotonic_ns()}.err"
    with open(err, "wb") as sink:
        proc = subprocess.Popen(
            [*CLI, "mcp", "--http", "--port", "0", *args],
            cwd=cwd,
            env=env or child_env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=sink,
        )
    try:
        deadline = time.monotonic() + HANG_GUARD
        url = None
        while url is None:
            text = err.read_text(encoding="utf-8", errors="replace")
            if m := re.search(r"listening on (http://\S+)", text):
                url = m.group(1)
            elif proc.poll() is not None:
                raise AssertionError(f"server exited {proc.returncode}: {text}")
            elif time.monotonic() > deadline:
                raise AssertionError(f"server did not start: {text}")
            else:
                time.sleep(0.05)
        yield HttpServer(proc, url, err)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=HANG_GUARD)
        except subprocess.TimeoutExpired:  # pragma: no cover - a hung shutdown
            proc.kill()
            proc.wait()


@pytest.fixture
def kb(project: Path, store_base: Path) -> Path:
    """The shared test project plus a few long documents, allowlisted, not yet indexed."""
    for rel, text in LONG_DOCS.items():
        path = project / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    write_config(project)
    return project


@pytest.fixture
def built(kb: Path) -> Path:
    index(kb)
    return kb
