"""The CLI's shared options and argument checks.

``--config``, ``--store-dir`` and ``--json`` may be given on ``fisk-ai``, on ``knowledge`` and on
each subcommand; their callbacks fill one :class:`Context` (the last one given wins). A search's
arguments are checked by the core's one check of a request (``check_request``), in the command's
own words (a usage error naming the limit).
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from ..knowledge import (
    TOP_K,
    Cancelled,
    KnowledgeError,
    RequestError,
    SearchRequest,
    Settings,
    Spelling,
    bounded,
    check_request,
    resolve_settings,
    shown,
    store_error,
)

if TYPE_CHECKING:
    from ..knowledge import Knowledge, Project, ProjectSet

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")


class Context:
    """The shared options, wherever on the command line they were given."""

    def __init__(
        self, config: Path | None = None, store_dir: Path | None = None, as_json: bool = False
    ) -> None:
        self.config = config
        self.store_dir = store_dir
        self.as_json = as_json

    def settings(self) -> Settings:
        return resolve_settings(self.config, store_base=self.store_dir)

    def project(self) -> Project:
        """The command's project (the caller closes it); one query per process: exact KNN is
        cheaper than loading the coarse index."""
        from ..knowledge import Project

        return Project(self.settings(), coarse_knn=False)

    def projects(self, folders: tuple[Path, ...]) -> ProjectSet:
        """The projects of ``--project`` folders, searched as one (the caller closes them);
        each finds its own root, agent.yaml and store, so --config does not apply."""
        from ..knowledge import ProjectSet

        if self.config is not None:
            raise click.UsageError(
                "--config does not combine with --project: each project's own agent.yaml is used"
            )
        return ProjectSet.open(list(folders), store_base=self.store_dir, coarse_knn=False)

    def read(self, fn: Callable[[Knowledge], T]) -> tuple[Settings, T]:
        """Open the index read-only, call ``fn`` with it, close it."""
        with self.project() as project:
            return project.settings, project.read(fn)


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


def emit_json(obj: dict[str, Any]) -> None:
    click.echo(json.dumps(obj, ensure_ascii=False))


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


def shared_options(*, json_flag: bool = True) -> Callable[[F], F]:
    """--config / --store-dir (/ --json) on a group or command; they fill the one Context."""

    def decorate(fn: F) -> F:
        fn = click.option(
            "--store-dir",
            type=click.Path(path_type=Path, file_okay=False),
            default=None,
            expose_value=False,
            callback=_remember,
            help="Absolute base folder for the index (env FISK_AI_STORE_DIR).",
        )(fn)
        fn = click.option(
            "--config",
            type=click.Path(path_type=Path, dir_okay=False),
            default=None,
            expose_value=False,
            callback=_remember,
            help="agent.yaml to read (default: found from the current folder up).",
        )(fn)
        if json_flag:
            fn = click.option(
                "--json",
                "as_json",
                is_flag=True,
                expose_value=False,
                callback=_remember,
                help="Print one JSON object on stdout.",
            )(fn)
        return fn

    return decorate


def knowledge_command(fn: F) -> F:
    """Shared options and error conversion for every knowledge command."""

    def wrapper(ctx: click.Context, /, **kwargs: Any) -> Any:
        obj = state(ctx)
        try:
            return fn(obj, **kwargs)
        except KeyboardInterrupt:
            fail(obj, "interrupted; re-running skips files already indexed", code=130)
        except Cancelled as exc:
            fail(obj, str(exc), code=130)
        except KnowledgeError as exc:
            fail(obj, str(exc))
        except Exception as exc:  # SQLite and OS errors: one line naming the fix, never a trace
            converted = store_error(exc, _store_dir(obj))
            if converted is None:
                raise
            fail(obj, str(converted))

    functools.update_wrapper(wrapper, fn)
    return shared_options()(click.pass_context(wrapper))  # type: ignore[return-value]


def _store_dir(obj: Context) -> Path | None:
    try:
        return obj.settings().store_dir
    except Exception:  # the settings themselves failed: name no path
        return None


def fail(obj: Context, message: str, code: int = 1) -> None:
    message = bounded(message)
    if obj.as_json:
        emit_json({"error": message})
    else:
        click.echo(f"error: {message}", err=True)
    sys.exit(code)


class TopK(click.ParamType[int]):
    """--top-k: an integer (its range is the request's to check: :func:`search_request`)."""

    name = "integer"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        try:
            return int(str(value).strip())
        except ValueError:
            self.fail(f"expected {TOP_K.limits()}, got {shown(value)}", param, ctx)


SPELLING = Spelling(
    query="QUERY",
    top_k="--top-k",
    also="--also",
    paths="--path",
    excludes="--exclude",
    tags="--tag",
    expand="--expand",
)
"""The search command's names of a request's fields."""

_PARAMETERS = {"query": "query", "top_k": "top_k", "also": "also"}
"""The request's fields whose errors are click's own (``Invalid value for '--top-k': ...``)."""


def search_request(obj: Context, values: dict[str, Any], here: bool) -> SearchRequest:
    """The search command's request (the core's one check, ``check_request``); with ``here``
    its paths are relative to the current folder, in the project of ``--config`` (else to each
    ``--project``'s root). A bad query, --top-k or --also is click's BadParameter, a bad --tag
    a usage error, a bad --path or --exclude a usage error naming the project root."""
    scoped = any(values.get(name) for name in ("paths", "excludes", "tags"))
    root = os.path.realpath(obj.settings().project_root) if here and scoped else None
    try:
        return check_request(values, SPELLING, cwd=Path.cwd() if here else None, root=root)
    except RequestError as exc:
        raise _usage_error(exc, root) from None


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
