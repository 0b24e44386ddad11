"""The store's folder and the names in it: which files are the store's, what may sit at them.

* ``knowledge.db`` and its ``-wal``/``-shm`` sidecars are 0600 inside a 0700 folder; the database
  is pre-created with ``O_NOFOLLOW``; a symlink at any of these names is refused.
* A folder of other files, one another user owns or others may write, never becomes a store.
* Anything but a regular file at one of the store's names (a FIFO, a folder, a socket, a link) is
  named with its fix (``refuse_odd_files``) and cleared by ``reset --force`` (``clear_odd_files``).
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from pathlib import Path

from .errors import RESET_FIX, OddStoreFile, StoreError
from .lock import LOCK_NAME
from .regular import kind_of

DB_NAME = "knowledge.db"
ID_NAME = "knowledge.id"
"""The store-id marker beside the database (store_id.py reads and writes it)."""
ID_TMP_NAME = f".{ID_NAME}.tmp"
"""Where the marker is written before it is renamed into place."""
SIDECARS = ("-wal", "-shm")
STORE_FILES = (DB_NAME, *(DB_NAME + s for s in SIDECARS), LOCK_NAME, ID_NAME, ID_TMP_NAME)
"""Every name the store writes in its folder: anything else at one of them (a FIFO, a folder,
a socket, a link) is cleared by ``reset --force`` (``clear_odd_files``)."""
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def db_path(store_dir: Path) -> Path:
    return store_dir / DB_NAME


def wal_path(store_dir: Path) -> Path:
    return Path(f"{db_path(store_dir)}-wal")


def has_wal(store_dir: Path) -> bool:
    try:
        return os.lstat(wal_path(store_dir)).st_size > 0
    except OSError:
        return False


def refuse_symlink(path: Path) -> None:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode):
        fix = f", or {RESET_FIX}" if path.name in STORE_FILES else ""
        raise OddStoreFile(f"refusing to follow the symlink at {path}; remove it{fix}")


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
            refuse_symlink(path)
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
                target = aside_name(path, "damaged")
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


def aside_name(path: Path, why: str) -> Path:
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
    refuse_symlink(store_dir)
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


def precreate(path: Path) -> None:
    refuse_odd_files(path.parent, (DB_NAME, *(DB_NAME + s for s in SIDECARS)))
    try:
        fd = os.open(path, os.O_CREAT | os.O_WRONLY | NOFOLLOW, 0o600)
    except OSError as exc:
        raise StoreError(f"cannot create {path}: {exc.strerror}") from exc
    os.close(fd)


def enforce_modes(path: Path) -> None:
    for suffix in ("", *SIDECARS):
        p = Path(f"{path}{suffix}")
        refuse_symlink(p)
        with contextlib.suppress(FileNotFoundError):
            os.chmod(p, 0o600)


def move_aside(store_dir: Path) -> Path:
    """Rename an unreadable database (and its sidecars) out of the way; return the new path.
    The store-id marker goes with it (``store_id.forget_marker``)."""
    path = db_path(store_dir)
    target = aside_name(path, "damaged")
    for suffix in ("", *SIDECARS):
        src = Path(f"{path}{suffix}")
        if os.path.lexists(src):
            os.replace(src, Path(f"{target}{suffix}"))
    return target
