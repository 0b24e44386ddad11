"""Several projects searched as one: their hits merged by score, a citation resolved in the
project that has it.

The language server merges its workspace folders this way (lsp/project.py ``Projects``); the
CLI's ``search --project DIR ...`` and the MCP server's ``--project DIR ...`` merge the projects
they are given (``ProjectSet``). A hit of a merged search names its project; where the projects
are several, its citation is ``name:relpath#ordinal`` (``qualified``), which ``ProjectSet.show``
takes back (a plain ``relpath#ordinal`` is looked for in each project in turn).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Generic, TypeVar

from .errors import CitationError, KnowledgeError, SearchCancelled
from .notices import Status
from .progress import IndexRun
from .project import Project
from .request import RequestError, SearchRequest
from .results import SearchResult
from .settings_checks import shown

if TYPE_CHECKING:
    from .citations import CitedChunk
    from .expansion import Expander, Expansion
    from .reader import Knowledge
    from .results import Hit

P = TypeVar("P", bound=Project)
T = TypeVar("T")

_STATUS_ORDER = (Status.OK, Status.NO_TERMS, Status.INDEX_EMPTY, Status.INDEX_NOT_BUILT)


@dataclass(frozen=True)
class Found(Generic[P]):
    project: P
    hit: Hit


@dataclass
class Merged(Generic[P]):
    status: Status
    tier: str
    found: list[Found[P]] = field(default_factory=list)
    degraded: bool = False
    reason: str | None = None
    scoped: bool = False
    indexing: IndexRun | None = None
    """The index runs going on in the searched projects, as one."""
    expansion: Expansion | None = None
    """What question expansion did (None: not asked)."""

    def as_result(self, qualify: bool = False) -> SearchResult:
        """The merged answer as the core's result (for the core's sentence of it, and the
        renderers); with ``qualify`` each hit's citation names its project."""
        hits = [f.hit._replace(project=f.project.name) if qualify else f.hit for f in self.found]
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


def merged_scores(merged: Merged[P]) -> list[float] | None:
    """The scores of a merged search's hits, best first; None when no index could answer yet."""
    if merged.status in (Status.INDEX_EMPTY, Status.INDEX_NOT_BUILT):
        return None
    return [f.hit.score for f in merged.found]


def merge_search(searched: Sequence[tuple[P, SearchRequest]], k: int) -> Merged[P]:
    """Each project's best ``k`` hits for its own request (``scopes``), merged by score. A
    project whose store fails is named in the reason and the others still answer; when all
    fail, the first failure is raised. A search past its deadline (SearchCancelled) or a bad
    path (RequestError) stops the whole search."""
    merged: Merged[P] = Merged(Status.INDEX_NOT_BUILT, "")
    statuses: list[Status] = []
    tiers: list[str] = []
    reasons: list[str] = []
    failures: list[KnowledgeError] = []
    runs: list[IndexRun | None] = []
    for project, request in searched:
        try:
            result = project.read(partial(_search, request))
        except (SearchCancelled, RequestError):
            raise  # the whole search stops, not just this project's
        except KnowledgeError as exc:  # a broken store: the other projects still answer
            failures.append(exc)
            reasons.append(f"{project.name}: {exc}")
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


def search_projects(
    projects: Sequence[P], request: SearchRequest, expander: Expander | None = None
) -> Merged[P]:
    """``request`` in every project it belongs to (``scopes``), merged by score
    (``merge_search``), for the first project's count. With ``request.expand``, ``expander``'s
    strings join ``also`` when the plain results are weak (the core's ``expanded``), once for
    all projects."""
    searched = scopes(projects, request)
    k = request.wanted(projects[0].settings.top_k)
    wide = k
    if request.expand:  # expansion.py is imported by a search that may expand only
        from .expansion import FLAT_DEPTH, expanded

        wide = max(k, FLAT_DEPTH)  # the gate reads at least FLAT_DEPTH

    def run(strings: tuple[str, ...]) -> Merged[P]:
        asked = [(p, r._replace(also=strings, top_k=wide)) for p, r in searched]
        return merge_search(asked, wide)

    if not request.expand:
        return run(tuple(request.also))
    merged, expansion = expanded(run, request.query, expander, merged_scores, request.also)
    merged.expansion = expansion
    del merged.found[k:]
    return merged


def first_with(
    projects: Sequence[P], citation: str, call: Callable[[Knowledge], T], where: str
) -> tuple[P, T]:
    """``call`` in the first of ``projects`` that has the cited chunk (``where`` names them in
    the message when none has it)."""
    from .citations import parse_citation

    parse_citation(citation)  # malformed → CitationError at once
    failures: list[KnowledgeError] = []
    for project in projects:
        try:
            return project, project.read(call)
        except KnowledgeError as exc:  # not in this project (or its store is broken)
            failures.append(exc)
    broken = [f for f in failures if not isinstance(f, CitationError)]
    if broken:
        raise broken[0]
    if len(failures) == 1:
        raise failures[0]
    raise CitationError(f"no chunk matches {citation.strip()} in any {where}")


