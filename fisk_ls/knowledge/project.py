"""One project, opened once: its settings, the reader, the writer side and their lifetimes.

Every front end works through a ``Project``: a CLI command opens one for its run, ``fisk-ai
knowledge watch`` and the language server keep one per project for their whole life, the MCP
server one for the store it serves. It owns

* the reader (``Knowledge``, opened on first use, with its query embedder);
* the embedder of index runs and background embedding (made once, closed with the project);
* the writer side, once built (``updates``) and started: the update queue, its backfill, and the
  watcher that feeds it.

``close`` ends all of them. SQLite and OS errors from any of them reach the front ends as
``StoreError`` (``connect.store_error``: one line naming the fix), converted here and nowhere
else.
Nothing heavy is imported until it is used: a search never imports the indexer.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, TypeVar

from .connect import store_error
from .errors import KnowledgeError
from .location import Settings, resolve_settings

if TYPE_CHECKING:
    from concurrent.futures import Future

    from .doctor import Check
    from .expansion import Expander
    from .index.hooks import QueueHooks
    from .index.queue import UpdateQueue
    from .index.stats import IndexReporter, IndexStats
    from .index.watcher import Watcher
    from .operations import Removal
    from .pack import PackStats
    from .progress import IndexRun
    from .reader import Knowledge
    from .request import SearchRequest
    from .results import SearchResult
    from .vectors.models import Progress
    from .vectors.providers import Embedder

T = TypeVar("T")

MIN_DEBOUNCE = 0.1
"""The shortest quiet time ``watch`` accepts."""


class Project:
    """``coarse_knn=False`` keeps every vector search exact (a reader that answers one query and
    exits: the CLI). ``reader``: an already open reader to use (and close) instead of a new
    one."""

    def __init__(
        self,
        settings: Settings,
        *,
        coarse_knn: bool = True,
        reader: Knowledge | None = None,
    ) -> None:
        self.settings = settings
        self.name = settings.project_root.name or "root"
        """How a search over several projects names this one (projects.py)."""
        self.coarse_knn = coarse_knn
        self.queue: UpdateQueue | None = None
        """The update queue, once ``updates`` built it."""
        self.watcher: Watcher | None = None
        self._reader = reader
        self._embedder: Embedder | None = None
        self._embedder_made = False
        self._expander: Expander | None = None
        self._expander_made = False
        self._lock = threading.RLock()  # the reader is made holding it, with the embedder

    @classmethod
    def open(
        cls,
        config: Path | None = None,
        *,
        cwd: Path | None = None,
        store_base: Path | None = None,
        coarse_knn: bool = True,
    ) -> Project:
        """The project of ``config`` (agent.yaml), else the one found from ``cwd`` up."""
        settings = resolve_settings(config, cwd=cwd, store_base=store_base)
        return cls(settings, coarse_knn=coarse_knn)

    def __enter__(self) -> Project:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def root(self) -> Path:
        return self.settings.project_root

    # -- the read side ----------------------------------------------------------------------------

    @property
    def reader(self) -> Knowledge:
        """The long-lived reader (opened on first use; it opens the store lazily itself)."""
        with self._lock:
            if self._reader is None:
                from .reader import Knowledge

                self._reader = Knowledge(
                    self.settings,
                    self.embedder(),
                    coarse_knn=self.coarse_knn,
                    indexing=self.indexing,
                )
            return self._reader

    def indexing(self) -> IndexRun | None:
        """The index run going on: this project's own full run from the moment it is scheduled
        (its update queue), or the one another process records for the store (progress.py)
        while this one has not counted its files (it may be waiting for that writer); None when
        there is none."""
        queue = self.queue
        run = queue.progress if queue is not None else None
        if run is not None and run.total is not None:
            return run
        from .progress import recorded_run

        return recorded_run(self.settings.store_dir) or run

    def read(self, call: Callable[[Knowledge], T]) -> T:
        """``call`` with the reader; SQLite and OS failures become StoreError."""
        with self.errors():
            return call(self.reader)

    @contextmanager
    def errors(self) -> Iterator[None]:
        """SQLite and OS errors raised inside become this store's StoreError."""
        try:
            yield
        except KnowledgeError:
            raise
        except Exception as exc:
            converted = store_error(exc, self.settings.store_dir)
            if converted is None:
                raise
            raise converted from exc

    @property
    def expander(self) -> Expander | None:
        """The question expander ``expansion`` configures (made on first use; None without
        one)."""
        with self._lock:
            if not self._expander_made:
                from .expansion import make_expander

                self._expander = make_expander(self.settings.expansion)
                self._expander_made = True
            return self._expander

    def search(self, request: SearchRequest) -> SearchResult:
        """A search of the live index for a checked ``request`` (request.py): its scope and
        count resolved for this project, its strings parsed once (``Knowledge.search``). With
        ``request.expand``, the configured expander's strings join ``also`` when the plain
        results are weak (expansion.py), and the result's ``expansion`` says what happened; the
        gate reads at least ``FLAT_DEPTH`` hits, so a search for fewer asks for that many and
        keeps its own count. SearchCancelled past the request's deadline."""
        k = request.wanted(self.settings.top_k)
        wide = k
        if request.expand:  # expansion.py is imported by a search that may expand only
            from .expansion import FLAT_DEPTH, expanded

            wide = max(k, FLAT_DEPTH)

        def run(strings: tuple[str, ...]) -> SearchResult:
            return self.reader.search(request._replace(also=strings, top_k=wide))

        with self.errors():
            if not request.expand:
                return run(tuple(request.also))
            result, expansion = expanded(
                run, request.query, self.expander, searched_scores, request.also
            )
            return result._replace(hits=result.hits[:k], expansion=expansion)

    def tier(self) -> str:
        """The tier line as configured, read from the manifest without embedding anything."""
        from .reader import tier_of

        with self.errors():
            return tier_of(self.settings)

    # -- the write side ---------------------------------------------------------------------------

    def embedder(self, progress: Progress | None = None) -> Embedder | None:
        """The project's one embedder, made on first use (None without embeddings): the
        reader's queries, index runs, background embedding and doctor all use it, and
        ``close`` closes it. ``progress`` is told how a built-in model's one-time download
        goes (the first use makes it: a command that indexes asks before it searches)."""
        with self._lock:
            if not self._embedder_made:
                if self.settings.embeddings is not None:  # a lexical search imports no provider
                    from .vectors.providers import make_embedder

                    self._embedder = make_embedder(self.settings, progress=progress)
                self._embedder_made = True
            return self._embedder

    def index(
        self,
        roots: Iterable[Path] | None = None,
        *,
        rebuild: bool = False,
        dry_run: bool = False,
        wait: float = 0.0,
        reporter: IndexReporter | None = None,
        progress: Progress | None = None,
        pack: Path | None = None,
    ) -> IndexStats:
        """One index run (``operations.index_project``), draining the backlog before it returns;
        ``pack``: a knowledge pack adopted first (index/adopt.py)."""
        from .operations import index_project

        with self.errors():
            return index_project(
                self.settings,
                roots,
                rebuild=rebuild,
                dry_run=dry_run,
                wait=wait,
                reporter=reporter,
                embedder=self.embedder(progress),
                pack=pack,
            )

    def pack(self, out: Path) -> PackStats:
        """Write the live index to the knowledge pack ``out`` (pack.py)."""
        from .pack import write_pack

        with self.errors():
            return write_pack(self.settings, out)

    def remove(self, paths: Iterable[str], *, cwd: Path | None = None) -> Removal | None:
        from .operations import remove

        with self.errors():
            return remove(self.settings, paths, cwd=cwd)

    def reset(self, *, force: bool, notes: list[str] | None = None) -> tuple[int, int] | None:
        from .operations import reset

        with self.errors():
            return reset(self.settings, force=force, notes=notes)

    def doctor(self, *, full: bool = False) -> list[Check]:
        """The health checks (read-only), the embeddings server's included; ``full``: the
        full-text comparison however long it takes (``doctor.run_checks``)."""
        from .doctor import run_checks

        with self.errors():
            return run_checks(self.settings, self.embedder(), full=full)

    def updates(
        self,
        hooks: QueueHooks | None = None,
        *,
        roots: tuple[Path, ...] | None = None,
        watch: bool = True,
        delay: float | None = None,
        max_delay: float | None = None,
        on_warn: Callable[[str], None] | None = None,
        progress: Progress | None = None,
    ) -> UpdateQueue:
        """Build the writer side, not started yet: the update queue over ``roots`` (default: the
        configured paths) with its backfill, and with ``watch`` a watcher feeding it."""
        from .index import queue as engine
        from .index.watcher import Watcher

        if self.queue is not None:
            raise RuntimeError("the project's update queue is already built")
        with self.errors():
            queue = engine.UpdateQueue(
                self.settings,
                hooks,
                roots=roots,
                delay=engine.DELAY if delay is None else delay,
                max_delay=engine.MAX_DELAY if max_delay is None else max_delay,
                embedder=self.embedder(progress),
            )
        self.queue = queue
        if watch:
            self.watcher = Watcher(
                roots if roots is not None else self.settings.roots,
                self.settings.store_dir,
                queue.add,
                ignored=queue.rules.ignored,
                sources=queue.rules.is_source,
                on_warn=on_warn,
            )
        return queue

    def start(self, *, initial: bool = True) -> Future[IndexStats] | None:
        """Start the writer side ``updates`` built: the queue, the watcher (before the first
        run: what changes during it is queued, not lost), and with ``initial`` a full run (its
        future)."""
        if self.queue is None:
            raise RuntimeError("build the project's update queue (updates) first")
        self.queue.start()
        if self.watcher is not None:
            self.watcher.start()
        return self.queue.request_full() if initial else None

    def watch(
        self,
        roots: tuple[Path, ...] | None = None,
        *,
        stop: threading.Event,
        debounce: float = 2.0,
        initial: bool = True,
        hooks: QueueHooks | None = None,
        on_initial: Callable[[IndexStats], None] = lambda stats: None,
        on_warn: Callable[[str], None] = lambda message: None,
        progress: Progress | None = None,
    ) -> None:
        """``fisk-ai knowledge watch``: the update queue fed by the watcher over ``roots``
        (default: the configured paths) until ``stop`` is set. With ``initial``, a full run first
        (its stats go to ``on_initial``; its error is raised). Changes are coalesced for
        ``debounce`` seconds."""
        if debounce < MIN_DEBOUNCE:
            raise KnowledgeError(f"debounce must be at least {int(MIN_DEBOUNCE * 1000)}ms")
        wanted = roots if roots is not None else self.settings.roots
        if not any(r.exists() for r in wanted):
            raise KnowledgeError(
                "none of the knowledge paths exist: " + ", ".join(map(str, wanted))
            )
        for root in wanted:
            if not root.exists():
                on_warn(f"skipping missing path {root}")
        self.updates(
            hooks,
            roots=roots,
            delay=debounce,
            max_delay=max(debounce * 5, 2.0),
            on_warn=on_warn,
            progress=progress,
        )
        try:
            first = self.start(initial=initial)
            if first is not None:
                while not first.done():  # Ctrl-C (``stop``) during the first run cancels it
                    if stop.wait(0.2):
                        self.cancel()
                        return
                on_initial(first.result())
            stop.wait()
        finally:
            self.stop()

    def add(self, paths: Iterable[Path]) -> int:
        """Changed paths for the update queue (``UpdateQueue.add``); how many it took."""
        return self.queue.add(paths) if self.queue is not None else 0

    def request_full(self, rebuild: bool = False) -> Future[IndexStats]:
        """A full run through the update queue (``UpdateQueue.request_full``)."""
        if self.queue is None:
            raise RuntimeError("build the project's update queue (updates) first")
        return self.queue.request_full(rebuild)

    def cancel(self) -> bool:
        """Cancel the running (or queued) full run; True when there was one."""
        return self.queue.cancel() if self.queue is not None else False

    def covers(self, path: Path) -> bool:
        """``path`` lies under the roots the project indexes."""
        if self.queue is not None:
            return self.queue.covers(path)
        return any(path == root or root in path.parents for root in self.settings.roots)

    @property
    def busy(self) -> bool:
        """Index work is pending or running."""
        return self.queue is not None and self.queue.busy

    @property
    def embedding(self) -> bool:
        """Background embedding is working through the backlog."""
        return self.queue is not None and self.queue.embedding

    def stop(self) -> bool:
        """Stop the writer side (watcher, queue, backfill); the reader stays open. False when
        the queue's worker is still running after its timeout."""
        watcher, queue = self.watcher, self.queue
        self.watcher = self.queue = None
        if watcher is not None:
            watcher.stop()
        return queue.stop() if queue is not None else True

    def close(self) -> None:
        """Stop the writer side, close the reader and the embedder (left open under a worker
        that is still running)."""
        ended = self.stop()
        with self._lock:
            reader, self._reader = self._reader, None
            embedder, self._embedder = self._embedder, None
            expander, self._expander = self._expander, None
        if reader is not None:
            reader.close()
        if expander is not None:
            expander.close()
        closer = getattr(embedder, "close", None)
        if callable(closer) and ended:
            closer()


def searched_scores(result: SearchResult) -> list[float] | None:
    """The scores of a search's hits, best first; None when the index could not answer (not
    built, empty), where no extra string would help."""
    from .notices import Status

    return (
        None
        if result.status in (Status.INDEX_NOT_BUILT, Status.INDEX_EMPTY)
        else [h.score for h in result.hits]
    )
