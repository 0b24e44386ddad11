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


class LspProgress(RunReporter):
    """One index run's progress. It is ``cancellable``: the client's cancel button
    (``window/workDoneProgress/cancel``) calls ``on_cancel`` (the project's queue cancel)."""

    def __init__(
        self,
        ls: FiskLanguageServer,
        label: str = "",
        on_cancel: Callable[[], object] | None = None,
    ) -> None:
        self.ls = ls
        self.label = label
        self.on_cancel = on_cancel
        self.token = f"fisk-index-{uuid.uuid4().hex[:12]}"
        self.enabled = False
        self._end_lock = threading.Lock()
        self.total = 0
        self.done = 0
        self._last = 0.0

    def begin(self) -> None:
        loop = self.ls.loop
        if loop is None or not self.ls.progress_supported:
            return
        create = self.ls.work_done_progress.create_async(self.token)
        try:
            asyncio.run_coroutine_threadsafe(create, loop).result(CREATE_TIMEOUT)
        except Exception as exc:  # the client refused or never answered: index without it
            log.debug("no progress token: %s", exc)
            return
        self.enabled = True
        self.ls.open_progress.add(self)
        token_future = self.ls.work_done_progress.tokens.get(self.token)
        if token_future is not None and self.on_cancel is not None:
            on_cancel = self.on_cancel
            token_future.add_done_callback(lambda f: on_cancel() if f.cancelled() else None)
        begin = types.WorkDoneProgressBegin(
            title=TITLE,
            message=self._text("starting"),
            percentage=0,
            cancellable=self.on_cancel is not None,
        )
        self.ls.call(self.ls.work_done_progress.begin, self.token, begin)

    def on_plan(self, files: int) -> None:
        self.total = files
        self._report(force=True)

    def on_file(self, done: int, key: str) -> None:
        self.done = done
        self._report(force=done == self.total)

    def on_note(self, message: str) -> None:
        log.info("%s", message)

    def waiting(self) -> None:
        self._send("waiting for another writer (fisk-ai knowledge index/watch)")

    def end(self, message: str) -> None:
        """Once, from the run's thread or from shutdown, whichever comes first."""
        with self._end_lock:
            if not self.enabled:
                return
            self.enabled = False
        self.ls.open_progress.discard(self)
        end = types.WorkDoneProgressEnd(message=self._text(message))
        self.ls.call(self.ls.work_done_progress.end, self.token, end)

    def _report(self, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self._last >= REPORT_EVERY:
            self._last = now
            self._send(f"{self.done}/{self.total} files", self._percentage())

    def _percentage(self) -> int | None:
        return int(self.done * 100 / self.total) if self.total else None

    def _send(self, message: str, percentage: int | None = None) -> None:
        if self.enabled:
            report = types.WorkDoneProgressReport(
                message=self._text(message), percentage=percentage
            )
            self.ls.call(self.ls.work_done_progress.report, self.token, report)

    def _text(self, message: str) -> str:
        return f"{message} ({self.label})" if self.label else message


EMBED_TITLE = "Embedding docs"


class EmbedProgress(BackfillReporter):
    """Background embedding → ``$/progress`` ("2,310 of 6,628 chunks embedded")."""

    def __init__(self, ls: FiskLanguageServer, label: str = "") -> None:
        self.progress_ = LspProgress(ls, label)
        self.progress_.token = f"fisk-embed-{uuid.uuid4().hex[:12]}"

    def begin(self, embedded: int, chunks: int) -> None:
        p = self.progress_
        loop = p.ls.loop
        if loop is None or not p.ls.progress_supported:
            return
        create = p.ls.work_done_progress.create_async(p.token)
        try:
            asyncio.run_coroutine_threadsafe(create, loop).result(CREATE_TIMEOUT)
        except Exception as exc:
            log.debug("no progress token: %s", exc)
            return
        p.enabled = True
        p.ls.open_progress.add(p)
        begin = types.WorkDoneProgressBegin(
            title=EMBED_TITLE,
            message=p._text(Coverage(embedded, chunks).describe()),
            percentage=_percent(embedded, chunks),
            cancellable=False,
        )
        p.ls.call(p.ls.work_done_progress.begin, p.token, begin)

    def progress(self, embedded: int, chunks: int) -> None:
        now = time.monotonic()
        if now - self.progress_._last >= REPORT_EVERY:
            self.progress_._last = now
            self.progress_._send(Coverage(embedded, chunks).describe(), _percent(embedded, chunks))

    def end(self, embedded: int, chunks: int, error: KnowledgeError | None) -> None:
        text = Coverage(embedded, chunks).describe()
        self.progress_.end(f"{text}; paused: {error}" if error else text)


def _percent(done: int, total: int) -> int | None:
    return int(done * 100 / total) if total else None
