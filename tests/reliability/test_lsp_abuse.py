"""The language server under abuse: bad frame headers, requests out of order,
folder churn, overly broad folders, over-long queries, Neovim's empty-table arguments."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

import pytest

from fisk_ls.knowledge.settings_schema import QUERY
from fisk_ls.lsp.frames import MAX_FRAME_BYTES, FrameError, check_header
from tests.support.raw_lsp import RawClient, command, wait_idle
from tests.support.waiting import HANG_GUARD, wait_until


def spawn(cwd: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "fisk_ls.lsp"],
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


@pytest.mark.parametrize(
    "header",
    [
        b"Content-Length: 99999999999\r\n\r\n",
        b"Content-Length: -5\r\n\r\n{}",
        b"Content-Length: twelve\r\n\r\n{}",
        b"Content-Length: " + b"9" * 10_000 + b"\r\n\r\n",
        b"X" * 100_000,
    ],
    ids=["huge", "negative", "not a number", "endless digits", "endless line"],
)
def test_bad_frame_headers_close_cleanly(header: bytes, project: Path, store_base: Path) -> None:
    env = {**os.environ, "FISK_AI_STORE_DIR": str(store_base)}
    proc = spawn(project, env)
    try:
        _, err = proc.communicate(header, timeout=HANG_GUARD)  # a hang fails here
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = err.decode(errors="replace")
    assert "MemoryError" not in text and "Traceback" not in text, text
    assert "refusing a message frame" in text, text


@pytest.mark.parametrize(
    ("line", "ok"),
    [
        (b"Content-Length: 12\r\n", b"Content-Length: 12\r\n"),
        (b"content-length:12\n", b"Content-Length: 12\r\n"),
        (b"Content-Type: application/json\r\n", b"Content-Type: application/json\r\n"),
        (b"\r\n", b"\r\n"),
        (b"", b""),
    ],
)
def test_good_headers_pass(line: bytes, ok: bytes) -> None:
    assert check_header(line) == ok


@pytest.mark.parametrize(
    "line",
    [b"Content-Length: %d\r\n" % (MAX_FRAME_BYTES + 1), b"Content-Length: 1e3\r\n", b"no end"],
)
def test_bad_headers_are_refused(line: bytes) -> None:
    with pytest.raises(FrameError):
        check_header(line)


def _start(project: Path, store_base: Path) -> RawClient:
    return RawClient(project, {**os.environ, "FISK_AI_STORE_DIR": str(store_base)})


def _initialize(client: RawClient, folders: list[Path], **options: Any) -> None:
    init = client.request(
        "initialize",
        {
            "processId": os.getpid(),
            "rootUri": folders[0].as_uri() if folders else None,
            "workspaceFolders": [{"uri": f.as_uri(), "name": f.name} for f in folders],
            "capabilities": {"workspace": {"workspaceFolders": True}},
            "initializationOptions": {"watch": False, **options},
        },
    )
    assert "result" in init, init
    client.notify("initialized", {})


def test_requests_before_initialize_and_after_shutdown(project: Path, store_base: Path) -> None:
    client = _start(project, store_base)
    try:
        early = client.request("workspace/symbol", {"query": "x"}, timeout=HANG_GUARD)
        assert early["error"]["code"] == -32002
        _initialize(client, [project])
        assert "result" in command(client, "fisk.knowledge.status")
        assert "result" in client.request("shutdown", None)
        late = client.request("workspace/symbol", {"query": "x"}, timeout=HANG_GUARD)
        assert late["error"]["code"] == -32600
        client.notify("exit", None)
        assert client.proc.wait(HANG_GUARD) == 0
    finally:
        if client.proc.poll() is None:
            client.proc.kill()
            client.proc.wait()


def _roots(client: RawClient) -> list[str]:
    status = command(client, "fisk.knowledge.status")["result"]
    return [r["root"] for r in status["roots"]]


def test_folder_churn_leaves_exactly_the_clients_folders(
    project: Path, store_base: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "o.md").write_text("# Other\n\nsome text\n")
    client = _start(project, store_base)
    try:
        _initialize(client, [project])
        folder = {"uri": other.as_uri(), "name": "other"}
        for _ in range(60):  # sent back to back, never awaited in between
            client.notify(
                "workspace/didChangeWorkspaceFolders",
                {"event": {"added": [folder], "removed": []}},
            )
            client.notify(
                "workspace/didChangeWorkspaceFolders",
                {"event": {"added": [], "removed": [folder]}},
            )
        client.notify(
            "workspace/didChangeWorkspaceFolders", {"event": {"added": [folder], "removed": []}}
        )
        # Notifications are handled in order: the status after them sees the final set.
        wanted = sorted([str(project), str(other)])
        wait_until(lambda: sorted(_roots(client)) == wanted, every=0.1)
    finally:
        client.close()


def test_home_or_root_folder_is_refused(project: Path, store_base: Path) -> None:
    client = _start(project, store_base)
    try:
        _initialize(client, [Path("/")])
        assert _roots(client) == []

        def shown() -> list[str]:
            return [
                n["params"]["message"]
                for n in client.notifications
                if n.get("method") == "window/showMessage"
            ]

        wait_until(lambda: any("not indexing /" in m for m in shown()))
        assert any("fisk.paths" in m for m in shown()), shown()
    finally:
        client.close()


def test_empty_table_arguments_and_over_long_queries(project: Path, store_base: Path) -> None:
    client = _start(project, store_base)
    try:
        _initialize(client, [project])
        status = client.request(
            "workspace/executeCommand", {"command": "fisk.knowledge.status", "arguments": [[]]}
        )
        assert "result" in status, status
        limit = int(QUERY.max_length or 0)
        # Many huge queries at once, then an ordinary one: the huge ones are refused on the
        # event loop and never hold a worker thread.
        ids = []
        for _ in range(8):
            with client.lock:
                client.next_id += 1
                rid = client.next_id
                client.responses.setdefault(rid, queue.Queue())
            client.send(
                {
                    "jsonrpc": "2.0",
                    "id": rid,
                    "method": "workspace/executeCommand",
                    "params": {
                        "command": "fisk.knowledge.search",
                        "arguments": [{"query": "x " * 2_500_000}],
                    },
                }
            )
            ids.append(rid)
        ok = command(client, "fisk.knowledge.search", {"query": "backpressure"})
        assert ok["result"]["results"], ok
        for rid in ids:
            reply = client.responses[rid].get(timeout=HANG_GUARD)
            assert reply["error"]["code"] == -32602
            assert f"{limit:,}" in reply["error"]["message"]
        edge = command(client, "fisk.knowledge.search", {"query": "y" * limit})
        assert "result" in edge
    finally:
        client.close()


@pytest.mark.parametrize(("formats", "kind"), [(["plaintext"], "plaintext"), (None, "markdown")])
def test_hover_honours_the_clients_content_format(
    project: Path, store_base: Path, formats: list[str] | None, kind: str
) -> None:
    client = _start(project, store_base)
    try:
        hover_caps = {"contentFormat": formats} if formats else {}
        init = client.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": project.as_uri(),
                "capabilities": {"textDocument": {"hover": hover_caps}},
                "initializationOptions": {"watch": False},
            },
        )
        assert "result" in init
        client.notify("initialized", {})
        wait_idle(client)
        note = project / "note.md"
        line = "See docs/design.md#0 for details."
        note.write_text(line + "\n")
        client.notify(
            "textDocument/didOpen",
            {
                "textDocument": {
                    "uri": note.as_uri(),
                    "languageId": "markdown",
                    "version": 1,
                    "text": line + "\n",
                }
            },
        )
        at = {"line": 0, "character": line.index("design") + 2}
        reply = client.request(
            "textDocument/hover", {"textDocument": {"uri": note.as_uri()}, "position": at}
        )
        contents = reply["result"]["contents"]
        assert contents["kind"] == kind
        if kind == "plaintext":
            assert "**" not in contents["value"] and "`" not in contents["value"]
        assert "docs/design.md#0" in contents["value"]
    finally:
        client.close()


def _progress(client: RawClient, kind: str) -> list[dict[str, Any]]:
    return [
        n["params"]
        for n in list(client.notifications)
        if n.get("method") == "$/progress" and n["params"]["value"].get("kind") == kind
    ]


@pytest.mark.parametrize("how", ["cancelRequest", "workDoneProgress/cancel"])
def test_cancelling_a_reindex_stops_the_run(tmp_path: Path, store_base: Path, how: str) -> None:
    project = tmp_path / "many"
    project.mkdir()
    for i in range(4000):
        (project / f"d{i:05}.md").write_text(f"# Doc {i}\n\n" + f"text {i} " * 200 + "\n")
    client = _start(project, store_base)
    try:
        init = client.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": project.as_uri(),
                "capabilities": {"window": {"workDoneProgress": True}},
                "initializationOptions": {"watch": False},
            },
        )
        assert "result" in init
        client.notify("initialized", {})
        wait_until(lambda: _progress(client, "end"))  # the first run
        begun = len(_progress(client, "begin"))
        with client.lock:
            client.next_id += 1
            rid = client.next_id
            replies = client.responses.setdefault(rid, queue.Queue())
        client.send(
            {
                "jsonrpc": "2.0",
                "id": rid,
                "method": "workspace/executeCommand",
                "params": {"command": "fisk.knowledge.reindex", "arguments": [{"rebuild": True}]},
            }
        )
        begin = wait_until(lambda: _progress(client, "begin")[begun:])[0]
        assert begin["value"]["cancellable"] is True
        if how == "cancelRequest":
            client.notify("$/cancelRequest", {"id": rid})
        else:
            client.notify("window/workDoneProgress/cancel", {"token": begin["token"]})
        ends = wait_until(
            lambda: [e for e in _progress(client, "end") if e["token"] == begin["token"]]
        )
        assert "cancelled" in ends[0]["value"]["message"]
        reply = replies.get(timeout=HANG_GUARD)
        assert "error" in reply
    finally:
        client.close()


def _read_frame(stream: IO[bytes]) -> dict[str, Any]:
    """One message from the server (blocking; the test's HANG_GUARD bounds the process)."""
    import json

    length = 0
    while (line := stream.readline()) not in (b"\r\n", b"\n", b""):
        name, _, value = line.decode().partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    message: dict[str, Any] = json.loads(stream.read(length))
    return message


def _frame(msg: dict[str, Any]) -> bytes:
    import json

    body = json.dumps(msg).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def test_invalid_arguments_are_not_logged_as_server_errors(project: Path, store_base: Path) -> None:
    env = {**os.environ, "FISK_AI_STORE_DIR": str(store_base)}
    proc = spawn(project, env)
    messages: list[dict[str, Any]] = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"processId": None, "rootUri": project.as_uri(), "capabilities": {}},
        },
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "workspace/executeCommand",
            "params": {"command": "fisk.knowledge.search", "arguments": [{"query": 7}]},
        },
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "workspace/executeCommand",
            "params": {"command": "fisk.knowledge.show", "arguments": [{"citation": "../x#0"}]},
        },
    ]
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b"".join(_frame(m) for m in messages))
    proc.stdin.flush()
    # Both replies before shutdown: shutdown cancels the requests still pending (a client that
    # quits does not wait for them), which is not what this test is about.
    replies: list[dict[str, Any]] = []
    while not {2, 3} <= {r.get("id") for r in replies if "method" not in r}:
        replies.append(_read_frame(proc.stdout))
    tail = [{"jsonrpc": "2.0", "id": 4, "method": "shutdown", "params": None}]
    tail.append({"jsonrpc": "2.0", "method": "exit", "params": None})
    rest, err = proc.communicate(b"".join(_frame(m) for m in tail), timeout=HANG_GUARD)
    out = b"".join(_frame(r) for r in replies) + rest
    assert out.count(b'"code": -32602') == 2 or out.count(b'"code":-32602') == 2, out[-2000:]
    text = err.decode(errors="replace")
    assert "Exception occurred for message" not in text, text  # pygls' ERROR + traceback
    assert "JsonRpcInvalidParams" not in text, text
