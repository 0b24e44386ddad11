"""The search of one snapshot: each search string's lexical arm (FTS5/BM25 with the heading
boost) and vector arm (sqlite-vec KNN, when the vector tier is on), fused (fusion.py) and
assembled into hits (hits.py).

A search whose query embedding failed for any reason other than a misconfiguration (an outage,
a timeout, garbage vectors, an HTML page, a redirect, an oversized body) is ``degraded``:
lexical results with a one-line ``reason``. A misconfiguration (a bad key, an unknown model,
another dimension, another vector space) is raised, so it gets fixed. The query is embedded
before the snapshot is opened, or beside the lexical arms with a loaded in-process model
(query_vectors.py); the vector space and dimension are checked inside it, once the vectors are
known, where the manifest is known.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from .anchored import anchored
from .errors import EmbeddingsError
from .fts import STOP_WORDS, heading_key, may_have_key
from .fusion import fuse_strings
from .hits import best_hits, matcher
from .lexical import TermStats, started_headings
from .notices import Status
from .query import Query, SearchString
from .query_vectors import QueryVector
from .results import SearchResult, tier_line
from .topk import Plan, best, plan_of
from .vectors import knn

if TYPE_CHECKING:
    from .arms import ArmPool
    from .store import Snapshot
    from .vectors.space import VectorSpace

__all__ = ["TermStats", "run_search"]

FANOUT = 50
"""Candidates taken from each retriever before fusion."""

DEEPER = 4
"""When collapsing near-duplicates leaves fewer than top_k hits, lexical reads this many times
``FANOUT`` candidates (four copies per page in versioned docs)."""


# BM25 column weights: section (the heading breadcrumb), body, cjk bigrams, doc (the document's
# title, description and path). Headings are short and name the topic, so a match there counts
# more than one in the body; see bench/tuning.md for the doc weight.
BM25_WEIGHTS = (3.0, 1.0, 1.0, 2.0)


ANCHORED = True
"""An extra search string's lexical arm scores only the rows that match its rarest terms
(anchored.py); False: every row its OR matches, as the query's."""


def query_plan(
    snap: Snapshot,
    query: str | SearchString,
    term_stats: TermStats | None,
) -> Plan:
    """The lexical query for ``query`` against this snapshot: with term statistics, very
    common terms pruned and the cost bounded (``TermStats.plan``): the first ``MAX_TERMS``
    terms are candidates and a posting budget (rarest first) decides which are read."""
    plan = (
        Plan.uncounted(query.phrases, query.terms)
        if isinstance(query, SearchString)
        else plan_of(query)
    )
    if term_stats is not None:
        return term_stats.plan(snap, list(plan.terms), list(plan.phrases))
    return plan


def bm25_ids(
    snap: Snapshot, plan: Plan, limit: int, within: Sequence[int] | None = None
) -> list[tuple[int, float]]:
    """(chunk id, bm25) best first, ties by id: the plan's OR query (``topk.best``: exact, but
    without scoring the rows that only its commonest term matches when that is provably safe).
    BM25 scores every row it reads whatever ``limit`` is, so read deep once rather than twice.
    ``within``: only the chunks of these documents (a scope, scope.py), before the cut."""
    return best(snap, plan, limit, BM25_WEIGHTS, within)


