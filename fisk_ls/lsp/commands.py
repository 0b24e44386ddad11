"""``workspace/executeCommand``: fisk.knowledge.search / show / reindex / status.

Arguments are one object (``arguments: [{...}]``, docs/lsp-protocol.md). Bad arguments and
unknown citations are ``InvalidParams`` errors; a store that cannot be read is ``RequestFailed``
with the core's message (which says how to fix it).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from ..knowledge import (
    SHOW_CONTEXT,
    CitationError,
    Deadline,
    IndexStats,
    KnowledgeError,
    SearchCancelled,
    SettingError,
    Spelling,
    bounded,
    check_context,
    check_request,
    shown,
)
from . import results
from .convert import units
from .project import Merged
from .protocol import FiskProtocol
from .server import FiskLanguageServer

SEARCH = "fisk.knowledge.search"
SHOW = "fisk.knowledge.show"
REINDEX = "fisk.knowledge.reindex"
STATUS = "fisk.knowledge.status"
T = TypeVar("T")


def register(ls: FiskLanguageServer) -> None:
    ls.command(SEARCH)(search)
    ls.thread()(ls.command(SHOW)(show))
    ls.thread()(ls.command(STATUS)(status))
    ls.command(REINDEX)(reindex)


WIRE = {"query": "query", "topK": "top_k", "also": "also", "paths": "paths"}
WIRE |= {"tags": "tags", "expand": "expand"}
"""The search command's arguments → the request's fields."""

SPELLING = Spelling(top_k="topK")


async def search(ls: FiskLanguageServer, *args: Any) -> dict[str, Any]:
    """Arguments are checked on the event loop, so an over-long query is refused at once and
    never occupies a worker thread; the search itself runs on a thread of its lane (a long
    request never holds up a short one: lanes.py)."""
    params = one_object(SEARCH, args, set(WIRE))
    deadline = Deadline()
    try:
        values = {WIRE[key]: value for key, value in params.items()}
        request = check_request(values, SPELLING, deadline=deadline)
    except SettingError as exc:
        raise invalid(SEARCH, str(exc)) from None

    def scoped() -> Merged:
        try:
            return ls.projects.search(request)
        except SettingError as exc:  # a path outside every open project, or its root
            raise invalid(SEARCH, str(exc)) from None

    def run() -> dict[str, Any]:
        ls.wait_ready()
        merged = failing_as_rpc(scoped)
        return results.search_result(merged, units(ls.workspace.position_encoding))

    # $/cancelRequest stops the search itself (its running statement is interrupted), not
    # just the reply: the thread is free for the next search at once.
    with cancel_hook(ls, deadline.cancel):
        return await ls.search_lanes.run(request.long, run)


def show(ls: FiskLanguageServer, *args: Any) -> dict[str, Any]:
    params = one_object(SHOW, args, {"citation", "context"})
    citation = string_field(SHOW, params, "citation")
    try:
        context = check_context(params.get("context"), SHOW_CONTEXT, "context")
    except SettingError as exc:
        raise invalid(SHOW, str(exc)) from None
    ls.wait_ready()
    if not context:
        project, chunk = failing_as_rpc(lambda: ls.projects.show(citation))
        return results.show_result(chunk, project.root)
    project, chunks = failing_as_rpc(lambda: ls.projects.around(citation, context))
    return results.around_result(chunks, citation, project.root)


def status(ls: FiskLanguageServer, *args: Any) -> dict[str, Any]:
    one_object(STATUS, args, set())
    ls.wait_ready()
    opening = not ls.ready.is_set() or ls.opening > 0
    return failing_as_rpc(lambda: results.status_result(ls.projects, opening))


async def reindex(ls: FiskLanguageServer, *args: Any) -> dict[str, Any]:
    params = one_object(REINDEX, args, {"rebuild"})
    rebuild = params.get("rebuild", False)
    if not isinstance(rebuild, bool):
        raise invalid(REINDEX, f"rebuild must be true or false, got {shown(rebuild)}")
    await asyncio.to_thread(ls.wait_ready)
    projects = list(ls.projects)
    runs = [asyncio.wrap_future(p.request_full(rebuild)) for p in projects]
    with cancel_hook(ls, lambda: [p.cancel() for p in projects]):  # the runs, not just the reply
        done = await asyncio.gather(*runs, return_exceptions=True)
    if errors := [e for e in done if isinstance(e, BaseException)]:
        raise request_failed(str(errors[0]) or "index run cancelled")
    return results.stats_result([s for s in done if isinstance(s, IndexStats)])


@contextmanager
def cancel_hook(ls: FiskLanguageServer, hook: Callable[[], object]) -> Iterator[None]:
    """While inside, ``$/cancelRequest`` of the request being handled also calls ``hook``
    (pygls only cancels the request's outer future; ``msg_id`` is the current request's, a
    context variable of the handler's task)."""
    protocol = ls.protocol
    assert isinstance(protocol, FiskProtocol)
    rid = protocol.msg_id
    protocol.cancel_hooks[rid] = hook
    try:
        yield
    finally:
        protocol.cancel_hooks.pop(rid, None)


# -- arguments -----------------------------------------------------------------------------


def invalid(command: str, message: str) -> JsonRpcInvalidParams:
    return JsonRpcInvalidParams(bounded(f"{command}: {message}"))


def request_failed(message: str) -> JsonRpcException:
    return JsonRpcException(bounded(message), code=types.LSPErrorCodes.RequestFailed.value)


def one_object(command: str, args: tuple[Any, ...], known: set[str]) -> dict[str, Any]:
    """The single object argument (none at all is an empty object); unknown keys are errors."""
    if not args or args in ((None,), ([],)):  # Neovim sends ``{}`` in Lua as ``[[]]``
        return {}
    if len(args) != 1 or not isinstance(args[0], dict):
        shape = "{" + ", ".join(sorted(known)) + "}" if known else "no arguments"
        raise invalid(command, f"expected one object argument {shape}, got {list(args)!r:.200}")
    extra = sorted(set(args[0]) - known)
    if extra:
        names = ", ".join(sorted(known)) or "none"
        raise invalid(command, f"unknown argument(s) {shown(extra)} (known: {names})")
    return args[0]


def string_field(command: str, params: dict[str, Any], name: str) -> str:
    value = params.get(name)
    if not isinstance(value, str):
        raise invalid(command, f"{name} is required and must be a string")
    return value


def failing_as_rpc(call: Callable[[], T]) -> T:
    """Core failures → JSON-RPC errors: citations are bad params, a search stopped at its
    deadline RequestCancelled, the rest request failures."""
    try:
        return call()
    except SearchCancelled as exc:
        raise JsonRpcException(
            bounded(str(exc)), code=types.LSPErrorCodes.RequestCancelled.value
        ) from exc
    except CitationError as exc:
        raise JsonRpcInvalidParams(bounded(str(exc))) from exc
    except KnowledgeError as exc:
        raise request_failed(str(exc)) from exc
