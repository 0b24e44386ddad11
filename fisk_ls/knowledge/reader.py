"""The read side every adapter uses: search, show, sources, stats.

``Knowledge`` is long-lived and thread-safe (the language server and the MCP server keep one for
their whole life): it opens the store lazily, so an index built after it started is found, and
reads the manifest on every call, so a rebuild or a model switch is noticed without a restart.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .citations import (
    CitedChunk,
    check_freshness,
    format_citation,
    parse_citation,
)
from .errors import CitationError
from .location import Settings
from .match import Tokenizer, fts_tokenizer, locate, query_tokens
from .search import (
    Hit,
    QueryEmbedder,
    SearchResult,
    TermStats,
    run_search,
    tier_line,
)
from .store import Snapshot, Store, scalar

if TYPE_CHECKING:
    from .vectors.client import EmbeddingsClient


@dataclass(frozen=True)
class Source:
    path: str
    title: str
    chunks: int
    indexed_at: float


@dataclass(frozen=True)
class StoreStats:
    store: str
    built: bool
    documents: int = 0
    chunks: int = 0
    vectors: int = 0
    model: str = ""
    dimension: int = 0
    normalized: bool = False
    db_bytes: int = 0
    wal_bytes: int = 0
    modified: float = 0.0


def make_embedder(settings: Settings) -> EmbeddingsClient | None:
    """The embeddings client the settings ask for (no network until first use)."""
    cfg = settings.embeddings
    if cfg is None:
        return None
    from .vectors.client import EmbeddingsClient

    return EmbeddingsClient(
        base_url=cfg.base_url,
        model=cfg.model,
        api_key=os.environ.get(cfg.api_key_env) if cfg.api_key_env else None,
        timeout=cfg.timeout,
        query_timeout=cfg.query_timeout,
        query_prefix=cfg.query_prefix,
        document_prefix=cfg.document_prefix,
    )


class Knowledge:
    def __init__(self, settings: Settings, embedder: QueryEmbedder | None = None) -> None:
        self.settings = settings
        self.store = Store(settings.store_dir)
        self.term_stats = TermStats()
        self.embedder: QueryEmbedder | None = embedder
        if embedder is None and settings.embeddings is not None:
            self.embedder = make_embedder(settings)

    @property
    def built(self) -> bool:
        with self.store.snapshot() as snap:
            return snap is not None

    def tier(self) -> str:
        if self.embedder is None:
            return tier_line()
        with self.store.snapshot() as snap:
            dim = snap.manifest.dimension if snap else 0
        return tier_line(self.embedder.model, dim)

    def search(
        self, query: str, top_k: int | None = None, *, prefix_last: bool = False
    ) -> SearchResult:
        with self.store.snapshot() as snap:
            if snap is not None and self.embedder is not None and snap.manifest.hybrid:
                self.store.ensure_vec(snap.conn)
            cfg = self.settings.embeddings
            result = run_search(
                snap,
                query,
                top_k,
                default_top_k=self.settings.top_k,
                embedder=self.embedder,
                prefixes=(cfg.query_prefix, cfg.document_prefix) if cfg else ("", ""),
                prefix_last=prefix_last,
                term_stats=self.term_stats,
            )
            if snap is None or not result.hits:
                return result
            tokenize = fts_tokenizer(snap.conn)
        terms = query_tokens(query, tokenize)
        return dataclasses.replace(
            result, hits=[_with_match(hit, terms, tokenize) for hit in result.hits]
        )

    def show(self, citation: str, *, check_file: bool = True) -> CitedChunk:
        """The chunk a citation names; stale when its file changed since indexing."""
        path, ordinal = parse_citation(citation)
        with self.store.snapshot() as snap:
            if snap is None:
                raise CitationError(
                    "the knowledge index is not built yet; run `fisk-ai knowledge index`"
                )
            row = _chunk_row(snap, path, ordinal)
        if row is None:
            raise CitationError(
                f"no chunk matches {format_citation(path, ordinal)}: it is not an indexed "
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
        path = self.store.path
        with self.store.snapshot() as snap:
            if snap is None:
                return StoreStats(store=str(self.settings.store_dir), built=False)
            t = snap.tables
            docs = scalar(snap.conn, f"SELECT count(*) FROM {t.documents}")
            chunks = scalar(snap.conn, f"SELECT count(*) FROM {t.chunks}")
            vectors = chunks if snap.manifest.hybrid else 0
            m = snap.manifest
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
        self.store.close()
        closer = getattr(self.embedder, "close", None)
        if callable(closer):
            closer()


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


def _with_match(hit: Hit, terms: tuple[set[str], set[str]], tokenize: Tokenizer) -> Hit:
    match = locate(hit.text, hit.section, (hit.start_line, hit.end_line), terms, tokenize)
    return dataclasses.replace(hit, match=match)
