"""Search: FTS5/BM25 always, sqlite-vec KNN when the vector tier is on, fused by score
(:func:`fuse`: a convex combination of relative BM25 and rescaled cosine).

Soft outcomes are values: ``status`` is ``ok``, ``index_not_built``, ``index_empty`` or
``no_terms`` (the query has no words: punctuation, symbols, spaces; a query whose words no
document holds is ``ok`` with no hits); their sentences are in notices.py. A search whose query
embedding failed for any reason other than a misconfiguration (an outage, a timeout, garbage
vectors, an HTML page, a redirect, an oversized body) is ``degraded``: lexical results with a
one-line ``reason``. A misconfiguration (a bad key, an unknown model, another dimension,
another vector space) is raised, so it gets fixed.

The query is embedded (:func:`embed_query`) *before* the read snapshot is opened, so no WAL
snapshot or connection is held while the embeddings server thinks; the vector space and dimension
are checked inside the snapshot, where the manifest is known.

Over 400 lines on purpose: retrieval, fusion and hit assembly of one query; term statistics
are in lexical.py and KNN in vectors/knn.py.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from .citations import format_citation
from .collapse import normalised, paragraph_key
from .display import display_text
from .errors import EmbeddingsError
from .fts import (
    STOP_WORDS,
    heading_key,
    may_have_key,
)
from .languages import prefer_query_language
from .lexical import TermStats, started_headings
from .match import Match, fts_tokenizer, terms_tokens
from .match import locate as locate_match
from .query import Query, SearchString, string_name
from .scope import chunk_ids as scope_chunks
from .scope import documents as scope_documents
from .topk import Plan, best, plan_of
from .vectors import knn
from .vectors.backlog import incomplete
from .vectors.space import VectorSpace, dimension_error, require_match, require_unit

if TYPE_CHECKING:
    from .arms import ArmPool
    from .expansion import Expansion
    from .progress import IndexRun
    from .store import Snapshot
    from .vectors.backlog import Coverage

log = logging.getLogger(__name__)

__all__ = [
    "Hit",
    "Location",
    "SearchResult",
    "TermStats",
    "fuse",
    "fuse_strings",
    "rrf",
    "run_search",
    "tier_line",
]

FANOUT = 50
"""Candidates taken from each retriever before fusion."""

DEEPER = 4
"""When collapsing near-duplicates leaves fewer than top_k hits, lexical reads this many times
``FANOUT`` candidates (four copies per page in versioned docs)."""

RRF_K = 60
"""The reference's Reciprocal Rank Fusion constant (:func:`rrf`, kept for comparison)."""

LEXICAL_WEIGHT = 0.7
"""The lexical share of a hybrid score (:func:`fuse`); 0.65-0.75 is a plateau on the dev set."""

# BM25 column weights: section (the heading breadcrumb), body, cjk bigrams, doc (the document's
# title, description and path). Headings are short and name the topic, so a match there counts
# more than one in the body; see bench/tuning.md for the doc weight.
BM25_WEIGHTS = (3.0, 1.0, 1.0, 2.0)

OK = "ok"
INDEX_NOT_BUILT = "index_not_built"
INDEX_EMPTY = "index_empty"
NO_TERMS = "no_terms"


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


class Location(NamedTuple):
    """Where else a collapsed hit's text is: a versioned copy of the same chunk, or a chunk
    around the same matched paragraph (``match`` says where that paragraph is in it)."""

    path: str
    ordinal: int
    start_line: int
    end_line: int
    match: Match | None = None
    """The part of this chunk that matched, when its chunk's text differs from the hit's (a
    paragraph folded by :func:`assemble`); None: the chunk is a copy of the hit's, the match
    at the same place."""

    @property
    def citation(self) -> str:
        return format_citation(self.path, self.ordinal)


@dataclass(frozen=True)
class QueryVector:
    """The outcome of embedding a query: a unit vector, or the failure to report."""

    vector: list[float] | None = None
    error: EmbeddingsError | None = None


