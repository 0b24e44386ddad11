"""The read side of the store: a long-lived read-only handle (``Store``) and its snapshots.

Readers open read-only, lazily: a reader created before the index existed finds it once it is
built, and one whose database was replaced reopens it (and checks its store id again,
store_id.py). Each read is one short transaction that first reads the manifest, so a switch of
generation or vector space is seen at once. The folder and its files are store_files.py's, the
connections connect.py's, the manifest manifest.py's.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from . import schema
from .connect import apsw_lib, connect_reader, explain, load_vec
from .deadline import PROGRESS_STEPS, Deadline
from .errors import StoreError
from .manifest import Manifest, read_manifest
from .store_files import check_store_dir, db_path
from .store_id import check_store_id

if TYPE_CHECKING:
    import apsw


class Snapshot(NamedTuple):
    """A consistent read of the live generation (inside one read transaction)."""

    conn: apsw.Connection
    manifest: Manifest
    deadline: Deadline | None = None
    """When the search reading it must stop (deadline.py): its statements are interrupted
    then, and long loops over what it reads call :meth:`check`."""

    @property
    def tables(self) -> schema.Tables:
        return self.manifest.tables

    def check(self) -> None:
        """SearchCancelled once the reading search's deadline has passed."""
        if self.deadline is not None:
            self.deadline.check()


class Store:
    """A long-lived read-only handle on one store directory. Thread-safe: one connection per
    thread, opened lazily, reopened when the database file is replaced."""

    def __init__(self, store_dir: Path) -> None:
        self.store_dir = store_dir
        self.path = db_path(store_dir)
        self._local = threading.local()
        self._all: list[apsw.Connection] = []
        self._lock = threading.Lock()

    def exists(self) -> bool:
        return self.path.is_file()

    def _conn(self) -> apsw.Connection | None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return None
        except OSError as exc:  # e.g. the store path is a file, or unreadable
            raise StoreError(f"cannot open knowledge index {self.path}: {exc.strerror}") from exc
        ident = (st.st_dev, st.st_ino)
        conn: apsw.Connection | None = getattr(self._local, "conn", None)
        if conn is not None and getattr(self._local, "ident", None) == ident:
            return conn
        if conn is not None:
            self._forget(conn)
        check_store_dir(self.store_dir)
        conn = connect_reader(self.path)
        try:
            check_store_id(conn, self.store_dir, read_manifest(conn) is not None)
        except BaseException:
            conn.close()
            raise
        self._local.conn, self._local.ident, self._local.vec = conn, ident, False
        with self._lock:
            self._all.append(conn)
        return conn

    def _forget(self, conn: apsw.Connection) -> None:
        with self._lock:
            if conn in self._all:
                self._all.remove(conn)
        with contextlib.suppress(Exception):
            conn.close()
        self._local.conn = None

    def ensure_vec(self, conn: apsw.Connection) -> None:
        if not getattr(self._local, "vec", False):
            load_vec(conn)
            self._local.vec = True

    @contextlib.contextmanager
    def snapshot(self, deadline: Deadline | None = None) -> Iterator[Snapshot | None]:
        """Yield a Snapshot of the live index, or None when it is not built yet. With a
        ``deadline``, a statement still running when it passes is interrupted (a progress
        handler on this thread's connection while the snapshot is open) and SearchCancelled
        is raised."""
        lib = apsw_lib()
        try:
            conn = self._conn()
            if conn is None:
                yield None
                return
            if deadline is not None:
                deadline.check()
                conn.set_progress_handler(deadline.expired, PROGRESS_STEPS)
            try:
                conn.execute("BEGIN")
                try:
                    manifest = read_manifest(conn)
                    yield Snapshot(conn, manifest, deadline) if manifest else None
                finally:
                    if deadline is not None:  # before COMMIT, which must not be interrupted
                        conn.set_progress_handler(None)
                    if conn.in_transaction:
                        conn.execute("COMMIT")
            except lib.InterruptError as exc:
                if deadline is None or not deadline.expired():
                    raise
                raise deadline.error() from exc
        except (lib.CorruptError, lib.NotADBError, lib.IOError, lib.FullError) as exc:
            # A damaged page met by a read: one line naming the recovery, for every front end.
            raise explain(exc, self.path) from exc

    def close(self) -> None:
        with self._lock:
            conns, self._all = self._all, []
        for conn in conns:
            with contextlib.suppress(Exception):
                conn.close()
        self._local = threading.local()