def scopes(projects: Sequence[P], request: SearchRequest) -> list[tuple[P, SearchRequest]]:
    """Each project's own request for ``request``'s paths: a relative path is relative to every
    project's root; an absolute one (an editor's folder) belongs to the projects whose root
    holds it, taken relative to it, and a project none of the paths belong to is left out
    (with no paths, every project). RequestError for a path outside every project; each
    project's search refuses one that leaves its root (``../x``)."""
    if not request.paths:
        return [(project, request) for project in projects]
    claimed: set[str] = set()
    out: list[tuple[P, SearchRequest]] = []
    for project in projects:
        root = os.path.realpath(project.root)
        mine: list[str] = []
        for p in request.paths:
            if not os.path.isabs(p):
                mine.append(p)
                continue
            rel = os.path.relpath(os.path.realpath(p), root).replace(os.sep, "/")
            if rel != ".." and not rel.startswith("../"):
                mine.append(rel)
                claimed.add(p)
        if mine:
            out.append((project, request._replace(paths=tuple(mine))))
    if stray := [p for p in request.paths if os.path.isabs(p) and p not in claimed]:
        roots = ", ".join(os.path.realpath(p.root) for p in projects[:4])
        name = request.spelling.paths
        raise RequestError(
            "paths", f"{name}: {shown(stray[0])} is outside the project root(s) {roots}"
        )
    return out


def _search(request: SearchRequest, kn: Knowledge) -> SearchResult:
    return kn.search(request)


def unique_names(roots: Iterable[Path]) -> list[str]:
    """A name for each project root: its folder's name, ``-2``, ``-3``... after a name taken."""
    names: list[str] = []
    for root in roots:
        base = root.name or "root"
        name, n = base, 1
        while name in names:
            n += 1
            name = f"{base}-{n}"
        names.append(name)
    return names


class ProjectSet:
    """Projects searched as one (``search --project``, ``mcp --project``); closed together."""

    def __init__(self, projects: Sequence[Project]) -> None:
        if not projects:
            raise KnowledgeError("no project to search")
        self.projects = list(projects)
        for project, name in zip(
            self.projects, unique_names(p.root for p in self.projects), strict=True
        ):
            project.name = name

    @classmethod
    def open(
        cls, folders: Sequence[Path], *, store_base: Path | None = None, coarse_knn: bool = True
    ) -> ProjectSet:
        """The project each folder belongs to (its root and store found as usual); one project
        named twice is searched once."""
        from .location import resolve_settings

        seen: set[Path] = set()
        projects: list[Project] = []
        for folder in folders:
            if not folder.is_dir():
                raise KnowledgeError(f"--project {folder}: no such folder")
            settings = resolve_settings(cwd=folder, store_base=store_base)
            if settings.store_dir in seen:
                continue
            seen.add(settings.store_dir)
            projects.append(Project(settings, coarse_knn=coarse_knn))
        return cls(projects)

    def __enter__(self) -> ProjectSet:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for project in self.projects:
            project.close()

    @property
    def several(self) -> bool:
        return len(self.projects) > 1

    def search(self, request: SearchRequest) -> SearchResult:
        """Every project's best hits for ``request`` merged by score; each hit names its
        project."""
        first = self.projects[0]
        expander = first.expander if request.expand else None
        return search_projects(self.projects, request, expander).as_result(qualify=True)

    def locate(self, citation: str) -> tuple[list[Project], str]:
        """The projects to look in for ``citation`` and the citation inside them: the named
        project for ``name:relpath#ordinal``, else every project in order."""
        name, sep, rest = citation.strip().partition(":")
        if sep:
            for project in self.projects:
                if project.name == name:
                    return [project], rest
        return self.projects, citation

    def show(self, citation: str) -> tuple[Project, CitedChunk]:
        """The cited chunk, as search printed the citation."""
        projects, inner = self.locate(citation)
        return first_with(projects, inner, lambda kn: kn.show(inner), "project given")

    def around(
        self, citation: str, context: int, *, check_file: bool = True
    ) -> tuple[Project, list[CitedChunk]]:
        """As :meth:`show`, with up to ``context`` chunks around it (``Knowledge.around``)."""
        projects, inner = self.locate(citation)
        return first_with(
            projects,
            inner,
            lambda kn: kn.around(inner, context, check_file=check_file),
            "project given",
        )
