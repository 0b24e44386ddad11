"""Error paths as JSON-RPC and LSP say, as Neovim, eglot and lsp-devtools meet them: malformed
messages get -32700 / -32600 / -32602, a second initialize an error, shutdown during an index
run the run's progress ``end``, a missing workspace folder no store, and expected outcomes
(a cancelled run, a failed request) no traceback on stderr.

Spoken over raw stdio (pytest-lsp's client cannot send broken messages); stderr goes to a file
the tests read."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fisk_ls.knowledge.location import zero_config_store
from fisk_ls.knowledge.lock import WriterLock
from tests.support.waiting import HANG_GUARD


class Server:
    """fisk-ls on stdio; every message it sends is recorded in order."""

    def __init__(self, cwd: Path, base: Path) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("FISK_AI_")}
        env["FISK_AI_STORE_DIR"] = str(base / "stores")
        self.stderr_path = base / "fisk-ls.err"
        with open(self.stderr_path, "wb") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "fisk_ls.lsp"],
                cwd=cwd,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
            )
        self.received: queue.Queue[dict[str, Any]] = queue.Queue()
        self.log: list[dict[str, Any]] = []
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    @property
    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = 0
            while (line := out.readline()) not in (b"\r\n", b"\n"):
                if not line:
                    return
                name, _, value = line.decode().partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            msg = json.loads(out.read(length))
            if "method" in msg and "id" in msg:  # a request from the server: accept it
                self.send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
            self.log.append(msg)
            self.received.put(msg)

    def send_raw(self, body: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def send(self, msg: Any) -> None:
        self.send_raw(json.dumps(msg).encode())

    def reply(self, msg_id: Any) -> dict[str, Any]:
        """The next response to ``msg_id`` (None: an error the server could not tie to one)."""
        while True:
            msg = self.received.get(timeout=HANG_GUARD)
            if "method" not in msg and msg.get("id", "no id") == msg_id:  # "id": null counts
                return msg

    def request(self, method: str, params: Any = None) -> dict[str, Any]:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.reply(self.next_id)

    def notify(self, method: str, params: Any = None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def wait_for(self, predicate: Any) -> dict[str, Any]:
        while True:
            msg = self.received.get(timeout=HANG_GUARD)
            if predicate(msg):
                return msg

    def initialize(self, folders: list[Path]) -> None:
        init = self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": folders[0].as_uri(),
                "workspaceFolders": [{"uri": f.as_uri(), "name": f.name} for f in folders],
                "capabilities": {"window": {"workDoneProgress": True}},
                "initializationOptions": {"watch": False},
            },
        )
        assert "result" in init, init
        self.notify("initialized", {})

    def command(self, name: str, args: Any = None) -> dict[str, Any]:
        arguments = [] if args is None else [args]
        return self.request("workspace/executeCommand", {"command": name, "arguments": arguments})

    def close(self) -> None:
        try:
            if self.proc.poll() is None:
                self.request("shutdown")
                self.notify("exit")
                self.proc.wait(HANG_GUARD)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture
def server(project: Path, tmp_path: Path) -> Iterator[Server]:
    started = Server(project, tmp_path)
    try:
        yield started
    finally:
        started.close()


def error_code(reply: dict[str, Any]) -> int:
    assert "error" in reply, reply
    code: int = reply["error"]["code"]
    return code


def test_malformed_messages_get_the_json_rpc_errors(server: Server, project: Path) -> None:
    server.initialize([project])
    server.send_raw(b"{not json")
    assert error_code(server.reply(None)) == -32700
    server.send_raw(b"\xff\xfe")
    assert error_code(server.reply(None)) == -32700
    body: Any
    for body in ([], 42, {"id": 3, "method": "workspace/symbol", "params": {"query": "x"}}):
        server.send(body)
        assert error_code(server.reply(3 if isinstance(body, dict) else None)) == -32600
    server.send({"jsonrpc": "2.0", "id": 4, "method": 42})
    assert error_code(server.reply(4)) == -32600
    server.send({"jsonrpc": "1.0", "id": 5, "method": "workspace/symbol", "params": {"query": "x"}})
    assert error_code(server.reply(5)) == -32600
    hover = server.request("textDocument/hover", {"textDocument": {"uri": project.as_uri()}})
    assert error_code(hover) == -32602 and "position" in hover["error"]["message"]
    assert error_code(server.request("workspace/executeCommand", "x")) == -32602
    again = server.request("initialize", {"processId": None, "capabilities": {}})
    assert error_code(again) == -32600 and "already initialized" in again["error"]["message"]
    assert "result" in server.command("fisk.knowledge.status")
    server.close()
    assert "Traceback" not in server.stderr, server.stderr


def _held_lock(project: Path, base: Path) -> WriterLock:
    """The project's store lock, held by the test: the server's index run waits for it."""
    store = zero_config_store(project, base / "stores")
    store.mkdir(parents=True, mode=0o700)
    lock = WriterLock(store)
    lock.acquire()
    return lock


def _waiting(msg: dict[str, Any]) -> bool:
    value = msg.get("params", {}).get("value", {}) if msg.get("method") == "$/progress" else {}
    return "waiting for another writer" in str(value.get("message", ""))


def test_shutdown_during_an_index_run_sends_its_progress_end(
    server: Server, project: Path, tmp_path: Path
) -> None:
    lock = _held_lock(project, tmp_path)
    try:
        server.initialize([project])
        token = server.wait_for(_waiting)["params"]["token"]
        server.send({"jsonrpc": "2.0", "id": 900, "method": "shutdown", "params": None})
        server.reply(900)
        ends = [
            i
            for i, m in enumerate(server.log)
            if m.get("method") == "$/progress"
            and m["params"]["token"] == token
            and m["params"]["value"]["kind"] == "end"
        ]
        replied = next(i for i, m in enumerate(server.log) if m.get("id") == 900)
        assert len(ends) == 1 and ends[0] < replied, server.log
    finally:
        lock.release()


def test_a_missing_workspace_folder_gets_no_root_and_no_store(
    server: Server, project: Path, tmp_path: Path
) -> None:
    missing = tmp_path / "gone"
    server.initialize([project])
    server.notify(
        "workspace/didChangeWorkspaceFolders",
        {"event": {"added": [{"uri": missing.as_uri(), "name": "gone"}], "removed": []}},
    )
    said = server.wait_for(lambda m: "no such folder" in str(m.get("params", {}).get("message")))
    assert str(missing) in said["params"]["message"]
    roots = [r["root"] for r in server.command("fisk.knowledge.status")["result"]["roots"]]
    assert roots == [str(project)]
    assert not zero_config_store(missing, tmp_path / "stores").exists()


def test_a_cancelled_run_logs_no_traceback(server: Server, project: Path, tmp_path: Path) -> None:
    lock = _held_lock(project, tmp_path)
    try:
        server.initialize([project])
        server.wait_for(_waiting)
        server.send(
            {
                "jsonrpc": "2.0",
                "id": 700,
                "method": "workspace/executeCommand",
                "params": {"command": "fisk.knowledge.reindex", "arguments": [{}]},
            }
        )
        server.notify("$/cancelRequest", {"id": 700})
        assert error_code(server.reply(700)) == -32800
    finally:
        lock.release()
    server.close()
    assert "Traceback" not in server.stderr, server.stderr


def test_a_failed_request_logs_no_traceback(server: Server, project: Path, tmp_path: Path) -> None:
    store = zero_config_store(project, tmp_path / "stores")
    store.parent.mkdir(parents=True)
    store.write_text("not a directory")
    server.initialize([project])
    assert error_code(server.command("fisk.knowledge.reindex", {})) == -32803
    server.close()
    assert "Traceback" not in server.stderr, server.stderr


def test_a_message_with_an_id_and_no_method_gets_invalid_request(
    server: Server, project: Path
) -> None:
    server.initialize([project])
    for msg_id, extra in ((9, {}), ("ten", {"params": {"query": "x"}})):
        server.send({"jsonrpc": "2.0", "id": msg_id, **extra})
        reply = server.reply(msg_id)
        assert error_code(reply) == -32600 and "method" in reply["error"]["message"]
    assert "result" in server.command("fisk.knowledge.status")
    server.close()
    assert "Traceback" not in server.stderr, server.stderr


def test_unknown_dollar_notifications_and_late_cancels_are_ignored_silently(
    server: Server, project: Path
) -> None:
    server.initialize([project])
    server.notify("$/fisk/unknownThing", {"x": 1})
    server.notify("$/cancelRequest", {"id": 424242})  # never sent
    answered = server.command("fisk.knowledge.status")
    assert "result" in answered
    server.notify("$/cancelRequest", {"id": server.next_id})  # crosses its reply
    server.request("shutdown")
    said = [m for m in server.log if m.get("method") in ("window/logMessage", "window/showMessage")]
    assert not [m for m in said if "424242" in str(m) or "unknownThing" in str(m)], said
    server.notify("exit")
    server.proc.wait(HANG_GUARD)
    assert "unknownThing" not in server.stderr and "424242" not in server.stderr, server.stderr
    assert "Cancel notification" not in server.stderr, server.stderr


def test_each_problem_reaches_the_client_as_one_message(
    server: Server, project: Path, tmp_path: Path
) -> None:
    """A warning is one ``window/showMessage``, not also a ``window/logMessage`` (with another
    severity, for an Info message)."""
    missing = tmp_path / "gone"
    server.initialize([project])
    server.notify(
        "workspace/didChangeWorkspaceFolders",
        {"event": {"added": [{"uri": missing.as_uri(), "name": "gone"}], "removed": []}},
    )
    server.wait_for(lambda m: "no such folder" in str(m.get("params", {}).get("message")))
    server.request("shutdown")  # every message sent before it has arrived
    said = [m for m in server.log if "no such folder" in str(m.get("params", {}).get("message"))]
    assert [m["method"] for m in said] == ["window/showMessage"], said
    assert said[0]["params"]["type"] == 2  # Warning
    server.notify("exit")
    server.proc.wait(HANG_GUARD)
    assert "no such folder" in server.stderr  # the server's own log still has it
