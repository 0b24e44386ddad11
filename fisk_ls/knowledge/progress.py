"""An index run in progress, as a search sees it: how far it got, in this process or another.

In this process the update queue knows (``UpdateQueue.progress``: from the moment a run is
scheduled). Across processes the writer records its progress in a small file beside the store
(``RUN_NAME``, written when the run starts, when its walk is counted and then at most every
``RECORD_EVERY`` seconds, removed when it ends); a reader believes it only while the writer
lock is held, so a file left by a killed run says nothing. Reading it costs a reader one failed
``open`` when no run is going on.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import NamedTuple

from .regular import open_regular

RUN_NAME = "knowledge.run"
"""The running index run's progress, beside ``knowledge.db``."""
RECORD_EVERY = 0.5
"""At most this often (seconds) the writer rewrites ``RUN_NAME`` while files go by."""
MAX_RUN_BYTES = 4096


class IndexRun(NamedTuple):
    """An index run that is scheduled or running: ``files`` of ``total`` files handled
    (``total`` None: not counted yet, the run is waiting or walking)."""

    files: int = 0
    total: int | None = None

    def describe(self) -> str:
        """ "still indexing: 257 of 1,812 files" (or "…: counting files" before the walk ends)."""
        if self.total is None:
            return "still indexing: counting files"
        return f"still indexing: {self.files:,} of {self.total:,} files"

    def as_dict(self) -> dict[str, int | None]:
        return {"files": self.files, "total": self.total}

    @classmethod
    def joined(cls, runs: Iterable[IndexRun | None]) -> IndexRun | None:
        """Several projects' runs as one (a search over several roots): the files added up,
        the total too while every run has counted; None when none is running."""
        going = [r for r in runs if r is not None]
        if not going:
            return None
        totals = [r.total for r in going]
        total = None if None in totals else sum(t for t in totals if t is not None)
        return cls(sum(r.files for r in going), total)


def run_path(store_dir: Path) -> Path:
    return store_dir / RUN_NAME


@functools.lru_cache(maxsize=64)
def _run_file(store_dir: Path) -> str:
    """``run_path`` as a string, remembered: every search of a reader looks for the file."""
    return str(run_path(store_dir))


class RunRecord:
    """The writer's side: keeps ``RUN_NAME`` current during one index run (``start``, ``plan``,
    ``file``, ``end``); a failure to write it never fails the run (it is only a courtesy to
    readers)."""

    def __init__(
        self,
        store_dir: Path,
        clock: Callable[[], float] = time.monotonic,
        every: float = RECORD_EVERY,
    ) -> None:
        self.path = run_path(store_dir)
        self.clock = clock
        self.every = every
        self.run = IndexRun()
        self._last = 0.0

    def start(self) -> None:
        self._write()

    def plan(self, total: int) -> None:
        self.run = IndexRun(0, total)
        self._write()

    def file(self, done: int) -> None:
        self.run = IndexRun(done, self.run.total)
        if self.clock() - self._last >= self.every:
            self._write()

    def end(self) -> None:
        with contextlib.suppress(OSError):
            self.path.unlink(missing_ok=True)

    def _write(self) -> None:
        self._last = self.clock()
        data = json.dumps({"pid": os.getpid(), **self.run.as_dict()}).encode()
        tmp = self.path.with_name(f"{RUN_NAME}.{os.getpid()}.tmp")
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
        try:
            fd = os.open(tmp, flags, 0o600)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)
            os.replace(tmp, self.path)
        except OSError:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)


def recorded_run(store_dir: Path) -> IndexRun | None:
    """The index run another writer records for ``store_dir`` (None: no run is going on).
    Never writes and never waits: a record is believed only while the writer lock is held
    (``WriterLock.is_locked_elsewhere``); an unreadable one while it is held is a run whose
    count is not known."""
    try:
        fd = open_regular(_run_file(store_dir), follow=False)
    except OSError:
        return None
    try:
        raw = os.read(fd, MAX_RUN_BYTES)
    except OSError:
        raw = b""
    finally:
        os.close(fd)
    from .lock import WriterLock  # here: only a search during a run needs it

    try:
        if not WriterLock(store_dir).is_locked_elsewhere():
            return None  # left by a run that was killed
    except Exception:
        return None
    return parse_record(raw)


def parse_record(raw: bytes) -> IndexRun:
    """The run ``raw`` (a ``RUN_NAME`` file's bytes) records; a run of unknown count when it
    is not the JSON the writer writes."""
    try:
        data = json.loads(raw)
        files, total = data["files"], data["total"]
    except (ValueError, TypeError, KeyError):
        return IndexRun()
    if not isinstance(files, int) or isinstance(files, bool) or files < 0:
        return IndexRun()
    if total is None:
        return IndexRun()
    if not isinstance(total, int) or isinstance(total, bool) or total < 0:
        return IndexRun()
    return IndexRun(min(files, total), total)
