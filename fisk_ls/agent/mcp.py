"""`fisk-ai mcp`: serve `knowledge_search` over MCP (stdio, or streamable HTTP with ``--http``).

Built on the official ``mcp`` SDK's low-level ``Server`` (2.x): our own input schema, tool
annotations, and results carrying both the tool's JSON as text and the same object as
structured content. The tool is served only when ``expose.agent.mcp.builtins`` in agent.yaml
lists it; otherwise the server starts with no tools and says on stderr how to expose it. The
SDK serves both protocol versions a client may ask for (tests/agent/mcp/test_protocol_versions.py):
2025-11-25 (``initialize``; HTTP sessions) and 2026-07-28 (``server/discover``; each HTTP request
on its own, no session), behind the same token, caps and deadlines.

The store is opened read-only once (``Knowledge``) and shared by every session: an index built
after the server started is found on the next call, and searches run in the server's own worker
threads, a few at a time, so concurrent calls are safe and never block the event loop; each
thread keeps its read connection for the server's life (``SearchThreads``). stdout belongs to
the stdio protocol: everything this module says goes to stderr.

The HTTP transport's edges are in http.py, its limits in http_limits.py.
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import sys
import weakref
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
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
    SearchRequest,
    Settings,
    Status,
    bounded,
    one_line,
    resolve_settings,
)
from .http import (
    DEFAULT_HOST,
    MCP_PATH,
    BearerAuth,
    bearer_token,
    http_app,
    is_loopback,
    serve_http,
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
            f"the index is not built yet: {KNOWLEDGE_SEARCH} answers {Status.INDEX_NOT_BUILT} "
            f"until `fisk-ai knowledge index --config {path}` runs (no restart needed)"
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


class SearchThreads:
    """The threads searches run on: ``short`` for ordinary requests, ``long`` for long ones
    (``SearchRequest.long``), each lane a fixed set of threads started as calls need them and
    kept for the server's life. A search waits for a free thread of its lane, first come first
    served; one its caller gave up on keeps its thread until it has stopped (its deadline is
    cancelled, deadline.py), so the lanes never hold more searches than threads.

    The store keeps one read connection per thread (``Store``), with its own page cache; on
    threads that come and go (anyio's pool ends a thread idle for 10 s), every burst of calls
    after a pause opened new connections, cold, and the old ones stayed open."""

    def __init__(self, short: int, long: int) -> None:
        self.short = ThreadPoolExecutor(short, thread_name_prefix="fisk-mcp-search")
        self.long = ThreadPoolExecutor(long, thread_name_prefix="fisk-mcp-long")

    async def search(self, tool: KnowledgeTool, request: SearchRequest) -> dict[str, Any]:
        """``tool.search(request)`` on a thread of its lane; cancelled, the call returns at
        once (a search not yet started never starts)."""
        lane = self.long if request.long else self.short
        return await asyncio.wrap_future(lane.submit(tool.search, request))

    def close(self) -> None:
        for lane in (self.short, self.long):
            lane.shutdown(wait=False, cancel_futures=True)


YOUNG_OBJECTS = 10_000
"""The server's threshold for the collector's youngest generation (CPython's default: 700)."""


def _settle_collector() -> None:
    """The garbage collector set for a long-lived server (bench/tuning.md, "MCP over HTTP:
    concurrent calls, round 3"). What start-up made (modules, the SDK's models, the tool) lives
    as long as the server: frozen, the full passes skip it (each walked it all, every thread
    stopped: about 50 ms every few seconds under calls in flight; about 3 ms frozen). A call
    makes and frees thousands of objects (rows, tokens, hits, the SDK's models): the youngest
    generation collected every ``YOUNG_OBJECTS`` objects rather than 700 cost a quarter of
    the collector's time under calls in flight."""
    gc.freeze()
    gc.set_threshold(YOUNG_OBJECTS)


def build_server(
    tool: KnowledgeTool | None,
    *,
    max_concurrent: int = MAX_CONCURRENT_SEARCHES,
    timeout: float = CALL_TIMEOUT_SECONDS,
) -> Server[Any]:
    """The low-level MCP server: lists and runs ``knowledge_search`` when ``tool`` is given.

    Each call's arguments are parsed once, into the core's request. Searches run on
    ``max_concurrent`` worker threads, and long requests (``SearchRequest.long``) on
    ``MAX_CONCURRENT_LONG`` of their own, so any number of them leaves ordinary searches their
    threads (as the language server's lanes); the threads end with the server
    (``SearchThreads``). A search still running at ``timeout`` (or when its caller cancels) is
    answered with the timeout's error and stopped there (deadline.py): it frees its core and
    its thread."""
    threads = SearchThreads(max_concurrent, MAX_CONCURRENT_LONG)
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
        # The search stops at the same time limit (deadline.py), and when the client cancels:
        # an abandoned thread would go on using a core and a connection.
        deadline = Deadline.after(timeout)
        try:
            request = tool.parse(params.arguments or {}, deadline)
        except ToolInputError as exc:
            log.info("Running %s", NAME)
            if _arguments_are_protocol_errors(ctx.protocol_version):
                raise MCPError(INVALID_PARAMS, one_line(str(exc), MAX_ERROR_CHARS)) from None
            return _error(str(exc))
        log.info("Running %s", trace(request))
        try:
            with anyio.fail_after(timeout):
                outcome = await threads.search(tool, request)
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

    server: Server[Any] = Server(
        SERVER_NAME,
        version=_version(),
        title="fisk-ls knowledge search",
        instructions=SYSTEM_NOTE if tool is not None else None,
        get_tool_input_schema=input_schema,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    weakref.finalize(server, threads.close)  # idle threads end with the server
    return server


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
            reach = "this machine only" if is_loopback(bind_host) else "other machines"
            log.warning(
                "WARNING: --host %s: the server is reachable from %s; every request must carry "
                "the bearer token",
                bounded(bind_host),
                reach,
            )
        token = bearer_token(token_env, required=host is not None)
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
    _settle_collector()
    try:
        if http:
            serve_http(server, bind_host, port, token)
        else:
            from .stdio import serve_stdio

            anyio.run(serve_stdio, server)
    except KeyboardInterrupt:  # pragma: no cover - interactive stop
        pass
    finally:
        if exposure.tool is not None:
            exposure.tool.close()


__all__ = [
    "MCP_PATH",
    "OUTPUT_SCHEMA",
    "TOOL",
    "BearerAuth",
    "build_server",
    "http_app",
    "serve",
]