def boost_headings(
    snap: Snapshot,
    ranked: list[tuple[int, float]],
    want: tuple[str, ...],
    stop: frozenset[str] = STOP_WORDS,
) -> list[tuple[int, float]]:
    """``ranked`` with the heading boost applied, re-sorted: a chunk whose own heading is
    exactly the string's heading words ("what is a span" → a section headed "Spans") counts
    ``HEADING_BOOST`` times its BM25, so the section that defines a term outranks the ones that
    only use it. ``want`` is those words as a key (``SearchString.heading_key``); headings drop
    the string's stop words (``stop``: ``SearchString.stop``), as its words did.

    Only the chunk that holds a heading counts as headed by it (``started_headings``): a long
    section cut into many chunks is one section, and its continuations (an env-var table's
    tenth chunk under "OTLP") must not fill the top ten for "what does OTLP stand for"."""
    if not want or not ranked or HEADING_BOOST == 1.0:
        return ranked
    c = snap.tables.rows  # section, document_id and ordinal, with the index on the last two
    marks = ",".join("?" * len(ranked))
    labels: dict[int, tuple[str, str | None]] = {
        int(cid): (str(section), None if before is None else str(before))
        for cid, section, before in snap.conn.execute(
            f"SELECT c.id, c.section, p.section FROM {c} c LEFT JOIN {c} p"
            f" ON p.document_id = c.document_id AND p.ordinal = c.ordinal - 1"
            f" WHERE c.id IN ({marks})",
            [cid for cid, _ in ranked],
        )
    }

    def headed(cid: int) -> bool:
        section, before = labels.get(cid, ("", None))
        if not may_have_key(section, want):  # every heading is a part of the label
            return False
        for h in started_headings(section, before):
            if may_have_key(h, want) and heading_key(h, stop) == want:  # the key: remembered
                return True
        return False

    boosted = [(cid, s * HEADING_BOOST if headed(cid) else s) for cid, s in ranked]
    return sorted(boosted, key=lambda item: (item[1], item[0]))


HEADING_BOOST = 2.0
"""BM25 factor for a chunk whose own heading is the query (:func:`boost_headings`)."""


def vector_ids(
    snap: Snapshot,
    vector: Sequence[float],
    limit: int = FANOUT,
    coarse: knn.CoarseIndex | None = None,
    within: Sequence[int] | None = None,
) -> knn.Scored:
    """Nearest chunks with their cosine, best first, ties by id: exact for small indexes,
    coarse + exact re-scoring for large ones when the reader keeps a ``coarse`` index
    (vectors/knn.py); ``within``: only these chunks."""
    return knn.nearest(snap, vector, limit, coarse, within=within)


def is_empty(snap: Snapshot) -> bool:
    c = snap.tables.chunks
    return snap.conn.execute(f"SELECT 1 FROM {c} LIMIT 1").fetchone() is None


