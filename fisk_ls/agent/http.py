"""`fisk-ai mcp --http`: the streamable HTTP transport's edges (a bearer token, no event
stream, the socket) around the MCP SDK's app; http_limits.py holds the deadlines and caps."""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
import os
import re
import socket
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from mcp.server.lowlevel import Server

from ..knowledge import ConfigError, KnowledgeError, bounded, one_line, shown

log = logging.getLogger("fisk_ls.mcp")

DEFAULT_HOST = "127.0.0.1"
MCP_PATH = "/mcp"

ASGIApp = Callable[
    [MutableMapping[str, Any], Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]],
    Awaitable[None],
]


async def _send_json(
    send: Callable[[Any], Awaitable[None]],
    status: int,
    body: dict[str, Any],
    headers: list[tuple[bytes, bytes]] | None = None,
) -> None:
    data = json.dumps(body, separators=(",", ":")).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(data)).encode()),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": data})


RESOURCE_METADATA_PATH = "/.well-known/oauth-protected-resource"
"""OAuth 2.0 Protected Resource Metadata (RFC 9728), which the MCP authorization specification
tells clients to read on a 401. It lists no authorization server: the token is a static one
the user passes as a header (SECURITY.md says how, client by client)."""


HOST_HEADER = re.compile(
    r"(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})|\[[0-9A-Fa-f:.]{2,45}\])(?::[0-9]{1,5})?"
)
"""A Host header that can stand in a URL as it is: a name or IPv4 address, or an IPv6 address in
brackets, and an optional port (nothing that could break the quoted challenge)."""


def _origin(scope: MutableMapping[str, Any]) -> str:
    """The origin the client asked for: its Host header when that is a plain host[:port], else
    the address the connection arrived at. Clients check that the metadata's ``resource`` is the
    URL they used (the MCP Inspector refuses to go on otherwise), and a client of
    ``http://localhost:8080/mcp`` or ``http://build-box:8080/mcp`` reaches a socket on
    127.0.0.1 or 192.0.2.7."""
    scheme = scope.get("scheme", "http")
    hosts = [v for k, v in scope.get("headers", []) if k.lower() == b"host"]
    if len(hosts) == 1:
        given = bytes(hosts[0]).decode("ascii", "replace")
        if HOST_HEADER.fullmatch(given):
            return f"{scheme}://{given}"
    host, port = scope.get("server") or (DEFAULT_HOST, 80)
    bracketed = f"[{host}]" if ":" in str(host) else host
    return f"{scheme}://{bracketed}:{port}"


