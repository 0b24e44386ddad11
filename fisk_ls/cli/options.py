"""The CLI's shared options and argument checks.

``--config``, ``--store-dir`` and ``--json`` may be given on ``fisk-ai``, on ``knowledge`` and on
each subcommand; their callbacks fill one :class:`Context` (the last one given wins). A search's
arguments are checked by the core's one check of a request (``check_request``), in the command's
own words (a usage error naming the limit).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from ..knowledge import TOP_K, RequestError, SearchRequest, Settings, shown
from .context import (
    Context,
    emit_json,
    fail,
    guarded,
    request_root,
)
from .context import search_request as checked_request
from .flags import SHARED, SPELLING, Flag, top_k_value

__all__ = ["Context", "emit_json", "fail"]

F = TypeVar("F", bound=Callable[..., Any])


def project_option(fn: F) -> F:
    """``--project DIR`` (repeatable): search several projects as one."""
    return click.option(
        "--project",
        "projects",
        multiple=True,
        type=click.Path(path_type=Path, file_okay=False, exists=True),
        metavar="DIR",
        help="Search the project DIR belongs to (its root and index found as usual); "
        "repeatable: the projects' hits are merged by score, each naming its project.",
    )(fn)


def state(ctx: click.Context) -> Context:
    root = ctx.find_root()
    if not isinstance(root.obj, Context):
        root.obj = Context()
    return root.obj


def _remember(ctx: click.Context, param: click.Parameter, value: Any) -> None:
    if value is None or value is False:
        return
    name = {"as_json": "as_json", "config": "config", "store_dir": "store_dir"}[param.name or ""]
    setattr(state(ctx), name, value)


SHARED_TYPES: dict[str, click.ParamType[Any]] = {
    "config": click.Path(path_type=Path, dir_okay=False),
    "store_dir": click.Path(path_type=Path, file_okay=False),
}
"""The shared options' values that click converts (flags.py defines the options)."""


def option(flag: Flag, types: dict[str, click.ParamType[Any]], **extra: Any) -> Callable[[F], F]:
    """The click option of ``flag`` (flags.py), its value converted by ``types[flag.dest]``."""
    kind: dict[str, Any] = (
        {"is_flag": True}
        if flag.kind == "flag"
        else {"multiple": True}
        if flag.kind == "many"
        else {"default": None}
    )
    if flag.dest in types:
        kind["type"] = types[flag.dest]
    if flag.metavar is not None:
        kind["metavar"] = flag.metavar
    return click.option(flag.name, flag.dest, help=flag.help, **kind, **extra)


def shared_options(*, json_flag: bool = True) -> Callable[[F], F]:
    """--config / --store-dir (/ --json) on a group or command; they fill the one Context."""

    def decorate(fn: F) -> F:
        for flag in reversed(SHARED):
            if json_flag or flag.dest != "as_json":
                fn = option(flag, SHARED_TYPES, expose_value=False, callback=_remember)(fn)
        return fn

    return decorate


def knowledge_command(fn: F) -> F:
    """Shared options and error conversion (``context.guarded``) for every knowledge
    command."""

    def wrapper(ctx: click.Context, /, **kwargs: Any) -> Any:
        obj = state(ctx)
        return guarded(obj, lambda: fn(obj, **kwargs))

    functools.update_wrapper(wrapper, fn)
    return shared_options()(click.pass_context(wrapper))  # type: ignore[return-value]


class TopK(click.ParamType[int]):
    """--top-k: an integer (its range is the request's to check: :func:`search_request`)."""

    name = "integer"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        try:
            return top_k_value(str(value))
        except ValueError:
            self.fail(f"expected {TOP_K.limits()}, got {shown(value)}", param, ctx)


_PARAMETERS = {"query": "query", "top_k": "top_k", "also": "also"}
"""The request's fields whose errors are click's own (``Invalid value for '--top-k': ...``)."""


def search_request(obj: Context, values: dict[str, Any], here: bool) -> SearchRequest:
    """The search command's request (``context.search_request``). A bad query, --top-k or
    --also is click's BadParameter, a bad --tag a usage error, a bad --path or --exclude a
    usage error naming the project root."""
    try:
        return checked_request(obj, values, here=here)
    except RequestError as exc:
        raise _usage_error(exc, request_root(obj, values, here=here)) from None


def _usage_error(exc: RequestError, root: str | None) -> click.UsageError:
    """The click error for a request's bad field (see :func:`search_request`)."""
    ctx = click.get_current_context()
    param = _PARAMETERS.get(exc.field)
    if param is not None:
        found = next(p for p in ctx.command.params if p.name == param)
        spelled = SPELLING.of(exc.field)
        return click.BadParameter(str(exc).removeprefix(f"{spelled}: "), ctx, found)
    if exc.field == "tags" or root is None or root in str(exc):
        return click.UsageError(str(exc))
    return click.UsageError(f"{exc} (project root: {root})")


def check_expansion(settings: Settings) -> None:
    """``--expand`` needs an expander: a usage error naming the setting when none is set."""
    expansion = settings.expansion
    if expansion is None or expansion.provider != "openai":
        where = settings.config_path or "agent.yaml"
        raise click.UsageError(
            "--expand needs a language model: set harness.knowledge.expansion in "
            f"{where} (base_url and model of an OpenAI-compatible chat server, e.g. "
            "{base_url: http://127.0.0.1:11434/v1, model: llama3.2} for Ollama)"
        )


def missing_mcp_message(exc: ImportError) -> str:
    """What to run when the optional MCP SDK is missing (a command that works as written)."""
    return (
        f"the MCP server needs the optional 'mcp' extra ({exc}); install it into the "
        f"environment fisk-ai runs in: {sys.executable} -m pip install 'mcp>=2.3,<3' "
        "(or reinstall from a checkout with: pipx install --force '.[mcp]')"
    )
