"""Workspace folders as projects: one core ``Project`` (store, reader, update queue, watcher) per
project, opened for the folder with the client's options.

``Projects`` is the set the handlers talk to: it routes changed paths to the right queue, merges
searches across roots by score and resolves a citation in the first root that has it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TypeVar

from ..knowledge import (
    FLAT_DEPTH,
    INDEX_EMPTY,
    INDEX_NOT_BUILT,
    NO_TERMS,
    OK,
    CitationError,
    CitedChunk,
    Deadline,
    Expander,
    Expansion,
    Hit,
    IndexRun,
    Knowledge,
    KnowledgeError,
    QueueHooks,
    Scope,
    SearchCancelled,
    SearchResult,
    SettingError,
    Settings,
    expanded,
    parse_citation,
    resolve_settings,
    resolve_top_k,
    shown,
)
from ..knowledge import Project as CoreProject
from .options import Options

T = TypeVar("T")


class Project(CoreProject):
    """The core project of a workspace folder, opened with the client's ``options``."""

    def __init__(self, folder: Path, options: Options, settings: Settings) -> None:
        super().__init__(settings)
        self.folder = folder
        self.options = options


def open_project(folder: Path, options: Options, hooks: QueueHooks) -> Project:
    """Settings of ``folder`` (agent.yaml or zero-config) with the client's options laid over;
    the writer side built (its watcher only with ``options.watch``), not started."""
    project = Project(folder, options, options.apply(resolve_settings(cwd=folder)))
    try:
        project.reader  # noqa: B018 - a reader that cannot be made fails here, not at a search
        project.updates(hooks, watch=options.watch)
    except BaseException:
        project.close()
        raise
    return project


@dataclass(frozen=True)
class Found:
    project: Project
    hit: Hit


@dataclass
class Merged:
    status: str
    tier: str
    found: list[Found] = field(default_factory=list)
    degraded: bool = False
    reason: str | None = None
    scoped: bool = False
    indexing: IndexRun | None = None
    """The index runs going on in the searched projects, as one."""
    expansion: Expansion | None = None
    """What question expansion did (None: not asked)."""

    def as_result(self) -> SearchResult:
        """The merged answer as the core's result (for the core's sentence of it)."""
        hits = [f.hit for f in self.found]
        return SearchResult(
            self.status,
            self.tier,
            hits,
            self.degraded,
            self.reason,
            self.scoped,
            self.indexing,
            self.expansion,
        )


def merged_scores(merged: Merged) -> list[float] | None:
    """The scores of a merged search's hits, best first; None when no index could answer yet."""
    if merged.status in (INDEX_EMPTY, INDEX_NOT_BUILT):
        return None
    return [f.hit.score for f in merged.found]


_STATUS_ORDER = (OK, NO_TERMS, INDEX_EMPTY, INDEX_NOT_BUILT)


