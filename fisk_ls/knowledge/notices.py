"""A search's soft outcomes and their sentences, one definition each, for every front end (the
CLI's text and ``--json``, the language server's search result, the agent tool and MCP).

A search answers a :class:`Status` and, beside it, whether an index run is going on
(``SearchResult.indexing``); :func:`search_notice` turns the two into the one sentence a person
or an agent reads. "No words to search for" is said only of a query with no words at all
(punctuation, symbols, spaces; a query of stop words alone searches for them); a query whose
words are simply in no document answers ``ok`` with no results, and the sentence says so.
"""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .results import SearchResult

NOT_BUILT_SENTENCE = "the knowledge index is not built yet; run `fisk-ai knowledge index`"
EMPTY_SENTENCE = (
    "the knowledge index is empty: no markdown or text file was indexed; check the knowledge "
    "paths, or run `fisk-ai knowledge index PATH`"
)
NO_TERMS_SENTENCE = (
    "the query has no words to search for, only punctuation, symbols or spaces; type words"
)
NO_MATCH = "no indexed document contains these words"
NO_MATCH_IN_SCOPE = "no indexed document in the searched paths or tags contains these words"
NO_MATCH_SO_FAR = "no document indexed so far contains these words"
NO_MATCH_IN_SCOPE_SO_FAR = (
    "no document indexed so far in the searched paths or tags contains these words"
)
SO_FAR = "these are the results so far"
NOTHING_YET = "nothing is searchable yet"


class Status(str, Enum):
    """A search's soft outcome: a ``str`` whose value is the wire's (``"ok"``, ...), so JSON and
    the language server's results carry it as they always did. ``sentence`` is its one sentence
    (:data:`STATUS_SENTENCES`); ``ok``'s is what a search that found nothing says."""

    OK = "ok"
    INDEX_NOT_BUILT = "index_not_built"
    """No index yet (or it was reset)."""
    INDEX_EMPTY = "index_empty"
    """An index without a document: nothing was found to index."""
    NO_TERMS = "no_terms"
    """The query has no words at all (punctuation, symbols, spaces)."""

    def __str__(self) -> str:
        return self.value

    @property
    def sentence(self) -> str:
        """What a search with this status and no hits says when no index run is going on and
        it was not kept to a scope."""
        return STATUS_SENTENCES[self]


STATUS_SENTENCES = {
    Status.OK: NO_MATCH,
    Status.INDEX_NOT_BUILT: NOT_BUILT_SENTENCE,
    Status.INDEX_EMPTY: EMPTY_SENTENCE,
    Status.NO_TERMS: NO_TERMS_SENTENCE,
}
"""The one table that words the statuses."""


def search_notice(result: SearchResult) -> str | None:
    """Why ``result`` reads as it does, in one sentence; None for results with nothing to add.

    During an index run (``result.indexing``) a search that found nothing yet says how far the
    run got instead of "not built" or "empty", and one that found something says these are the
    results so far."""
    run = result.indexing
    status = Status(result.status)
    if status is Status.NO_TERMS:
        return status.sentence
    if status in (Status.INDEX_NOT_BUILT, Status.INDEX_EMPTY):
        if run is not None:
            return f"{run.describe()}; {NOTHING_YET}"
        return status.sentence
    if result.hits:
        return f"{run.describe()}; {SO_FAR}" if run is not None else None
    if run is not None:
        missing = NO_MATCH_IN_SCOPE_SO_FAR if result.scoped else NO_MATCH_SO_FAR
        return f"{missing} ({run.describe()})"
    return NO_MATCH_IN_SCOPE if result.scoped else Status.OK.sentence
