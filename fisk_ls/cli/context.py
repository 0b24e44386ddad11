"""What every knowledge command shares, without click: the options wherever they were given
(:class:`Context`), the one JSON object on stdout, and the conversion of the core's errors into
one line and an exit code (:func:`guarded`)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from ..knowledge import (
    Cancelled,
    KnowledgeError,
    SearchRequest,
    Settings,
    bounded,
    check_request,
    resolve_settings,
    store_error,
)
from .flags import SPELLING

if TYPE_CHECKING:
    from ..knowledge import Knowledge, Project, ProjectSet

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
            import click

            raise click.UsageError(
                "--config does not combine with --project: each project's own agent.yaml is used"
            )
        return ProjectSet.open(list(folders), store_base=self.store_dir, coarse_knn=False)

    def read(self, fn: Callable[[Knowledge], T]) -> tuple[Settings, T]:
        """Open the index read-only, call ``fn`` with it, close it."""
        with self.project() as project:
            return project.settings, project.read(fn)


def search_request(obj: Context, values: dict[str, Any], *, here: bool) -> SearchRequest:
    """The search command's request (the core's one check, ``check_request``; a bad field
    raises its RequestError); with ``here`` its paths are relative to the current folder, in
    the project of ``--config`` (else to each ``--project``'s root)."""
    root = request_root(obj, values, here=here)
    return check_request(values, SPELLING, cwd=Path.cwd() if here else None, root=root)


def request_root(obj: Context, values: dict[str, Any], *, here: bool) -> str | None:
    """The project root a scoped search's paths are checked against (None: not scoped, or
    relative to each ``--project``'s root)."""
    scoped = any(values.get(name) for name in ("paths", "excludes", "tags"))
    return os.path.realpath(obj.settings().project_root) if here and scoped else None


def emit_json(obj: dict[str, Any]) -> None:
    """One JSON object and a newline on stdout, flushed."""
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def fail(obj: Context, message: str, code: int = 1) -> NoReturn:
    """End the command with ``message``: ``{"error": ...}`` under --json, else a line on
    stderr."""
    message = bounded(message)
    if obj.as_json:
        emit_json({"error": message})
    else:
        import click  # strips terminal sequences from stderr that is not a terminal

        click.echo(f"error: {message}", err=True)
    sys.exit(code)


def guarded(obj: Context, call: Callable[[], T]) -> T:
    """``call()``, its failures ended as one line naming the fix (:func:`fail`), never a trace:
    an interrupt or a cancelled wait with 130, the core's errors and the SQLite and OS errors
    it can explain with 1."""
    try:
        return call()
    except KeyboardInterrupt:
        fail(obj, "interrupted; re-running skips files already indexed", code=130)
    except Cancelled as exc:
        fail(obj, str(exc), code=130)
    except KnowledgeError as exc:
        fail(obj, str(exc))
    except Exception as exc:
        converted = store_error(exc, _store_dir(obj))
        if converted is None:
            raise
        fail(obj, str(converted))


def _store_dir(obj: Context) -> Path | None:
    try:
        return obj.settings().store_dir
    except Exception:  # the settings themselves failed: name no path
        return None
