"""Embedding the backlog in the background (the language server, ``watch``).

Index runs there are called with ``drain=False``: files become searchable lexically at once and
their chunks wait in the backlog. ``Backfill`` embeds that backlog on its own thread in short
rounds. A round takes the writer lock twice and briefly: to read up to ``ROUND`` waiting chunks
(storing at once those the vector cache knows), and to store the new vectors; the embedding
itself runs without the lock, so saves and other writers are not held up by it. A round whose
generation or vector space changed meanwhile is dropped (a rebuild or a model switch won).

Rounds stop when the backlog is empty and start again on ``kick`` (after every index pass). An
embedder failure is reported once per streak and retried with a growing delay; nothing is lost.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import IndexLocked, KnowledgeError
from ..vectors.backlog import Coverage, Pending, coverage, coverage_within, pending, store
from ..vectors.space import describe
from ..vectors.tier import DocumentEmbedder, VectorTier

if TYPE_CHECKING:
    import apsw

    from ..location import Settings
    from ..manifest import Manifest
    from ..schema import Tables
    from ..session import WriterSession

log = logging.getLogger(__name__)

ROUND = 32
"""Chunks per background round (a few seconds on 2 cores with the built-in model)."""
LOCK_WAIT = 2.0
RETRY_MIN = 1.0
RETRY_MAX = 60.0


class BackfillReporter:
    """Progress of one stretch of background embedding (from the backfill thread)."""

    def begin(self, embedded: int, chunks: int) -> None:
        """Embedding starts; ``embedded`` of ``chunks`` have vectors."""

    def progress(self, embedded: int, chunks: int) -> None:
        """A round was stored."""

    def end(self, embedded: int, chunks: int, error: KnowledgeError | None) -> None:
        """The backlog is empty, or embedding stopped on ``error`` (it resumes later)."""


@dataclass(frozen=True)
class Round:
    stored: int
    embedded: int
    chunks: int
    seen: Coverage | None = None
    """The coverage the reporter is told: the watched paths' (``Backfill.within``), else
    None for the whole store's (``embedded`` of ``chunks``)."""
    seen_before: Coverage | None = None
    """The same, before this round stored anything."""

    @property
    def done(self) -> bool:
        return self.embedded >= self.chunks

    @property
    def reported(self) -> Coverage:
        return self.seen or Coverage(self.embedded, self.chunks)

    @property
    def reported_before(self) -> Coverage:
        return self.seen_before or Coverage(self.embedded - self.stored, self.chunks)


