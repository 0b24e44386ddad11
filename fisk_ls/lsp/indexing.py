"""One indexing queue per project: pending paths and full runs, drained by one worker thread.

Every source of change (didSave, didChangeWatchedFiles, the server's own watcher) adds paths to
the same pending set, so a burst becomes one ``update_paths`` pass over just those files. Full
runs (the initial index, ``fisk.knowledge.reindex``) go through the same worker, so this process
never competes with itself for the writer lock.

The lock is shared politely with other processes (``fisk-ai knowledge index|watch``): when it is
busy the work is kept and retried after a short delay; pending paths are never dropped.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path

from ..knowledge import (
    Indexer,
    IndexLocked,
    IndexReporter,
    IndexStats,
    Knowledge,
    KnowledgeError,
    StoreError,
    index,
    open_writer,
    update_paths,
)
from ..knowledge.index.backfill import Backfill, BackfillReporter
from ..knowledge.index.watcher import expand
from ..knowledge.location import Settings
from ..knowledge.vectors.providers import make_embedder

log = logging.getLogger(__name__)

DELAY = 0.05
"""Quiet time after the last change before a pass starts (coalesces bursts)."""
MAX_DELAY = 0.5
"""A steady stream of changes still gets a pass at least this often."""
RETRY_DELAY = 0.25
MAX_RETRY_DELAY = 5.0


class RunReporter(IndexReporter):
    """Progress of one full run; the server's subclass sends ``$/progress``."""

    def begin(self) -> None:
        """The run is about to start (before the lock is taken)."""

    def waiting(self) -> None:
        """Another writer holds the lock; the run will retry."""

    def end(self, message: str) -> None:
        """The run finished, failed or was cancelled."""


@dataclass
class FullRun:
    rebuild: bool
    future: Future[IndexStats] = field(default_factory=Future)


@dataclass
class QueueHooks:
    """What the queue tells its owner; every hook is called from the worker thread."""

    reporter: Callable[[], RunReporter] = RunReporter
    embed_reporter: Callable[[], BackfillReporter] = BackfillReporter
    """Progress of background embedding (called from the backfill thread)."""
    on_locked: Callable[[], None] = lambda: None
    on_error: Callable[[KnowledgeError], None] = lambda exc: None


