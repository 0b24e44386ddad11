"""Workspace folders as projects: one core ``Project`` (store, reader, update queue, watcher) per
project, opened for the folder with the client's options.

``Projects`` is the set the handlers talk to: it routes changed paths to the right queue, merges
searches across roots by score and resolves a citation in the first root that has it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TypeVar

from ..knowledge import (
    CitedChunk,
    Expander,
    Knowledge,
    Project,
    QueueHooks,
    SearchRequest,
    Settings,
    Status,
    first_with,
    resolve_settings,
    search_projects,
)
from ..knowledge import Found as CoreFound
from ..knowledge import Merged as CoreMerged
from .options import Options

T = TypeVar("T")


class WorkspaceProject(Project):
    """The core project of a workspace folder, opened with the client's ``options``."""

    def __init__(self, folder: Path, options: Options, settings: Settings) -> None:
        super().__init__(settings)
        self.folder = folder
        self.options = options
        self.name = folder.name


def open_project(folder: Path, options: Options, hooks: QueueHooks) -> WorkspaceProject:
    """Settings of ``folder`` (agent.yaml or zero-config) with the client's options laid over;
    the writer side built (its watcher only with ``options.watch``), not started."""
    project = WorkspaceProject(folder, options, options.apply(resolve_settings(cwd=folder)))
    try:
        project.reader  # noqa: B018 - a reader that cannot be made fails here, not at a search
        project.updates(hooks, watch=options.watch)
    except BaseException:
        project.close()
        raise
    return project


Found = CoreFound[WorkspaceProject]
Merged = CoreMerged[WorkspaceProject]


class Projects:
    """The open projects. Two workspace folders of one project (say ``repo/docs`` and
    ``repo/src`` in one git repository) share one project: one index, one queue, hits once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: list[WorkspaceProject] = []
        self._folders: dict[Path, WorkspaceProject] = {}
        self.reader_language: str | None = None
        """The user's language (set at ``initialize``): a query in none prefers its pages."""
        self.editor_expander: Callable[[float], Expander] | None = None
        """The expander of provider ``editor`` (the client's own model) for a timeout; set by
        the server (expand.py)."""

    def __iter__(self) -> Iterator[WorkspaceProject]:
        with self._lock:
            return iter(list(self._items))

    def __len__(self) -> int:
        return len(self._items)

    def add(self, project: WorkspaceProject) -> WorkspaceProject:
        """Add ``project`` for its folder; the project already open with the same store and
        roots when there is one (the caller closes the unused one)."""
        with self._lock:
            settings = project.settings
            same = next(
                (
                    p
                    for p in self._items
                    if p.settings.store_dir == settings.store_dir
                    and p.settings.roots == settings.roots
                ),
                None,
            )
            used = same or project
            if same is None:
                self._items.append(project)
            self._folders[project.folder] = used
            return used

    def folders(self, project: WorkspaceProject | None = None) -> list[Path]:
        """The open workspace folders (of ``project`` only, when given)."""
        with self._lock:
            return [f for f, p in self._folders.items() if project is None or p is project]

    def remove(self, folder: Path) -> list[WorkspaceProject]:
        """Forget ``folder``; the projects no other folder uses any more (to close)."""
        with self._lock:
            project = self._folders.pop(folder, None)
            if project is None or project in self._folders.values():
                return []
            self._items.remove(project)
            return [project]

    def add_paths(self, paths: Iterable[Path]) -> int:
        paths = list(paths)
        return sum(p.add(paths) for p in self)

    def search(self, request: SearchRequest) -> Merged:
        """The best hits of every project for ``request``, merged by score (the core's
        ``search_projects``: its paths keep each project's search to them). With
        ``request.expand``, the first project's expander adds its strings when the plain
        results are weak, once for all projects; the user's language is the request's
        unless it names one. SearchCancelled past its deadline (the client's
        ``$/cancelRequest``)."""
        projects = list(self)
        if not projects:
            return Merged(Status.INDEX_NOT_BUILT, "no workspace folder is open")
        if request.reader_language is None:
            request = request._replace(reader_language=self.reader_language)
        expander = self.expander(projects[0]) if request.expand else None
        return search_projects(projects, request, expander)

    def expander(self, project: WorkspaceProject) -> Expander | None:
        """``project``'s question expander: the core's for a chat server, the client's model
        for provider ``editor``, None without expansion."""
        cfg = project.settings.expansion
        if cfg is None:
            return None
        if cfg.provider == "editor":
            return self.editor_expander(cfg.timeout) if self.editor_expander else None
        return project.expander

    def show(
        self, citation: str, prefer: Path | None = None, *, check_file: bool = True
    ) -> tuple[WorkspaceProject, CitedChunk]:
        """The first root (in workspace order; ``prefer``'s own project first) with the chunk.

        ``check_file=False`` answers from the index alone (no read of the target file)."""
        return self._first(citation, prefer, lambda kn: kn.show(citation, check_file=check_file))

    def around(
        self, citation: str, context: int, prefer: Path | None = None
    ) -> tuple[WorkspaceProject, list[CitedChunk]]:
        """As :meth:`show`, with up to ``context`` chunks of the same document before and after
        the cited one (``Knowledge.around``: in document order)."""
        return self._first(citation, prefer, lambda kn: kn.around(citation, context))

    def _first(
        self, citation: str, prefer: Path | None, call: Callable[[Knowledge], T]
    ) -> tuple[WorkspaceProject, T]:
        projects = list(self)
        if prefer is not None:
            projects.sort(key=lambda p: not p.covers(prefer))
        return first_with(projects, citation, call, "workspace folder")

    def close(self) -> None:
        with self._lock:
            items, self._items = self._items, []
            self._folders.clear()
        for project in items:
            project.close()