class BearerAuth:
    """ASGI middleware: every HTTP request must carry ``Authorization: Bearer <token>``.

    A 401 says where the resource metadata is (``WWW-Authenticate: Bearer resource_metadata=…``,
    as the MCP authorization specification asks) and closes the connection, so unauthenticated
    connections do not linger; the metadata itself is served without a token."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._token = token.encode()

    def _credentials(self, scope: MutableMapping[str, Any]) -> bool | None:
        """True: the token; False: other credentials; None: none sent."""
        values = [v for k, v in scope.get("headers", []) if k.lower() == b"authorization"]
        if not values:
            return None
        if len(values) != 1:
            return False
        scheme, _, given = bytes(values[0]).partition(b" ")
        return scheme.lower() == b"bearer" and hmac.compare_digest(given.strip(), self._token)

    async def __call__(
        self,
        scope: MutableMapping[str, Any],
        receive: Callable[[], Awaitable[Any]],
        send: Callable[[Any], Awaitable[None]],
    ) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        if scope["type"] == "http" and path in (
            RESOURCE_METADATA_PATH,
            RESOURCE_METADATA_PATH + MCP_PATH,
        ):
            metadata = {
                "resource": _origin(scope) + MCP_PATH,
                "authorization_servers": [],
                "bearer_methods_supported": ["header"],
                "resource_name": "fisk-ls knowledge search",
            }
            await _send_json(send, 200, metadata)
            return
        if scope["type"] == "http" and path.startswith("/.well-known/"):
            # The authorization server's metadata (RFC 8414, OpenID discovery), which clients
            # look for after the resource's: there is none, the token is given by hand.
            body = {"error": "not found: no authorization server; the token is set by hand"}
            await _send_json(send, 404, body)
            return
        credentials = self._credentials(scope)
        if credentials is True:
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        metadata_url = _origin(scope) + RESOURCE_METADATA_PATH + MCP_PATH
        challenge = f'Bearer realm="fisk-ai mcp", resource_metadata="{metadata_url}"'
        if credentials is False:  # RFC 6750: an error code only when credentials were sent
            challenge += ', error="invalid_token"'
        body = {
            "error": "unauthorized" if credentials is None else "invalid_token",
            "error_description": "send the token as the header Authorization: Bearer <token>",
        }
        headers = [(b"www-authenticate", challenge.encode()), (b"connection", b"close")]
        await _send_json(send, 401, body, headers)


class NoEventStream:
    """ASGI middleware: ``GET /mcp`` answers 405, which the streamable HTTP transport allows for
    a server that offers no stream of its own. This one sends nothing unprompted (one tool, no
    notifications), so a stream would only hold a connection: 64 idle ones kept every new
    client out. Replies to requests come back on their POST.

    Every other method but POST and DELETE gets the same 405 and ``Allow`` here: the SDK's own
    405 listed GET as allowed and carried the id of a session it had just opened and dropped."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(
        self,
        scope: MutableMapping[str, Any],
        receive: Callable[[], Awaitable[Any]],
        send: Callable[[Any], Awaitable[None]],
    ) -> None:
        method = scope.get("method")
        if (
            scope["type"] == "http"
            and method not in ("POST", "DELETE")
            and scope.get("path") == MCP_PATH
        ):
            if method == "GET":
                text = "this server offers no event stream; POST requests to " + MCP_PATH
            else:
                text = f"{one_line(str(method), 20)} is not allowed: POST requests to {MCP_PATH}"
            await _send_json(send, 405, {"error": text}, [(b"allow", b"POST, DELETE")])
            return
        await self.app(scope, receive, send)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def bearer_token(token_env: str | None, required: bool) -> str | None:
    if not token_env:
        if required:
            raise ConfigError(
                "--host binds beyond the default 127.0.0.1, so a bearer token is required: put "
                "a secret in an environment variable and pass --token-env NAME"
            )
        return None
    value = os.environ.get(token_env, "").strip()
    if not value:
        raise ConfigError(
            f"--token-env {shown(token_env)}: that environment variable is unset or empty"
        )
    return value


def _bind(host: str, port: int) -> socket.socket:
    try:
        family, kind, proto, _, addr = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        sock = socket.socket(family, kind, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        sock.bind(addr)
    except OSError as exc:
        where = bounded(f"{host}:{port}")
        raise KnowledgeError(f"cannot listen on {where}: {exc.strerror or exc}") from exc
    sock.listen(128)
    sock.setblocking(False)
    return sock


def _url(host: str, sock: socket.socket) -> str:
    port = sock.getsockname()[1]
    bracketed = f"[{host}]" if ":" in host else host
    return f"http://{bracketed}:{port}{MCP_PATH}"


def http_app(
    server: Server[Any],
    host: str,
    token: str | None,
    *,
    session_idle: float | None = None,
    max_sessions: int | None = None,
) -> ASGIApp:
    """The streamable HTTP app ``--http`` serves: sessions expire after ``session_idle``
    seconds without a request and at most ``max_sessions`` are open (defaults: http_limits.py);
    behind the bearer check when ``token`` is set.

    Each call is answered with one JSON body, not an event stream: the tool sends nothing
    before its result (no progress, no requests to the client), and a stream per call cost
    a task group and a stream writer per request, and held a session's calls one behind the
    other (bench/tuning.md has the measurement)."""
    from . import http_limits

    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        json_response=True,  # a reply is one JSON body: no stream per call (see http_app)
        host=host,
        session_idle_timeout=session_idle or http_limits.SESSION_IDLE_SECONDS,
        max_sessions=max_sessions or http_limits.MAX_SESSIONS,
    )
    app.add_middleware(NoEventStream)
    return BearerAuth(app, token) if token is not None else app


def serve_http(server: Server[Any], host: str, port: int, token: str | None) -> None:
    import uvicorn

    from .http_limits import GuardedH11, throttle_logs

    app = http_app(server, host, token)
    sock = _bind(host, port)
    log.info(
        "listening on %s (streamable HTTP%s)",
        _url(host, sock),
        ", bearer token required" if token else "",
    )
    config = uvicorn.Config(
        app,
        log_config=None,
        log_level="warning",
        access_log=False,
        lifespan="on",
        http=GuardedH11,  # head and body deadlines, connection caps
    )
    throttle_logs("uvicorn.error")  # a flood of connections writes a line now and then
    uvicorn.Server(config).run(sockets=[sock])
