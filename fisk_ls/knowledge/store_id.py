"""The store id: every read and write of the marker ``knowledge.id`` and of the id in ``rag_meta``.

A store writes a random id into its database and into the marker beside it, so contents that do
not carry the marker's id (a database or a ``-wal`` from another store, any other SQLite file)
are refused (``ForeignStore``) instead of being served or written over. The marker is written
through a temporary file renamed into place; a leftover one is removed by the recovery.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

from .connect import RECOVERY, close_untouched, connect_reader, explain, immutable_reader
from .errors import RESET_FIX, ForeignStore, FormatTooNew, OddStoreFile, StoreError
from .manifest import read_manifest
from .regular import NotRegular, read_regular
from .store_files import (
    ID_NAME,
    ID_TMP_NAME,
    NOFOLLOW,
    db_path,
    has_wal,
    refuse_odd_files,
    wal_path,
)

if TYPE_CHECKING:
    import apsw

STORE_ID_KEY = "store_id"
"""The ``rag_meta`` row holding the id."""


def read_marker(store_dir: Path) -> str | None:
    """The id in ``knowledge.id``; None when there is none. Anything but a regular file there (a
    FIFO would block every command, a link has no business there) is a ``StoreError``."""
    path = store_dir / ID_NAME
    try:
        raw = read_regular(path, 200, follow=False)
    except FileNotFoundError:
        return None
    except NotRegular as exc:
        raise OddStoreFile(
            f"{path} is not the store's id file ({exc.strerror}); remove it, or {RESET_FIX}"
        ) from None
    except OSError:
        return None  # unreadable marker: no check (doctor reports modes)
    return raw[:200].decode("ascii", "replace").strip() or None


def write_marker(store_dir: Path, store_id: str) -> None:
    """Write the marker atomically: a temporary file (never left behind) renamed into place."""
    tmp = store_dir / ID_TMP_NAME
    clear_leftover(store_dir)
    fd = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY | NOFOLLOW, 0o600)
    try:
        try:
            os.write(fd, (store_id + "\n").encode())
        finally:
            os.close(fd)
        os.replace(tmp, store_dir / ID_NAME)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def clear_leftover(store_dir: Path) -> None:
    """Remove the marker's temporary file a killed writer left. Anything but a regular file
    there is refused with its fix (``reset --force`` clears it: ``clear_odd_files``)."""
    refuse_odd_files(store_dir, (ID_TMP_NAME,))
    with contextlib.suppress(FileNotFoundError):
        os.unlink(store_dir / ID_TMP_NAME)


def forget_marker(store_dir: Path) -> None:
    """The database was moved aside: its marker (and any temporary one) goes too."""
    for name in (ID_NAME, ID_TMP_NAME):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(store_dir / name)


def stored_id(conn: apsw.Connection) -> str | None:
    import apsw

    try:
        row = conn.execute("SELECT value FROM rag_meta WHERE key = ?", (STORE_ID_KEY,)).fetchone()
    except apsw.SQLError:
        return None
    return str(row[0]) if row else None


def write_stored_id(conn: apsw.Connection, store_id: str) -> None:
    """The id into ``rag_meta``, inside the caller's transaction."""
    conn.execute(
        "INSERT INTO rag_meta(key, value) VALUES (?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value=excluded.value",
        (STORE_ID_KEY, store_id),
    )


def new_store_id() -> str:
    import secrets  # here: only a writer creating a store needs it (hmac, random: start-up)

    return secrets.token_hex(16)


