"""The SQLite store: opening it safely, the manifest, and read snapshots.

* Files: ``knowledge.db`` and its ``-wal``/``-shm`` sidecars are 0600 inside a 0700 directory;
  the database is pre-created with ``O_NOFOLLOW`` and opened with ``SQLITE_OPEN_NOFOLLOW``; a
  symlink at any of these paths is refused.
* Writers hold the cross-process lock (lock.py) and one read-write connection in WAL mode.
* Readers open read-only, lazily: a reader created before the index existed finds it once it
  is built, and one whose database was replaced reopens it. Each read is one short transaction
  that first reads the manifest, so a switch of generation or vector space is seen at once.

Over 400 lines on purpose: opening, the manifest, the store id and error explanations all guard
the same file with the same opening rules; split apart, the safety checks would scatter.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import threading
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import schema
from .deadline import PROGRESS_STEPS, Deadline
from .errors import RESET_FIX, FormatTooNew, StoreError
from .lock import LOCK_NAME
from .regular import NotRegular, kind_of, read_regular

if TYPE_CHECKING:
    import apsw

DB_NAME = "knowledge.db"
ID_NAME = "knowledge.id"
"""A marker beside the database holding the store's id, also kept in ``rag_meta``: contents
that do not carry the same id (a ``-wal`` or a database file from another store) are refused."""
STORE_ID_KEY = "store_id"
SIDECARS = ("-wal", "-shm")
STORE_FILES = (DB_NAME, *(DB_NAME + s for s in SIDECARS), LOCK_NAME, ID_NAME)
"""Every name the store writes in its folder: anything else at one of them (a FIFO, a folder,
a socket, a link) is cleared by ``reset --force`` (``clear_odd_files``)."""
BUSY_TIMEOUT_MS = 5000
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


@dataclass(frozen=True)
class Manifest:
    """What ``rag_meta`` says about the live index."""

    format_version: int = schema.FORMAT_VERSION
    generation: int = 1
    model: str = ""
    dimension: int = 0
    normalized: bool = False
    query_prefix: str = ""
    document_prefix: str = ""

    @classmethod
    def from_rows(cls, rows: dict[str, str]) -> Manifest:
        def num(key: str, default: int) -> int:
            try:
                return int(rows.get(key, default))
            except ValueError:
                return default

        return cls(
            format_version=num("format_version", schema.FORMAT_VERSION),
            generation=num("generation", 1),
            model=rows.get("model", ""),
            dimension=num("dimension", 0),
            normalized=rows.get("normalized", "false") == "true",
            query_prefix=rows.get("query_prefix", ""),
            document_prefix=rows.get("document_prefix", ""),
        )

    def rows(self) -> dict[str, str]:
        return {
            "format_version": str(self.format_version),
            "generation": str(self.generation),
            "model": self.model,
            "dimension": str(self.dimension),
            "normalized": "true" if self.normalized else "false",
            "query_prefix": self.query_prefix,
            "document_prefix": self.document_prefix,
        }

    @property
    def hybrid(self) -> bool:
        return bool(self.model) and self.dimension > 0

    @property
    def tables(self) -> schema.Tables:
        return schema.names(self.generation, self.format_version)


def db_path(store_dir: Path) -> Path:
    return store_dir / DB_NAME


def _apsw() -> Any:
    import apsw

    return apsw


def load_vec(conn: apsw.Connection) -> None:
    """Load sqlite-vec into ``conn`` (vector tier only)."""
    import sqlite_vec

    conn.enable_load_extension(True)
    conn.load_extension(sqlite_vec.loadable_path())
    conn.enable_load_extension(False)


def _refuse_symlink(path: Path) -> None:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode):
        fix = f", or {RESET_FIX}" if path.name in STORE_FILES else ""
        raise OddStoreFile(f"refusing to follow the symlink at {path}; remove it{fix}")


class OddStoreFile(StoreError):
    """Something other than a regular file sits at one of the store's file names."""


def odd_files(store_dir: Path, names: tuple[str, ...] = STORE_FILES) -> list[tuple[Path, str]]:
    """The store's file names where something else than a regular file sits, with what it is
    ("a FIFO", "a folder", ...). SQLite meeting a FIFO at ``-shm`` or a folder at the database
    says only "disk I/O error"; this names the file and the fix first."""
    found: list[tuple[Path, str]] = []
    for name in names:
        path = store_dir / name
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            continue
        if not stat.S_ISREG(mode):
            found.append((path, kind_of(mode)))
    return found


