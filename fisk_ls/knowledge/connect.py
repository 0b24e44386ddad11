"""apsw connections to the store's database, and what their errors mean to a person.

* The writer's connection (the caller holds the lock, lock.py): read-write, WAL, pre-created
  0600 with ``O_NOFOLLOW`` and opened with ``SQLITE_OPEN_NOFOLLOW``.
* A reader's: read-only; on read-only media it falls back to an immutable open.
* ``explain`` turns an SQLite or OS error into one line naming the way out; ``damaged`` says
  whether the file itself is unusable (the recovery moves it aside).
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
import urllib.parse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import schema
from .errors import ForeignStore, IncompleteStore, OddStoreFile, StoreError
from .store_files import (
    SIDECARS,
    db_path,
    enforce_modes,
    ensure_store_dir,
    odd_file_error,
    odd_files,
    precreate,
    refuse_odd_files,
)

if TYPE_CHECKING:
    import apsw

BUSY_TIMEOUT_MS = 5000


def apsw_lib() -> Any:
    import apsw

    return apsw


def load_vec(conn: apsw.Connection) -> None:
    """Load sqlite-vec into ``conn`` (vector tier only)."""
    import sqlite_vec

    conn.enable_load_extension(True)
    conn.load_extension(sqlite_vec.loadable_path())
    conn.enable_load_extension(False)


def scalar(conn: apsw.Connection, sql: str, params: tuple[object, ...] = ()) -> Any:
    """The first column of the first row of a query that always returns one."""
    row = conn.execute(sql, params).fetchone()
    assert row is not None, sql
    return row[0]


def _check_fts5(conn: apsw.Connection) -> None:
    if not scalar(conn, "SELECT sqlite_compileoption_used('ENABLE_FTS5')"):
        raise StoreError("this SQLite was built without FTS5; reinstall apsw")


def connect_writer(store_dir: Path) -> apsw.Connection:
    """The read-write connection (caller holds the lock)."""
    lib = apsw_lib()
    ensure_store_dir(store_dir)
    path = db_path(store_dir)
    precreate(path)
    flags = lib.SQLITE_OPEN_READWRITE | lib.SQLITE_OPEN_CREATE | lib.SQLITE_OPEN_NOFOLLOW
    conn: apsw.Connection | None = None
    try:
        conn = lib.Connection(str(path), flags=flags)
        conn.setbusytimeout(BUSY_TIMEOUT_MS)
        if scalar(conn, "PRAGMA auto_vacuum") != 2:  # setting it, even unchanged, writes page 1
            conn.execute("PRAGMA auto_vacuum=INCREMENTAL")
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA cache_size=-16000")
        # Each file is written under a savepoint, whose statement journal (the original of every
        # page the file's rows touch) SQLite spills to a temporary file past 64 KiB: most of a
        # first build's writes (bench/tuning.md, "Cold index"). In memory it is one file's pages.
        conn.execute("PRAGMA temp_store=MEMORY")
        _check_fts5(conn)
        conn.execute(schema.BASE_DDL)
    except lib.Error as exc:
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.close()
        raise explain(exc, path) from exc
    enforce_modes(path)
    return conn


def close_untouched(conn: apsw.Connection) -> None:
    """Close without the checkpoint SQLite runs when the last connection closes: a store being
    refused (foreign, incomplete, damaged) keeps its database file and ``-wal`` apart, exactly
    as found, for the recovery to move aside."""
    lib = apsw_lib()
    with contextlib.suppress(lib.Error):
        conn.config(lib.SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1)
    conn.close()


def connect_reader(path: Path) -> apsw.Connection:
    """A read-only connection. On read-only media (a read-only mount, a 0500 folder) where the
    ``-shm`` cannot be created, it falls back to an immutable open, so search still works."""
    lib = apsw_lib()
    refuse_odd_files(path.parent, (path.name, *(path.name + s for s in SIDECARS)))
    flags = lib.SQLITE_OPEN_READONLY | lib.SQLITE_OPEN_NOFOLLOW
    try:
        conn: apsw.Connection = lib.Connection(str(path), flags=flags)
        try:
            conn.setbusytimeout(BUSY_TIMEOUT_MS)
            conn.execute("PRAGMA query_only=1")
            conn.execute("SELECT count(*) FROM sqlite_master").fetchall()  # opens -wal/-shm
        except (lib.CantOpenError, lib.ReadOnlyError):
            conn.close()
            if os.access(path.parent, os.W_OK):
                raise
            conn = immutable_reader(path)
        _check_fts5(conn)
    except lib.Error as exc:
        raise explain(exc, path) from exc
    return conn


def immutable_reader(path: Path) -> apsw.Connection:
    lib = apsw_lib()
    uri = "file:" + urllib.parse.quote(str(path)) + "?immutable=1"
    flags = lib.SQLITE_OPEN_READONLY | lib.SQLITE_OPEN_NOFOLLOW | lib.SQLITE_OPEN_URI
    conn: apsw.Connection = lib.Connection(uri, flags=flags)
    conn.execute("PRAGMA query_only=1")
    conn.execute("SELECT count(*) FROM sqlite_master").fetchall()
    return conn


RECOVERY = (
    "run `fisk-ai knowledge index --reindex` or `fisk-ai knowledge reset --force` "
    "(the unreadable file is moved aside and the index rebuilt)"
)


def explain(exc: BaseException, path: Path) -> StoreError:
    """One line, fit for a person, for an SQLite or OS error on the store at ``path``, naming
    the way out. Adapters raise or print this instead of a traceback."""
    lib = apsw_lib()
    if isinstance(exc, StoreError):
        return exc
    detail = str(exc).split("\n", 1)[0][:200]
    if isinstance(exc, lib.IOError | lib.CantOpenError | OSError) and (
        odd := odd_files(path.parent, (path.name, *(path.name + s for s in SIDECARS)))
    ):
        return odd_file_error(*odd[0])
    if isinstance(exc, lib.FullError) or getattr(exc, "errno", None) == errno.ENOSPC:
        return StoreError(
            f"the disk is full writing {path}; free some space and run it again "
            "(everything committed before is kept)"
        )
    if isinstance(exc, lib.CorruptError | lib.NotADBError):
        return StoreError(f"the knowledge index {path} is damaged ({detail}); {RECOVERY}")
    if isinstance(exc, lib.ReadOnlyError) or getattr(exc, "errno", None) in (
        errno.EROFS,
        errno.EACCES,
        errno.EPERM,
    ):
        return StoreError(
            f"cannot write the knowledge index {path} ({detail}): it is on read-only media or "
            "not writable by this user; searching still works, indexing needs write access"
        )
    if isinstance(exc, lib.BusyError | lib.LockedError):
        return StoreError(f"the knowledge index {path} is busy ({detail}); try again")
    if isinstance(exc, lib.CantOpenError):
        return StoreError(
            f"cannot open the knowledge index {path} ({detail}); check that it "
            "exists and is readable"
        )
    if isinstance(exc, lib.IOError):
        return StoreError(
            f"disk I/O error on the knowledge index {path} ({detail}); check the disk and the "
            f"store folder, then {RECOVERY}"
        )
    if isinstance(exc, lib.Error):
        return StoreError(f"SQLite error on the knowledge index {path}: {detail}")
    if isinstance(exc, OSError):
        where = exc.filename or path
        return StoreError(f"{exc.strerror or detail}: {where}")
    return StoreError(f"{type(exc).__name__} on the knowledge index {path}: {detail}")


def damaged(exc: BaseException) -> bool:
    """True for errors that mean the file itself is unusable (corrupt, not SQLite, foreign,
    naming missing tables), also when wrapped by ``explain``."""
    lib = apsw_lib()
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(
            seen, lib.CorruptError | lib.NotADBError | ForeignStore | IncompleteStore | OddStoreFile
        ):
            return True
        seen = seen.__cause__
    return False


def store_error(exc: BaseException, store_dir: Path | None = None) -> StoreError | None:
    """The StoreError for an SQLite or OS error on the store in ``store_dir`` (one line fit for
    a person, naming the way out: ``store.explain``); None for any other exception."""
    if isinstance(exc, StoreError):
        return exc
    apsw = sys.modules.get("apsw")  # not imported yet: nothing raised one of its errors
    if not isinstance(exc, OSError) and not (apsw is not None and isinstance(exc, apsw.Error)):
        return None
    return explain(exc, db_path(store_dir) if store_dir is not None else Path("knowledge.db"))
