"""Search: FTS5/BM25 always, sqlite-vec KNN when the vector tier is on, fused by RRF.

Soft outcomes are values: ``status`` is ``ok``, ``index_not_built``, ``index_empty`` or
``no_terms``; a search whose embeddings call failed transiently is ``degraded`` with a one-line
``reason`` and lexical results.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple, Protocol

from .citations import format_citation
from .collapse import text_key
from .errors import EmbeddingsError, IdentityMismatch
from .fts import heading_terms, match_expression, query_terms
from .index.chunker import display_text
from .settings_schema import resolve_top_k
from .store import scalar
from .vectors.pack import normalize, pack

if TYPE_CHECKING:
    from .match import Match
    from .store import Snapshot

FTS5_TOKENIZE_QUERY = 0x0001
FANOUT = 50
"""Candidates taken from each retriever before fusion."""

DEEPER = 4
"""When collapsing near-duplicates leaves fewer than top_k hits, lexical reads this many times
``FANOUT`` candidates (four copies per page in versioned docs)."""

RRF_K = 60

# BM25 column weights: section (the heading breadcrumb), body, cjk bigrams, doc (the document's
# title, description and path). Headings are short and name the topic, so a match there counts
# more than one in the body; see bench/tuning.md for the doc weight.
BM25_WEIGHTS = (3.0, 1.0, 1.0, 2.0)

OK = "ok"
INDEX_NOT_BUILT = "index_not_built"
INDEX_EMPTY = "index_empty"
NO_TERMS = "no_terms"


class QueryEmbedder(Protocol):
    model: str

    def embed_query(self, text: str) -> list[float]: ...


class Location(NamedTuple):
    """Where else a collapsed hit's text is (a versioned copy of the same page)."""

    path: str
    ordinal: int
    start_line: int
    end_line: int

    @property
    def citation(self) -> str:
        return format_citation(self.path, self.ordinal)


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
    """Where inside the chunk the query matched (``Knowledge.search`` sets it)."""

    @property
    def citation(self) -> str:
        return format_citation(self.path, self.ordinal)

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


def tier_line(model: str | None = None, dimension: int = 0, reason: str | None = None) -> str:
    """The one-line description of how search runs (three kinds, as the reference)."""
    if model is None:
        return "lexical: FTS5/BM25 (no embeddings configured)"
    if reason is not None:
        return f"degraded: hybrid fell back to lexical (embeddings unreachable: {reason})"
    return f"hybrid: FTS5/BM25 + vectors, fused by RRF (model {model}, dim {dimension})"


def rrf(lists: Sequence[Sequence[int]], k: int = RRF_K) -> list[tuple[int, float]]:
    """Reciprocal Rank Fusion: (id, score) by score, ties by smaller id."""
    scores: dict[int, float] = {}
    for ranked in lists:
        for rank, cid in enumerate(ranked):
            scores[cid] = scores.get(cid, 0.0) + 1.0 / (k + rank + 1)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


COMMON_FRACTION = 0.5
"""A query term in more than this share of chunks is dropped when the query has rarer ones.

FTS5's BM25 floors the IDF of such a term at ~0, so it cannot change the ranking; it only costs
a scan of a huge posting list ("set", "input", "the" in command reference docs)."""


