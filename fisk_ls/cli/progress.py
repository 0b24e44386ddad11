"""The index run's progress on the terminal: a rich progress bar on a TTY, notes on stderr.

Its own module so that only ``index`` imports rich and the indexer's reporter API."""

from __future__ import annotations

import sys
from types import TracebackType
from typing import Any

from ..knowledge import IndexReporter
from ..knowledge.sanitize import strip_controls


class IndexProgress(IndexReporter):
    """A progress bar on a terminal; notes as lines on stderr."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> IndexProgress:
        if self.enabled and sys.stderr.isatty():
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
        if self._bar is not None:
            self._task = self._bar.add_task("indexing", total=files)

    def on_file(self, done: int, key: str) -> None:
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, completed=done)

    def on_note(self, message: str) -> None:
        if not self.enabled:
            return
        text = strip_controls(message)
        if self._bar is not None:
            self._bar.console.print(text, markup=False, highlight=False)
        else:
            print(text, file=sys.stderr)
