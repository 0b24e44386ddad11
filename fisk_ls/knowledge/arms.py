"""The lexical arms of a search with several strings (the query and its ``also`` strings), run
side by side: the searching thread and worker threads take arms from one list, costliest
first, each worker on its own read-only connection (``Store`` keeps one per thread). SQLite
runs a BM25 scan with the GIL released (FTS5's ``bm25()`` is C; no Python callback runs per
row), so two scans use two cores.

Every arm must read the state of the index the search's own snapshot reads. A worker's read
transaction starts after the search's, so a commit in between would mix two states. SQLite's
``sqlite3_snapshot_open`` would pin the worker to the search's snapshot, but apsw does not
expose it (and its SQLite is built without ``SQLITE_ENABLE_SNAPSHOT``). So a worker compares
:func:`state` inside its own read transaction with the search's and takes no arm when they
differ: the searching thread then runs every arm on its snapshot, as without workers. The
ranking is the sequential one either way (tests/knowledge/test_arms.py).

Measured (bench/agent_latency.py, bench/tuning.md "Agent strings: lexical arms side by side"):
with a free second core a search with three strings takes 0.7x the time of the same arms one
after another; with no core free, the same time.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from .errors import SearchCancelled

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

    from .query import SearchString
    from .store import Snapshot, Store
    from .topk import Plan

Ranked = list[tuple[int, float]]
Arm = Callable[["Snapshot", "SearchString", "Plan", "Sequence[int] | None"], Ranked]
"""One string's lexical arm: (snapshot, string, plan, scope's documents) → (id, score) list."""

State = tuple[int, str | None, bytes | None]

MIN_POSTINGS = 10_000
"""Arms side by side only when their plans read at least this many postings together (about
7 ms of scanning); below it a thread's wake-up costs about what it saves."""


def state(snap: Snapshot) -> State:
    """What a snapshot's lexical arms read, as far as a commit can change it: the live
    generation, the writer's commit count (``rag_meta.commits``, which ``Writer.stamp`` bumps
    in every write transaction) and FTS5's structure record (``%_data`` row 10, rewritten by
    every change of the full-text index, also by a writer that does not stamp)."""
    row = snap.conn.execute("SELECT value FROM rag_meta WHERE key = 'commits'").fetchone()
    block = snap.conn.execute(f"SELECT block FROM {snap.tables.fts}_data WHERE id = 10").fetchone()
    return (
        snap.manifest.generation,
        None if row is None else str(row[0]),
        None if block is None or block[0] is None else bytes(block[0]),
    )


def default_workers() -> int:
    """One worker per core beyond the searching thread's, at most four (a query and four
    strings); none on one core."""
    return max(0, min(4, (os.cpu_count() or 1) - 1))


class ArmPool:
    """The worker threads of one reader (``Knowledge``), started on first use; ``close`` ends
    them. Thread-safe: searches on several threads share the workers."""

    def __init__(
        self, store: Store, workers: int | None = None, min_postings: int = MIN_POSTINGS
    ) -> None:
        self.store = store
        self.workers = default_workers() if workers is None else workers
        self.min_postings = min_postings
        self.fallbacks = 0
        """How many times a worker met another state of the index and took no arm."""
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def _executor(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                # here: a search with one string never starts a pool (nor imports one)
                from concurrent.futures import ThreadPoolExecutor

                self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="fisk-arm")
            return self._pool

    def run(
        self,
        snap: Snapshot,
        arm: Arm,
        strings: Sequence[SearchString],
        plans: Sequence[Plan],
        within: Sequence[int] | None,
    ) -> list[Ranked]:
        """``arm(snapshot, string, plan, within)`` of every string, in order: the lists that
        running them one after another on ``snap`` gives. A string without searchable words
        gets ``[]`` without a call. The workers' snapshots carry ``snap``'s deadline, so a
        search past it stops on every connection (SearchCancelled)."""
        todo = [i for i, p in enumerate(plans) if p.expression()]
        out: list[Ranked] = [[] for _ in plans]
        if (
            self.workers < 1
            or len(todo) < 2
            or sum(sum(plans[i].counts) for i in todo) < self.min_postings
        ):
            for n in todo:
                out[n] = arm(snap, strings[n], plans[n], within)
            return out
        todo.sort(key=lambda i: -sum(plans[i].counts))
        lock = threading.Lock()
        want = state(snap)

        def take() -> int | None:
            with lock:
                return todo.pop(0) if todo else None

        def work() -> None:
            with lock:
                if not todo:
                    return  # the searching thread took every arm already
            with contextlib.ExitStack() as stack:
                try:
                    # The search's deadline interrupts this connection's statements too.
                    mine = stack.enter_context(self.store.snapshot(snap.deadline))
                    same = mine is not None and state(mine) == want
                except SearchCancelled:
                    return  # the searching thread meets the deadline too
                except Exception:  # a store replaced or damaged since: the search's own
                    same = False  # snapshot still answers, as without workers
                if not same or mine is None:
                    with lock:
                        self.fallbacks += 1
                    return
                while (i := take()) is not None:
                    out[i] = arm(mine, strings[i], plans[i], within)

        pool = self._executor()
        futures: list[Future[None]] = [
            pool.submit(work) for _ in range(min(self.workers, len(todo) - 1))
        ]
        try:
            while (i := take()) is not None:
                out[i] = arm(snap, strings[i], plans[i], within)
        finally:
            for f in futures:
                # One still queued (the workers busy with another search's arms) is dropped:
                # every arm is taken, and waiting for it would tie this search to that one.
                if not f.cancel():
                    f.result()
        return out

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
