"""The freshness engine: one update queue per project, drained by one worker thread.

Every front end feeds it paths through its ``Project`` (project.py) — the language server from
didSave, didChangeWatchedFiles and its own watcher, ``fisk-ai knowledge watch`` from its
watcher — and asks it for full runs (the first
index, a reindex). So the same configuration gives the same index from any of them:

* a burst of changed paths becomes one ``update_paths`` pass over just those files, after
  ``delay`` of quiet (and at least every ``max_delay`` under a steady stream);
* full runs go through the same worker (this process never competes with itself for the writer
  lock), a second request joins the run that already does at least as much, and a full run over
  the configured paths removes documents that lie outside them (``index_project`` prunes);
* the writer lock is shared politely with other processes: when it is busy the work is kept and
  retried; other failures are reported once and retried with bounded backoff; pending paths are
  never dropped;
* a running full run can be cancelled (``cancel``), and ``stop`` cancels and joins;
* with vectors configured, passes write files at once (``drain=False``) and a ``Backfill``
  embeds the backlog behind them, kicked after every pass (backfill.py);
* its passes and the backfill's rounds share one writer session (session.py): the store is
  opened once for the queue's life and re-checked, not re-proved, on every save.

Hooks tell the owner what happened (hooks.py); each is called on the worker thread.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import Cancelled, IndexLocked, KnowledgeError, StoreError
from ..location import document_key, key_prefix
from ..operations import ignore_rules, index_project, update_paths
from ..progress import IndexRun
from ..session import WriterSession
from .backfill import Backfill
from .hooks import QueueHooks, RunReporter, Tracked
from .stats import IndexStats
from .watcher import expand

if TYPE_CHECKING:
    from ..location import Settings
    from ..vectors.tier import DocumentEmbedder

log = logging.getLogger(__name__)

DELAY = 0.05
"""Quiet time after the last change before a pass starts (coalesces bursts)."""
MAX_DELAY = 0.5
"""A steady stream of changes still gets a pass at least this often."""
RETRY_DELAY = 0.25
MAX_RETRY_DELAY = 5.0


def _keys(roots: tuple[Path, ...] | None, project_root: Path) -> tuple[str, ...] | None:
    """The document keys of explicit ``roots`` (folders end in ``/``), for the backlog counts
    the owner is told; None when the roots are the configured ones or include the root."""
    if roots is None:
        return None
    keys = []
    for root in roots:
        try:
            key = (
                key_prefix(root, project_root)
                if root.is_dir()
                else document_key(root, project_root)
            )
        except KnowledgeError:
            continue
        if not key:
            return None
        keys.append(key)
    return tuple(keys)


@dataclass
class FullRun:
    rebuild: bool
    future: Future[IndexStats] = field(default_factory=Future)
    cancel: threading.Event = field(default_factory=threading.Event)


Indexing = Callable[..., IndexStats]
"""``operations.index_project`` / ``update_paths`` (injectable for tests)."""


class UpdateQueue:
    """``roots``: what full runs index (default: the configured paths, and then documents outside
    them are removed, as ``index_project`` does); changed paths outside the roots are ignored."""

    def __init__(
        self,
        settings: Settings,
        hooks: QueueHooks | None = None,
        *,
        roots: tuple[Path, ...] | None = None,
        delay: float = DELAY,
        max_delay: float = MAX_DELAY,
        clock: Callable[[], float] = time.monotonic,
        embedder: DocumentEmbedder | None = None,
    ) -> None:
        self.settings = settings
        self.rules = ignore_rules(settings)
        """The project's ignore rules, kept current (a watcher filters with ``rules.ignored``);
        every run of this queue asks them too, so no pass rebuilds them (or spawns ``git``). A
        changed ignore file among the added paths brings a full run (``add``)."""
        self.roots = roots
        self.hooks = hooks or QueueHooks()
        self.delay = delay
        self.max_delay = max(max_delay, delay)
        self.clock = clock
        self.run_index: Indexing = index_project
        self.run_update: Indexing = update_paths
        self._cond = threading.Condition()
        self._pending: set[Path] = set()
        self._first = self._last = 0.0
        self._full: FullRun | None = None
        self._running: FullRun | None = None
        self._run = IndexRun()
        """How far the running full run got (``progress``)."""
        self._working = False
        self._stopping = False
        self._stop = threading.Event()
        self._failures = 0
        self.session = WriterSession(settings.store_dir)
        """The store opened once for the queue's life (its passes and the backfill's rounds
        re-check only what can have changed: session.py); closed by ``stop``."""
        self._embedder = embedder
        """The project's embedder (``Project.embedder``; None: lexical passes), one for the
        queue's life: its dimension probe is paid once, not on every save."""
        # Passes write files at once (drain=False); their vectors are filled in behind them.
        self.backfill: Backfill | None = None
        if self._embedder is not None:
            self.backfill = Backfill(
                settings,
                self._embedder,
                self.session,
                reporter=self.hooks.embed_reporter,
                on_error=self.hooks.on_error,
                within=_keys(roots, settings.project_root),
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

    def covers(self, path: Path) -> bool:
        roots = self.roots if self.roots is not None else self.settings.roots
        return any(path == root or root in path.parents for root in roots)

    def add(self, paths: Iterable[Path]) -> int:
        """Queue changed paths that lie under the indexed roots; returns how many were taken.

        A changed ignore file (``.gitignore``, ``.fiskignore``, ``.git/info/exclude``, git's
        global excludes file: ``IgnoreRules.is_source``) changes which files are documents, so
        it brings a full run after whatever runs now: it removes what became ignored and adds
        what no longer is (the rules re-read the changed file on their next question)."""
        paths = list(paths)
        rules_changed = [p for p in paths if self.rules.is_source(p)]
        if rules_changed:
            log.info("ignore rules changed (%s): a full run follows", rules_changed[0])
            run = self.request_full(after_running=True)
            run.add_done_callback(lambda done: self._rules_run(rules_changed, done))
        taken = {p for p in paths if self.covers(p)} - set(rules_changed)
        if not taken:
            return len(rules_changed)
        with self._cond:
            now = self.clock()
            if not self._pending:
                self._first = now
            self._pending.update(taken)
            self._last = now
            self._cond.notify_all()
        return len(taken) + len(rules_changed)

    def _rules_run(self, files: list[Path], done: Future[IndexStats]) -> None:
        if done.cancelled() or done.exception() is not None:
            return  # a cancelled or failed run was reported as such
        self.hooks.on_rules(files, done.result())

    def request_full(
        self, rebuild: bool = False, *, after_running: bool = False
    ) -> Future[IndexStats]:
        """Start a full run, or join the one running (or queued) that does at least as much.

        ``after_running``: never join the running one (it walked with what was true before);
        join or queue the next."""
        with self._cond:
            running = self._running
            if (
                not after_running
                and running is not None
                and not running.future.done()
                and not running.cancel.is_set()
                and (running.rebuild or not rebuild)
            ):
                return running.future
            if self._full is None:
                self._full = FullRun(rebuild)
                self._cond.notify_all()
            self._full.rebuild |= rebuild
            return self._full.future

    def cancel(self) -> bool:
        """Cancel the running (or queued) full run; True when there was one."""
        with self._cond:
            runs = [r for r in (self._running, self._full) if r is not None]
            if self._full is not None:
                self._full.future.cancel()
                self._full = None
        for run in runs:
            run.cancel.set()
        return bool(runs)

    @property
    def progress(self) -> IndexRun | None:
        """The full run scheduled or running, with how far it got (None: there is none). It
        is known from the moment ``request_full`` schedules the run, before its walk begins."""
        with self._cond:
            if self._running is not None:
                return self._run
            return IndexRun() if self._full is not None else None

    def _keep(self, run: IndexRun) -> None:
        self._run = run

    @property
    def busy(self) -> bool:
        with self._cond:
            return self._working or bool(self._pending) or self._full is not None

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until nothing is pending or running (True), or ``timeout`` passes (False)."""
        with self._cond:
            return self._cond.wait_for(
                lambda: (
                    self._stopping or not (self._working or self._pending or self._full is not None)
                ),
                timeout,
            )

    def stop(self, timeout: float = 10.0) -> bool:
        """Cancel a running full run, stop the worker and wait for it; False when it is still
        running after ``timeout`` (its embedder, the project's, must stay open)."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        self._stop.set()
        self.cancel()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout)
        if self.backfill is not None:
            self.backfill.stop(timeout)
        ended = not self._thread.is_alive()
        if ended and (self.backfill is None or not self.backfill.running):
            self.session.close()
        return ended

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
                    self._cond.notify_all()

    def _next(self) -> FullRun | set[Path] | None:
        with self._cond:
            while not self._stopping:
                if self._full is not None:
                    self._running, self._full = self._full, None
                    self._run = IndexRun()
                    self._working = True
                    return self._running
                if self._pending:
                    due = min(self._last + self.delay, self._first + self.max_delay)
                    now = self.clock()
                    if now >= due:
                        batch, self._pending = self._pending, set()
                        self._working = True
                        return batch
                    self._cond.wait(due - now)
                    continue
                self._cond.wait()
            return None

    def _requeue(self, batch: set[Path]) -> None:
        with self._cond:
            now = self.clock()
            if not self._pending:
                self._first = now
            self._pending.update(batch)
            self._last = now

    def _backoff(self) -> None:
        self._failures += 1
        self._stop.wait(min(RETRY_DELAY * 2 ** min(self._failures - 1, 5), MAX_RETRY_DELAY))

    def _run_update(self, batch: set[Path]) -> None:
        try:
            stats = self.run_update(
                self.settings,
                expand(batch),
                embedder=self._embedder,
                cancel=self._stop,
                drain=False,
                ignore=self.rules,
                session=self.session,
            )
        except IndexLocked:
            self._requeue(batch)
            self.hooks.on_locked()
            self._stop.wait(RETRY_DELAY)
            return
        except Cancelled:
            self._requeue(batch)
            return
        except Exception as exc:  # keep the changes; report once; retry after a while
            self._requeue(batch)
            self._report(exc)
            self._backoff()
            return
        self._failures = 0
        self._kick_backfill()
        log.info("updated %d path(s) in %s: %s", len(batch), self.settings.project_root, stats)
        self.hooks.on_update(batch, stats)

    def _run_full(self, run: FullRun) -> None:
        reporter = Tracked(self.hooks.reporter(), self._keep)
        reporter.begin()
        message = "cancelled"
        try:
            stats = self._full_with_retry(run, reporter)
        except Exception as exc:
            cancelled = self._stopping or run.cancel.is_set()
            message = "cancelled" if cancelled else str(exc)
            if not cancelled:
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
            if run.cancel.is_set():
                raise Cancelled("index run cancelled; re-running skips files already indexed")
            try:
                stats = self.run_index(
                    self.settings,
                    self.roots,
                    rebuild=run.rebuild,
                    reporter=reporter,
                    cancel=run.cancel,
                    embedder=self._embedder,
                    drain=False,
                    ignore=self.rules,
                    session=self.session,
                )
                self._kick_backfill()
                return stats
            except IndexLocked:
                if self._stopping:
                    raise
                self.hooks.on_locked()
                reporter.waiting()
                run.cancel.wait(RETRY_DELAY)

    def _kick_backfill(self) -> None:
        if self.backfill is not None:
            self.backfill.kick()
