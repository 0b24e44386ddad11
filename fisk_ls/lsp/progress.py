"""Index-run progress → ``$/progress`` (server-initiated work done progress).

Called from an indexing worker thread; every message is handed to the event loop. Reports are
throttled so a 90k-file run does not flood the client.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from typing import TYPE_CHECKING

from lsprotocol import types

from ..knowledge.index.queue import RunReporter

if TYPE_CHECKING:
    from .server import FiskLanguageServer

log = logging.getLogger(__name__)

TITLE = "Indexing docs"
REPORT_EVERY = 0.2
CREATE_TIMEOUT = 5.0


class LspProgress(RunReporter):
    def __init__(self, ls: FiskLanguageServer, label: str = "") -> None:
        self.ls = ls
        self.label = label
        self.token = f"fisk-index-{uuid.uuid4().hex[:12]}"
        self.enabled = False
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
        begin = types.WorkDoneProgressBegin(
            title=TITLE, message=self._text("starting"), percentage=0
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
        if self.enabled:
            end = types.WorkDoneProgressEnd(message=self._text(message))
            self.ls.call(self.ls.work_done_progress.end, self.token, end)
            self.enabled = False

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
