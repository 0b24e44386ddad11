"""A search string's vector: the query embedder's protocol and the outcome of embedding (a unit
vector or the failure to report). A query is embedded *before* the read snapshot is opened, so
no WAL snapshot or connection is held while an embeddings server thinks (the OpenAI-compatible
provider may take seconds, and a model's first load or download longer), except where the
provider embeds in this process and its model is loaded (``ready``: the built-in provider after
its first query): then it embeds on a thread of its own (:class:`Embedding`) while the search
runs its lexical arms, which takes tens of milliseconds and needs no server. ``search.run_search``
decides whether a failure is loud (a misconfiguration is raised, so it gets fixed) or degrades
the search to lexical.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import NamedTuple, Protocol

from .errors import EmbeddingsError


class QueryEmbedder(Protocol):
    """An embeddings provider at query time; ``embed_query`` returns a unit vector (the
    provider normalises; see vectors/space.py)."""

    model: str
    query_prefix: str
    document_prefix: str

    def embed_query(self, text: str) -> list[float]: ...

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit vectors for several non-blank queries, in order, in one model call."""
        ...


class QueryVector(NamedTuple):
    """The outcome of embedding a query: a unit vector, or the failure to report."""

    vector: list[float] | None = None
    error: EmbeddingsError | None = None


def embed_query(embedder: QueryEmbedder, query: str) -> QueryVector:
    """Embed ``query`` (call it outside any read transaction). Never raises for a provider
    failure: the error is returned, and ``search.run_search`` decides whether it is loud."""
    from .vectors.space import require_unit

    if not query.strip():
        return QueryVector()
    try:
        vector = embedder.embed_query(query)
        require_unit(vector, "a query vector")
    except EmbeddingsError as exc:
        return QueryVector(error=exc)
    except Exception as exc:  # a provider bug must not fail a search; it is logged in full
        _log_failure()
        reason = f"the embeddings provider failed ({type(exc).__name__})"
        return QueryVector(error=EmbeddingsError("invalid_response", reason))
    return QueryVector(vector=list(vector))


def embed_queries(embedder: QueryEmbedder, texts: Sequence[str]) -> list[QueryVector]:
    """:func:`embed_query` for several strings in one model call (a query and its ``also``
    strings); blank strings get no vector. A failure is every string's."""
    from .vectors.space import require_unit

    wanted = [i for i, t in enumerate(texts) if t.strip()]
    out = [QueryVector() for _ in texts]
    if not wanted:
        return out
    try:
        vectors = embedder.embed_queries([texts[i] for i in wanted])
        if len(vectors) != len(wanted):
            raise EmbeddingsError(
                "invalid_response", f"{len(vectors)} vectors for {len(wanted)} queries"
            )
        for v in vectors:
            require_unit(v, "a query vector")
    except EmbeddingsError as exc:
        return [QueryVector(error=exc) for _ in texts]
    except Exception as exc:  # a provider bug must not fail a search; it is logged in full
        _log_failure()
        reason = f"the embeddings provider failed ({type(exc).__name__})"
        return [QueryVector(error=EmbeddingsError("invalid_response", reason)) for _ in texts]
    for i, v in zip(wanted, vectors, strict=True):
        out[i] = QueryVector(vector=list(v))
    return out


def embeds_beside(embedder: QueryEmbedder) -> bool:
    """Whether ``embedder`` may embed while a search holds its read snapshot: it computes in
    this process and its model is loaded (a ``ready()`` that says so; the built-in provider).
    A provider without ``ready`` (a remote server) embeds before the snapshot opens."""
    ready = getattr(embedder, "ready", None)
    return callable(ready) and bool(ready())


class Embedding:
    """Query vectors computed on a thread of its own, started at once: ``result`` waits for
    them (and raises what escaped the work, e.g. KeyboardInterrupt; a provider's failure is a
    :class:`QueryVector` error, as :func:`embed_queries` gives it); ``join`` only waits. Whoever
    starts one joins it before returning, so no thread outlives its search."""

    def __init__(self, work: Callable[[], list[QueryVector]]) -> None:
        self._vectors: list[QueryVector] = []
        self._escaped: BaseException | None = None
        self._thread = threading.Thread(
            target=self._run, args=(work,), name="fisk-query-embed", daemon=True
        )
        self._thread.start()

    def _run(self, work: Callable[[], list[QueryVector]]) -> None:
        try:
            self._vectors = work()
        except BaseException as exc:  # handed to the searching thread by result()
            self._escaped = exc

    def join(self) -> None:
        self._thread.join()

    def result(self) -> list[QueryVector]:
        self._thread.join()
        if self._escaped is not None:
            raise self._escaped
        return self._vectors


def _log_failure() -> None:
    """Log the provider bug being handled in full (logging is imported only when one happens: a
    lexical search never needs it)."""
    import logging

    logging.getLogger(__name__).warning("query embedding failed", exc_info=True)
