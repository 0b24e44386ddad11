"""What the update queue tells its owner (queue.py): a full run's progress (``RunReporter``,
the language server's subclass sends ``$/progress``) and the other hooks (``QueueHooks``), each
called on the queue's worker thread."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import KnowledgeError
from ..progress import IndexRun
from .backfill import BackfillReporter
from .stats import IndexReporter, IndexStats


class RunReporter(IndexReporter):
    """Progress of one full run (the language server's subclass sends ``$/progress``)."""

    def begin(self) -> None:
        """The run is about to start (before the lock is taken)."""

    def waiting(self) -> None:
        """Another writer holds the lock; the run will retry."""

    def end(self, message: str) -> None:
        """The run finished, failed or was cancelled."""


class Tracked(RunReporter):
    """``inner`` (the owner's reporter), with the run's progress kept for ``progress``."""

    def __init__(self, inner: RunReporter, keep: Callable[[IndexRun], None]) -> None:
        self.inner = inner
        self.keep = keep
        self.total: int | None = None

    def begin(self) -> None:
        self.inner.begin()

    def waiting(self) -> None:
        self.inner.waiting()

    def end(self, message: str) -> None:
        self.inner.end(message)

    def on_plan(self, files: int) -> None:
        self.total = files
        self.keep(IndexRun(0, files))
        self.inner.on_plan(files)

    def on_file(self, done: int, key: str) -> None:
        self.keep(IndexRun(done, self.total))
        self.inner.on_file(done, key)

    def on_note(self, message: str) -> None:
        self.inner.on_note(message)

    def on_embed(self, done: int, total: int) -> None:
        self.inner.on_embed(done, total)


@dataclass
class QueueHooks:
    """What the queue tells its owner; every hook is called from the worker thread."""

    reporter: Callable[[], RunReporter] = RunReporter
    embed_reporter: Callable[[], BackfillReporter] = BackfillReporter
    """Progress of background embedding (called from the backfill thread)."""
    on_locked: Callable[[], None] = lambda: None
    on_error: Callable[[KnowledgeError], None] = lambda exc: None
    on_update: Callable[[set[Path], IndexStats], None] = lambda paths, stats: None
    on_rules: Callable[[list[Path], IndexStats], None] = lambda files, stats: None
    """A change to these ignore files brought a full run, and it ended: ``stats.removed``
    documents became ignored, ``stats.added`` are no longer ignored."""