def embed_query(embedder: QueryEmbedder, query: str) -> QueryVector:
    """Embed ``query`` (call it outside any read transaction). Never raises for a provider
    failure: the error is returned, and :func:`run_search` decides whether it is loud."""
    if not query.strip():
        return QueryVector()
    try:
        vector = embedder.embed_query(query)
        require_unit(vector, "a query vector")
    except EmbeddingsError as exc:
        return QueryVector(error=exc)
    except Exception as exc:  # a provider bug must not fail a search; it is logged in full
        log.warning("query embedding failed", exc_info=True)
        reason = f"the embeddings provider failed ({type(exc).__name__})"
        return QueryVector(error=EmbeddingsError("invalid_response", reason))
    return QueryVector(vector=list(vector))


def embed_queries(embedder: QueryEmbedder, texts: Sequence[str]) -> list[QueryVector]:
    """:func:`embed_query` for several strings in one model call (a query and its ``also``
    strings); blank strings get no vector. A failure is every string's."""
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
        log.warning("query embedding failed", exc_info=True)
        reason = f"the embeddings provider failed ({type(exc).__name__})"
        return [QueryVector(error=EmbeddingsError("invalid_response", reason)) for _ in texts]
    for i, v in zip(wanted, vectors, strict=True):
        out[i] = QueryVector(vector=list(v))
    return out


@dataclass(frozen=True)
class Hit:
    chunk_id: int
    path: str
    ordinal: int
    section: str
    text: str
    start_line: int
    end_line: int
    score: float
    retrievers: dict[str, int] = field(default_factory=dict)
    """Which retrievers found the chunk, with its 1-based rank in each."""
    also: tuple[Location, ...] = ()
    """Other chunks with the same or near-identical text, collapsed into this hit (best first)."""
    match: Match | None = None
    """Where inside the chunk the query matched (:func:`run_search` sets it)."""
    found_by: tuple[str, ...] = ("query",)
    """The search strings that found the chunk: "query", and "also[0]", "also[1]", ... for the
    caller's extra strings (:func:`run_search`'s ``also``)."""
    project: str = ""
    """The project's name in a search over several (projects.py); its citation names it."""

    @property
    def citation(self) -> str:
        plain = format_citation(self.path, self.ordinal)
        return f"{self.project}:{plain}" if self.project else plain

    @property
    def content(self) -> str:
        return display_text(self.section, self.text)


@dataclass(frozen=True)
class SearchResult:
    status: str
    tier: str
    hits: list[Hit] = field(default_factory=list)
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


def rrf(lists: Sequence[Sequence[int]], k: int = RRF_K) -> list[tuple[int, float]]:
    """Reciprocal Rank Fusion: (id, score) by score, ties by smaller id."""
    scores: dict[int, float] = {}
    for ranked in lists:
        for rank, cid in enumerate(ranked):
            scores[cid] = scores.get(cid, 0.0) + 1.0 / (k + rank + 1)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


def query_expression(snap: Snapshot, query: str, term_stats: TermStats | None) -> str:
    """The MATCH expression of :func:`query_plan`."""
    return query_plan(snap, query, term_stats).expression()


def query_plan(
    snap: Snapshot,
    query: str | SearchString,
    term_stats: TermStats | None,
    budget: int | None = None,
) -> Plan:
    """The lexical query for ``query`` against this snapshot: with term statistics, very
    common terms pruned and the cost bounded (``TermStats.plan``).

    Keeping only a fixed number of the rarest terms of a long query was tried: 10x faster on
    pasted paragraphs but ArguAna nDCG@10 fell 0.465 -> 0.406, so the first ``MAX_TERMS`` terms
    are candidates and only a posting budget (rarest first) decides; ArguAna is unchanged by it
    (bench/tuning.md, "Hostile queries")."""
    plan = (
        Plan.uncounted(query.phrases, query.terms)
        if isinstance(query, SearchString)
        else plan_of(query)
    )
    if term_stats is not None:
        return term_stats.plan(snap, list(plan.terms), list(plan.phrases), budget)
    return plan


