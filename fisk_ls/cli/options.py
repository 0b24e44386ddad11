"""The CLI's shared options and argument checks.

``--config``, ``--store-dir`` and ``--json`` may be given on ``fisk-ai``, on ``knowledge`` and on
each subcommand; their callbacks fill one :class:`Context` (the last one given wins). ``--top-k``
and the query are checked against the core's settings contract (a usage error naming the limit).
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
    SettingError,
    Settings,
    bounded,
    check_also,
    check_query,
    check_scope,
    check_tags,
    check_top_k,
    resolve_settings,
    shown,
    store_error,
)

if TYPE_CHECKING:
    from ..knowledge import Knowledge, Project, ProjectSet, Scope

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
    """--top-k: the settings contract's range, a usage error naming the limit otherwise."""

    name = "integer"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            number = value
        else:
            try:
                number = int(str(value).strip())
            except ValueError:
                self.fail(f"expected {TOP_K.limits()}, got {shown(value)}", param, ctx)
        try:
            checked = check_top_k(number, "--top-k")
        except SettingError as exc:
            self.fail(str(exc).removeprefix("--top-k: "), param, ctx)
        assert checked is not None
        return checked


def check_query_argument(ctx: click.Context, param: click.Parameter, value: str) -> str:
    try:
        return check_query(value, "QUERY")
    except SettingError as exc:
        raise click.BadParameter(str(exc).removeprefix("QUERY: "), ctx, param) from None


def search_scope(
    settings: Settings,
    paths: tuple[str, ...],
    excludes: tuple[str, ...],
    cwd: Path | None = None,
    *,
    tags: tuple[str, ...] = (),
) -> Scope | None:
    """``--path`` / ``--exclude`` / ``--tag`` as the core's scope: each path relative to the
    current folder (an absolute path is taken relative to the project root, as every front end
    does), which must lead inside the project root; a usage error naming the flag otherwise
    (also for a tag past the limits)."""
    from ..knowledge import Scope

    here = os.path.realpath(cwd or Path.cwd())
    root = os.path.realpath(settings.project_root)
    base = os.path.relpath(here, root).replace(os.sep, "/")
    try:
        check_tags(list(tags), "--tag")
    except SettingError as exc:
        raise click.UsageError(str(exc)) from None
    try:
        check_scope(list(paths), "--path")
        check_scope(list(excludes), "--exclude")
        return Scope.build(
            paths,
            excludes,
            "" if base == "." else base,
            tags=tags,
            names=("--path", "--exclude"),
            tag_name="--tag",
            root=root,
        )
    except SettingError as exc:
        where = "" if root in str(exc) else f" (project root: {root})"
        raise click.UsageError(f"{exc}{where}") from None


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


def check_also_option(
    ctx: click.Context, param: click.Parameter, value: tuple[str, ...]
) -> tuple[str, ...]:
    try:
        return check_also(list(value), "--also")
    except SettingError as exc:
        raise click.BadParameter(str(exc).removeprefix("--also: "), ctx, param) from None


def missing_mcp_message(exc: ImportError) -> str:
    """What to run when the optional MCP SDK is missing (a command that works as written)."""
    return (
        f"the MCP server needs the optional 'mcp' extra ({exc}); install it into the "
        f"environment fisk-ai runs in: {sys.executable} -m pip install 'mcp>=2.3,<3' "
        "(or reinstall from a checkout with: pipx install --force '.[mcp]')"
    )
