"""`fisk-ai mcp`: serve `knowledge_search` over MCP (stdio, or streamable HTTP with ``--http``).

Built on the official ``mcp`` SDK's low-level ``Server`` (2.x): our own input schema, tool
annotations, and results carrying both the tool's JSON as text and the same object as
structured content. The tool is served only when ``expose.agent.mcp.builtins`` in agent.yaml
lists it; otherwise the server starts with no tools and says on stderr how to expose it. The
SDK serves both protocol versions a client may ask for (tests/agent/mcp/test_protocol_versions.py):
2025-11-25 (``initialize``; HTTP sessions) and 2026-07-28 (``server/discover``; each HTTP request
on its own, no session), behind the same token, caps and deadlines.

The store is opened read-only once (``Knowledge``) and shared by every session: an index built
after the server started is found on the next call, and searches run in worker threads, a few
at a time, so concurrent calls are safe and never block the event loop. stdout belongs to the
stdio protocol: everything this module says goes to stderr.

Over 400 lines on purpose: exposure, the handlers and the transports of one server are read
together (the HTTP limits already live in http_limits.py).
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
import os
import re
import socket
import sys
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from ..knowledge import (
    KNOWLEDGE_SEARCH,
    ConfigError,
    Deadline,
    KnowledgeDisabled,
    KnowledgeError,
    SearchCancelled,
    Settings,
    bounded,
    is_long_query,
    one_line,
    resolve_settings,
    shown,
)
from .tool import (
    DESCRIPTION,
    INPUT_SCHEMA,
    NAME,
    OUTPUT_SCHEMA,
    SYSTEM_NOTE,
    KnowledgeTool,
    ToolInputError,
    trace,
)

log = logging.getLogger("fisk_ls.mcp")

SERVER_NAME = "fisk-ls"
DEFAULT_HOST = "127.0.0.1"
MCP_PATH = "/mcp"
MAX_CONCURRENT_SEARCHES = 4
MAX_CONCURRENT_LONG = 2
CALL_TIMEOUT_SECONDS = 30.0
MAX_ERROR_CHARS = 500

ALLOWLIST_SNIPPET = f"""\
  harness:
    knowledge:
      enabled: true
  expose:
    agent:
      mcp:
        builtins: [{KNOWLEDGE_SEARCH}]"""

TOOL = types.Tool(
    name=NAME,
    title="Search project knowledge",
    description=DESCRIPTION,
    input_schema=INPUT_SCHEMA,
    output_schema=OUTPUT_SCHEMA,
    annotations=types.ToolAnnotations(
        title="Search project knowledge",
        read_only_hint=True,
        destructive_hint=False,
        idempotent_hint=True,
        open_world_hint=False,
    ),
)


# --------------------------------------------------------------------------------------------
# What to serve


@dataclass
class Exposure:
    """The resolved decision: the tool to serve (or None) and why, for the operator."""

    tool: KnowledgeTool | None
    notes: tuple[str, ...]


def _exposure(
    config: Path | None, store_dir: Path | None, projects: Sequence[Path] = ()
) -> Exposure:
    """The project's settings (agent.yaml explicit or found by the one discovery rule, read
    once) and the store opened when the tool is allowlisted; else no tool and why. With
    ``projects`` (``--project DIR``), each folder's project the same way, served as one tool
    over the ones that allowlist it."""
    if projects:
        return _several(projects, store_dir)
    cwd = Path.cwd().resolve()
    try:
        settings = resolve_settings(config, cwd=cwd, store_base=store_dir)
    except KnowledgeDisabled as exc:
        return Exposure(
            None,
            (
                f"knowledge is not enabled in {exc.path}: serving no tools. To expose "
                f"{KNOWLEDGE_SEARCH}, add to agent.yaml:\n{ALLOWLIST_SNIPPET}",
            ),
        )
    path = settings.config_path
    if path is None:
        return Exposure(
            None,
            (
                f"no agent.yaml found from {cwd} up to its project root: serving no tools. To "
                f"expose {KNOWLEDGE_SEARCH}, create agent.yaml in the project root (or pass "
                f"--config) with:\n{ALLOWLIST_SNIPPET}",
            ),
        )
    if KNOWLEDGE_SEARCH not in settings.mcp_builtins:
        return Exposure(
            None,
            (
                f"{KNOWLEDGE_SEARCH} is not allowlisted in {path}: serving no tools. To expose "
                f"it, add to agent.yaml:\n{ALLOWLIST_SNIPPET}",
            ),
        )
    tool: KnowledgeTool | None = None
    try:
        tool = KnowledgeTool(settings)
        tier = tool.knowledge.tier()
        built = tool.knowledge.built
    except KnowledgeError as exc:
        if tool is not None:
            tool.close()
        raise KnowledgeError(f"cannot expose {KNOWLEDGE_SEARCH} over MCP: {exc}") from exc
    notes = [f"serving {KNOWLEDGE_SEARCH}; knowledge {tier}; store {settings.store_dir}"]
    if not built:
        notes.append(
            f"the index is not built yet: {KNOWLEDGE_SEARCH} answers index_not_built until "
            f"`fisk-ai knowledge index --config {path}` runs (no restart needed)"
        )
    return Exposure(tool, tuple(notes))


def _several(folders: Sequence[Path], store_dir: Path | None) -> Exposure:
    """One ``knowledge_search`` over the projects of ``folders`` that allowlist it (each must,
    in its own agent.yaml); the others are named and left out."""
    chosen: list[Settings] = []
    notes: list[str] = []
    for folder in folders:
        if not folder.is_dir():
            raise ConfigError(f"--project {folder}: no such folder")
        try:
            settings = resolve_settings(cwd=folder.resolve(), store_base=store_dir)
        except KnowledgeDisabled as exc:
            notes.append(f"--project {folder}: knowledge is not enabled in {exc.path}; left out")
            continue
        if settings.config_path is None or KNOWLEDGE_SEARCH not in settings.mcp_builtins:
            notes.append(
                f"--project {folder}: {KNOWLEDGE_SEARCH} is not allowlisted in its agent.yaml; "
                f"left out. To serve it, add to agent.yaml:\n{ALLOWLIST_SNIPPET}"
            )
            continue
        if all(s.store_dir != settings.store_dir for s in chosen):
            chosen.append(settings)
    if not chosen:
        return Exposure(None, (*notes, "no --project allowlists it: serving no tools"))
    try:
        tool = KnowledgeTool(chosen[0], more=chosen[1:])
    except KnowledgeError as exc:
        raise KnowledgeError(f"cannot expose {KNOWLEDGE_SEARCH} over MCP: {exc}") from exc
    names = ", ".join(f"{p.name} ({p.settings.store_dir})" for p in tool.projects)
    return Exposure(tool, (*notes, f"serving {KNOWLEDGE_SEARCH} over {names}"))


# --------------------------------------------------------------------------------------------
# The MCP server


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("fisk-ls")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0"


def _error(message: str) -> types.CallToolResult:
    text = one_line(message, MAX_ERROR_CHARS)
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def _success(outcome: dict[str, Any]) -> types.CallToolResult:
    text = json.dumps(outcome, ensure_ascii=False, separators=(",", ":"))
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=outcome,
        is_error=False,
    )


TOOL_ERRORS_FOR_ARGUMENTS = "2025-11-25"
"""From this protocol version on, invalid arguments are a tool execution error (``isError``,
which the model sees and can correct); before it (2025-06-18, 2025-03-26) the specification
lists them with unknown tools as protocol errors (JSON-RPC -32602)."""


def _arguments_are_protocol_errors(protocol_version: str) -> bool:
    return protocol_version < TOOL_ERRORS_FOR_ARGUMENTS  # versions are ISO dates


def build_server(
    tool: KnowledgeTool | None,
    *,
    max_concurrent: int = MAX_CONCURRENT_SEARCHES,
    timeout: float = CALL_TIMEOUT_SECONDS,
) -> Server[Any]:
    """The low-level MCP server: lists and runs ``knowledge_search`` when ``tool`` is given.

    Searches run in worker threads, ``max_concurrent`` at a time, and long queries
    (``fts.is_long_query``) at most ``MAX_CONCURRENT_LONG`` of their own at a time, so any
    number of them leaves ordinary searches their threads (as the language server's lanes).
    A search still running at ``timeout`` (or when its caller cancels) is answered with the
    timeout's error and stopped there (deadline.py): it frees its core and its thread."""
    limiter = anyio.CapacityLimiter(max_concurrent)
    long_limiter = anyio.CapacityLimiter(MAX_CONCURRENT_LONG)
    tools = [TOOL] if tool is not None else []

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        if tool is None or params.name != NAME:  # a protocol error in every version
            raise MCPError(INVALID_PARAMS, f"Unknown tool: {one_line(params.name, 100)}")
        args: dict[str, Any] = dict(params.arguments or {})
        log.info("Running %s", trace(args))
        query = args.get("query")
        lane = long_limiter if isinstance(query, str) and is_long_query(query) else limiter
        # The search stops at the same time limit (deadline.py), and when the client cancels:
        # an abandoned thread would go on using a core and a connection.
        deadline = Deadline.after(timeout)
        try:
            with anyio.fail_after(timeout):
                outcome = await anyio.to_thread.run_sync(
                    partial(tool.call, args, deadline), limiter=lane, abandon_on_cancel=True
                )
        except ToolInputError as exc:
            if _arguments_are_protocol_errors(ctx.protocol_version):
                raise MCPError(INVALID_PARAMS, one_line(str(exc), MAX_ERROR_CHARS)) from None
            return _error(str(exc))
        except (TimeoutError, SearchCancelled):
            return _error(f"{NAME}: the search took longer than {timeout:g}s")
        except KnowledgeError as exc:
            log.warning("%s failed: %s", NAME, one_line(str(exc), MAX_ERROR_CHARS))
            return _error(f"{NAME}: {exc}")
        except Exception as exc:  # a bug: keep the server up, the traceback on stderr only
            log.exception("%s failed unexpectedly", NAME)
            return _error(f"{NAME}: internal error ({type(exc).__name__})")
        finally:
            deadline.cancel()  # answered, timed out or cancelled by the client: stop the search
        return _success(outcome)

    def input_schema(name: str) -> dict[str, Any] | None:
        return INPUT_SCHEMA if tool is not None and name == NAME else None

    return Server(
        SERVER_NAME,
        version=_version(),
        title="fisk-ls knowledge search",
        instructions=SYSTEM_NOTE if tool is not None else None,
        get_tool_input_schema=input_schema,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


# --------------------------------------------------------------------------------------------
# Transports

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


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _token(token_env: str | None, required: bool) -> str | None:
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
    other (bench/mcp_speed.py: 17 against 56 calls/s with eight in flight on one session)."""
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


def _serve_http(server: Server[Any], host: str, port: int, token: str | None) -> None:
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


def _configure_logging() -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("fisk-ai mcp: %(message)s"))
    log.handlers[:] = [handler]
    log.setLevel(logging.INFO)
    log.propagate = False
    root = logging.getLogger()
    if not root.handlers:
        root_handler = logging.StreamHandler(sys.stderr)
        root_handler.setFormatter(logging.Formatter("fisk-ai mcp: %(name)s: %(message)s"))
        root.addHandler(root_handler)
    root.setLevel(logging.WARNING)


def serve(
    *,
    config: Path | None = None,
    store_dir: Path | None = None,
    http: bool = False,
    host: str | None = None,
    port: int = 8080,
    token_env: str | None = None,
    projects: Sequence[Path] = (),
) -> None:
    """Run the MCP server until the client disconnects (stdio) or the process is stopped;
    ``projects``: serve one ``knowledge_search`` over the projects of these folders."""
    _configure_logging()
    token: str | None = None
    bind_host = DEFAULT_HOST
    if http:
        if host is not None:
            bind_host = host.strip()
            if not bind_host:
                raise ConfigError("--host must not be empty")
            reach = "this machine only" if _is_loopback(bind_host) else "other machines"
            log.warning(
                "WARNING: --host %s: the server is reachable from %s; every request must carry "
                "the bearer token",
                bounded(bind_host),
                reach,
            )
        token = _token(token_env, required=host is not None)
        if not 0 <= port <= 65535:
            raise ConfigError(f"--port must be between 0 and 65535, got {port}")
    elif host is not None or token_env is not None:
        raise ConfigError("--host and --token-env apply to --http only (stdio needs neither)")

    if projects and config is not None:
        raise ConfigError("--config does not combine with --project: each project's own is used")
    exposure = _exposure(config, store_dir, projects)
    for note in exposure.notes:
        log.info("%s", note)
    server = build_server(exposure.tool)
    try:
        if http:
            _serve_http(server, bind_host, port, token)
        else:
            from .stdio import serve_stdio

            anyio.run(serve_stdio, server)
    except KeyboardInterrupt:  # pragma: no cover - interactive stop
        pass
    finally:
        if exposure.tool is not None:
            exposure.tool.close()


__all__ = ["OUTPUT_SCHEMA", "TOOL", "BearerAuth", "build_server", "http_app", "serve"]
