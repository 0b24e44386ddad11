"""The knowledge core: store, chunker, indexer, search, citations, doctor, watcher.

Nothing in here imports the language server, MCP, click or rich; adapters call this API.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path

from .errors import (
    CitationError,
    ConfigError,
    EmbeddingsError,
    FormatTooNew,
    IdentityMismatch,
    IndexLocked,
    KnowledgeError,
    StoreError,
)
from .index.ignore import IgnoreRules
from .index.runs import (
    Cancelled,
    Indexer,
    IndexReporter,
    IndexStats,
)
from .location import Settings, resolve_settings
from .reader import (
    Knowledge,
    Source,
    StoreStats,
    make_embedder,
)
from .search import Hit, SearchResult, tier_line
from .vectors.tier import DocumentEmbedder
from .writer import Writer, open_writer

__all__ = [
    "Cancelled",
    "CitationError",
    "ConfigError",
    "EmbeddingsError",
    "FormatTooNew",
    "Hit",
    "IdentityMismatch",
    "IgnoreRules",
    "IndexLocked",
    "IndexReporter",
    "IndexStats",
    "Indexer",
    "Knowledge",
    "KnowledgeError",
    "SearchResult",
    "Settings",
    "Source",
    "StoreError",
    "StoreStats",
    "Writer",
    "ignore_rules",
    "index",
    "open_writer",
    "resolve_settings",
    "tier_line",
    "update_paths",
]


def ignore_rules(settings: Settings) -> IgnoreRules:
    """The project's ignore rules (.gitignore, .fiskignore, ``exclude``): walk, watcher, didSave.

    Build it once per watcher or server project and ask ``.ignored(path)`` per event; it re-reads
    an ignore file when that file changes.
    """
    return IgnoreRules.for_project(settings.project_root, settings.exclude)


def index(
    settings: Settings,
    roots: Iterable[Path] | None = None,
    *,
    rebuild: bool = False,
    dry_run: bool = False,
    wait: float = 0.0,
    reporter: IndexReporter | None = None,
    cancel: threading.Event | None = None,
    embedder: DocumentEmbedder | None = None,
) -> IndexStats:
    """One index run over ``roots`` (default: the configured paths) under the writer lock.

    With embeddings configured, ``embedder`` (default: a client built from the settings) embeds
    the chunks of new and changed files.
    """
    with _embedder(settings, embedder) as emb, open_writer(settings.store_dir, wait=wait) as w:
        indexer = Indexer(
            w,
            settings.project_root,
            reporter=reporter,
            cancel=cancel,
            embedder=emb,
            ignore=ignore_rules(settings),
        )
        if w.outdated and not dry_run:  # an older layout: rebuild all of it, not just ``roots``
            return indexer.run(settings.roots, rebuild=True)
        return indexer.run(
            tuple(roots) if roots is not None else settings.roots,
            rebuild=rebuild,
            dry_run=dry_run,
        )


def update_paths(
    settings: Settings,
    paths: Iterable[Path],
    *,
    wait: float = 0.0,
    embedder: DocumentEmbedder | None = None,
    cancel: threading.Event | None = None,
) -> IndexStats:
    """Re-index just these files (saved, created, deleted, renamed) under the writer lock.

    An index with an older layout is rebuilt whole instead."""
    with _embedder(settings, embedder) as emb, open_writer(settings.store_dir, wait=wait) as w:
        indexer = Indexer(
            w, settings.project_root, embedder=emb, cancel=cancel, ignore=ignore_rules(settings)
        )
        if w.outdated:
            return indexer.run(settings.roots, rebuild=True)
        return indexer.update_paths(paths)


@contextlib.contextmanager
def _embedder(
    settings: Settings, given: DocumentEmbedder | None
) -> Iterator[DocumentEmbedder | None]:
    if given is not None or settings.embeddings is None:
        yield given
        return
    client = make_embedder(settings)
    try:
        yield client
    finally:
        if client is not None:
            client.close()
