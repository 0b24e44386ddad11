"""A search request (request.py), parsed once where it enters the core (``Knowledge.search``):
each search string's terms, phrases, heading words and stop words, the hit count resolved
against the configured default, the reader's language, the scope. The arms, the fusion and the
match location read these fields; none of them derives them from the text again."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from .fts import heading_key
from .languages import locale_language
from .question import Asked

if TYPE_CHECKING:
    from .request import SearchRequest
    from .scope import Scope


def string_name(i: int) -> str:
    """The name of search string ``i`` in a hit's ``found_by`` and ``retrievers``: the query,
    then ``also[0]``, ``also[1]``, ..."""
    return "query" if i == 0 else f"also[{i - 1}]"


class SearchString(NamedTuple):
    """One search string as the index is searched for it (fts.py's rules, applied once)."""

    text: str
    name: str
    terms: tuple[str, ...]
    """````Asked.search_terms``: the query's terms, then the compound words a short one spells."""
    phrases: tuple[str, ...]
    """``Asked.phrases``: identifiers and a short query as a whole."""
    heading: tuple[str, ...]
    """``Asked.heading_terms``: the words a section heading would be (the heading boost)."""
    heading_key: tuple[str, ...]
    """``fts.heading_key`` of those words: what a heading's own key must equal."""
    stop: frozenset[str]
    """``fts.stop_words``: English's, plus the function words of the string's own language."""

    @classmethod
    def parse(cls, text: str, name: str = "query") -> SearchString:
        asked = Asked.of(text)  # normalised, its stop words found and its words split once
        heading = tuple(asked.heading_terms())
        return cls(
            text=text,
            name=name,
            terms=tuple(asked.search_terms()),
            phrases=tuple(asked.phrases()),
            heading=heading,
            heading_key=heading_key(" ".join(heading), asked.stop),
            stop=asked.stop,
        )


class Query(NamedTuple):
    """A checked search request: the query first among ``strings``, then the ``also`` ones."""

    strings: tuple[SearchString, ...]
    top_k: int
    reader_language: str | None = None
    """A base language code ("ja"), the asker's when the front end knows it."""
    scope: Scope | None = None

    @property
    def text(self) -> str:
        return self.strings[0].text

    @classmethod
    def of(
        cls,
        request: SearchRequest,
        top_k: int,
        scope: Scope | None = None,
        default_language: str | None = None,
    ) -> Query:
        """The parsed form of a checked ``request`` (request.py) for ``top_k`` hits in
        ``scope``: its query and its ``also`` strings (blank ones find nothing and are
        dropped); the reader's language is the request's (a locale or language tag,
        "ja_JP.UTF-8", "pt-BR"), else ``default_language`` (a base code: the process's
        locale's)."""
        texts = (request.query, *(t for t in request.also if t.strip()))
        return cls(
            strings=tuple(SearchString.parse(t, string_name(i)) for i, t in enumerate(texts)),
            top_k=top_k,
            reader_language=locale_language(request.reader_language) or default_language,
            scope=scope,
        )