def odd_file_error(path: Path, kind: str) -> OddStoreFile:
    return OddStoreFile(f"{path} is {kind}, not a file the store wrote; remove it, or {RESET_FIX}")


def refuse_odd_files(store_dir: Path, names: tuple[str, ...] = STORE_FILES) -> None:
    """Raise ``OddStoreFile`` for the first store file name that holds no regular file."""
    for path, kind in odd_files(store_dir, names):
        if kind == "a symlink":
            _refuse_symlink(path)
        raise odd_file_error(path, kind)


def clear_odd_files(store_dir: Path) -> list[str]:
    """``reset --force`` and ``--reindex``: whatever else than a regular file sits at the
    store's file names goes: a folder or a link (which may hold or lead to someone's files) is
    renamed aside unchanged, to ``NAME.damaged-<time>``; a FIFO, socket or device (which hold
    nothing) is removed. Return one note per file. Only such files are touched, so a writer
    working on the store meanwhile (whose files are all regular) loses nothing."""
    notes: list[str] = []
    for path, kind in odd_files(store_dir):
        try:
            if kind in ("a folder", "a symlink"):
                target = _aside_name(path, "damaged")
                os.replace(path, target)
                notes.append(f"{path} was {kind}, not a file the store wrote; moved to {target}")
            else:
                os.unlink(path)
                notes.append(f"{path} was {kind}, not a file the store wrote; removed")
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise StoreError(
                f"{path} is {kind}, not a file the store wrote, and it cannot be moved aside "
                f"({exc.strerror or exc}); remove it by hand"
            ) from None
    return notes


def _aside_name(path: Path, why: str) -> Path:
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    target = path.with_name(f"{path.name}.{why}-{stamp}")
    n = 1
    while os.path.lexists(target):
        n += 1
        target = path.with_name(f"{path.name}.{why}-{stamp}-{n}")
    return target


def _make_private_dirs(folder: Path) -> None:
    """Create ``folder`` and every missing folder above it 0700, whatever the umask (mkdir's
    mode is filtered by it, and ``parents=True`` gives the parents the umask's mode)."""
    missing: list[Path] = []
    for up in (folder, *folder.parents):
        if os.path.lexists(up):
            break
        missing.append(up)
    for made in reversed(missing):
        try:
            made.mkdir(mode=0o700)
        except FileExistsError:
            continue
        os.chmod(made, 0o700)


def ensure_store_dir(store_dir: Path) -> None:
    """Create the store directory (0700, and each folder above it the product creates) if
    needed; refuse a symlink there, a folder that another user owns or others may write, and a
    folder of other files that holds no store (``check_store_dir``)."""
    _refuse_symlink(store_dir)
    if not os.path.lexists(store_dir):
        try:
            _make_private_dirs(store_dir)
        except OSError as exc:
            raise StoreError(
                f"cannot create store directory {store_dir}: {exc.strerror or exc}"
            ) from exc
    check_store_dir(store_dir)
    _adopt_empty(store_dir)


def _adopt_empty(store_dir: Path) -> None:
    """An empty folder made beforehand (``mkdir``) becomes the store's: 0700 like one it made."""
    with contextlib.suppress(OSError), os.scandir(store_dir) as entries:
        if next(entries, None) is None:
            os.chmod(store_dir, 0o700)


STORE_ELSEWHERE = (
    "--store-dir / FISK_AI_STORE_DIR, or harness.knowledge.directory in agent.yaml, choose "
    "another place"
)


