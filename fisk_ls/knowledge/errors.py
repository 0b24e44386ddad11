"""Named failures of the knowledge core.

Expected outcomes (index not built, empty index, degraded search) are values on results, not
exceptions. What is raised here is something a person has to act on, and each message says how.
Adapters convert these once at their edge (CLI → exit 1, LSP → error response, MCP → status).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

RESET_FIX = (
    "run `fisk-ai knowledge reset --force` (it moves a folder or link aside, removes a FIFO or "
    "socket, and starts an empty index)"
)
"""The way out of anything but a regular file at one of the store's file names."""


class KnowledgeError(Exception):
    """Base class: a failure with a message fit to show a person."""


class ConfigError(KnowledgeError):
    """agent.yaml or an option is invalid."""


class KnowledgeDisabled(ConfigError):
    """agent.yaml exists but does not enable knowledge (``path`` names it)."""

    def __init__(self, path: Path) -> None:
        super().__init__(
            f"knowledge is not enabled in {path}: add a harness.knowledge block (any block "
            "turns it on, `enabled: false` turns it off)"
        )
        self.path = path


class IndexLocked(KnowledgeError):
    """Another writer (index, watch or the language server) holds the store's lock."""


class VectorSpaceMismatch(KnowledgeError):
    """The index was built with another vector space (model, dimension, prefixes)."""


class FormatTooNew(KnowledgeError):
    """The index was written by a newer fisk-ls."""


class IndexOutdated(KnowledgeError):
    """The index's format predates what a request needs (the next index run rebuilds it)."""


class StoreError(KnowledgeError):
    """The store cannot be opened or is unsafe (a symlink at the store path, bad modes…)."""


class OddStoreFile(StoreError):
    """Something other than a regular file sits at one of the store's file names."""


class ForeignStore(StoreError):
    """The database's contents carry another store's id (or none where one is expected)."""


class IncompleteStore(StoreError):
    """The manifest names a generation whose tables do not exist."""


class CitationError(KnowledgeError):
    """A citation is malformed, points outside the indexed documents, or matches no chunk."""


EmbeddingsErrorKind = Literal[
    "transient",  # refused, timeout, 5xx, 429: retry later; degrade at query time
    "permanent",  # 401, 403, 404, model not found, 400: fix the configuration
    "invalid_response",  # NaN/inf/zero/wrong-length vectors, bad JSON, short data, huge body
    "dimension",  # the server's dimension differs from the pinned one
]


class EmbeddingsError(KnowledgeError):
    """The embeddings server failed; ``kind`` says whether retrying can help.

    ``reason`` is one short sanitised line (never a server's error body) fit for a tier line.

    ``misconfigured`` says the configuration (or the index) must change: a bad key, a model
    the server does not have, a wrong URL path, another dimension. Such errors stay loud at
    query time; every other failure (an outage, garbage vectors, a redirect, a bad certificate)
    degrades a search to lexical. By default, ``permanent`` and ``dimension`` errors are
    misconfigurations; the client marks the permanent ones that are not.
    """

    def __init__(
        self, kind: EmbeddingsErrorKind, reason: str, *, misconfigured: bool | None = None
    ) -> None:
        super().__init__(reason)
        self.kind: EmbeddingsErrorKind = kind
        self.reason = reason
        if misconfigured is None:
            misconfigured = kind in ("permanent", "dimension")
        self.misconfigured = misconfigured

    @property
    def transient(self) -> bool:
        return self.kind == "transient"


class Cancelled(KnowledgeError):
    """Work was asked to stop: an index run (everything committed so far stays), or a search
    (:class:`SearchCancelled`)."""


class SearchCancelled(Cancelled):
    """A search was cancelled or ran past its time limit (deadline.py) and stopped where it was;
    nothing is returned."""