def lexical_ids(
    snap: Snapshot,
    plan: Plan,
    limit: int = FANOUT,
    heading: Sequence[str] = (),
    stop: frozenset[str] = STOP_WORDS,
) -> list[tuple[int, float]]:
    """(chunk id, bm25) best first; bm25 is negative, lower is better; ties by id.

    With ``heading`` (the query's words, see ``fts.heading_terms``), a chunk whose own heading
    is exactly those words ("what is a span" → a section headed "Spans") counts
    ``HEADING_BOOST`` times its BM25: the section that defines a term outranks the ones that
    only use it. ``stop`` is the query's stop words (``fts.stop_words``), as for
    :func:`boost_headings`."""
    want = heading_key(" ".join(heading), stop)
    return boost_headings(snap, bm25_ids(snap, plan, limit), want, stop)


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
    """``ranked`` with the heading boost of :func:`lexical_ids` applied, re-sorted: ``want`` is
    the query's heading words as a key (``fts.heading_key``; ``SearchString.heading_key``).
    Headings drop the query's stop words (``fts.stop_words``), as its words did.

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
    keys: dict[str, tuple[str, ...]] = {}

    def headed(cid: int) -> bool:
        section, before = labels.get(cid, ("", None))
        if not may_have_key(section, want):  # every heading is a part of the label
            return False
        for h in started_headings(section, before):
            if not may_have_key(h, want):
                continue
            key = keys.get(h)
            if key is None:
                key = keys[h] = heading_key(h, stop)
            if key == want:
                return True
        return False

    boosted = [(cid, s * HEADING_BOOST if headed(cid) else s) for cid, s in ranked]
    return sorted(boosted, key=lambda item: (item[1], item[0]))


HEADING_BOOST = 2.0
"""BM25 factor for a chunk whose own heading is the query (see ``lexical_ids``)."""


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


class _Row(NamedTuple):
    path: str
    ordinal: int
    section: str
    body: str
    start_line: int
    end_line: int


def _chunk_rows(snap: Snapshot, ids: Sequence[int], columns: str) -> list[Any]:
    """``columns`` (of chunk ``c`` and its document ``d``) after the chunk id, for ``ids``."""
    if not ids:
        return []
    d, c = snap.tables.documents, snap.tables.chunks
    marks = ",".join("?" * len(ids))
    return snap.conn.execute(
        f"SELECT c.id, {columns} FROM {c} c JOIN {d} d ON d.id = c.document_id"
        f" WHERE c.id IN ({marks})",
        list(ids),
    ).fetchall()


def hydrate(snap: Snapshot, ids: Sequence[int]) -> dict[int, _Row]:
    rows = _chunk_rows(snap, ids, "d.path, c.ordinal, c.section, c.body, c.start_line, c.end_line")
    return {
        int(cid): _Row(str(path), int(ordinal), str(section), str(body), int(start), int(end))
        for cid, path, ordinal, section, body, start, end in rows
    }


class _Candidate(NamedTuple):
    key: str
    """The near-duplicate key (collapse.py; the chunk's own id when the row has none)."""
    path: str
    """The document's path (translated copies are told apart by their folders)."""


def _candidates(snap: Snapshot, fused: Sequence[tuple[int, float]]) -> dict[int, _Candidate]:
    """What ranking and collapsing need of each candidate, in one read."""
    rows = _chunk_rows(snap, [cid for cid, _ in fused], "c.near, d.path")
    return {int(cid): _Candidate(str(near) or f"#{cid}", str(path)) for cid, near, path in rows}


def _locations(snap: Snapshot, ids: Sequence[int]) -> dict[int, Location]:
    rows = _chunk_rows(snap, ids, "d.path, c.ordinal, c.start_line, c.end_line")
    return {
        int(cid): Location(str(path), int(ordinal), int(start), int(end))
        for cid, path, ordinal, start, end in rows
    }


def assemble(
    snap: Snapshot,
    fused: Sequence[tuple[int, float]],
    ranks: dict[int, dict[str, int]],
    k: int,
    keys: dict[int, str],
    found: dict[int, tuple[str, ...]] | None = None,
    locate: Callable[[Hit], Match] | None = None,
) -> list[Hit]:
    """The best ``k`` hits of ``fused``, best first, each saying which strings ``found`` it.
    Near-duplicates (equal ``keys``: ``chunks.near``, see collapse.py) collapse into the best
    copy's ``also``; a candidate without a key is gone since it was read. With ``locate`` each
    hit gets its match, and a hit whose matched part is a paragraph a better hit already shows
    (``collapse.paragraph_key``: the same text under the same heading, the chunks around it
    differing) folds into that hit's ``also`` with its copies, each location with its own
    match. Folded hits do not count: candidates are read on until ``k`` hits stand (or none
    is left). Text is read for the hits shown and the ones folded alone."""
    groups: list[tuple[int, float]] = []
    members: dict[int, list[int]] = {}
    heads: dict[str, int] = {}
    for cid, score in fused:
        key = keys.get(cid)
        if key is None:
            continue  # gone since the candidates were read
        head = heads.get(key)
        if head is None:
            heads[key] = cid
            groups.append((cid, score))
            members[cid] = []
        else:
            members[head].append(cid)
    found = found or {}

    def hit_of(cid: int, score: float, row: _Row) -> Hit:
        hit = Hit(
            chunk_id=cid,
            path=row.path,
            ordinal=row.ordinal,
            section=row.section,
            text=row.body,
            start_line=row.start_line,
            end_line=row.end_line,
            score=round(score, 4),
            retrievers=ranks.get(cid, {}),
            found_by=found.get(cid, ("query",)),
        )
        return hit if locate is None else replace(hit, match=locate(hit))

    hits: list[Hit] = []
    folded: dict[int, list[Hit]] = {}  # a hit's chunk id -> the hits folded into it
    shown: dict[str, int] = {}  # paragraph key -> the chunk id of the hit showing it
    words: list[str] = []  # the shown paragraphs' normalised words
    at = 0
    while len(hits) < k and at < len(groups):
        batch = groups[at : at + k - len(hits)] if locate is not None else groups[:k]
        at += len(batch)
        rows = hydrate(snap, [cid for cid, _ in batch])
        for cid, score in batch:
            if (row := rows.get(cid)) is None:
                continue
            hit = hit_of(cid, score, row)
            key = _paragraph_key(hit)
            if key is not None and (into := shown.get(key)) is not None:
                folded[into].append(hit)
                continue
            if key is not None and hit.match is not None:
                shown[key] = cid
                words.append(normalised("", hit.text[hit.match.offset : hit.match.end]))
            folded[cid] = []
            hits.append(hit)
        if locate is None:
            break
    if words and at < len(groups):
        # The candidates below the last hit: those that hold a shown paragraph (a cheap test on
        # their normalised text) are located, and fold into its hit when that is what matched.
        rest = groups[at:]
        rows = hydrate(snap, [cid for cid, _ in rest])
        for cid, score in rest:
            row = rows.get(cid)
            if row is None:
                continue
            text = normalised("", row.body)
            if not any(w in text for w in words):
                continue
            hit = hit_of(cid, score, row)
            key = _paragraph_key(hit)
            if key is not None and (into := shown.get(key)) is not None:
                folded[into].append(hit)
    place = {cid: i for i, (cid, _) in enumerate(fused)}
    copies = [m for h in hits for m in members[h.chunk_id]]
    copies += [m for h in hits for f in folded[h.chunk_id] for m in members[f.chunk_id]]
    where = _locations(snap, copies)

    def others(hit: Hit) -> tuple[Location, ...]:
        out = [where[m] for m in members[hit.chunk_id] if m in where]
        for f in folded[hit.chunk_id]:
            out.append(Location(f.path, f.ordinal, f.start_line, f.end_line, f.match))
            for m in members[f.chunk_id]:
                if (w := where.get(m)) is not None and f.match is not None:
                    out.append(w._replace(match=_moved(f.match, w.start_line - f.start_line)))
        rank = {(w.path, w.ordinal): place.get(c, 0) for c, w in where.items()}
        rank |= {(f.path, f.ordinal): place.get(f.chunk_id, 0) for f in folded[hit.chunk_id]}
        return tuple(sorted(out, key=lambda w: rank.get((w.path, w.ordinal), 0)))

    return [replace(h, also=others(h)) for h in hits]


def _paragraph_key(hit: Hit) -> str | None:
    """The key of the hit's matched part under its own heading (collapse.paragraph_key)."""
    m = hit.match
    if m is None:
        return None
    heading = m.section.rsplit(" > ", 1)[-1]
    return paragraph_key(heading, hit.text[m.offset : m.end])


def _moved(match: Match, shift: int) -> Match:
    """``match`` in a copy of its chunk whose lines start ``shift`` lines later."""
    word = match.first_word
    return replace(
        match,
        lines=(match.lines[0] + shift, match.lines[1] + shift),
        first_word=None if word is None else replace(word, line=word.line + shift),
    )


def matcher(snap: Snapshot, query: Query) -> Callable[[Hit], Match]:
    """Locates a hit's match (match.locate) with the index's tokenizer and the terms of every
    string that found it (tokenized once per set of strings)."""
    tokenize = fts_tokenizer(snap.conn)
    strings = {s.name: s for s in query.strings}
    tokens: dict[tuple[str, ...], tuple[set[str], set[str]]] = {}

    def match(hit: Hit) -> Match:
        terms = tokens.get(hit.found_by)
        if terms is None:
            names = [n for n in hit.found_by if n in strings] or [query.strings[0].name]
            parts = [terms_tokens(strings[name].terms, tokenize) for name in names]
            terms = tokens[hit.found_by] = (
                set().union(*(p[0] for p in parts)),
                set().union(*(p[1] for p in parts)),
            )
        return locate_match(hit.text, hit.section, (hit.start_line, hit.end_line), terms, tokenize)

    return match


def is_empty(snap: Snapshot) -> bool:
    c = snap.tables.chunks
    return snap.conn.execute(f"SELECT 1 FROM {c} LIMIT 1").fetchone() is None


def run_search(
    snap: Snapshot | None,
    query: Query,
    *,
    space: VectorSpace | None = None,
    vectors: Sequence[QueryVector | None] = (),
    term_stats: TermStats | None = None,
    coarse: knn.CoarseIndex | None = None,
    pool: ArmPool | None = None,
    locate: bool = True,
) -> SearchResult:
    """Search one snapshot (None = not built) for a parsed ``query`` (query.py); the
    snapshot's deadline is checked between its stages (SearchCancelled once it has passed).

    ``space`` is the configured vector space (None: lexical configuration) and
    ``vectors`` what :func:`embed_query` / :func:`embed_queries` gave for the query's strings,
    in order, before the snapshot opened. Each string runs both arms and :func:`fuse_strings`
    fuses all the lists (a query without ``also`` strings: its own two); with ``pool`` the
    strings' lexical arms run side by side (arms.py), the same lists. The query's scope
    keeps every retriever to its documents before its cut (scope.py); one that holds no
    document answers ``ok`` with no hits. Each hit's match is located (match.py) and hits
    showing the same matched paragraph are one (:func:`assemble`); ``locate`` False leaves
    both out (a measure of the search alone).
    """
    model = space.model if space is not None else None
    if snap is None:
        return SearchResult(INDEX_NOT_BUILT, tier_line(model))
    hybrid = snap.manifest.hybrid
    dim = snap.manifest.dimension if hybrid else 0
    cov = incomplete(snap.conn, snap.tables) if space else None
    tier = tier_line(model, dim, coverage=cov)
    if is_empty(snap):
        return SearchResult(INDEX_EMPTY, tier)
    strings = query.strings
    given = [vectors[i] if i < len(vectors) else None for i in range(len(strings))]
    qv = given[0] or QueryVector(
        error=EmbeddingsError("invalid_response", "the query was not embedded")
    )
    faulty = qv.error is not None and not (hybrid and qv.error.misconfigured)
    if space is not None and hybrid and not faulty:
        # A provider that failed (its model does not load, the server is down) is a fault to
        # report, not another vector space: the search degrades before any vector-space check.
        require_match(snap.manifest, space)
    scope = query.scope
    docs = scope_documents(snap, scope) if scope is not None else None
    within = scope_chunks(snap, docs) if docs is not None and space and hybrid else None
    snap.check()
    plans = [
        query_plan(snap, s, term_stats, None if i == 0 else ALSO_POSTING_BUDGET)
        for i, s in enumerate(strings)
    ]
    snap.check()
    if pool is not None:  # one string, or little to read: one after another there too
        deeps = pool.run(snap, lexical_arm, strings, plans, docs)
    else:
        deeps = [lexical_arm(snap, s, plan, docs) for s, plan in zip(strings, plans, strict=True)]
    snap.check()
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
        return SearchResult(OK if searchable else NO_TERMS, tier, [], degraded, reason, scoped)
    arms = [(deep[:FANOUT], vector) for deep, vector in zip(deeps, found_vectors, strict=True)]
    fused, ranks, found = fuse_strings(arms)
    where = matcher(snap, query) if locate else None
    hits = _hits(snap, query, fused, ranks, found, where)
    if len(hits) < query.top_k and any(len(deep) > FANOUT for deep in deeps):
        # Copies of the same page took the candidates: read deeper lexically and fuse again.
        arms = list(zip(deeps, found_vectors, strict=True))
        fused, ranks, found = fuse_strings(arms)
        hits = _hits(snap, query, fused, ranks, found, where)
    return SearchResult(OK, tier, hits, degraded, reason, scoped)


def lexical_arm(
    snap: Snapshot,
    string: SearchString,
    plan: Plan,
    within: Sequence[int] | None = None,
) -> list[tuple[int, float]]:
    """One search string's lexical candidates for its ``plan`` (:func:`query_plan`),
    ``FANOUT`` x ``DEEPER`` deep, heading boost applied (empty when the string has no
    searchable words).

    The heading boost sees every candidate read: a merged chunk's long label dilutes its
    BM25, so the section whose heading is the query can start below the first FANOUT.
    ``within``: only the chunks of these documents (a scope)."""
    if not plan.expression():
        return []
    deep = bm25_ids(snap, plan, FANOUT * DEEPER, within)
    return boost_headings(snap, deep, string.heading_key, string.stop)


def _hits(
    snap: Snapshot,
    query: Query,
    fused: list[tuple[int, float]],
    ranks: dict[int, dict[str, int]],
    found: dict[int, tuple[str, ...]],
    locate: Callable[[Hit], Match] | None,
) -> list[Hit]:
    """The top ``query.top_k`` hits: the query's (or else the reader's) language first among
    translated copies, then near-duplicates collapsed and (with ``locate``) repeated matched
    paragraphs folded; each says which strings ``found`` it."""
    got = _candidates(snap, fused)
    paths = {cid: c.path for cid, c in got.items()}
    preferred = prefer_query_language(fused, paths, query.text, query.reader_language)
    keys = {cid: c.key for cid, c in got.items()}
    return assemble(snap, preferred, ranks, query.top_k, keys, found, locate)


Arms = tuple[Sequence[tuple[int, float]], knn.Scored]
"""One search string's candidates: (lexical (id, bm25) best first, vector (id, cosine))."""

ALSO_POSTING_BUDGET: int | None = None
"""The postings an extra search string's lexical arm may read, its rarest terms first (None:
the query's, ``lexical.POSTING_BUDGET``)."""

QUERY_WEIGHT = 1.25
"""How much the question's own score counts against each extra string's (:func:`fuse_strings`):
1.25 keeps its exact words (an identifier, a term to define) ahead of an agent's guesses."""


def fuse_strings(
    arms: Sequence[Arms],
) -> tuple[list[tuple[int, float]], dict[int, dict[str, int]], dict[int, tuple[str, ...]]]:
    """Fused (id, score) best first over every search string's lists, each id's ranks (the
    query's as "lexical" / "vector", an extra string's as "also[i].lexical" ...), and the
    strings that found it. One string is :func:`fuse` of its two lists, unchanged.

    Several: each string scores its candidates as :func:`rescaled` does, and a chunk's score
    is the weighted mean over the strings (the query weighs ``QUERY_WEIGHT``, each extra string
    1; a string that did not find it adds 0). So a chunk that several strings rank high
    outranks one that a single string puts first. Measured against RRF (k=20, 60), score
    fusion by relative BM25, the best per-string score and routing keywords to the lexical arm
    and answers to the vector arm (bench/agent_fusion.py; bench/tuning.md, "Agent strings")."""
    ranks: dict[int, dict[str, int]] = {}
    found: dict[int, list[str]] = {}
    for i, (lexical, vector) in enumerate(arms):
        name = string_name(i)
        prefix = "" if i == 0 else f"{name}."
        for tier, ranked in (("lexical", lexical), ("vector", vector)):
            for rank, (cid, _) in enumerate(ranked, 1):
                ranks.setdefault(cid, {})[prefix + tier] = rank
                by = found.setdefault(cid, [])
                if not by or by[-1] != name:
                    by.append(name)
    found_by = {cid: tuple(names) for cid, names in found.items()}
    if len(arms) == 1:
        return fuse(*arms[0]), ranks, found_by
    total: dict[int, float] = {}
    weights = [QUERY_WEIGHT, *([1.0] * (len(arms) - 1))]
    for w, (lexical, vector) in zip(weights, arms, strict=True):
        for cid, score in rescaled(lexical, vector).items():
            total[cid] = total.get(cid, 0.0) + w * score
    norm = sum(weights)
    fused = sorted(((cid, s / norm) for cid, s in total.items()), key=lambda x: (-x[1], x[0]))
    return fused, ranks, found_by


def rescaled(
    lexical: Sequence[tuple[int, float]], vector: Sequence[tuple[int, float]]
) -> dict[int, float]:
    """One string's score of each candidate in [0, 1]: ``LEXICAL_WEIGHT`` x its BM25 and the
    rest x its cosine, each rescaled over that string's own candidates (the best 1, the last
    0), as :func:`fuse` rescales cosines. Relative BM25 (:func:`fuse`'s, score / best) keeps
    most of a list within 0.7-1.0, so across strings a chunk's count of strings outweighed its
    ranks; rescaled, a string's first hit counts as such."""
    wl = LEXICAL_WEIGHT if vector else 1.0
    wv = 1.0 - LEXICAL_WEIGHT if lexical else 1.0
    scores: dict[int, float] = {}
    for weight, ranked in ((wl, lexical), (wv, vector)):
        if not ranked:
            continue
        top, floor = ranked[0][1], ranked[-1][1]
        span = top - floor
        for cid, x in ranked:
            part = (x - floor) / span if span else 1.0
            scores[cid] = scores.get(cid, 0.0) + weight * part
    return scores


def fuse(
    lexical: Sequence[tuple[int, float]], vector: Sequence[tuple[int, float]]
) -> list[tuple[int, float]]:
    """Convex score fusion: ``LEXICAL_WEIGHT`` x BM25 relative to the best lexical hit plus the
    rest x the cosine rescaled over the vector candidates (the best is 1, the last 0); best first,
    ties by smaller id. A chunk found by one retriever scores nothing from the other. With one
    list alone, that list's relative score (1.0 is its best).

    Why not RRF (the reference's K=60): ranks throw away how far apart the scores are, so a
    chunk ranked 3rd by an English-only model on a Japanese query (cosines all within 0.02)
    counted as much as a strong lexical 3rd. Measured in bench/tuning.md ("fusion"): better
    than RRF K=20/60/100 and weighted RRF on every dev-set slice, and on BEIR SciFact (nDCG@10
    0.7405 vs RRF's 0.7235)."""
    scores: dict[int, float] = {}
    wl = LEXICAL_WEIGHT if vector else 1.0
    wv = 1.0 - LEXICAL_WEIGHT if lexical else 1.0
    if lexical:
        best = lexical[0][1]
        for cid, s in lexical:
            scores[cid] = wl * (s / best if best else 0.0)
    if vector:
        top, floor = vector[0][1], vector[-1][1]
        span = top - floor
        for cid, c in vector:
            part = (c - floor) / span if span > 0 else 1.0
            scores[cid] = scores.get(cid, 0.0) + wv * part
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))