def store_dir_problem(store_dir: Path) -> str | None:
    """Why the existing folder ``store_dir`` cannot hold a private store, with the fix; None
    when it can (or does not exist). Another user who owns the folder, or anyone who may write
    to it, could swap the database under the reader or the writer."""
    try:
        st = os.lstat(store_dir)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot read the store folder {store_dir}: {exc.strerror or exc}"
    if stat.S_ISLNK(st.st_mode):
        return f"refusing to follow the symlink at {store_dir}; remove it"
    if not stat.S_ISDIR(st.st_mode):
        return f"store path {store_dir} exists and is not a directory"
    if os.name == "nt":  # pragma: no cover - ownership and modes are POSIX here
        return None
    if st.st_uid != os.geteuid():
        return (
            f"the store folder {store_dir} belongs to another user (uid {st.st_uid}), who could "
            f"replace the index in it; remove it, or {STORE_ELSEWHERE}"
        )
    mode = stat.S_IMODE(st.st_mode)
    if mode & 0o022:
        return (
            f"the store folder {store_dir} is writable by others (mode {mode:04o}), who could "
            f"replace the index in it; check its files, then run `chmod 700 {store_dir}`"
        )
    if not _holds_a_store(store_dir):
        return (
            f"the store folder {store_dir} already holds other files and no store (no "
            f"{DB_NAME}, {ID_NAME} or {LOCK_NAME}); the store keeps a folder of its own and "
            f"writes nothing among other files: {STORE_ELSEWHERE} (a new or empty folder)"
        )
    return None


def _holds_a_store(store_dir: Path) -> bool:
    """Is ``store_dir`` a store's folder: one holding any of the store's files (a store never
    deletes its lock file), or an empty one? A folder of other files (a system folder, the
    project's docs) named as the store folder by mistake is not written into."""
    if any(os.path.lexists(store_dir / name) for name in STORE_FILES):
        return True
    try:
        with os.scandir(store_dir) as entries:
            return next(entries, None) is None
    except OSError:
        return True  # unreadable: the open that follows says so


def check_store_dir(store_dir: Path) -> None:
    """Raise ``StoreError`` when ``store_dir`` cannot hold a private store (see above)."""
    if (problem := store_dir_problem(store_dir)) is not None:
        raise StoreError(problem)


def _precreate(path: Path) -> None:
    refuse_odd_files(path.parent, (DB_NAME, *(DB_NAME + s for s in SIDECARS)))
    try:
        fd = os.open(path, os.O_CREAT | os.O_WRONLY | _NOFOLLOW, 0o600)
    except OSError as exc:
        raise StoreError(f"cannot create {path}: {exc.strerror}") from exc
    os.close(fd)


def enforce_modes(path: Path) -> None:
    for suffix in ("", *SIDECARS):
        p = Path(f"{path}{suffix}")
        _refuse_symlink(p)
        with contextlib.suppress(FileNotFoundError):
            os.chmod(p, 0o600)


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
    lib = _apsw()
    ensure_store_dir(store_dir)
    path = db_path(store_dir)
    _precreate(path)
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
    lib = _apsw()
    with contextlib.suppress(lib.Error):
        conn.config(lib.SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1)
    conn.close()


def connect_reader(path: Path) -> apsw.Connection:
    """A read-only connection. On read-only media (a read-only mount, a 0500 folder) where the
    ``-shm`` cannot be created, it falls back to an immutable open, so search still works."""
    lib = _apsw()
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
            conn = _immutable_reader(path)
        _check_fts5(conn)
    except lib.Error as exc:
        raise explain(exc, path) from exc
    return conn


def _immutable_reader(path: Path) -> apsw.Connection:
    lib = _apsw()
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
    lib = _apsw()
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
    lib = _apsw()
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(
            seen, lib.CorruptError | lib.NotADBError | ForeignStore | IncompleteStore | OddStoreFile
        ):
            return True
        seen = seen.__cause__
    return False


def move_aside(store_dir: Path) -> Path:
    """Rename an unreadable database (and its sidecars) out of the way; return the new path."""
    path = db_path(store_dir)
    target = _aside_name(path, "damaged")
    for suffix in ("", *SIDECARS):
        src = Path(f"{path}{suffix}")
        if os.path.lexists(src):
            os.replace(src, Path(f"{target}{suffix}"))
    with contextlib.suppress(FileNotFoundError):
        os.unlink(store_dir / ID_NAME)
    return target


# -- store id ------------------------------------------------------------------------------------


class ForeignStore(StoreError):
    """The database's contents carry another store's id (or none where one is expected)."""


class IncompleteStore(StoreError):
    """The manifest names a generation whose tables do not exist."""


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
    tmp = store_dir / f".{ID_NAME}.tmp"
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)
    fd = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY | _NOFOLLOW, 0o600)
    try:
        os.write(fd, (store_id + "\n").encode())
    finally:
        os.close(fd)
    os.replace(tmp, store_dir / ID_NAME)


