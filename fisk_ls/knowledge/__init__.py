"""The knowledge core's public API: index runs, updates, removal, reset (operations.py), the
long-lived reader ``Knowledge`` (reader.py), and the named errors.

Adapters (CLI, language server, agent tool / MCP) call these and never assemble core parts
themselves. Nothing in here imports the language server, MCP, click or rich. Names are loaded on
first use, so a command imports only what it needs (a search never imports the indexer).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .errors import (
    Cancelled,
    CitationError,
    ConfigError,
    EmbeddingsError,
    FormatTooNew,
    IdentityMismatch,
    IndexLocked,
    KnowledgeError,
    StoreError,
)
from .location import Settings, resolve_settings

# The sub-package ``index`` (walk, chunker, runs, queue) would shadow the function ``index``
# once imported; importing it here, before the function is bound below, keeps the function.
from . import index as _index_package  # noqa: F401  # isort: skip

if TYPE_CHECKING:
    from .index.ignore import IgnoreRules
    from .index.runs import IndexReporter, IndexStats
    from .operations import Removal, ignore_rules, index, remove, reset, update_paths
    from .reader import Knowledge, Source, StoreStats, make_embedder
    from .search import Hit, SearchResult, tier_line
    from .writer import open_writer
else:

    def index(*args: Any, **kwargs: Any) -> Any:
        from .operations import index as run

        return run(*args, **kwargs)


_LAZY = {
    "IgnoreRules": ".index.ignore",
    "ignore_rules": ".operations",
    "IndexReporter": ".index.runs",
    "IndexStats": ".index.runs",
    "Removal": ".operations",
    "remove": ".operations",
    "reset": ".operations",
    "update_paths": ".operations",
    "Knowledge": ".reader",
    "Source": ".reader",
    "StoreStats": ".reader",
    "make_embedder": ".reader",
    "Hit": ".search",
    "SearchResult": ".search",
    "tier_line": ".search",
    "open_writer": ".writer",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


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
    "Knowledge",
    "KnowledgeError",
    "Removal",
    "SearchResult",
    "Settings",
    "Source",
    "StoreError",
    "StoreStats",
    "ignore_rules",
    "index",
    "make_embedder",
    "open_writer",
    "remove",
    "reset",
    "resolve_settings",
    "tier_line",
    "update_paths",
]
