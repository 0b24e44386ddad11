"""Opening the store for writing: the lock, then every check before the writer's connection
writes anything, and with ``recover`` the way out of a store that cannot be used.

Under the lock the store-id marker is read once; a ``-wal`` from elsewhere is set aside
(store_id.py), contents that are not this store's are refused untouched, and the ``Writer``
(writer.py) checks the rest on its connection. A writer kept open between passes (session.py)
goes through here once, and again only when something changed.
"""

from __future__ import annotations

from pathlib import Path

from .connect import close_untouched, connect_reader, connect_writer, damaged, explain, scalar
from .lock import WriterLock
from .store_files import clear_odd_files, db_path, ensure_store_dir, move_aside
from .store_id import (
    check_before_writing,
    clear_leftover,
    forget_marker,
    read_marker,
    set_aside_foreign_wal,
)
from .writer import Writer


def open_writer(store_dir: Path, *, wait: float = 0.0, recover: bool = False) -> Writer:
    """Take the lock and open the store for writing (creating it if needed).

    With ``recover`` (``index --reindex``, ``reset --force``) anything but a regular file at
    the store's file names is cleared first (``store_files.clear_odd_files``; ``Writer.cleared``
    says what went where), a marker's temporary file a killed writer left is removed, and a
    store that cannot be used — not SQLite, corrupt (``PRAGMA quick_check``), foreign, or naming
    missing tables — is moved aside (``knowledge.db.damaged-<time>``) and a new one created;
    ``Writer.recovered`` says where the old file went. Without it such a store raises
    ``StoreError`` naming the fix. The store-id marker is read once, under the lock."""
    lock = WriterLock(store_dir)
    ensure_store_dir(store_dir)
    cleared = clear_odd_files(store_dir) if recover else []
    lock.acquire(wait)
    try:
        if recover:
            clear_leftover(store_dir)
        marker = read_marker(store_dir)
        set_aside = set_aside_foreign_wal(store_dir, marker)  # never replayed over the index
        try:
            writer = _open(store_dir, lock, marker, check=recover)
            writer.set_aside, writer.cleared = set_aside, cleared
            return writer
        except Exception as exc:
            if not (recover and damaged(exc)):
                raise
            reason = str(exc).split(";", 1)[0]
        aside = move_aside(store_dir)
        forget_marker(store_dir)
        writer = _open(store_dir, lock, None, check=False)
        writer.cleared = cleared
        writer.recovered = (
            f"{reason}; it was moved to {aside} and a new index is built in its place"
        )
        return writer
    except BaseException:
        lock.release()
        raise


def _check_readable(path: Path) -> None:
    """Before any write: the file is SQLite and passes ``quick_check`` (read-only, so a damaged
    file moved aside is kept exactly as it was)."""
    import apsw

    if not path.exists() or path.stat().st_size == 0:
        return
    probe = connect_reader(path)
    try:
        result = str(scalar(probe, "PRAGMA quick_check"))
    except apsw.Error as exc:
        raise explain(exc, path) from exc
    finally:
        probe.close()
    if result != "ok":
        err = apsw.CorruptError(f"integrity check failed: {result[:200]}")
        raise explain(err, path) from err


def _open(store_dir: Path, lock: WriterLock, marker: str | None, *, check: bool) -> Writer:
    import apsw

    if check:
        _check_readable(db_path(store_dir))
    check_before_writing(store_dir, marker)
    conn = connect_writer(store_dir)
    try:
        return Writer(store_dir, lock, conn, marker)
    except apsw.Error as exc:
        close_untouched(conn)
        raise explain(exc, db_path(store_dir)) from exc
    except BaseException:
        close_untouched(conn)
        raise
