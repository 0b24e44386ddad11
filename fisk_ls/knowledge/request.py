"""A search request: what a front end asks, checked once, in the front end's own words.

Every front end (the CLI, the language server, the agent tool and MCP) builds a
``SearchRequest`` with :func:`check_request` from its raw values and hands it to
``Project.search`` (one project) or ``ProjectSet.search`` (several). The check names a bad field
the way the caller spells it (``Spelling``: ``--top-k`` on the command line, ``topK`` over LSP,
`` `top_k` `` for the tool), so each front end keeps its own messages and none repeats the
checks. What depends on a project is resolved there: the scope (:meth:`SearchRequest.scope`:
paths against the project root) and the hit count (the configured default).

A request is long (:attr:`SearchRequest.long`) when any of its strings has more than
``question.SHORT_QUERY_TERMS`` words apart from stop words: front ends schedule long searches
apart from ordinary ones (the language server's lanes, MCP's limiter).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, TypeVar

from .question import is_long
from .settings_checks import (
    SettingError,
    check_also,
    check_context,
    check_query,
    check_scope,
    check_tags,
    check_top_k,
    shown,
)
from .settings_schema import TOOL_CONTEXT, Setting

if TYPE_CHECKING:
    from .deadline import Deadline
    from .scope import Scope

T = TypeVar("T")


class RequestError(SettingError):
    """A request's field is out of the contract; ``field`` is the request's own name of it
    (``top_k``), the message names it as the caller spells it (``--top-k: ...``)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


class Spelling(NamedTuple):
    """How a front end names each field of a request in its messages."""

    query: str = "query"
    top_k: str = "top_k"
    also: str = "also"
    paths: str = "paths"
    excludes: str = "exclude"
    tags: str = "tags"
    expand: str = "expand"
    context: str = "context"

    def of(self, name: str) -> str:
        spelled: str = getattr(self, name)
        return spelled


_PLAIN = Spelling()


class SearchRequest(NamedTuple):
    """One search as a front end asks it (build it with :func:`check_request`; the core's own
    callers may construct it directly with values already in the contract).

    ``paths`` and ``excludes`` are .gitignore-style patterns relative to ``cwd`` (a folder of
    the project; None: the project root), or absolute inside the root; ``tags`` are normalised
    (``settings_schema.normal_tag``). ``top_k`` None is the configured count. ``context``: the
    neighbouring chunks a front end shows around each hit. ``reader_language``: the asker's
    locale or language tag when the front end knows it. ``deadline``: when the search must
    stop (deadline.py). Two requests are equal when they ask the same: ``deadline`` and
    ``spelling`` are left out of equality and of the hash."""

    query: str
    top_k: int | None = None
    reader_language: str | None = None
    also: Sequence[str] = ()
    paths: Sequence[str] = ()
    excludes: Sequence[str] = ()
    tags: Sequence[str] = ()
    expand: bool = False
    context: int = 0
    cwd: str | None = None
    deadline: Deadline | None = None
    spelling: Spelling = _PLAIN

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SearchRequest):
            return NotImplemented
        return self[:_ASKED] == other[:_ASKED]

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(self[:_ASKED])

    @property
    def long(self) -> bool:
        """Any of its strings is long (``question.is_long``)."""
        return any(is_long(text) for text in (self.query, *self.also))

    @property
    def scoped(self) -> bool:
        return bool(self.paths or self.excludes or self.tags)

    def wanted(self, default: int) -> int:
        """The hits to return: ``top_k``, else the configured ``default``."""
        return default if self.top_k is None else self.top_k

    def scope(self, root: str | os.PathLike[str] | None) -> Scope | None:
        """The scope of the paths, excludes and tags in the project at ``root`` (None: the
        whole project); RequestError, in the caller's spelling, for a pattern outside the root
        (``../x``, an absolute path elsewhere; any absolute one without a ``root``) or one that
        is no pattern."""
        if not self.scoped:
            return None
        from .scope import Scope

        base = ""
        if self.cwd is not None and root is not None:
            rel = os.path.relpath(os.path.realpath(self.cwd), os.path.realpath(root))
            base = "" if rel == "." else rel.replace(os.sep, "/")
        names = (self.spelling.paths, self.spelling.excludes)
        try:
            return Scope.build(
                self.paths,
                self.excludes,
                base,
                tags=self.tags,
                names=names,
                tag_name=self.spelling.tags,
                root=root,
            )
        except SettingError as exc:
            raise RequestError("paths", str(exc)) from None


_ASKED = SearchRequest._fields.index("deadline")
"""The fields of a request that say what it asks: those before ``deadline`` (``deadline`` and
``spelling`` come last)."""


def _check_flag(value: object, name: str) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        raise SettingError(f"{name}: expected true or false, got {shown(value)}")
    return value


def check_request(
    values: Mapping[str, object],
    spelling: Spelling = _PLAIN,
    *,
    context: Setting = TOOL_CONTEXT,
    cwd: str | Path | None = None,
    root: str | Path | None = None,
    absolute: bool = True,
    deadline: Deadline | None = None,
) -> SearchRequest:
    """The request of a front end's raw ``values`` (keyed by the request's field names; a
    missing one is its default), each checked against the settings contract: the query at
    most 2,000 characters, ``top_k`` 1-20, at most four ``also`` strings (blank ones dropped),
    at most 16 paths, excludes and tags, ``expand`` a boolean, ``context`` within ``context``'s
    range. The first bad field raises RequestError naming it as ``spelling`` says.

    The paths are checked too: against the project ``root`` when the request is for one
    project (as :meth:`SearchRequest.scope` resolves them), else the relative ones (a pattern
    that leaves the root, ``../x``, is refused at once) and, unless ``absolute``, none may be
    absolute (``absolute``: they are resolved later against each project's root, ``scopes``)."""
    unknown = sorted(set(values) - set(SearchRequest._fields))
    if unknown:
        raise ValueError(f"not fields of a search request: {', '.join(unknown)}")

    def checked(name: str, check: Callable[[object, str], T]) -> T:
        try:
            return check(values.get(name), spelling.of(name))
        except SettingError as exc:
            raise RequestError(name, str(exc)) from None

    query = checked("query", check_query)
    top_k = checked("top_k", check_top_k)
    also = checked("also", check_also)
    paths = checked("paths", check_scope)
    excludes = checked("excludes", check_scope)
    tags = checked("tags", check_tags)
    expand = checked("expand", _check_flag)
    count = checked("context", lambda value, name: check_context(value, context, name))
    language = values.get("reader_language")
    request = SearchRequest(
        query=query,
        top_k=top_k,
        reader_language=language if isinstance(language, str) else None,
        also=also,
        paths=paths,
        excludes=excludes,
        tags=tags,
        expand=expand,
        context=count,
        cwd=None if cwd is None else os.fspath(cwd),
        deadline=deadline,
        spelling=spelling,
    )
    if root is not None:
        request.scope(root)
    elif request.scoped:
        kept = [p for p in request.paths if not (absolute and os.path.isabs(p))]
        request._replace(paths=kept, cwd=None).scope(None)
    return request
