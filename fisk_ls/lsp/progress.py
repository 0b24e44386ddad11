"""Index-run progress → ``$/progress`` (server-initiated work done progress).

Called from an indexing worker thread; every message is handed to the event loop. Reports are
throttled so a 90k-file run does not flood the client.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING

from lsprotocol import types

from ..knowledge import BackfillReporter, Coverage, KnowledgeError, RunReporter

if TYPE_CHECKING:
    from .server import FiskLanguageServer

log = logging.getLogger(__name__)

TITLE = "Indexing docs"
REPORT_EVERY = 0.2
CREATE_TIMEOUT = 5.0


class WorkDone:
    """One ``$/progress`` token: created and begun once, reported at most every
    ``REPORT_EVERY`` seconds (unless forced), ended once, from the run's thread or from
    shutdown (``ls.open_progress``), whichever comes first. A client that refuses the token or
    does not answer its creation gets no progress and the work goes on."""

    def __init__(self, ls: FiskLanguageServer, kind: str, label: str = "") -> None:
        self.ls = ls
        self.label = label
        self.token = f"fisk-{kind}-{uuid.uuid4().hex[:12]}"
        self.enabled = False
        self._end_lock = threading.Lock()
        self._last = 0.0

    def begin(
        self,
        title: str,
        message: str,
        percentage: int | None,
        on_cancel: Callable[[], object] | None = None,
    ) -> None:
        loop = self.ls.loop
        if loop is None or not self.ls.progress_supported:
            return
        create = self.ls.work_done_progress.create_async(self.token)
        try:
            asyncio.run_coroutine_threadsafe(create, loop).result(CREATE_TIMEOUT)
        except Exception as exc:  # the client refused or never answered: work without it
            log.debug("no progress token: %s", exc)
            return
        self.enabled = True
        self.ls.open_progress.add(self)
        token_future = self.ls.work_done_progress.tokens.get(self.token)
        if token_future is not None and on_cancel is not None:
            token_future.add_done_callback(lambda f: on_cancel() if f.cancelled() else None)
        begin = types.WorkDoneProgressBegin(
            title=title,
            message=self._text(message),
            percentage=percentage,
            cancellable=on_cancel is not None,
        )
        self.ls.call(self.ls.work_done_progress.begin, self.token, begin)

    def report(self, message: str, percentage: int | None = None, *, force: bool = True) -> None:
        """Send a report; unforced, only when ``REPORT_EVERY`` has passed since the last."""
        now = time.monotonic()
        if not force and now - self._last < REPORT_EVERY:
            return
        self._last = now
        if self.enabled:
            report = types.WorkDoneProgressReport(
                message=self._text(message), percentage=percentage
            )
            self.ls.call(self.ls.work_done_progress.report, self.token, report)

    def end(self, message: str) -> None:
        with self._end_lock:
            if not self.enabled:
                return
            self.enabled = False
        self.ls.open_progress.discard(self)
        end = types.WorkDoneProgressEnd(message=self._text(message))
        self.ls.call(self.ls.work_done_progress.end, self.token, end)

    def _text(self, message: str) -> str:
        return f"{message} ({self.label})" if self.label else message


class LspProgress(RunReporter):
    """One index run's progress. It is ``cancellable``: the client's cancel button
    (``window/workDoneProgress/cancel``) calls ``on_cancel`` (the project's queue cancel)."""

    def __init__(
        self,
        ls: FiskLanguageServer,
        label: str = "",
        on_cancel: Callable[[], object] | None = None,
    ) -> None:
        self.work = WorkDone(ls, "index", label)
        self.on_cancel = on_cancel
        self.total = 0
        self.done = 0

    def begin(self) -> None:
        self.work.begin(TITLE, "starting", 0, self.on_cancel)

    def on_plan(self, files: int) -> None:
        self.total = files
        self._report(force=True)

    def on_file(self, done: int, key: str) -> None:
        self.done = done
        self._report(force=done == self.total)

    def on_note(self, message: str) -> None:
        log.info("%s", message)

    def waiting(self) -> None:
        self.work.report("waiting for another writer (fisk-ai knowledge index/watch)")

    def end(self, message: str) -> None:
        self.work.end(message)

    def _report(self, force: bool = False) -> None:
        self.work.report(
            f"{self.done}/{self.total} files", _percent(self.done, self.total), force=force
        )


EMBED_TITLE = "Embedding docs"


class EmbedProgress(BackfillReporter):
    """Background embedding → ``$/progress`` ("2,310 of 6,628 chunks embedded")."""

    def __init__(self, ls: FiskLanguageServer, label: str = "") -> None:
        self.work = WorkDone(ls, "embed", label)

    def begin(self, embedded: int, chunks: int) -> None:
        text = Coverage(embedded, chunks).describe()
        self.work.begin(EMBED_TITLE, text, _percent(embedded, chunks))

    def progress(self, embedded: int, chunks: int) -> None:
        text = Coverage(embedded, chunks).describe()
        self.work.report(text, _percent(embedded, chunks), force=False)

    def end(self, embedded: int, chunks: int, error: KnowledgeError | None) -> None:
        text = Coverage(embedded, chunks).describe()
        self.work.end(f"{text}; paused: {error}" if error else text)


def _percent(done: int, total: int) -> int | None:
    return int(done * 100 / total) if total else None