def _fresh(conn: apsw.Connection) -> bool:
    """True for a database holding nothing yet (at most an empty ``rag_meta``): one created
    where the old file was deleted by hand, the marker left behind."""
    names = {str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master")}
    if not names <= {"rag_meta", "vector_cache", "sqlite_autoindex_rag_meta_1"}:
        return False
    return not names or conn.execute("SELECT 1 FROM rag_meta LIMIT 1").fetchone() is None


FOREIGN_WAL_FIX = (
    "run `fisk-ai knowledge index` (it moves the -wal aside and keeps the index), or "
    "`fisk-ai knowledge index --reindex` to rebuild"
)


def check_store_id(conn: apsw.Connection, store_dir: Path, built: bool) -> None:
    """Refuse contents whose id differs from the marker (``ForeignStore``): a database, or a
    ``-wal`` replayed over it, from another store or from any other SQLite database (which
    reads as no manifest at all: without this it looked "not built" and was rebuilt over)."""
    check_against(conn, store_dir, built, read_marker(store_dir))


def check_against(conn: apsw.Connection, store_dir: Path, built: bool, marker: str | None) -> None:
    """``check_store_id`` with the marker already read (a writer reads it once per open)."""
    if marker is None:
        return
    inside = stored_id(conn)
    if inside == marker or (inside is None and not built and _fresh(conn)):
        return
    where = "contents"
    fix = RECOVERY
    if has_wal(store_dir) and wal_alone_is_foreign(store_dir, marker):
        where, fix = "-wal", FOREIGN_WAL_FIX
    raise ForeignStore(
        f"the knowledge index {db_path(store_dir)} does not belong to this store (its {where} "
        f"carry {'no store id' if inside is None else 'another store id'}; a -wal or database "
        f"file from elsewhere was put here?); nothing was changed; {fix}"
    )


def wal_alone_is_foreign(store_dir: Path, marker: str) -> bool:
    """Does the database file on its own (its ``-wal`` ignored: an immutable, read-only open)
    carry this store's id? Then the ``-wal`` beside it is what came from elsewhere."""
    import apsw

    try:
        alone = immutable_reader(db_path(store_dir))
    except apsw.Error:
        return False
    try:
        return stored_id(alone) == marker
    except apsw.Error:
        return False
    finally:
        alone.close()


def set_aside_foreign_wal(store_dir: Path, marker: str | None) -> str | None:
    """Before a writer opens the store (lock held): a ``-wal`` this store did not write, beside
    a database that is this store's, is moved to ``knowledge.db-wal.foreign-<time>`` (its
    ``-shm`` index removed) so SQLite never replays it over the index; return the note saying
    so, or None when there is no such ``-wal``. The database is not touched. ``marker``: the
    marker's id as the writer read it."""
    if marker is None or not has_wal(store_dir):
        return None
    import apsw

    path = db_path(store_dir)
    try:
        probe = connect_reader(path)
    except StoreError:
        return None  # the writer's own open reports it
    try:
        try:
            check_against(probe, store_dir, read_manifest(probe) is not None, marker)
            return None
        except (ForeignStore, FormatTooNew, apsw.Error):
            pass
    finally:
        close_untouched(probe)
    if not wal_alone_is_foreign(store_dir, marker):
        return None  # the database itself is foreign: the writer refuses it whole
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    target = Path(f"{path}-wal.foreign-{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = Path(f"{path}-wal.foreign-{stamp}-{n}")
    os.replace(wal_path(store_dir), target)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(f"{path}-shm")
    return (
        f"a -wal beside {path} was not written by this store (another database's); it was "
        f"moved to {target} unread and the index was kept"
    )


def check_before_writing(store_dir: Path, marker: str | None) -> None:
    """Before the writer's connection writes anything (its pragmas, the base table): contents
    that are not this store's (``marker``: the marker's id as the writer read it) are refused
    untouched."""
    import apsw

    path = db_path(store_dir)
    if marker is None or not path.exists() or path.stat().st_size == 0:
        return
    try:
        probe = connect_reader(path)
    except StoreError:
        return  # the writer's own open reports it
    try:
        check_against(probe, store_dir, read_manifest(probe) is not None, marker)
    except apsw.Error as exc:
        raise explain(exc, path) from exc
    finally:
        close_untouched(probe)