class TermStats:
    """Document frequencies of index terms and the chunk count, cached per state of the index
    (a long-lived reader pays each lookup once, and sees incremental updates).

    The state is the generation plus FTS5's structure record (``%_data`` row 10), which changes
    whenever the full-text index does (an insert, a delete, a merge): one primary-key read."""

    def __init__(self) -> None:
        self._state: tuple[int, bytes] | None = None
        self._total = 0
        self._df: dict[str, int] = {}
        self._lock = threading.Lock()

    def _refresh(self, snap: Snapshot) -> int:
        """The chunk count of this snapshot; drops the cache when the index changed."""
        row = snap.conn.execute(
            f"SELECT block FROM {snap.tables.fts}_data WHERE id = 10"
        ).fetchone()
        state = (snap.manifest.generation, bytes(row[0]) if row and row[0] is not None else b"")
        with self._lock:
            if state == self._state:
                return self._total
        total = int(scalar(snap.conn, f"SELECT count(*) FROM {snap.tables.chunks}"))
        with self._lock:
            self._state, self._total, self._df = state, total, {}
        return total

    def prune(self, snap: Snapshot, terms: list[str]) -> list[str]:
        """``terms`` without those in over ``COMMON_FRACTION`` of the chunks, as long as a term
        that does match some chunk and is not common remains (else ``terms`` unchanged: a tiny
        corpus, where every word of the question is everywhere, still gets an answer)."""
        if len(terms) < 2:
            return terms
        try:
            total = self._refresh(snap)
            dfs = [self._df_of(snap, t) for t in terms]
        except Exception:  # an index without a vocabulary table: no pruning
            return terms
        limit = total * COMMON_FRACTION
        if not any(df != 0 and df <= limit for df in dfs):
            return terms
        return [t for t, df in zip(terms, dfs, strict=True) if df <= limit]

    def _df_of(self, snap: Snapshot, term: str) -> int:
        """Chunks holding ``term``; -1 when it is not one index token (unknown: never pruned)."""
        with self._lock:
            df = self._df.get(term)
        if df is not None:
            return df
        tok = snap.conn.fts5_tokenizer("porter", ["unicode61", "remove_diacritics", "2"])
        tokens = list(
            tok(
                term.encode(),
                FTS5_TOKENIZE_QUERY,
                None,
                include_offsets=False,
                include_colocated=False,
            )
        )
        df = -1
        if len(tokens) == 1:
            row = snap.conn.execute(
                f"SELECT doc FROM {snap.tables.vocab} WHERE term = ?", (str(tokens[0]),)
            ).fetchone()
            df = int(row[0]) if row else 0
        with self._lock:
            self._df[term] = df
        return df


def query_expression(
    snap: Snapshot, query: str, term_stats: TermStats | None, *, prefix_last: bool = False
) -> str:
    """The MATCH expression for ``query`` against this snapshot (very common terms pruned when
    term statistics are available).

    Keeping only the rarest terms of a long query was tried: 10x faster on pasted paragraphs but
    ArguAna nDCG@10 fell 0.465 -> 0.406, so the first ``MAX_TERMS`` terms are kept."""
    terms = query_terms(query)
    if term_stats is not None:
        terms = term_stats.prune(snap, terms)
    return match_expression(query, prefix_last=prefix_last, terms=terms)


def lexical_ids(
    snap: Snapshot, expression: str, limit: int = FANOUT, heading: Sequence[str] = ()
) -> list[tuple[int, float]]:
    """(chunk id, bm25) best first; bm25 is negative, lower is better; ties by id.

    With ``heading`` (the query's words, see ``fts.heading_terms``), a chunk whose own heading
    is exactly those words ("what is a span" → a section headed "Spans") counts
    ``HEADING_BOOST`` times its BM25: the section that defines a term outranks the ones that
    only use it."""
    f = snap.tables.fts
    w = ", ".join(str(x) for x in BM25_WEIGHTS)
    rows = snap.conn.execute(
        f"SELECT rowid, bm25({f}, {w}) AS s FROM {f} WHERE {f} MATCH ? ORDER BY s, rowid LIMIT ?",
        (expression, limit),
    )
    ranked = [(int(r[0]), float(r[1])) for r in rows]
    if not heading or not ranked or HEADING_BOOST == 1.0:
        return ranked
    stems = _Stemmer(snap)
    want = stems(" ".join(heading))
    c = snap.tables.chunks
    marks = ",".join("?" * len(ranked))
    sections: dict[int, str] = {
        int(cid): str(section)
        for cid, section in snap.conn.execute(
            f"SELECT id, section FROM {c} WHERE id IN ({marks})", [cid for cid, _ in ranked]
        )
    }
    boosted = [
        (
            cid,
            s * HEADING_BOOST
            if any(stems(h) == want for h in own_headings(sections.get(cid, "")))
            else s,
        )
        for cid, s in ranked
    ]
    return sorted(boosted, key=lambda item: (item[1], item[0]))


HEADING_BOOST = 2.0
"""BM25 factor for a chunk whose own heading is the query (see ``lexical_ids``)."""