class Projects:
    """The open projects. Two workspace folders of one project (say ``repo/docs`` and
    ``repo/src`` in one git repository) share one Project: one index, one queue, hits once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: list[Project] = []
        self._folders: dict[Path, Project] = {}
        self.reader_language: str | None = None
        """The user's language (set at ``initialize``): a query in none prefers its pages."""
        self.editor_expander: Callable[[float], Expander] | None = None
        """The expander of provider ``editor`` (the client's own model) for a timeout; set by
        the server (expand.py)."""

    def __iter__(self) -> Iterator[Project]:
        with self._lock:
            return iter(list(self._items))

    def __len__(self) -> int:
        return len(self._items)

    def add(self, project: Project) -> Project:
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

    def folders(self, project: Project | None = None) -> list[Path]:
        """The open workspace folders (of ``project`` only, when given)."""
        with self._lock:
            return [f for f, p in self._folders.items() if project is None or p is project]

    def remove(self, folder: Path) -> list[Project]:
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

    def search(
        self,
        query: str,
        top_k: int | None,
        also: tuple[str, ...] = (),
        paths: Sequence[str] = (),
        tags: Sequence[str] = (),
        *,
        expand: bool = False,
        deadline: Deadline | None = None,
    ) -> Merged:
        """The best hits of every project, merged by score; ``paths`` and ``tags`` (see
        :func:`scopes`) keep each project's search to them. With ``expand``, the first
        project's expander adds its strings when the plain results are weak (the core's
        ``expanded``), once for all projects. ``deadline``: when it must stop (the client's
        ``$/cancelRequest``): SearchCancelled."""
        projects = list(self)
        if not projects:
            return Merged(INDEX_NOT_BUILT, "no workspace folder is open")
        searched: list[tuple[Project, Scope | None]] = (
            scopes(projects, paths, tags) if paths or tags else [(p, None) for p in projects]
        )
        k = resolve_top_k(top_k, projects[0].settings.top_k)
        wide = max(k, FLAT_DEPTH) if expand else k  # the gate reads at least FLAT_DEPTH hits

        def run(strings: tuple[str, ...]) -> Merged:
            return self._merged(searched, query, wide, strings, deadline)

        if not expand:
            return run(also)
        merged, expansion = expanded(run, query, self.expander(projects[0]), merged_scores, also)
        merged.expansion = expansion
        del merged.found[k:]
        return merged

    def expander(self, project: Project) -> Expander | None:
        """``project``'s question expander: the core's for a chat server, the client's model
        for provider ``editor``, None without expansion."""
        cfg = project.settings.expansion
        if cfg is None:
            return None
        if cfg.provider == "editor":
            return self.editor_expander(cfg.timeout) if self.editor_expander else None
        return project.expander

    def _merged(
        self,
        searched: list[tuple[Project, Scope | None]],
        query: str,
        k: int,
        also: tuple[str, ...],
        deadline: Deadline | None = None,
    ) -> Merged:
        merged = Merged(INDEX_NOT_BUILT, "")
        statuses: list[str] = []
        tiers: list[str] = []
        reasons: list[str] = []
        failures: list[KnowledgeError] = []
        runs: list[IndexRun | None] = []
        for project, scope in searched:
            try:
                result = project.read(
                    partial(_search, query, k, self.reader_language, also, scope, deadline)
                )
            except SearchCancelled:
                raise  # the whole search stops, not just this root's
            except KnowledgeError as exc:  # a broken store: the other roots still answer
                failures.append(exc)
                reasons.append(f"{project.folder.name}: {exc}")
                continue
            statuses.append(result.status)
            tiers.append(result.tier)
            runs.append(result.indexing)
            merged.scoped = merged.scoped or result.scoped
            merged.found.extend(Found(project, hit) for hit in result.hits)
            if result.degraded:
                merged.degraded = True
                reasons.append(result.reason or "degraded")
        if not statuses:
            raise failures[0]
        merged.degraded = merged.degraded or bool(failures)
        merged.status = min(statuses, key=_STATUS_ORDER.index)
        merged.indexing = IndexRun.joined(runs)
        merged.tier = "; ".join(dict.fromkeys(tiers))
        merged.reason = "; ".join(dict.fromkeys(reasons)) or None
        merged.found.sort(key=lambda f: -f.hit.score)
        del merged.found[k:]
        return merged

    def show(
        self, citation: str, prefer: Path | None = None, *, check_file: bool = True
    ) -> tuple[Project, CitedChunk]:
        """The first root (in workspace order; ``prefer``'s own project first) with the chunk.

        ``check_file=False`` answers from the index alone (no read of the target file)."""
        return self._first(citation, prefer, lambda kn: kn.show(citation, check_file=check_file))

    def around(
        self, citation: str, context: int, prefer: Path | None = None
    ) -> tuple[Project, list[CitedChunk]]:
        """As :meth:`show`, with up to ``context`` chunks of the same document before and after
        the cited one (``Knowledge.around``: in document order)."""
        return self._first(citation, prefer, lambda kn: kn.around(citation, context))

    def _first(
        self, citation: str, prefer: Path | None, call: Callable[[Knowledge], T]
    ) -> tuple[Project, T]:
        parse_citation(citation)  # malformed → CitationError at once
        projects = list(self)
        if prefer is not None:
            projects.sort(key=lambda p: not p.covers(prefer))
        failures: list[KnowledgeError] = []
        for project in projects:
            try:
                return project, project.read(call)
            except KnowledgeError as exc:  # not in this root (or its store is broken)
                failures.append(exc)
        broken = [f for f in failures if not isinstance(f, CitationError)]
        if broken:
            raise broken[0]
        if len(failures) == 1:
            raise failures[0]
        raise CitationError(f"no chunk matches {citation.strip()} in any workspace folder")

    def close(self) -> None:
        with self._lock:
            items, self._items = self._items, []
            self._folders.clear()
        for project in items:
            project.close()


def _search(
    query: str,
    k: int,
    language: str | None,
    also: tuple[str, ...],
    scope: Scope | None,
    deadline: Deadline | None,
    kn: Knowledge,
) -> SearchResult:
    return kn.search(query, k, language, also, scope=scope, deadline=deadline)


def scopes(
    projects: Sequence[Project], paths: Sequence[str], tags: Sequence[str] = ()
) -> list[tuple[Project, Scope | None]]:
    """Each project's scope for a search's ``paths`` and ``tags``: a relative path is relative
    to every project's root; an absolute one (an editor's folder) belongs to the projects whose
    root holds it, and a project none of the paths belong to is left out (with no paths, every
    project, kept to the tags). SettingError for a path outside every project or one that
    leaves the root (``../x``)."""
    claimed: set[str] = set()
    out: list[tuple[Project, Scope | None]] = []
    for project in projects:
        root = os.path.realpath(project.root)
        mine: list[str] = []
        for p in paths:
            if not os.path.isabs(p):
                mine.append(p)
                continue
            rel = os.path.relpath(os.path.realpath(p), root).replace(os.sep, "/")
            if rel != ".." and not rel.startswith("../"):
                mine.append(rel)
                claimed.add(p)
        if mine or not paths:
            out.append((project, Scope.build(mine, tags=tags)))
    if stray := [p for p in paths if os.path.isabs(p) and p not in claimed]:
        roots = ", ".join(os.path.realpath(p.root) for p in projects[:4])
        raise SettingError(f"paths: {shown(stray[0])} is outside the project root(s) {roots}")
    return out
