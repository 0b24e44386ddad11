"""Deterministic fake OpenAI-compatible embeddings server for tests (stdlib only).

Vectors are signed feature hashes of the lower-cased word tokens, L2-normalised: byte-identical
on every machine, and texts that share words score higher, so tests can assert rankings rather
than plumbing only (reference/embeddings.md, appendix A).

Faults can be switched while it runs, so one server covers the whole failure taxonomy the client
must classify: ``set_mode(...)`` in-process, ``POST /control`` with a JSON object from another
process. ``GET /stats`` counts requests, embedded inputs and the size of every batch received.

In-process::

    server = FakeEmbedServer(dim=64)
    base_url = server.start()          # http://127.0.0.1:PORT/v1
    server.set_mode("status", status=503)
    server.stop()

As a script (prints ``PORT n`` first; stop it with SIGTERM or Ctrl-C)::

    python -m tests.support.fake_embed_server --port 0 [--dim 64] [--model fake-embed]
        [--api-key KEY] [--reverse] [--max-batch N] [--delay-ms MS]
        [--mode MODE] [--status CODE] [--retry-after S] [--fail-first N]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import re
import signal
import socket
import struct
import sys
import threading
import time
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODES = (
    "ok",
    "refuse",
    "hang",
    "status",
    "wrong_dim",
    "nan",
    "inf",
    "zero",
    "short",
    "huge",
    "html",
    "redirect",
    "bad_encoding",
    "fail_first",
)
"""
ok          answer normally
refuse      reset the connection without answering (the server looks down)
hang        wait ``hang_seconds`` before answering; stop() interrupts the wait
status      answer every embeddings request with ``status`` (429/503 carry Retry-After)
wrong_dim   vectors one element longer than ``dim`` (the model behind the URL changed)
nan         the first vector's first number is NaN
inf         the first vector's first number is Infinity
zero        the first vector is all zeros
short       one vector fewer than inputs
huge        a 100 MB body, streamed without Content-Length and never held in memory
html        status 200 with an HTML page (a captive portal or a proxy's login page)
redirect    302 to another host, with a Location header
bad_encoding status 200 claiming ``Content-Encoding: gzip`` over a body that is not gzip
fail_first  the next ``count`` requests answer ``status``, then back to ok
"""
HUGE_BYTES = 100 * 1024 * 1024
TOKEN = re.compile(r"\w+", re.UNICODE)


def fake_embedding(text: str, dim: int) -> list[float]:
    """Signed feature hashing of word tokens, L2-normalised.

    Never a zero vector: when opposite signs cancel out (two tokens in one bucket, as in
    "text 56" at dim 64), the first token's bucket is set to 1, so clients that rightly reject
    zero vectors do not fail at random.
    """
    vector = [0.0] * dim
    buckets = []
    for token in TOKEN.findall(text.lower()) or [""]:
        digest = hashlib.blake2b(token.encode(), digest_size=8).digest()
        bucket = int.from_bytes(digest[:4], "little") % dim
        vector[bucket] += 1.0 if digest[4] & 1 else -1.0
        buckets.append(bucket)
    norm = sum(x * x for x in vector) ** 0.5
    if norm == 0.0:
        vector[buckets[0]] = norm = 1.0
    return [x / norm for x in vector]


def unused_port_url() -> str:
    """A loopback base URL on which nothing listens: connecting to it is refused."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


class FakeEmbedServer:
    """The fake server, run on a background thread. Every method is thread-safe."""

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        dim: int = 64,
        model: str = "fake-embed",
        api_key: str = "",
        reverse: bool = False,
        max_batch: int = 0,
        delay_ms: int = 0,
    ) -> None:
        self._address = (host, port)
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self.asked = threading.Event()
        """Set when an embeddings request arrives (before any hold or delay)."""
        self._released = threading.Event()
        self._released.set()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None
        self._connections: set[socket.socket] = set()
        self._options: dict[str, Any] = {
            "dim": dim,
            "model": model,
            "api_key": api_key,
            "reverse": reverse,
            "max_batch": max_batch,
            "delay_ms": delay_ms,
        }
        self._fault: dict[str, Any] = {}
        self._stats: dict[str, Any] = {}
        self._in_flight = 0
        self.set_mode("ok")
        self.reset_stats()

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> str:
        """Listen and serve; return the base URL (``http://127.0.0.1:PORT/v1``)."""
        if self._httpd is not None:
            raise RuntimeError("already started")
        self._httpd = _Server(self._address, _Handler)
        self._httpd.fake = self
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.02},
            name="fake-embed-server",
            daemon=True,
        )
        self._thread.start()
        return self.base_url

    def stop(self) -> None:
        """Stop serving, wake hanging handlers and drop open connections. Idempotent."""
        self._stopping.set()
        self._released.set()
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        httpd.shutdown()
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeEmbedServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("not started")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # -- control -----------------------------------------------------------------------------

    def set_mode(
        self,
        mode: str,
        *,
        status: int = 500,
        retry_after: str | None = None,
        count: int = 0,
        hang_seconds: float = 30.0,
    ) -> None:
        """Switch the fault mode (see ``MODES``). ``retry_after`` defaults to "0" for 429."""
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; expected one of {', '.join(MODES)}")
        if not 100 <= status <= 599:
            raise ValueError(f"bad status {status}")
        if retry_after is None and status == 429:
            retry_after = "0"
        with self._lock:
            self._fault = {
                "mode": mode,
                "status": status,
                "retry_after": retry_after,
                "remaining": count,
                "hang_seconds": hang_seconds,
            }

    def configure(self, **options: Any) -> None:
        """Change ``dim``, ``model``, ``api_key``, ``reverse``, ``max_batch`` or ``delay_ms``."""
        with self._lock:
            unknown = set(options) - set(self._options)
            if unknown:
                raise ValueError(f"unknown options: {', '.join(sorted(unknown))}")
            self._options.update(options)

    def hold(self) -> None:
        """Answer no embeddings request until :meth:`release` (a model still loading, a busy
        box): a test waits on events instead of timing a slow server."""
        self._released.clear()

    def release(self) -> None:
        self._released.set()

    def stats(self) -> dict[str, Any]:
        """Counters since the last reset: requests, inputs, batch_sizes, max_concurrent."""
        with self._lock:
            return {**self._stats, "batch_sizes": list(self._stats["batch_sizes"])}

    def reset_stats(self) -> None:
        with self._lock:
            self._stats = {
                "requests": 0,
                "inputs": 0,
                "batch_sizes": [],
                "max_concurrent": 0,
            }
            self._in_flight = 0

    def control(self, payload: dict[str, Any]) -> dict[str, Any]:
        """Apply a ``POST /control`` body: ``{"mode": ..., "status": ..., "count": ...,
        "retry_after": ..., "hang_seconds": ..., "reset_stats": true, <configure options>}``."""
        payload = dict(payload)
        if payload.pop("reset_stats", False):
            self.reset_stats()
        mode_keys = ("status", "retry_after", "count", "hang_seconds")
        mode_args = {key: payload.pop(key) for key in mode_keys if key in payload}
        if "mode" in payload:
            self.set_mode(str(payload.pop("mode")), **mode_args)
        elif mode_args:
            raise ValueError("status, retry_after, count and hang_seconds need a mode")
        self.configure(**payload)
        with self._lock:
            return {**self._options, **self._fault, "api_key": bool(self._options["api_key"])}

    # -- internals used by the handler -------------------------------------------------------

    def _track(self, connection: socket.socket, alive: bool) -> None:
        with self._lock:
            if alive:
                self._connections.add(connection)
            else:
                self._connections.discard(connection)

    def _begin(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """Count a request; return the options and the fault to apply to it."""
        with self._lock:
            self._stats["requests"] += 1
            self._in_flight += 1
            self._stats["max_concurrent"] = max(self._stats["max_concurrent"], self._in_flight)
            fault = dict(self._fault)
            if fault["mode"] == "fail_first":
                if self._fault["remaining"] > 0:
                    self._fault["remaining"] -= 1
                    fault["mode"] = "status"
                else:
                    fault["mode"] = "ok"
            return dict(self._options), fault

    def _end(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def _record(self, *, batch: int | None = None, embedded: int = 0) -> None:
        with self._lock:
            if batch is not None:
                self._stats["batch_sizes"].append(batch)
            self._stats["inputs"] += embedded


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # server_close() must not wait for handlers
    fake: FakeEmbedServer


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 30  # an idle keep-alive connection ends its thread eventually
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def setup(self) -> None:
        super().setup()
        # Headers and body go out in separate writes; without this, Nagle's algorithm and the
        # client's delayed ACK add ~40 ms to every answer.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.fake._track(self.connection, True)

    def finish(self) -> None:
        try:
            super().finish()
        except OSError:
            pass
        finally:
            self.server.fake._track(self.connection, False)

    # -- routes ------------------------------------------------------------------------------

    def do_GET(self) -> None:
        fake = self.server.fake
        if self.path == "/health":
            self._json(200, {"status": "ok"})
        elif self.path == "/stats":
            self._json(200, fake.stats())
        elif self.path == "/v1/models":
            model = fake.control({})["model"]
            self._json(200, {"object": "list", "data": [{"id": model, "object": "model"}]})
        else:
            self._error(404, "unknown route")

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path == "/control":
            try:
                payload = json.loads(body or b"{}")
                if not isinstance(payload, dict):
                    raise ValueError("body must be a JSON object")
                self._json(200, self.server.fake.control(payload))
            except (ValueError, TypeError) as exc:
                self._error(400, str(exc))
            return
        if self.path != "/v1/embeddings":
            self._error(404, "unknown route")
            return
        options, fault = self.server.fake._begin()
        try:
            self._embeddings(body, options, fault)
        finally:
            self.server.fake._end()

    def _embeddings(self, body: bytes, options: dict[str, Any], fault: dict[str, Any]) -> None:
        fake = self.server.fake
        mode = fault["mode"]
        fake.asked.set()
        fake._released.wait()  # stop() releases too
        if options["delay_ms"]:
            fake._stopping.wait(options["delay_ms"] / 1000)
        if mode == "refuse":
            self._reset()
            return
        if mode == "hang" and fake._stopping.wait(fault["hang_seconds"]):
            self._reset()
            return
        if mode == "status":
            self._injected_status(fault, options)
            return
        if (
            options["api_key"]
            and self.headers.get("Authorization") != f"Bearer {options['api_key']}"
        ):
            self._error(401, "invalid api key", "authentication_error")
            return
        try:
            request = json.loads(body)
            raw = request["input"]
        except (ValueError, TypeError, KeyError):
            self._error(400, "body must be JSON with 'input'")
            return
        if request.get("model") != options["model"]:
            self._model_not_found(request.get("model"))
            return
        texts = [raw] if isinstance(raw, str) else raw
        if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
            self._error(400, "'input' must be a string or a non-empty array of strings")
            return
        fake._record(batch=len(texts))
        if options["max_batch"] and len(texts) > options["max_batch"]:
            self._error(413, f"at most {options['max_batch']} inputs per request")
            return
        if mode == "huge":
            self._huge()
            return
        if mode == "html":
            self._raw(200, b"<!doctype html><html><body>Please log in</body></html>", "text/html")
            return
        if mode == "redirect":
            headers = [("Location", "https://login.example.com/")]
            self._raw(302, b"", "text/plain", headers)
            return
        if mode == "bad_encoding":
            self._raw(
                200, b'{"data": "not gzip"}', "application/json", [("Content-Encoding", "gzip")]
            )
            return
        dim = options["dim"] + (1 if mode == "wrong_dim" else 0)
        data: list[dict[str, Any]] = [
            {"object": "embedding", "index": i, "embedding": fake_embedding(text, dim)}
            for i, text in enumerate(texts)
        ]
        if mode == "nan":
            data[0]["embedding"][0] = float("nan")
        if mode == "inf":
            data[0]["embedding"][0] = float("inf")  # written as the bare token Infinity
        if mode == "zero":
            data[0]["embedding"] = [0.0] * dim
        if mode == "short":
            data.pop()
        if options["reverse"]:
            data.reverse()  # clients must place vectors by "index"
        fake._record(embedded=len(texts))
        tokens = sum(len(TOKEN.findall(text)) for text in texts)
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        self._json(200, {"object": "list", "data": data, "model": options["model"], "usage": usage})

    # -- answers -----------------------------------------------------------------------------

    def _injected_status(self, fault: dict[str, Any], options: dict[str, Any]) -> None:
        status = fault["status"]
        headers = []
        if fault["retry_after"] is not None and status in (429, 503):
            headers.append(("Retry-After", str(fault["retry_after"])))
        if status == 401:
            self._error(401, "invalid api key", "authentication_error")
        elif status == 404:
            self._model_not_found(options["model"])
        else:
            self._error(status, "injected failure", "server_error", headers)

    def _model_not_found(self, model: object) -> None:
        self._error(
            404, f"model {model!r} not found", "invalid_request_error", [], "model_not_found"
        )

    def _error(
        self,
        status: int,
        message: str,
        kind: str = "invalid_request_error",
        headers: Sequence[tuple[str, str]] = (),
        code: str | None = None,
    ) -> None:
        error = {"message": message, "type": kind, "code": code}
        self._json(status, {"error": error}, headers)

    def _json(self, status: int, payload: object, headers: Sequence[tuple[str, str]] = ()) -> None:
        body = json.dumps(payload).encode()  # NaN is written as the bare token NaN, on purpose
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _raw(
        self,
        status: int,
        body: bytes,
        content_type: str,
        headers: Sequence[tuple[str, str]] = (),
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _huge(self) -> None:
        """Stream ~100 MB of one endless vector, a MiB at a time, until done or the client goes."""
        self.close_connection = True
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Connection", "close")  # no Content-Length: the body ends at close
        self.end_headers()
        chunk = b"0.0," * (256 * 1024)
        try:
            self.wfile.write(
                b'{"object":"list","data":[{"object":"embedding","index":0,"embedding":['
            )
            for _ in range(HUGE_BYTES // len(chunk)):
                if self.server.fake._stopping.is_set():
                    break
                self.wfile.write(chunk)
            self.wfile.write(b"0.0]}]}")
        except OSError:
            pass  # the client stopped reading, as it should

    def _reset(self) -> None:
        """Drop the connection with a TCP reset, as a crashed or restarting server would."""
        self.close_connection = True
        try:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
        except OSError:
            pass


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--model", default="fake-embed")
    parser.add_argument("--api-key", default="")
    parser.add_argument("--reverse", action="store_true")
    parser.add_argument("--max-batch", type=int, default=0)
    parser.add_argument("--delay-ms", type=int, default=0)
    parser.add_argument("--mode", choices=MODES, default="ok")
    parser.add_argument("--status", type=int, default=500)
    parser.add_argument("--retry-after", default=None)
    parser.add_argument("--fail-first", type=int, default=0, metavar="N")
    args = parser.parse_args(argv)
    server = FakeEmbedServer(
        host=args.host,
        port=args.port,
        dim=args.dim,
        model=args.model,
        api_key=args.api_key,
        reverse=args.reverse,
        max_batch=args.max_batch,
        delay_ms=args.delay_ms,
    )
    mode = "fail_first" if args.fail_first else args.mode
    server.set_mode(mode, status=args.status, retry_after=args.retry_after, count=args.fail_first)
    server.start()
    print(f"PORT {server.port}", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


if __name__ == "__main__":
    main()