class _Stemmer:
    """The index tokenizer's terms of short texts, each text tokenized once."""

    def __init__(self, snap: Snapshot) -> None:
        self._tok = snap.conn.fts5_tokenizer("porter", ["unicode61", "remove_diacritics", "2"])
        self._seen: dict[str, frozenset[str]] = {}

    def __call__(self, text: str) -> frozenset[str]:
        stems = self._seen.get(text)
        if stems is None:
            tokens = self._tok(
                text.encode(),
                FTS5_TOKENIZE_QUERY,
                None,
                include_offsets=False,
                include_colocated=False,
            )
            stems = self._seen[text] = frozenset(str(t) for t in tokens)
        return stems


def own_headings(section: str) -> list[str]:
    """The headings a chunk's label names as its own: the last of its breadcrumb, and every
    merged one ("Traces > Context Propagation; Spans" → ["Context Propagation", "Spans"])."""
    return [part.rsplit(" > ", 1)[-1] for part in section.split("; ")] if section else []


def vector_ids(snap: Snapshot, vector: Sequence[float], limit: int = FANOUT) -> list[int]:
    v = snap.tables.vec
    rows = snap.conn.execute(
        f"SELECT chunk_id, distance FROM {v} WHERE embedding MATCH ? AND k = ? ORDER BY distance",
        (pack(vector), limit),
    ).fetchall()
    ranked = sorted((float(d), int(c)) for c, d in rows)  # type: ignore[arg-type]
    return [cid for _, cid in ranked]  # ties by id


class _Row(NamedTuple):
    path: str
    ordinal: int
    section: str
    body: str
    start_line: int
    end_line: int
    hash: str


def hydrate(snap: Snapshot, ids: Sequence[int]) -> dict[int, _Row]:
    if not ids:
        return {}
    d, c = snap.tables.documents, snap.tables.chunks
    marks = ",".join("?" * len(ids))
    rows = snap.conn.execute(
        f"SELECT c.id, d.path, c.ordinal, c.section, c.body, c.start_line, c.end_line, c.hash"
        f" FROM {c} c JOIN {d} d ON d.id = c.document_id WHERE c.id IN ({marks})",
        list(ids),
    )
    out: dict[int, _Row] = {}
    for cid, path, ordinal, section, body, start, end, digest in rows:
        out[int(cid)] = _Row(
            str(path), int(ordinal), str(section), str(body), int(start), int(end), str(digest)
        )
    return out


def assemble(
    snap: Snapshot,
    fused: Sequence[tuple[int, float]],
    ranks: dict[int, dict[str, int]],
    k: int,
) -> list[Hit]:
    """The best ``k`` hits of ``fused``, near-duplicates collapsed into the best copy's ``also``
    (see collapse.py). Candidates are read in windows until ``k`` distinct hits are found; the
    window that fills ``k`` is read to its end so the copies ranked right after a hit (equal
    text scores alike) still join it."""
    heads: list[tuple[int, float, _Row]] = []
    also: list[list[Location]] = []
    groups: dict[str, int] = {}
    window = max(2 * k, k + 5)
    pos = 0
    while len(heads) < k and pos < len(fused):
        part = fused[pos : pos + window]
        pos += len(part)
        rows = hydrate(snap, [cid for cid, _ in part])
        for cid, score in part:
            row = rows.get(cid)
            if row is None:
                continue
            keys = (row.hash, text_key(row.section, row.body))
            group = next((groups[x] for x in keys if x in groups), None)
            if group is None:
                if len(heads) == k:
                    continue
                group = len(heads)
                heads.append((cid, score, row))
                also.append([])
            else:
                also[group].append(Location(row.path, row.ordinal, row.start_line, row.end_line))
            for x in keys:
                groups.setdefault(x, group)
    return [
        Hit(
            chunk_id=cid,
            path=row.path,
            ordinal=row.ordinal,
            section=row.section,
            text=row.body,
            start_line=row.start_line,
            end_line=row.end_line,
            score=round(score, 4),
            retrievers=ranks.get(cid, {}),
            also=tuple(more),
        )
        for (cid, score, row), more in zip(heads, also, strict=True)
    ]


def is_empty(snap: Snapshot) -> bool:
    c = snap.tables.chunks
    return snap.conn.execute(f"SELECT 1 FROM {c} LIMIT 1").fetchone() is None