class IndexQueue:
    """``prune``: the client narrowed the indexed paths, so full runs also remove documents
    that lie outside them (the core only reconciles under the roots it walks)."""

    def __init__(
        self, settings: Settings, hooks: QueueHooks | None = None, *, prune: bool = False
    ) -> None:
        self.settings = settings
        self.hooks = hooks or QueueHooks()
        self.prune = prune
        self._cond = threading.Condition()
        self._pending: set[Path] = set()
        self._first = self._last = 0.0
        self._full: FullRun | None = None
        self._running: FullRun | None = None
        self._working = False
        self._stopping = False
        self._stop = threading.Event()
        self._cancel = threading.Event()
        self._failures = 0
        # One embeddings client for the queue's life: its dimension probe is paid once, not
        # on every save.
        self._embedder = make_embedder(settings)
        # Passes write files at once (drain=False); their vectors are filled in behind them.
        self.backfill: Backfill | None = None
        if self._embedder is not None:
            self.backfill = Backfill(
                settings,
                self._embedder,
                reporter=self.hooks.embed_reporter,
                on_error=self.hooks.on_error,
            )
        name = f"fisk-index-{settings.project_root.name}"
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)

    # -- owner API ------------------------------------------------------------------------------

    def start(self) -> None:
        self._thread.start()
        if self.backfill is not None:
            self.backfill.start()

    @property
    def embedding(self) -> bool:
        """Background embedding is working through the backlog."""
        return self.backfill is not None and self.backfill.busy

    def add(self, paths: Iterable[Path]) -> int:
        """Queue changed paths that lie under the indexed roots; returns how many were taken."""
        taken = {p for p in paths if self.covers(p)}
        if not taken:
            return 0
        with self._cond:
            now = time.monotonic()
            if not self._pending:
                self._first = now
            self._pending.update(taken)
            self._last = now
            self._cond.notify_all()
        return len(taken)

    def covers(self, path: Path) -> bool:
        return any(path == root or root in path.parents for root in self.settings.roots)

    def request_full(self, rebuild: bool = False) -> Future[IndexStats]:
        """Start a full run, or join the one running (or queued) that does at least as much."""
        with self._cond:
            running = self._running
            joinable = running is not None and not running.future.done()
            if running is not None and joinable and (running.rebuild or not rebuild):
                return running.future
            if self._full is None:
                self._full = FullRun(rebuild)
                self._cond.notify_all()
            self._full.rebuild |= rebuild
            return self._full.future

    @property
    def busy(self) -> bool:
        with self._cond:
            return self._working or bool(self._pending) or self._full is not None

    def stop(self, timeout: float = 10.0) -> None:
        """Cancel a running full run, stop the worker and wait for it."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        self._stop.set()
        self._cancel.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout)
        if self._full is not None:
            self._full.future.cancel()
        if self.backfill is not None:
            self.backfill.stop(timeout)
        if self._embedder is not None and not self._thread.is_alive():
            self._embedder.close()

    # -- worker ---------------------------------------------------------------------------------

    def _loop(self) -> None:
        while (job := self._next()) is not None:
            try:
                if isinstance(job, FullRun):
                    self._run_full(job)
                else:
                    self._run_update(job)
            except Exception:  # never let one bad pass kill the queue
                log.exception("indexing pass failed for %s", self.settings.project_root)
            finally:
                with self._cond:
                    self._working = False
                    self._running = None

    def _next(self) -> FullRun | set[Path] | None:
        with self._cond:
            while not self._stopping:
                if self._full is not None:
                    self._running, self._full = self._full, None
                    self._working = True
                    return self._running
                if self._pending:
                    due = min(self._last + DELAY, self._first + MAX_DELAY)
                    if time.monotonic() >= due:
                        batch, self._pending = self._pending, set()
                        self._working = True
                        return batch
                    self._cond.wait(due - time.monotonic())
                    continue
                self._cond.wait()
            return None

    def _requeue(self, batch: set[Path]) -> None:
        with self._cond:
            if not self._pending:
                self._first = time.monotonic()
            self._pending.update(batch)
            self._last = time.monotonic()

    def _backoff(self) -> None:
        self._failures += 1
        self._stop.wait(min(RETRY_DELAY * 2 ** min(self._failures - 1, 5), MAX_RETRY_DELAY))

    def _run_update(self, batch: set[Path]) -> None:
        try:
            stats = update_paths(
                self.settings,
                expand(batch),
                embedder=self._embedder,
                cancel=self._cancel,
                drain=False,
            )
        except IndexLocked:
            self._requeue(batch)
            self.hooks.on_locked()
            self._stop.wait(RETRY_DELAY)
            return
        except Exception as exc:  # keep the changes; report once; retry after a while
            self._requeue(batch)
            self._report(exc)
            self._backoff()
            return
        self._failures = 0
        self._kick_backfill()
        log.info("updated %d path(s) in %s: %s", len(batch), self.settings.project_root, stats)

    def _run_full(self, run: FullRun) -> None:
        reporter = self.hooks.reporter()
        reporter.begin()
        message = "cancelled"
        try:
            stats = self._full_with_retry(run, reporter)
        except Exception as exc:
            message = str(exc) if not self._stopping else "cancelled"
            if not self._stopping:
                self._report(exc)
            run.future.set_exception(exc)
        else:
            message = f"{stats.files} files, {stats.chunks} chunks"
            run.future.set_result(stats)
        finally:
            log.info("index run of %s: %s", self.settings.project_root, message)
            reporter.end(message)

    def _report(self, exc: Exception) -> None:
        if not isinstance(exc, KnowledgeError):
            log.error("indexing %s failed", self.settings.project_root, exc_info=exc)
            exc = StoreError(f"{type(exc).__name__}: {exc}")
        self.hooks.on_error(exc)

    def _full_with_retry(self, run: FullRun, reporter: RunReporter) -> IndexStats:
        while True:
            try:
                stats = index(
                    self.settings,
                    rebuild=run.rebuild,
                    reporter=reporter,
                    cancel=self._cancel,
                    embedder=self._embedder,
                    drain=False,
                )
                if self.prune and not run.rebuild:
                    stats.removed += self._prune()
                self._kick_backfill()
                return stats
            except IndexLocked:
                if self._stopping:
                    raise
                self.hooks.on_locked()
                reporter.waiting()
                self._stop.wait(RETRY_DELAY)

    def _kick_backfill(self) -> None:
        if self.backfill is not None:
            self.backfill.kick()

    def _prune(self) -> int:
        """Remove indexed documents outside the roots; returns how many went."""
        reader = Knowledge(self.settings)
        try:
            sources = reader.sources() or []
        finally:
            reader.close()
        root = self.settings.project_root
        outside = [s.path for s in sources if not self.covers(root / s.path)]
        if not outside:
            return 0
        with open_writer(self.settings.store_dir) as writer:
            return len(Indexer(writer, root).remove(outside))
