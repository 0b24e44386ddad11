"""A fake OpenAI-compatible chat server for question expansion tests (stdlib only).

It answers ``POST /v1/chat/completions`` as a model asked for the three search strings would: a
JSON object ``{"keywords", "answer", "rephrasing"}`` for the question it finds in the user
message. ``answers`` maps a question to its strings (a dev set's agent strings, say); any other
question gets strings made from its own words. Faults are switched while it runs
(``set_mode``), and every request body is kept (``requests``).

In-process::

    server = FakeChatServer({"how do I retry": ["retry backoff", ...]})
    base_url = server.start()          # http://127.0.0.1:PORT/v1
    server.set_mode("status", status=500)
    server.stop()

As a script (prints ``PORT n`` first; SIGTERM or Ctrl-C stops it)::

    python -m tests.support.fake_chat_server --port 0 [--answers FILE.jsonl] [--mode MODE]

``FILE.jsonl`` lines are ``{"query": ..., "also": [...]}``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
import threading
from collections.abc import Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODES = ("ok", "prose", "think", "malformed", "empty", "status", "hang", "no_json_mode")
"""
ok           the JSON object alone
prose        the object inside prose and a code fence
think        a reasoning model's <think> block (with braces) before the object
malformed    prose with no object and no labelled lines
empty        a completion whose content is empty
status       every request answers ``status`` with an OpenAI-style error body
hang         no answer until ``release()`` or ``stop()``
no_json_mode 400 naming response_format when it is sent (a server without JSON mode)
"""


def question_of(prompt: str) -> str:
    """The question in the expansion prompt: the paragraph after the first one."""
    parts = prompt.split("\n\n")
    return parts[1].strip() if len(parts) > 1 else prompt.strip()


def own_words(question: str) -> list[str]:
    words = [w.strip("?.,!") for w in question.split()]
    return [" ".join(words[-4:]), f"The docs say: {question}", " ".join(reversed(words))]


class FakeChatServer:
    def __init__(self, answers: Mapping[str, Sequence[str]] | None = None) -> None:
        self.answers = {k.strip(): list(v) for k, v in (answers or {}).items()}
        self.mode = "ok"
        self.status = 500
        self.requests: list[dict[str, Any]] = []
        self.received = threading.Event()
        """Set at each request (tests wait on it instead of sleeping)."""
        self._release = threading.Event()
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self.url = ""
        """``http://127.0.0.1:PORT/v1`` once started."""

    def set_mode(self, mode: str, *, status: int = 500) -> None:
        if mode not in MODES:
            raise ValueError(mode)
        self.mode, self.status = mode, status
        self._release.clear()

    def release(self) -> None:
        self._release.set()

    @property
    def calls(self) -> int:
        with self._lock:
            return len(self.requests)

    def reply(self, question: str) -> str:
        strings = self.answers.get(question.strip()) or own_words(question)
        labels = ("keywords", "answer", "rephrasing")
        obj = json.dumps(dict(zip(labels, strings, strict=False)))
        if self.mode == "prose":
            return f"Sure! Here are the strings:\n```json\n{obj}\n```\nGood luck."
        if self.mode == "think":
            return f"<think>The user wants {{strings}}; {{maybe}} this.</think>\n{obj}"
        if self.mode == "malformed":
            return "I cannot help with that."
        if self.mode == "empty":
            return ""
        return obj

    def start(self, port: int = 0) -> str:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _send(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    body = {}
                with server._lock:
                    server.requests.append(body)
                server.received.set()
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                mode = server.mode
                if mode == "hang":
                    server._release.wait(60)
                    if server._httpd is None:
                        return
                if mode == "status":
                    self._send(server.status, {"error": {"message": "model exploded"}})
                    return
                if mode == "no_json_mode" and "response_format" in body:
                    message = "response_format is not supported by this server"
                    self._send(400, {"error": {"message": message}})
                    return
                messages = body.get("messages") or [{}]
                prompt = str(messages[-1].get("content", ""))
                content = server.reply(question_of(prompt))
                self._send(
                    200,
                    {
                        "object": "chat.completion",
                        "model": body.get("model", "fake-chat"),
                        "choices": [
                            {"index": 0, "message": {"role": "assistant", "content": content}}
                        ],
                    },
                )

        class Server(ThreadingHTTPServer):
            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a client that gave up (a timeout under test) is not an error here

        self._httpd = Server(("127.0.0.1", port), Handler)
        self._httpd.daemon_threads = True
        # A short poll: stop() (shutdown) waits for the loop's next look, half a second by default.
        threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        ).start()
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        return self.url

    def stop(self) -> None:
        httpd, self._httpd = self._httpd, None
        self._release.set()
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()


def load_answers(path: str) -> dict[str, list[str]]:
    answers: dict[str, list[str]] = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                row = json.loads(line)
                answers[row["query"]] = list(row["also"])
    return answers


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--answers", help="JSONL of {query, also} lines")
    ap.add_argument("--mode", choices=MODES, default="ok")
    args = ap.parse_args(argv)
    server = FakeChatServer(load_answers(args.answers) if args.answers else None)
    server.set_mode(args.mode)
    url = server.start(args.port)
    print(f"PORT {url.split(':')[2].split('/')[0]}", flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with contextlib.suppress(KeyboardInterrupt):
        stop.wait()
    server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
