"""A language-server client over raw stdio (not pytest-lsp), so that broken frames can be sent
on purpose; server requests are answered with null, notifications are kept."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from tests.support.waiting import HANG_GUARD, wait_until


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

    def request(
        self, method: str, params: Any = None, timeout: float = HANG_GUARD
    ) -> dict[str, Any]:
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
            self.request("shutdown", None, timeout=HANG_GUARD)
            self.notify("exit", None)
            self.proc.wait(HANG_GUARD)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()


def command(client: RawClient, name: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
    return client.request(
        "workspace/executeCommand", {"command": name, "arguments": [args] if args else []}
    )


def wait_idle(client: RawClient) -> dict[str, Any]:
    """The status once the server has nothing indexing or queued and a document indexed."""

    def idle() -> dict[str, Any] | None:
        status: dict[str, Any] = command(client, "fisk.knowledge.status")["result"]
        busy = status["indexing"] or not status["roots"] or not status["roots"][0]["documents"]
        return None if busy else status

    return wait_until(idle, every=0.1)
