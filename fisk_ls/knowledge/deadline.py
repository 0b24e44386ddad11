"""When a search must stop: a cancel token with an optional time limit.

The core knows nothing of LSP or MCP. A front end hands a search a :class:`Deadline` (the
language server's ``$/cancelRequest`` calls :meth:`Deadline.cancel`; the MCP server's tool
timeout is :meth:`Deadline.after`), and the search stops within a bounded time once it has
passed: the read snapshot carries it (``store.Snapshot.deadline``), its SQLite statements are
interrupted by a progress handler on the connection (:data:`PROGRESS_STEPS`, ``Store.snapshot``;
the arm pool's worker connections too), and the stages between them and the Python loops that
can be long (a scope over every document, the hits' matches) call :meth:`Deadline.check`. A
search stopped so raises :class:`SearchCancelled`, which each front end turns into its
protocol's answer (LSP: RequestCancelled; MCP: the timeout's error).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from .errors import SearchCancelled

PROGRESS_STEPS = 10_000
"""SQLite virtual machine instructions between two looks at the deadline while a statement runs
(``sqlite3_progress_handler``): about 0.5 ms of a BM25 scan, so an interrupted statement stops
within about a millisecond, and the looks (a Python call each: an ``Event`` read and a clock
read) cost about 0.2 % of a search; every 1,000 instructions they cost about 2 % (bench/tuning.md,
"A search stops at its deadline")."""

CHECK_EVERY = 1024
"""Items of a long Python loop (a scope's documents) between two looks at the deadline."""


class Deadline:
    """A search's cancel token: :meth:`cancel` sets it from any thread; with a time limit
    (``at``, on ``clock``'s scale) it also sets itself once the clock reaches it. Thread-safe;
    one per search (the arm pool's workers share their search's)."""

    def __init__(
        self,
        at: float | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        event: threading.Event | None = None,
    ) -> None:
        self.at = at
        self.clock = clock
        self.event = event if event is not None else threading.Event()
        self.timed_out = False
        """True when the time limit (rather than :meth:`cancel`) ended the search."""

    @classmethod
    def after(cls, seconds: float, *, clock: Callable[[], float] = time.monotonic) -> Deadline:
        """A deadline ``seconds`` from now on ``clock``."""
        return cls(clock() + seconds, clock=clock)

    def cancel(self) -> None:
        self.event.set()

    def expired(self) -> bool:
        """Whether the search must stop (the progress handler: True interrupts the statement)."""
        if self.event.is_set():
            return True
        if self.at is not None and self.clock() >= self.at:
            self.timed_out = True
            self.event.set()
            return True
        return False

    def check(self) -> None:
        """Raise :class:`SearchCancelled` once the search must stop."""
        if self.expired():
            raise self.error()

    def error(self) -> SearchCancelled:
        if self.timed_out:
            return SearchCancelled("the search ran past its time limit and was stopped")
        return SearchCancelled("the search was cancelled")


def check(deadline: Deadline | None) -> None:
    """:meth:`Deadline.check` of ``deadline`` when there is one."""
    if deadline is not None:
        deadline.check()
