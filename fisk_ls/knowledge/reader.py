"""The read side every adapter uses: search, show, sources, stats.

``Knowledge`` is long-lived and thread-safe (the language server and the MCP server keep one for
their whole life): it opens the store lazily, so an index built after it started is found, and
reads the manifest on every call, so a rebuild or a model switch is noticed without a restart.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from .arms import ArmPool, default_workers
from .citations import (
    CitedChunk,
    check_freshness,
    check_freshness_all,
    format_citation,
    parse_citation,
)
from .connect import scalar
from .deadline import check
from .errors import CitationError
from .languages import environment_language
from .lexical import TermStats
from .location import Settings
from .notices import Status
from .progress import IndexRun, recorded_run
from .query import Query
from .query_vectors import (
    Embedding,
    QueryEmbedder,
    QueryVector,
    embed_queries,
    embed_query,
    embeds_beside,
)
from .request import SearchRequest
from .results import SearchResult, tier_line
from .search import run_search
from .settings_checks import shown
from .store import Snapshot, Store
from .vectors.knn import CoarseIndex

if TYPE_CHECKING:  # the vector modules are imported where a configuration with embeddings uses them
    from .vectors.backlog import Coverage
    from .vectors.space import VectorSpace


class Source(NamedTuple):
    """An indexed document (``Knowledge.sources``)."""

    path: str
    title: str
    chunks: int
    indexed_at: float


class StoreStats(NamedTuple):
    """Counts and sizes of a store (``Knowledge.stats``)."""

    store: str
    built: bool
    documents: int = 0
    chunks: int = 0
    vectors: int = 0
    """Chunks with a vector; ``chunks - vectors`` are still waiting to be embedded."""
    model: str = ""
    dimension: int = 0
    normalized: bool = False
    db_bytes: int = 0
    wal_bytes: int = 0
    modified: float = 0.0


class Knowledge:
    def __init__(
        self,
        settings: Settings,
        embedder: QueryEmbedder | None = None,
        *,
        coarse_knn: bool = True,
        indexing: Callable[[], IndexRun | None] | None = None,
    ) -> None:
        """``coarse_knn=False`` keeps every vector search exact: right for a reader that
        answers one query and exits (the CLI), since loading the int8 matrix of a large index
        costs more than one exact scan (vectors/knn.py). ``indexing``: the index run going on,
        if any (a ``Project`` asks its update queue first); by default the run another writer
        records beside the store (progress.py). ``embedder``: the query embedder (a
        ``Project`` passes its one embedder; None searches lexically); whoever made it closes
        it."""
        self.settings = settings
        self.indexing: Callable[[], IndexRun | None] = indexing or (
            lambda: recorded_run(settings.store_dir)
        )
        self.store = Store(settings.store_dir)
        self.term_stats = TermStats()
        self.coarse: CoarseIndex | None = CoarseIndex() if coarse_knn else None
        self.embedder: QueryEmbedder | None = embedder
        self.arms: ArmPool | None = ArmPool(self.store) if default_workers() else None
        """Runs the lexical arms of a search with ``also`` strings side by side (arms.py);
        None runs them one after another."""

    @property
    def built(self) -> bool:
        with self.store.snapshot() as snap:
            return snap is not None

    def tier(self) -> str:
        if self.embedder is None:
            return tier_line()
        from .vectors.backlog import incomplete

        with self.store.snapshot() as snap:
            dim = snap.manifest.dimension if snap and snap.manifest.hybrid else 0
            cov = incomplete(snap.conn, snap.tables) if snap else None
        return tier_line(self.embedder.model, dim, coverage=cov)

    def model_files(self) -> str | None:
        """Which model files the built-in provider uses and from where (None: no such
        provider); never downloads or loads anything."""
        describe = getattr(self.embedder, "describe_files", None)
        return str(describe()) if callable(describe) else None

    def coverage(self) -> Coverage | None:
        """How many chunks have vectors (None: not built, or lexical-only)."""
        from .vectors.backlog import coverage

        with self.store.snapshot() as snap:
            if snap is None or not snap.manifest.hybrid:
                return None
            return coverage(snap.conn, snap.tables)

    def search(self, request: SearchRequest) -> SearchResult:
        """Search the live index for a checked ``request`` (request.py): its scope resolved
        against this project's root (RequestError for a path outside it), its count against the
        configured one, its strings parsed once (query.py). With embeddings configured, the query
        and its ``also`` strings are embedded in one provider call, before the read transaction
        opens, or, with a loaded in-process model (``embeds_beside``), on a thread while the lexical
        arms run (optimistically: whether the index holds vectors is known only inside it), then the
        vector space and dimension are checked against that snapshot; each hit's ``found_by`` names
        the strings that found it. The reader's language is the request's, else the process's locale
        (``LC_ALL`` / ``LC_MESSAGES`` / ``LANG``), for a query whose words name none. Past the
        request's ``deadline`` (deadline.py) it raises SearchCancelled, its running statement
        interrupted."""
        q = Query.of(
            request,
            request.wanted(self.settings.top_k),
            request.scope(self.settings.project_root),
            environment_language(os.environ),
        )
        deadline = request.deadline
        space = self.vector_space()
        vectors: Sequence[QueryVector | None] | Callable[[], Sequence[QueryVector | None]] = ()
        pending: Embedding | None = None
        check(deadline)
        embedder = self.embedder
        if embedder is not None and self._may_hold_vectors():
            texts = [s.text for s in q.strings]

            def embed() -> list[QueryVector]:
                assert embedder is not None
                if len(texts) > 1:
                    return embed_queries(embedder, texts)
                return [embed_query(embedder, texts[0])]

            if embeds_beside(embedder):
                pending = Embedding(embed)  # beside the lexical arms (query_vectors.py)
                vectors = pending.result
            else:
                vectors = embed()
        try:
            with self.store.snapshot(deadline) as snap:
                if snap is not None and space is not None and snap.manifest.hybrid:
                    self.store.ensure_vec(snap.conn)
                result = run_search(
                    snap,
                    q,
                    space=space,
                    vectors=vectors,
                    term_stats=self.term_stats,
                    coarse=self.coarse,
                    pool=self.arms,
                )
                return result._replace(indexing=self.indexing())
        finally:
            if pending is not None:
                pending.join()

    def _may_hold_vectors(self) -> bool:
        """False when the live index is built lexical-only (embeddings were configured after
        it was built): its search is lexical until an index run adds vectors, so the query is
        not embedded (the built-in model is not even loaded). A rebuild that lands between
        this read and the search's snapshot only costs one lexical answer."""
        with self.store.snapshot() as snap:
            return snap is None or snap.manifest.hybrid

    def vector_space(self) -> VectorSpace | None:
        """The vector space searches ask for (None with a lexical configuration): the
        embedder's, as index runs and doctor compute it (vectors/space.py)."""
        if self.embedder is None:
            return None
        from .vectors.space import VectorSpace

        return VectorSpace.of_provider(self.embedder)

    def show(self, citation: str, *, check_file: bool = True) -> CitedChunk:
        """The chunk a citation names; stale when its file changed since indexing."""
        path, ordinal = parse_citation(citation)
        with self.store.snapshot() as snap:
            if snap is None:
                raise CitationError(Status.INDEX_NOT_BUILT.sentence)
            row = _chunk_row(snap, path, ordinal)
        if row is None:
            raise CitationError(
                f"no chunk matches {cited(path, ordinal)}: it is not an indexed "
                "document, or the document has fewer chunks since the last index; run "
                "`fisk-ai knowledge sources` to list documents"
            )
        section, body, start, end, digest = row
        chunk = CitedChunk(
            citation=format_citation(path, ordinal),
            path=path,
            ordinal=ordinal,
            section=section,
            text=body,
            start_line=start,
            end_line=end,
        )
        if not check_file:
            return chunk
        return check_freshness(chunk, self.settings.project_root / path, digest)

    def around(self, citation: str, context: int, *, check_file: bool = True) -> list[CitedChunk]:
        """The cited chunk with up to ``context`` chunks of the same document before and after
        it (its neighbours by ordinal), in document order; each checked for staleness like
        :meth:`show`. ``context`` 0 is ``[show(citation)]``."""
        path, ordinal = parse_citation(citation)
        with self.store.snapshot() as snap:
            if snap is None:
                raise CitationError(Status.INDEX_NOT_BUILT.sentence)
            d, c = snap.tables.documents, snap.tables.chunks
            rows: list[Any] = snap.conn.execute(
                f"SELECT c.ordinal, c.section, c.body, c.start_line, c.end_line, d.hash"
                f" FROM {d} d JOIN {c} c ON c.document_id = d.id"
                f" WHERE d.path = ? AND c.ordinal BETWEEN ? AND ? ORDER BY c.ordinal",
                (path, ordinal - max(context, 0), ordinal + max(context, 0)),
            ).fetchall()
        if not any(int(r[0]) == ordinal for r in rows):
            raise CitationError(
                f"no chunk matches {cited(path, ordinal)}: it is not an indexed "
                "document, or the document has fewer chunks since the last index; run "
                "`fisk-ai knowledge sources` to list documents"
            )
        chunks = [
            CitedChunk(
                citation=format_citation(path, int(n)),
                path=path,
                ordinal=int(n),
                section=str(section),
                text=str(body),
                start_line=int(start),
                end_line=int(end),
            )
            for n, section, body, start, end, _ in rows
        ]
        if not check_file:
            return chunks
        return check_freshness_all(chunks, self.settings.project_root / path, str(rows[0][5]))

    def sources(self) -> list[Source] | None:
        """Indexed documents sorted by path; None when not built."""
        with self.store.snapshot() as snap:
            if snap is None:
                return None
            d = snap.tables.documents
            rows = snap.conn.execute(
                f"SELECT path, title, chunk_count, indexed_at FROM {d} ORDER BY path"
            ).fetchall()
        return [Source(str(p), str(t), int(n), float(at)) for p, t, n, at in rows]  # type: ignore[arg-type]

    def stats(self) -> StoreStats:
        from .vectors.backlog import coverage

        path = self.store.path
        with self.store.snapshot() as snap:
            if snap is None:
                return StoreStats(store=str(self.settings.store_dir), built=False)
            t = snap.tables
            docs = scalar(snap.conn, f"SELECT count(*) FROM {t.documents}")
            chunks = scalar(snap.conn, f"SELECT count(*) FROM {t.rows}")
            m = snap.manifest
            vectors = coverage(snap.conn, t, int(chunks)).embedded if m.hybrid else 0
        wal = Path(f"{path}-wal")
        return StoreStats(
            store=str(self.settings.store_dir),
            built=True,
            documents=int(docs),
            chunks=int(chunks),
            vectors=int(vectors),
            model=m.model,
            dimension=m.dimension,
            normalized=m.normalized,
            db_bytes=_size(path),
            wal_bytes=_size(wal),
            modified=path.stat().st_mtime if path.exists() else 0.0,
        )

    def close(self) -> None:
        if self.arms is not None:
            self.arms.close()
        self.store.close()


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _chunk_row(snap: Snapshot, path: str, ordinal: int) -> tuple[str, str, int, int, str] | None:
    d, c = snap.tables.documents, snap.tables.chunks
    row = snap.conn.execute(
        f"SELECT c.section, c.body, c.start_line, c.end_line, d.hash"
        f" FROM {d} d JOIN {c} c ON c.document_id = d.id WHERE d.path = ? AND c.ordinal = ?",
        (path, ordinal),
    ).fetchone()
    if row is None:
        return None
    return str(row[0]), str(row[1]), int(row[2]), int(row[3]), str(row[4])


def tier_of(settings: Settings) -> str:
    """The tier line of a project's index as configured, for adapters that print it before or
    beside other work: reads the manifest (and the backlog's size) once, read-only, and never
    calls the embedder."""
    if settings.embeddings is None:
        return tier_line()
    from .vectors.backlog import incomplete

    store = Store(settings.store_dir)
    try:
        with store.snapshot() as snap:
            dim = snap.manifest.dimension if snap and snap.manifest.hybrid else 0
            cov = incomplete(snap.conn, snap.tables) if snap else None
    finally:
        store.close()
    return tier_line(settings.embeddings.model, dim, coverage=cov)


def cited(path: str, ordinal: int) -> str:
    """A citation as a message quotes it: whole when short, else its length."""
    citation = format_citation(path, ordinal)
    if len(citation) > 80:
        return f"a citation of {len(citation):,} characters"
    return shown(citation)