def check_identity(snap: Snapshot, model: str, query_prefix: str, document_prefix: str) -> None:
    """The index's pinned vector identity must match the configuration (else --reindex)."""
    m = snap.manifest
    if not m.hybrid:
        if is_empty(snap):
            return  # nothing built yet: not a mismatch, the next index run pins it
        raise IdentityMismatch(
            "the index was built lexical-only but embeddings are configured; run "
            "`fisk-ai knowledge index --reindex` to add vectors"
        )
    wrong = []
    if m.model != model:
        wrong.append(f"model {m.model!r} (configured {model!r})")
    if m.query_prefix != query_prefix:
        wrong.append(f"query_prefix {m.query_prefix!r} (configured {query_prefix!r})")
    if m.document_prefix != document_prefix:
        wrong.append(f"document_prefix {m.document_prefix!r} (configured {document_prefix!r})")
    if not m.normalized:
        wrong.append("unnormalised vectors")
    if wrong:
        raise IdentityMismatch(
            "the index was built with "
            + ", ".join(wrong)
            + "; run `fisk-ai knowledge index --reindex` to rebuild it"
        )


def run_search(
    snap: Snapshot | None,
    query: str,
    top_k: int | None,
    *,
    default_top_k: int = 5,
    embedder: QueryEmbedder | None = None,
    prefixes: tuple[str, str] = ("", ""),
    prefix_last: bool = False,
    term_stats: TermStats | None = None,
) -> SearchResult:
    """Search one snapshot (None = not built)."""
    k = resolve_top_k(top_k, default_top_k)
    hybrid = embedder is not None
    if snap is None:
        return SearchResult(INDEX_NOT_BUILT, tier_line(embedder.model if embedder else None))
    dim = snap.manifest.dimension
    tier = tier_line(embedder.model, dim) if embedder else tier_line()
    if is_empty(snap):
        return SearchResult(INDEX_EMPTY, tier)
    if hybrid:
        assert embedder is not None
        check_identity(snap, embedder.model, *prefixes)
    expression = query_expression(snap, query, term_stats, prefix_last=prefix_last)
    heading = heading_terms(query)
    lexical = lexical_ids(snap, expression, heading=heading) if expression else []
    vector: list[int] = []
    degraded, reason = False, None
    if hybrid and snap.manifest.hybrid and query.strip():
        assert embedder is not None
        try:
            qv = embedder.embed_query(query)
            if len(qv) != dim:
                raise EmbeddingsError(
                    "dimension",
                    f"the server now returns {len(qv)}-dimensional vectors but the index holds "
                    f"{dim}; run `fisk-ai knowledge index --reindex`",
                )
            vector = vector_ids(snap, normalize(qv))
        except EmbeddingsError as exc:
            if exc.kind != "transient":
                raise
            degraded, reason = True, exc.reason
            tier = tier_line(embedder.model, dim, reason)
    if not expression and not vector:
        return SearchResult(NO_TERMS, tier, [], degraded, reason)
    fused, ranks = _fuse(lexical, vector)
    hits = assemble(snap, fused, ranks, k)
    if len(hits) < k and len(lexical) == FANOUT:
        # Copies of the same page took the candidates: read deeper lexically and fuse again.
        lexical = lexical_ids(snap, expression, FANOUT * DEEPER, heading)
        fused, ranks = _fuse(lexical, vector)
        hits = assemble(snap, fused, ranks, k)
    return SearchResult(OK, tier, hits, degraded, reason)


def _fuse(
    lexical: list[tuple[int, float]], vector: list[int]
) -> tuple[list[tuple[int, float]], dict[int, dict[str, int]]]:
    """Fused (id, score in [0, 1]) and each id's 1-based rank per retriever."""
    ranks: dict[int, dict[str, int]] = {}
    for rank, (cid, _) in enumerate(lexical, 1):
        ranks.setdefault(cid, {})["lexical"] = rank
    for rank, cid in enumerate(vector, 1):
        ranks.setdefault(cid, {})["vector"] = rank
    if not vector:
        # Lexical only: BM25 relative to the best hit, so 1.0 is the top and 0.5 half as good.
        best = lexical[0][1] if lexical else -1.0
        return [(cid, (s / best) if best else 0.0) for cid, s in lexical], ranks
    lists = [[cid for cid, _ in lexical], vector] if lexical else [vector]
    top = len(lists) / (RRF_K + 1)  # a chunk ranked first everywhere
    return [(cid, s / top) for cid, s in rrf(lists)], ranks