def run_search(
    snap: Snapshot | None,
    query: Query,
    *,
    space: VectorSpace | None = None,
    vectors: Sequence[QueryVector | None] | Callable[[], Sequence[QueryVector | None]] = (),
    term_stats: TermStats | None = None,
    coarse: knn.CoarseIndex | None = None,
    pool: ArmPool | None = None,
    locate: bool = True,
) -> SearchResult:
    """Search one snapshot (None = not built) for a parsed ``query`` (query.py); the
    snapshot's deadline is checked between its stages (SearchCancelled once it has passed).

    ``space`` is the configured vector space (None: lexical configuration) and ``vectors`` what
    ``query_vectors.embed_query`` / ``embed_queries`` gave for the query's strings, in order, before
    the snapshot opened, or a callable that waits for them (an embedding running beside the lexical
    arms, ``query_vectors.Embedding``): called once the lexical arms are done, and the vector space
    is checked after it. Each string runs both arms and :func:`fuse_strings` fuses all the lists (a
    query without ``also`` strings: its own two); with ``pool`` the strings' lexical arms run side
    by side (arms.py), the same lists. The query's scope keeps every retriever to its documents
    before its cut (scope.py); one that holds no document answers ``ok`` with no hits. Each hit's
    match is located (match.py) and hits showing the same matched paragraph are one
    (``hits.assemble``); ``locate`` False leaves both out (a measure of the search alone).
    """
    model = space.model if space is not None else None
    if snap is None:
        return SearchResult(Status.INDEX_NOT_BUILT, tier_line(model))
    hybrid = snap.manifest.hybrid
    dim = snap.manifest.dimension if hybrid else 0
    cov = None
    if space is not None:  # the vector modules: imported by a search with embeddings only
        from .vectors.backlog import incomplete
        from .vectors.space import dimension_error, require_match

        cov = incomplete(snap.conn, snap.tables)
    tier = tier_line(model, dim, coverage=cov)
    if is_empty(snap):
        return SearchResult(Status.INDEX_EMPTY, tier)
    strings = query.strings
    scope = query.scope
    docs = within = None
    if scope is not None:  # scope.py (and its glob matcher): imported by a scoped search only
        from .scope import chunk_ids, documents

        docs = documents(snap, scope)
        within = chunk_ids(snap, docs) if docs is not None and space and hybrid else None
    snap.check()
    plans = [query_plan(snap, s, term_stats) for s in strings]
    snap.check()
    question = strings[0]

    def arm(
        snap: Snapshot, string: SearchString, plan: Plan, within: Sequence[int] | None
    ) -> list[tuple[int, float]]:
        return lexical_arm(snap, string, plan, within, string is not question)

    if pool is not None:  # one string, or little to read: one after another there too
        deeps = pool.run(snap, arm, strings, plans, docs)
    else:
        deeps = [arm(snap, s, plan, docs) for s, plan in zip(strings, plans, strict=True)]
    snap.check()
    known = vectors() if callable(vectors) else vectors  # an embedding beside the lexical arms
    given = [known[i] if i < len(known) else None for i in range(len(strings))]
    qv = given[0] or QueryVector(
        error=EmbeddingsError("invalid_response", "the query was not embedded")
    )
    faulty = qv.error is not None and not (hybrid and qv.error.misconfigured)
    if space is not None and hybrid and not faulty:
        # A provider that failed (its model does not load, the server is down) is a fault to
        # report, not another vector space: the search degrades before any vector-space check.
        require_match(snap.manifest, space)
    found_vectors: list[knn.Scored] = [[] for _ in strings]
    degraded, reason = False, None
    if space is not None and (hybrid or given[0] is not None):
        for i, s in enumerate(strings):
            if not s.text.strip():
                continue
            v = given[i] or QueryVector(
                error=EmbeddingsError("invalid_response", "the query was not embedded")
            )
            if v.error is not None:
                if hybrid and v.error.misconfigured:
                    raise v.error
                degraded, reason = True, v.error.reason
                tier = tier_line(model, dim, reason)
            elif v.vector is not None and hybrid:
                if len(v.vector) != dim:
                    raise dimension_error(len(v.vector), dim)
                found_vectors[i] = vector_ids(snap, v.vector, coarse=coarse, within=within)
                snap.check()
    scoped = docs is not None
    if not any(deeps) and not any(found_vectors):
        # Searchable words that no document (in the scope) holds: ok, with no hits.
        searchable = any(plan.expression() for plan in plans)
        return SearchResult(
            Status.OK if searchable else Status.NO_TERMS, tier, [], degraded, reason, scoped
        )
    arms = [(deep[:FANOUT], vector) for deep, vector in zip(deeps, found_vectors, strict=True)]
    fused, ranks, found = fuse_strings(arms)
    where = matcher(snap, query) if locate else None
    shown = best_hits(snap, query, fused, ranks, found, where)
    if len(shown) < query.top_k and any(len(deep) > FANOUT for deep in deeps):
        # Copies of the same page took the candidates: read deeper lexically and fuse again.
        arms = list(zip(deeps, found_vectors, strict=True))
        fused, ranks, found = fuse_strings(arms)
        shown = best_hits(snap, query, fused, ranks, found, where)
    return SearchResult(Status.OK, tier, shown, degraded, reason, scoped)


def lexical_arm(
    snap: Snapshot,
    string: SearchString,
    plan: Plan,
    within: Sequence[int] | None = None,
    extra: bool = False,
) -> list[tuple[int, float]]:
    """One search string's lexical candidates for its ``plan`` (:func:`query_plan`),
    ``FANOUT`` x ``DEEPER`` deep, heading boost applied (empty when the string has no
    searchable words). An ``extra`` string's (an ``also``'s) candidates come from the rows of
    its rarest terms only (``ANCHORED``, anchored.py).

    The heading boost sees every candidate read: a merged chunk's long label dilutes its
    BM25, so the section whose heading is the query can start below the first FANOUT.
    ``within``: only the chunks of these documents (a scope)."""
    if not plan.expression():
        return []
    if extra and ANCHORED:
        deep = anchored(snap, plan, FANOUT * DEEPER, BM25_WEIGHTS, within)[0]
    else:
        deep = bm25_ids(snap, plan, FANOUT * DEEPER, within)
    return boost_headings(snap, deep, string.heading_key, string.stop)
