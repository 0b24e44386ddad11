"""The language server under abuse: malformed JSON-RPC, unknown methods, huge messages, and a
soak of 10,000 mixed requests and 1,000 saves with flat memory and zero errors.

Spoken over raw stdio (tests.support.raw_lsp) so that broken frames can be sent on purpose."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.support.raw_lsp import RawClient, command, wait_idle

pytestmark = pytest.mark.slow


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
    wait_idle(client)
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
    wait_idle(server)  # the saves' updates have run
    assert errors == 0
    final = command(server, "fisk.knowledge.search", {"query": "soak edit"})
    assert final["result"]["results"]
    growth = server.rss_mb() - base
    assert growth < 20, f"RSS grew {growth:.1f} MB over the soak: {samples}"
