"""The knowledge core: store, chunker, indexer, search, citations, doctor, watcher.

Nothing in here imports the language server, MCP, click or rich; adapters call this API.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
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
from .indexer import Cancelled, Indexer, IndexReporter, IndexStats
from .location import Settings, resolve_settings
from .reader import Knowledge, Source, StoreStats
from .search import Hit, SearchResult, tier_line
from .writer import Writer, open_writer

__all__ = [
    "Cancelled",
    "CitationError",
    "ConfigError",
    "EmbeddingsError",
    "FormatTooNew",
    "Hit",
    "IdentityMismatch",
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
    "index",
    "open_writer",
    "resolve_settings",
    "tier_line",
    "update_paths",
]


def index(
    settings: Settings,
    roots: Iterable[Path] | None = None,
    *,
    rebuild: bool = False,
    dry_run: bool = False,
    wait: float = 0.0,
    reporter: IndexReporter | None = None,
    cancel: threading.Event | None = None,
) -> IndexStats:
    """One index run over ``roots`` (default: the configured paths) under the writer lock."""
    with open_writer(settings.store_dir, wait=wait) as writer:
        indexer = Indexer(writer, settings.project_root, reporter=reporter, cancel=cancel)
        return indexer.run(
            tuple(roots) if roots is not None else settings.roots,
            rebuild=rebuild,
            dry_run=dry_run,
        )


def update_paths(settings: Settings, paths: Iterable[Path], *, wait: float = 0.0) -> IndexStats:
    """Re-index just these files (saved, created, deleted, renamed) under the writer lock."""
    with open_writer(settings.store_dir, wait=wait) as writer:
        return Indexer(writer, settings.project_root).update_paths(paths)
