"""The index run's progress on the terminal: a rich progress bar on a TTY, notes on stderr.
When stderr is not a terminal (a log, CI, a pipe), progress is a line every ``EVERY`` seconds:
``indexed 257 of 1,812 files, 51/s`` while files are read (and the last count, when a line was
printed before it), then ``embedded 1,200 of 6,628 chunks, 14/s, about 6 min left``.

Its own module so that only ``index`` imports rich and the indexer's reporter API."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any, TextIO

from ..knowledge import IndexReporter, strip_controls

EVERY = 5.0
"""Seconds between two progress lines when stderr is not a terminal."""


def embed_line(done: int, total: int, rate: float) -> str:
    """``embedded 1,200 of 6,628 chunks, 14/s, about 6 min left`` (rate in chunks/s)."""
    line = f"embedded {done:,} of {total:,} chunks"
    if rate <= 0:
        return line
    left = (total - done) / rate
    when = f"about {round(left / 60)} min left" if left >= 90 else f"about {round(left)} s left"
    return f"{line}, {rate:,.0f}/s, {when}" if done < total else f"{line}, {rate:,.0f}/s"


def files_line(done: int, total: int, rate: float) -> str:
    """``indexed 257 of 1,812 files, 51/s`` (rate in files/s)."""
    line = f"indexed {done:,} of {total:,} files"
    return f"{line}, {rate:,.0f}/s" if rate > 0 else line


class Every:
    """When a line is due: the first count starts the clock (quietly), then a line every
    ``every`` seconds by the injected clock, and the last count (``done == total``) always
    when ``last`` is set, else only after an earlier line."""

    def __init__(self, clock: Callable[[], float], every: float, last: bool = True) -> None:
        self.clock = clock
        self.every = every
        self.last = last
        self.started: tuple[float, int] | None = None
        self.previous = 0.0
        self.printed = False

    def due(self, done: int, total: int) -> float | None:
        """The rate since the clock started when a line is due now, else None."""
        now = self.clock()
        finished = done >= total
        if self.started is None:
            self.started, self.previous = (now, done), now
            if not (finished and self.last):
                return None
        elif now - self.previous < self.every and not (finished and (self.last or self.printed)):
            return None
        since, first = self.started
        self.previous = now
        self.printed = True
        return (done - first) / (now - since) if now > since else 0.0


class IndexProgress(IndexReporter):
    """A progress bar on a terminal; otherwise a line every ``every`` seconds while files are
    read and while embedding. Notes are lines on stderr."""

    def __init__(
        self,
        enabled: bool = True,
        *,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
        every: float = EVERY,
    ) -> None:
        self.enabled = enabled
        self._stream = stream
        self._bar: Any = None
        self._task: Any = None
        self._embed_task: Any = None
        self._total = 0
        self._files = Every(clock, every, last=False)
        self._embedded = Every(clock, every)

    @property
    def stream(self) -> TextIO:
        return self._stream if self._stream is not None else sys.stderr

    def __enter__(self) -> IndexProgress:
        if self.enabled and self.stream.isatty():
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

            self._bar = Progress(
                "[progress.description]{task.description}",
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            self._bar.__enter__()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._bar is not None:
            self._bar.__exit__(exc_type, exc, tb)

    def on_plan(self, files: int) -> None:
        self._total = files
        if self._bar is not None:
            self._task = self._bar.add_task("indexing", total=files)

    def on_file(self, done: int, key: str) -> None:
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, completed=done)
        elif self._bar is None and self.enabled:
            rate = self._files.due(done, self._total)
            if rate is not None:
                print(files_line(done, self._total, rate), file=self.stream, flush=True)

    def on_embed(self, done: int, total: int) -> None:
        if self._bar is None:
            self._line(done, total)
            return
        if self._embed_task is None:
            self._embed_task = self._bar.add_task("embedding", total=total)
        self._bar.update(self._embed_task, completed=done)

    def _line(self, done: int, total: int) -> None:
        """A line every ``every`` seconds (and the last one), timed by the injected clock."""
        if not self.enabled:
            return
        rate = self._embedded.due(done, total)
        if rate is not None:
            print(embed_line(done, total, rate), file=self.stream, flush=True)

    def on_note(self, message: str) -> None:
        if not self.enabled:
            return
        text = strip_controls(message)
        if self._bar is not None:
            self._bar.console.print(text, markup=False, highlight=False)
        else:
            print(text, file=self.stream)
