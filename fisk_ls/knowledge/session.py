"""A writer kept open between passes: one project's update queue and backfill (the language
server, ``watch``) open the store once, not on every save.

``open_writer`` proves the store on every open: the folder, the odd files, a ``-wal`` from
elsewhere, the store id (marker and contents), the manifest's generation whole, stale
generations. Between two passes of this process only another writer, or someone moving files
around, can change any of that, so a ``WriterSession`` keeps the ``Writer`` (its connection) and,
each time it is used again, takes the lock and re-checks only what can have changed meanwhile:

* the files' identity: the folder (and its owner and mode), the database, its ``-wal`` and the
  store-id marker (device and inode; the marker's size and mtime too). A ``reset --force`` that
  moved the database aside, a store deleted or replaced, a ``-wal`` put in place: the kept
  connection is closed without a checkpoint (nothing is written into the replaced files) and the
  store opened again with every check;
* ``rag_meta`` as this session left it: every commit counts itself there (``Writer.stamp``), so
  another writer's commit (an index run, a reset, a rebuild) shows as a difference and the store
  is opened again too.

The cross-process lock is held only while the writer is in use, so other processes still get
their turn between passes. Threads of this process share the session one at a time.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import IndexLocked, StoreError
from .opening import open_writer
from .store_files import ID_NAME, db_path, wal_path
from .writer import Writer

if TYPE_CHECKING:
    import apsw

Identity = tuple[tuple[int, ...] | None, ...]


def identity(store_dir: Path) -> Identity:
    """What says the store's files are still the ones a kept writer opened."""

    def of(path: Path, *fields: str) -> tuple[int, ...] | None:
        try:
            st = os.lstat(path)
        except OSError:
            return None
        return tuple(int(getattr(st, f)) for f in ("st_dev", "st_ino", *fields))

    return (
        of(store_dir, "st_mode", "st_uid"),
        of(db_path(store_dir), "st_mode"),
        of(wal_path(store_dir), "st_mode"),
        of(store_dir / ID_NAME, "st_mode", "st_size", "st_mtime_ns"),
    )


def meta_rows(conn: apsw.Connection) -> frozenset[tuple[str, str]]:
    """``rag_meta`` as it stands: the manifest, the store id and the commit count."""
    return frozenset((str(k), str(v)) for k, v in conn.execute("SELECT key, value FROM rag_meta"))


class WriterSession:
    """One store's writer, opened on first use and kept until ``close``."""

    def __init__(self, store_dir: Path) -> None:
        self.store_dir = store_dir
        self._writer: Writer | None = None
        self._seen: tuple[Identity, frozenset[tuple[str, str]]] | None = None
        self._mutex = threading.Lock()
        self.opened = 0
        """How many times the store was opened with every check (tests, bench)."""

    @contextlib.contextmanager
    def open(self, *, wait: float = 0.0, recover: bool = False) -> Iterator[Writer]:
        """The writer, under the lock (``IndexLocked`` after ``wait`` seconds, as
        ``open_writer``). ``recover``: opened again with ``open_writer``'s recovery. An error
        inside closes the kept writer: the next use opens the store again."""
        start = time.monotonic()
        if not self._mutex.acquire(blocking=wait > 0, timeout=wait if wait > 0 else -1):
            raise IndexLocked(
                f"another index pass of this process is running on {self.store_dir}; it is retried"
            )
        try:
            left = max(wait - (time.monotonic() - start), 0.0)
            writer = self._take(left, recover)
            try:
                yield writer
                self._seen = (identity(self.store_dir), meta_rows(writer.conn))
                writer.forget_notes()
            except BaseException:
                self._drop()
                raise
            finally:
                writer.lock.release()
        finally:
            self._mutex.release()

    def _take(self, wait: float, recover: bool) -> Writer:
        writer = self._writer
        if writer is not None and not recover and self._same_files():
            writer.lock.acquire(wait)
            try:
                if self._unchanged(writer):
                    return writer
            except BaseException:
                writer.lock.release()
                raise
            writer.lock.release()
        self._drop()
        self._writer = open_writer(self.store_dir, wait=wait, recover=recover)
        self.opened += 1
        return self._writer

    def _same_files(self) -> bool:
        return self._seen is not None and identity(self.store_dir) == self._seen[0]

    def _unchanged(self, writer: Writer) -> bool:
        """Under the lock: the same files, and ``rag_meta`` as this session left it."""
        if self._seen is None or not self._same_files():
            return False
        try:
            return meta_rows(writer.conn) == self._seen[1]
        except Exception:  # unreadable now: open it again, with every check
            return False

    def _drop(self) -> None:
        """Close the kept writer without a checkpoint or any other write (the lock is not held,
        and its files may not be the store's any more)."""
        writer, self._writer, self._seen = self._writer, None, None
        if writer is not None:
            with contextlib.suppress(Exception):
                writer.close(untouched=True)

    def close(self) -> None:
        """Close the kept writer: with the usual checkpoint when its files are still the
        store's and no other writer holds the lock, untouched otherwise."""
        with self._mutex:
            writer, seen = self._writer, self._seen
            self._writer = self._seen = None
        if writer is None:
            return
        try:
            writer.lock.acquire(0.0)
        except StoreError:  # another writer works (IndexLocked), or the store is gone
            writer.close(untouched=True)
            return
        writer.close(untouched=seen is None or identity(self.store_dir) != seen[0])
