"""The language server under abuse: malformed JSON-RPC, unknown methods, huge messages, and a
soak of 10,000 mixed requests and 1,000 saves with flat memory and zero errors.

Spoken over raw stdio (not pytest-lsp) so that broken frames can be sent on purpose."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow


class RawClient:
    def __init__(self, cwd: Path, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "fisk_ls.lsp"],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.responses: dict[int, queue.Queue[dict[str, Any]]] = {}
        self.notifications: list[dict[str, Any]] = []
        self.next_id = 0
        self.lock = threading.Lock()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            headers: dict[str, str] = {}
            while True:
                line = out.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                k, _, v = line.decode().partition(":")
                headers[k.strip().lower()] = v.strip()
            body = out.read(int(headers["content-length"]))
            msg = json.loads(body)
            if msg.get("id") is not None and ("result" in msg or "error" in msg):
                with self.lock:
                    q = self.responses.setdefault(int(msg["id"]), queue.Queue())
                q.put(msg)
            elif "id" in msg and "method" in msg:  # a request from the server: answer null
                self.send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
            else:
                self.notifications.append(msg)

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, msg: dict[str, Any]) -> None:
        body = json.dumps(msg).encode()
        self.send_raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def request(self, method: str, params: Any = None, timeout: float = 30.0) -> dict[str, Any]:
        with self.lock:
            self.next_id += 1
            rid = self.next_id
            q = self.responses.setdefault(rid, queue.Queue())
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        msg = q.get(timeout=timeout)
        with self.lock:
            del self.responses[rid]
        return msg

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return 0.0

    def close(self) -> None:
        try:
            self.request("shutdown", None, timeout=10)
            self.notify("exit", None)
            self.proc.wait(10)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()


def command(client: RawClient, name: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
    return client.request(
        "workspace/executeCommand", {"command": name, "arguments": [args] if args else []}
    )


@pytest.fixture
def server(project: Path, store_base: Path) -> Any:
    env = {**os.environ, "FISK_AI_STORE_DIR": str(store_base)}
    client = RawClient(project, env)
    init = client.request(
        "initialize",
        {
            "processId": os.getpid(),
            "rootUri": project.as_uri(),
            "capabilities": {"window": {"workDoneProgress": True}},
            "initializationOptions": {"watch": False},
        },
    )
    assert "result" in init, init
    client.notify("initialized", {})
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        status = command(client, "fisk.knowledge.status")["result"]
        if not status["indexing"] and status["roots"] and status["roots"][0]["documents"] > 0:
            break
        time.sleep(0.1)
    yield client
    client.close()


def test_malformed_messages_are_survived(server: RawClient) -> None:
    server.send_raw(b"Content-Length: 12\r\n\r\n{not json!!}")
    server.send_raw(b'Content-Length: 25\r\n\r\n{"jsonrpc": "2.0", "id":}')
    server.send({"jsonrpc": "2.0", "id": 99999, "method": 42})
    unknown = server.request("fisk/doesNotExist", {})
    assert unknown["error"]["code"] == -32601
    bad = command(server, "fisk.knowledge.search", {"query": 7})
    assert "error" in bad
    nocmd = command(server, "fisk.knowledge.nope", {})
    assert "error" in nocmd
    huge = command(server, "fisk.knowledge.search", {"query": "x " * 5_000_000})
    assert "result" in huge or "error" in huge
    ok = command(server, "fisk.knowledge.search", {"query": "backpressure"})
    assert ok["result"]["results"], ok


def test_soak(server: RawClient, project: Path) -> None:
    doc = project / "docs" / "design.md"
    uri = doc.as_uri()
    original = doc.read_text()
    server.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": original}},
    )
    queries = ["backpressure", "retries jitter", "broker restart", "cats", "queue full producers"]

    def mixed(i: int) -> dict[str, Any]:
        if i % 10 == 0:  # one save in ten requests
            doc.write_text(original + f"\n\nSoak edit {i // 10}.\n")
            server.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
        kind = i % 4
        if kind in (0, 1):
            return command(server, "fisk.knowledge.search", {"query": queries[i % len(queries)]})
        if kind == 2:
            return command(server, "fisk.knowledge.status")
        return server.request(
            "textDocument/hover",
            {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 2}},
        )

    for i in range(1_000):  # warm-up with the same mix: thread pool, caches, WAL
        mixed(i)
    base = server.rss_mb()
    samples = []
    errors = 0
    for i in range(10_000):  # 10,000 requests and 1,000 saves
        errors += "error" in mixed(i)
        if i % 2_000 == 0:
            samples.append(round(server.rss_mb(), 1))
    time.sleep(2)
    assert errors == 0
    final = command(server, "fisk.knowledge.search", {"query": "soak edit"})
    assert final["result"]["results"]
    growth = server.rss_mb() - base
    assert growth < 20, f"RSS grew {growth:.1f} MB over the soak: {samples}"
