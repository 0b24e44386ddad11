"""The knowledge core's public API, the only module the front ends import: ``Project`` (one
project opened once: its reader, writer side, embedder and their lifetimes; project.py), the
operations under it (operations.py), the reader ``Knowledge`` (reader.py), the named errors, the
settings contract's limits (settings_schema.py) and checks (settings_checks.py) and the types
and helpers front ends render with.

Adapters (CLI, language server, agent tool / MCP) call these and never assemble core parts
themselves (tests/test_layering.py). Nothing in here imports the language server, MCP,
click or rich. Names are loaded on first use, so a command imports only what it needs (a search
never imports the indexer).
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
    IndexLocked,
    KnowledgeDisabled,
    KnowledgeError,
    SearchCancelled,
    StoreError,
    VectorSpaceMismatch,
)
from .location import Settings, resolve_settings

if TYPE_CHECKING:
    from .citations import CitedChunk, parse_citation
    from .config import (
        DEFAULT_BUILTIN_MODEL,
        KNOWLEDGE_SEARCH,
        EmbeddingsConfig,
        ExpansionConfig,
        expansion_problem,
        parse_duration,
    )
    from .connect import store_error
    from .deadline import Deadline
    from .doctor import Check
    from .expansion import (
        Expander,
        Expansion,
        ExpansionFailed,
    )
    from .index.backfill import BackfillReporter
    from .index.files import read_document
    from .index.hooks import QueueHooks, RunReporter
    from .index.ignore import IgnoreRules
    from .index.stats import IndexReporter, IndexStats
    from .location import absolute_roots
    from .match import Spot
    from .notices import Status, search_notice
    from .opening import open_writer
    from .operations import Removal, ignore_rules, index_project, remove, reset, update_paths
    from .pack import PackRefused
    from .progress import IndexRun
    from .project import Project
    from .projects import (
        Found,
        Merged,
        ProjectSet,
        first_with,
        search_projects,
    )
    from .reader import Knowledge, Source, StoreStats, tier_of
    from .request import RequestError, SearchRequest, Spelling, check_request
    from .results import (
        Hit,
        Location,
        SearchResult,
        tier_line,
    )
    from .sanitize import SNIPPET_CHARS, bounded, one_line, strip_controls
    from .scope import Scope
    from .settings_checks import (
        SettingError,
        check_context,
        check_scope,
        check_tags,
        check_value,
        rule_needs,
        rule_problems,
        shown,
    )
    from .settings_schema import (
        ALSO,
        EDITOR_SETTINGS,
        EMBEDDINGS,
        EMBEDDINGS_RULE,
        EXPANSION,
        EXPANSION_TIMEOUT,
        QUERY,
        QUERY_TIMEOUT,
        SCOPE,
        SHOW_CONTEXT,
        TAGS,
        TIMEOUT,
        TOOL_CONTEXT,
        TOP_K,
        Setting,
    )
    from .vectors.backlog import Coverage
    from .vectors.url import validate_base_url


_LAZY = {
    "CitedChunk": ".citations",
    "Deadline": ".deadline",
    "parse_citation": ".citations",
    "read_document": ".index.files",
    "DEFAULT_BUILTIN_MODEL": ".config",
    "KNOWLEDGE_SEARCH": ".config",
    "EmbeddingsConfig": ".config",
    "ExpansionConfig": ".config",
    "expansion_problem": ".config",
    "Expander": ".expansion",
    "Expansion": ".expansion",
    "ExpansionFailed": ".expansion",
    "parse_duration": ".config",
    "Check": ".doctor",
    "BackfillReporter": ".index.backfill",
    "IgnoreRules": ".index.ignore",
    "QueueHooks": ".index.hooks",
    "RunReporter": ".index.hooks",
    "IndexReporter": ".index.stats",
    "IndexStats": ".index.stats",
    "absolute_roots": ".location",
    "Spot": ".match",
    "Status": ".notices",
    "search_notice": ".notices",
    "IndexRun": ".progress",
    "Removal": ".operations",
    "Found": ".projects",
    "Merged": ".projects",
    "ProjectSet": ".projects",
    "first_with": ".projects",
    "search_projects": ".projects",
    "PackRefused": ".pack",
    "ignore_rules": ".operations",
    "index_project": ".operations",
    "remove": ".operations",
    "reset": ".operations",
    "update_paths": ".operations",
    "Project": ".project",
    "store_error": ".connect",
    "Knowledge": ".reader",
    "RequestError": ".request",
    "SearchRequest": ".request",
    "Spelling": ".request",
    "check_request": ".request",
    "Source": ".reader",
    "StoreStats": ".reader",
    "tier_of": ".reader",
    "SNIPPET_CHARS": ".sanitize",
    "one_line": ".sanitize",
    "bounded": ".sanitize",
    "strip_controls": ".sanitize",
    "Scope": ".scope",
    "Hit": ".results",
    "Location": ".results",
    "SearchResult": ".results",
    "tier_line": ".results",
    "ALSO": ".settings_schema",
    "EDITOR_SETTINGS": ".settings_schema",
    "EMBEDDINGS": ".settings_schema",
    "EMBEDDINGS_RULE": ".settings_schema",
    "EXPANSION": ".settings_schema",
    "EXPANSION_TIMEOUT": ".settings_schema",
    "QUERY": ".settings_schema",
    "QUERY_TIMEOUT": ".settings_schema",
    "SCOPE": ".settings_schema",
    "SHOW_CONTEXT": ".settings_schema",
    "TAGS": ".settings_schema",
    "TIMEOUT": ".settings_schema",
    "TOOL_CONTEXT": ".settings_schema",
    "TOP_K": ".settings_schema",
    "Setting": ".settings_schema",
    "SettingError": ".settings_checks",
    "check_context": ".settings_checks",
    "check_scope": ".settings_checks",
    "check_tags": ".settings_checks",
    "check_value": ".settings_checks",
    "rule_needs": ".settings_checks",
    "rule_problems": ".settings_checks",
    "shown": ".settings_checks",
    "Coverage": ".vectors.backlog",
    "validate_base_url": ".vectors.url",
    "open_writer": ".opening",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "ALSO",
    "DEFAULT_BUILTIN_MODEL",
    "EDITOR_SETTINGS",
    "EMBEDDINGS",
    "EMBEDDINGS_RULE",
    "EXPANSION",
    "EXPANSION_TIMEOUT",
    "KNOWLEDGE_SEARCH",
    "QUERY",
    "QUERY_TIMEOUT",
    "SCOPE",
    "SHOW_CONTEXT",
    "SNIPPET_CHARS",
    "TAGS",
    "TIMEOUT",
    "TOOL_CONTEXT",
    "TOP_K",
    "BackfillReporter",
    "Cancelled",
    "Check",
    "CitationError",
    "CitedChunk",
    "ConfigError",
    "Coverage",
    "Deadline",
    "EmbeddingsConfig",
    "EmbeddingsError",
    "Expander",
    "Expansion",
    "ExpansionConfig",
    "ExpansionFailed",
    "FormatTooNew",
    "Found",
    "Hit",
    "IgnoreRules",
    "IndexLocked",
    "IndexReporter",
    "IndexRun",
    "IndexStats",
    "Knowledge",
    "KnowledgeDisabled",
    "KnowledgeError",
    "Location",
    "Merged",
    "PackRefused",
    "Project",
    "ProjectSet",
    "QueueHooks",
    "Removal",
    "RequestError",
    "RunReporter",
    "Scope",
    "SearchCancelled",
    "SearchRequest",
    "SearchResult",
    "Setting",
    "SettingError",
    "Settings",
    "Source",
    "Spelling",
    "Spot",
    "Status",
    "StoreError",
    "StoreStats",
    "VectorSpaceMismatch",
    "absolute_roots",
    "bounded",
    "check_context",
    "check_request",
    "check_scope",
    "check_tags",
    "check_value",
    "expansion_problem",
    "first_with",
    "ignore_rules",
    "index_project",
    "one_line",
    "open_writer",
    "parse_citation",
    "parse_duration",
    "read_document",
    "remove",
    "reset",
    "resolve_settings",
    "rule_needs",
    "rule_problems",
    "search_notice",
    "search_projects",
    "shown",
    "store_error",
    "strip_controls",
    "tier_line",
    "tier_of",
    "update_paths",
    "validate_base_url",
]