def stored_id(conn: apsw.Connection) -> str | None:
    try:
        row = conn.execute("SELECT value FROM rag_meta WHERE key = ?", (STORE_ID_KEY,)).fetchone()
    except _apsw().SQLError:
        return None
    return str(row[0]) if row else None


def _fresh(conn: apsw.Connection) -> bool:
    """True for a database holding nothing yet (at most an empty ``rag_meta``): one created
    where the old file was deleted by hand, the marker left behind."""
    names = {str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master")}
    if not names <= {"rag_meta", "vector_cache", "sqlite_autoindex_rag_meta_1"}:
        return False
    return not names or conn.execute("SELECT 1 FROM rag_meta LIMIT 1").fetchone() is None


def wal_path(store_dir: Path) -> Path:
    return Path(f"{db_path(store_dir)}-wal")


def _has_wal(store_dir: Path) -> bool:
    try:
        return os.lstat(wal_path(store_dir)).st_size > 0
    except OSError:
        return False


FOREIGN_WAL_FIX = (
    "run `fisk-ai knowledge index` (it moves the -wal aside and keeps the index), or "
    "`fisk-ai knowledge index --reindex` to rebuild"
)


def check_store_id(conn: apsw.Connection, store_dir: Path, built: bool) -> None:
    """Refuse contents whose id differs from the marker (``ForeignStore``): a database, or a
    ``-wal`` replayed over it, from another store or from any other SQLite database (which
    reads as no manifest at all: without this it looked "not built" and was rebuilt over)."""
    marker = read_marker(store_dir)
    if marker is None:
        return
    inside = stored_id(conn)
    if inside == marker or (inside is None and not built and _fresh(conn)):
        return
    where = "contents"
    fix = RECOVERY
    if _has_wal(store_dir) and wal_alone_is_foreign(store_dir, marker):
        where, fix = "-wal", FOREIGN_WAL_FIX
    raise ForeignStore(
        f"the knowledge index {db_path(store_dir)} does not belong to this store (its {where} "
        f"carry {'no store id' if inside is None else 'another store id'}; a -wal or database "
        f"file from elsewhere was put here?); nothing was changed; {fix}"
    )


def wal_alone_is_foreign(store_dir: Path, marker: str) -> bool:
    """Does the database file on its own (its ``-wal`` ignored: an immutable, read-only open)
    carry this store's id? Then the ``-wal`` beside it is what came from elsewhere."""
    lib = _apsw()
    try:
        alone = _immutable_reader(db_path(store_dir))
    except lib.Error:
        return False
    try:
        return stored_id(alone) == marker
    except lib.Error:
        return False
    finally:
        alone.close()


def set_aside_foreign_wal(store_dir: Path) -> str | None:
    """Before a writer opens the store (lock held): a ``-wal`` this store did not write, beside
    a database that is this store's, is moved to ``knowledge.db-wal.foreign-<time>`` (its
    ``-shm`` index removed) so SQLite never replays it over the index; return the note saying
    so, or None when there is no such ``-wal``. The database is not touched."""
    marker = read_marker(store_dir)
    if marker is None or not _has_wal(store_dir):
        return None
    lib = _apsw()
    path = db_path(store_dir)
    try:
        probe = connect_reader(path)
    except StoreError:
        return None  # the writer's own open reports it
    try:
        try:
            check_store_id(probe, store_dir, read_manifest(probe) is not None)
            return None
        except (ForeignStore, FormatTooNew, lib.Error):
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


def new_store_id() -> str:
    import secrets  # here: only a writer creating a store needs it (hmac, random: start-up)

    return secrets.token_hex(16)


def read_manifest(conn: apsw.Connection) -> Manifest | None:
    """The manifest, or None for a store with no manifest yet (not built)."""
    try:
        rows = {str(k): str(v) for k, v in conn.execute("SELECT key, value FROM rag_meta")}
    except _apsw().SQLError:
        return None
    if not rows:
        return None
    manifest = Manifest.from_rows(rows)
    if manifest.format_version > schema.FORMAT_VERSION:
        raise FormatTooNew(
            f"the index was written by a newer fisk-ls (format {manifest.format_version}, this "
            f"one reads {schema.FORMAT_VERSION}); upgrade fisk-ls"
        )
    return manifest


@dataclass
class Snapshot:
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
        lib = _apsw()
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
