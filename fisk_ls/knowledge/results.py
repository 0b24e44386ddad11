"""What a search answers: its hits (``Hit``, with the other places its text is: ``Location``),
the result (``SearchResult``: a status, the tier line, the hits, whether it degraded) and the
tier line's wording.

Soft outcomes are values: ``status`` is a :class:`~.notices.Status`, ``ok``,
``index_not_built``, ``index_empty`` or ``no_terms`` (the query has no words: punctuation,
symbols, spaces; a query whose words no document holds is ``ok`` with no hits); it and its
sentences are in notices.py. A search whose query
embedding failed for any reason other than a misconfiguration is ``degraded``: lexical results
with a one-line ``reason``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

from .citations import format_citation
from .display import display_text
from .match import Match
from .notices import Status

if TYPE_CHECKING:
    from .expansion import Expansion
    from .progress import IndexRun
    from .vectors.backlog import Coverage


class Location(NamedTuple):
    """Where else a collapsed hit's text is: a versioned copy of the same chunk, or a chunk
    around the same matched paragraph (``match`` says where that paragraph is in it)."""

    path: str
    ordinal: int
    start_line: int
    end_line: int
    match: Match | None = None
    """The part of this chunk that matched, when its chunk's text differs from the hit's (a
    paragraph folded by ``hits.assemble``); None: the chunk is a copy of the hit's, the match
    at the same place."""

    @property
    def citation(self) -> str:
        return format_citation(self.path, self.ordinal)


class Hit(NamedTuple):
    """One search result: a chunk, its score and where the query matched in it."""

    chunk_id: int
    path: str
    ordinal: int
    section: str
    text: str
    start_line: int
    end_line: int
    score: float
    retrievers: Mapping[str, int] = {}
    """Which retrievers found the chunk, with its 1-based rank in each."""
    copies: tuple[Location, ...] = ()
    """Other chunks with the same or near-identical text, collapsed into this hit (best first)."""
    match: Match | None = None
    """Where inside the chunk the query matched (``hits.assemble`` sets it)."""
    found_by: tuple[str, ...] = ("query",)
    """The search strings that found the chunk: "query", and "also[0]", "also[1]", ... for the
    caller's extra strings (the request's ``also``)."""
    project: str = ""
    """The project's name in a search over several (projects.py); its citation names it."""

    @property
    def citation(self) -> str:
        plain = format_citation(self.path, self.ordinal)
        return f"{self.project}:{plain}" if self.project else plain

    @property
    def content(self) -> str:
        return display_text(self.section, self.text)


class SearchResult(NamedTuple):
    """A search's answer: its status, the tier line and the hits, best first."""

    status: Status
    tier: str
    hits: Sequence[Hit] = ()
    degraded: bool = False
    reason: str | None = None
    scoped: bool = False
    """The search was kept to a scope (paths, tags)."""
    indexing: IndexRun | None = None
    """The index run going on while it searched (``Knowledge.search`` sets it): the hits are
    the results so far."""
    expansion: Expansion | None = None
    """What question expansion did (``Project.search`` with ``expand``; None: not asked)."""


def tier_line(
    model: str | None = None,
    dimension: int = 0,
    reason: str | None = None,
    coverage: Coverage | None = None,
) -> str:
    """The one-line description of how search runs (three kinds, as the reference); a hybrid
    index still embedding says how far it got. ``dimension`` 0 means the index holds no
    vectors yet (not built, or built lexical-only before embeddings were configured): search
    is lexical until an index run adds them, and ``coverage`` says how many chunks wait."""
    if model is None:
        return "lexical: FTS5/BM25 (no embeddings configured)"
    if reason is not None:
        return f"degraded: hybrid fell back to lexical (embeddings unreachable: {reason})"
    if not dimension:
        waiting = (
            f"0 of {coverage.chunks:,} chunks have vectors"
            if coverage is not None and coverage.chunks
            else "no vectors yet"
        )
        return (
            f"lexical: FTS5/BM25 until vectors are added (model {model}: {waiting}; the next "
            "index run, watch or the language server adds them)"
        )
    tail = f"; {coverage.describe()}" if coverage is not None and not coverage.complete else ""
    return f"hybrid: FTS5/BM25 + vectors, fused by score (model {model}, dim {dimension}{tail})"