class Backfill:
    def __init__(
        self,
        settings: Settings,
        embedder: DocumentEmbedder,
        session: WriterSession,
        *,
        reporter: Callable[[], BackfillReporter] = BackfillReporter,
        on_error: Callable[[KnowledgeError], None] = lambda exc: None,
        round_size: int = ROUND,
        within: tuple[str, ...] | None = None,
    ) -> None:
        """``within``: the document keys (folders ending in ``/``) whose backlog the reporter
        is told (``watch PATHS``); None: the whole store's. Every waiting chunk is embedded
        either way. ``session``: the writer its rounds use, shared with the update queue."""
        self.settings = settings
        self.session = session
        self.within = within
        self.embedder = embedder
        self.reporter = reporter
        self.on_error = on_error
        self.round_size = round_size
        self._kick = threading.Event()
        self._stop = threading.Event()
        self._idle = threading.Event()
        self._idle.set()
        self._thread = threading.Thread(
            target=self._loop, name=f"fisk-backfill-{settings.project_root.name}", daemon=True
        )

    # -- owner API -----------------------------------------------------------------------------

    def start(self) -> None:
        self._thread.start()

    def kick(self) -> None:
        """Look at the backlog again (call after an index pass wrote something)."""
        self._idle.clear()
        self._kick.set()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until the backlog is empty (or embedding paused on an error)."""
        return self._idle.wait(timeout)

    @property
    def busy(self) -> bool:
        return not self._idle.is_set()

    @property
    def running(self) -> bool:
        """Its thread is still alive (after ``stop``: it did not end in time)."""
        return self._thread.is_alive()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        self._kick.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    # -- one round (public for tests and callers that want to drive it) -------------------------

    def run_round(self) -> Round | None:
        """Embed up to ``round_size`` waiting chunks; None when there is nothing to do here
        (not built, lexical-only, another vector space: the next index run speaks up)."""
        with self.session.open(wait=LOCK_WAIT) as w:
            manifest = w.manifest
            if not manifest.hybrid or not self._same_space(manifest):
                return None
            w.ensure_vec()
            tier = VectorTier.for_live(w, self.embedder)
            tables = manifest.tables
            before = self._seen(w.conn, tables)
            items = pending(w.conn, tables, self.round_size)
            if not items:
                cov = coverage(w.conn, tables)
                return Round(0, cov.embedded, cov.chunks, before, before)
            known = tier.cached([i.hash for i in items])
            if known:
                with w.transaction() as tx:
                    stored = store(tx, tables, items, known)
                items = [i for i in items if i.hash not in known]
            else:
                stored = 0
        if items:
            vectors = tier.embed_missing([(i.hash, i.text, i.title) for i in items])
            stored += self._store(manifest, tier, items, vectors)
        with self.session.open(wait=LOCK_WAIT) as w:
            cov = coverage(w.conn, w.manifest.tables)
            seen = self._seen(w.conn, w.manifest.tables)
        return Round(stored, cov.embedded, cov.chunks, seen, before)

    def _seen(self, conn: apsw.Connection, tables: Tables) -> Coverage | None:
        return None if self.within is None else coverage_within(conn, tables, self.within)

    def _store(
        self, manifest: Manifest, tier: VectorTier, items: list[Pending], vectors: dict[str, bytes]
    ) -> int:
        with self.session.open(wait=LOCK_WAIT) as w:
            if w.manifest != manifest:
                return 0  # rebuilt or switched meanwhile
            w.ensure_vec()
            tier.writer = w
            with w.transaction() as tx:
                tier.remember(tx, vectors)
                return store(tx, manifest.tables, items, vectors)

    def _same_space(self, m: Manifest) -> bool:
        e = self.embedder
        same = (m.model, m.query_prefix, m.document_prefix) == (
            e.model,
            e.query_prefix,
            e.document_prefix,
        )
        if not same:
            log.info("not embedding the backlog: the index holds %s", describe(m))
        return same

    # -- worker ----------------------------------------------------------------------------------

    def _loop(self) -> None:
        failures = 0
        while not self._stop.is_set():
            self._kick.wait()
            self._kick.clear()
            if self._stop.is_set():
                break
            error = self._stretch()
            if error is None:
                failures = 0
                continue
            failures += 1
            if failures == 1:
                self.on_error(error)
            delay = min(RETRY_MIN * 2 ** (failures - 1), RETRY_MAX)
            if not self._stop.wait(delay):
                self._kick.set()  # try again later; the backlog is still there
        self._idle.set()

    def _stretch(self) -> KnowledgeError | None:
        """Rounds until the backlog is empty; the error that stopped them, if any."""
        reporter: BackfillReporter | None = None
        last: Round | None = None
        error: KnowledgeError | None = None
        idle_rounds = 0
        try:
            while not self._stop.is_set():
                try:
                    r = self.run_round()
                except IndexLocked:
                    if self._stop.wait(0.25):
                        break
                    continue
                if r is None or (r.done and r.stored == 0 and reporter is None):
                    break  # nothing to do
                if reporter is None:
                    reporter = self.reporter()
                    first = r.reported_before
                    reporter.begin(first.embedded, first.chunks)
                last = r
                reporter.progress(r.reported.embedded, r.reported.chunks)
                idle_rounds = idle_rounds + 1 if r.stored == 0 else 0
                if r.done or idle_rounds >= 2:  # empty, or only stale rows (a kick follows)
                    break
        except KnowledgeError as exc:
            error = exc
        except Exception as exc:  # never let the thread die; report and retry later
            log.exception("background embedding failed for %s", self.settings.project_root)
            error = KnowledgeError(f"background embedding failed: {type(exc).__name__}: {exc}")
        finally:
            if reporter is not None:
                seen = last.reported if last else Coverage(0, 0)
                reporter.end(seen.embedded, seen.chunks, error)
            if error is None and last is not None and last.done:
                self._release()
            if not self._kick.is_set():
                self._idle.set()
        return error

    def _release(self) -> None:
        """The backlog is empty: let the embedder free what only indexing needs (the built-in
        model's indexing session; an optional hook, other embedders have nothing to free)."""
        release = getattr(self.embedder, "release_documents", None)
        if release is None:
            return
        try:
            release()
        except Exception:  # freeing memory must never stop the loop
            log.exception("could not release the indexing model for %s", self.settings.project_root)
