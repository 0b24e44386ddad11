"""A search's scope: the documents it may return (folders, files or globs; ``--exclude``;
front-matter tags).

Patterns are .gitignore syntax (``**`` allowed, matched by the same linear-time matcher as the
ignore rules, ``wildmatch.py``), relative to a folder of the project (the current folder on the
command line, else the root) and anchored there: ``guides`` is the folder ``guides`` beside you, not
every folder of that name, and ``**/*.md`` every markdown file below you. A document is in
scope when it, or a folder above it, matches an include pattern (none: every document) and no
exclude pattern. A pattern that leaves the project root (``../other``) is refused. Tags
(``--tag``, ``tags``) narrow it further: with any given, only documents whose front matter has at
least one of them (a union of tags, intersected with the paths).

The scope is applied inside each retriever before its top-k cut (lexical: the SQL of
``topk.scored``; vectors: the KNN candidates, ``vectors/knn.py``), so a scoped search returns
the best hits inside the scope, not the survivors of an unscoped top k. :func:`documents`
resolves it once per snapshot into the ids of the documents in scope.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .deadline import CHECK_EVERY
from .errors import IndexOutdated
from .settings_checks import SettingError, check_tags, shown
from .wildmatch import Globs, parse

if TYPE_CHECKING:
    from .store import Snapshot

_GLOB = re.compile(r"[*?\[\\]")
"""Where a pattern stops being a literal path (a wildcard, a class or an escape)."""


def _anchored(pattern: str, base: str, name: str, root: str | None = None) -> str:
    """``pattern`` (relative to the project folder ``base``, or absolute and inside ``root``)
    as a root-anchored git pattern."""
    text = pattern.strip()
    if "\0" in text:
        raise SettingError(
            f"{name}: {shown(pattern)} contains a NUL byte (\\0), which no path holds"
        )
    if text.startswith("!"):
        raise SettingError(
            f"{name}: {shown(pattern)} starts with '!'; subtract with an exclude instead"
        )
    if root is not None and os.path.isabs(text):
        text, base = _inside(text, root, name), ""
    elif text.startswith("/") or re.match(r"^[A-Za-z]:[\\/]", text):
        raise SettingError(
            f"{name}: {shown(pattern)} is absolute; give a path relative to the root"
        )
    folder_only = text.endswith("/")
    base = _GLOB.sub(lambda m: "\\" + m.group(0), base)  # a folder named "[draft]" is literal
    joined = posixpath.normpath(posixpath.join(base, text) if text else base or ".")
    if joined == ".." or joined.startswith("../"):
        raise SettingError(f"{name}: {shown(pattern)} is outside the project root")
    if joined == ".":
        return "/**"
    anchored = "/" + joined + ("/" if folder_only else "")
    glob = parse(anchored)
    if glob is not None and glob.broken is not None:
        raise SettingError(f"{name}: {pattern!r} is not a .gitignore-style pattern: {glob.broken}")
    return anchored


def _inside(path: str, root: str, name: str) -> str:
    """An absolute ``path`` (links resolved, as the root's) relative to the project ``root``;
    SettingError when it is outside, worded as for a relative path that leaves the root."""
    real_root = os.path.realpath(root)
    rel = os.path.relpath(os.path.realpath(path), real_root).replace(os.sep, "/")
    if rel == ".." or rel.startswith("../"):
        raise SettingError(f"{name}: {shown(path)} is outside the project root {real_root}")
    return ("" if rel == "." else rel) + ("/" if path.endswith("/") and rel != "." else "")


def _prefix(pattern: str) -> str:
    """The literal path a root-anchored pattern's matches all start with ("" when any)."""
    body = pattern[1:]
    glob = _GLOB.search(body)
    if glob is None:
        return body.rstrip("/")
    return body[: body.rfind("/", 0, glob.start()) + 1]


@dataclass(frozen=True)
class Scope:
    """Root-anchored include and exclude patterns (build one with :meth:`build`), compiled once,
    and tags (normalised: ``settings_checks.check_tags``).

    ``include`` empty means every document, ``tags`` empty any tags or none; a scope that
    matches no document is valid and answers no hits."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    _matchers: tuple[Globs | None, Globs | None] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        inc = Globs.of(self.include) if self.include else None
        exc = Globs.of(self.exclude) if self.exclude else None
        object.__setattr__(self, "_matchers", (inc, exc))

    @classmethod
    def build(
        cls,
        include: Iterable[str] = (),
        exclude: Iterable[str] = (),
        base: str = "",
        *,
        tags: Iterable[str] = (),
        names: tuple[str, str] = ("paths", "exclude"),
        tag_name: str = "tags",
        root: str | os.PathLike[str] | None = None,
    ) -> Scope | None:
        """The scope of ``include`` minus ``exclude``, each relative to ``base`` (a folder of
        the project, relative to its root, "" for the root), kept to documents with one of
        ``tags``; None when all are empty (no scope). With the project ``root`` given, an
        absolute path inside it is taken relative to it (every front end alike). SettingError
        (named after ``names`` and ``tag_name``) for a pattern outside the root, an absolute
        one without ``root``, a NUL byte, or a tag past the contract's limits."""
        top = None if root is None else os.fspath(root)
        inc = tuple(_anchored(p, base, names[0], top) for p in include)
        exc = tuple(_anchored(p, base, names[1], top) for p in exclude)
        kept = check_tags(list(tags), tag_name)
        if not inc and not exc and not kept:
            return None
        return cls(inc, exc, kept)

    def contains(self, path: str) -> bool:
        """Is the document ``path`` (relative to the root) inside the scope's paths (its tags
        are the index's to know: :func:`documents`)?"""
        inc, exc = self._matchers
        if inc is not None and not inc.any_within(path):
            return False
        return exc is None or not exc.any_within(path)

    def prefixes(self) -> tuple[str, ...] | None:
        """Literal path prefixes every document in scope starts with (None: any path may)."""
        if not self.include:
            return None
        found = tuple(_prefix(p) for p in self.include)
        return None if "" in found else found


def documents(snap: Snapshot, scope: Scope) -> list[int] | None:
    """The ids of the documents in ``scope`` (ascending; None when that is all of them). The
    unique index on ``path`` narrows the candidates to the patterns' literal prefixes first, so a
    folder scope reads only that folder's rows; tags read only their own documents (the tag
    table's key) and intersect with the paths. IndexOutdated for tags on an index built before
    tags were stored."""
    tagged = _tagged(snap, scope.tags) if scope.tags else None
    if not scope.include and not scope.exclude and tagged is not None:
        return sorted(tagged)
    paths = _in_paths(snap, scope)
    if tagged is None:
        return paths
    return [i for i in paths if i in tagged] if paths is not None else sorted(tagged)


def _tagged(snap: Snapshot, tags: tuple[str, ...]) -> set[int]:
    """The ids of the documents with at least one of ``tags``."""
    t = snap.tables.tags
    if not t:
        raise IndexOutdated(
            f"the index was built before tags were stored (format {snap.manifest.format_version})"
            ": run `fisk-ai knowledge index` (or let the editor's next index run) rebuild it; "
            "searches without tags keep working meanwhile"
        )
    rows = snap.conn.execute(
        f"SELECT DISTINCT document_id FROM {t} WHERE tag IN (SELECT value FROM json_each(?))",
        (json.dumps(list(tags)),),
    )
    return {int(r[0]) for r in rows}


def _in_paths(snap: Snapshot, scope: Scope) -> list[int] | None:
    """The ids of the documents inside the scope's paths (None: every document)."""
    if not scope.include and not scope.exclude:
        return None
    d = snap.tables.documents
    rows: list[Any] = []
    prefixes = scope.prefixes()
    if prefixes is None:
        rows = snap.conn.execute(f"SELECT id, path FROM {d}").fetchall()
    else:
        seen: set[int] = set()
        for prefix in sorted(set(prefixes)):
            end = prefix[:-1] + chr(ord(prefix[-1]) + 1)
            for row in snap.conn.execute(
                f"SELECT id, path FROM {d} WHERE path >= ? AND path < ?", (prefix, end)
            ):
                if int(row[0]) not in seen:
                    seen.add(int(row[0]))
                    rows.append(row)
    ids: list[int] = []
    for n, (i, path) in enumerate(rows):
        if n % CHECK_EVERY == 0:
            snap.check()  # every document of a large index against many patterns
        if scope.contains(str(path)):
            ids.append(int(i))
    ids.sort()
    if prefixes is None and len(ids) == len(rows):
        return None
    return ids


def chunk_ids(snap: Snapshot, docs: list[int]) -> list[int]:
    """The ids of the chunks of the documents ``docs`` (the (document_id, ordinal) index)."""
    r = snap.tables.rows
    return [
        int(row[0])
        for row in snap.conn.execute(
            f"SELECT id FROM {r} WHERE document_id IN (SELECT value FROM json_each(?))",
            (json.dumps(docs),),
        )
    ]
