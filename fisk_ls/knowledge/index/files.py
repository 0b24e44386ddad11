"""Reading one document safely: whatever the file became since the walk saw it.

A file may be replaced by a FIFO, socket, device, folder or symlink, or grow, between the walk
and the read: it is opened without following symlinks and without blocking, must still be the
regular file the walk saw, and is read at most ``MAX_FILE_BYTES + 1`` bytes, so no change under
the walk can hang an index run (which holds the writer lock) or make it read without bound.
"""

from __future__ import annotations

import codecs
import errno
import os
import stat
from pathlib import Path

from ..regular import kind_of, read_bounded
from .walk import Candidate

MAX_FILE_BYTES = 1024 * 1024
"""Larger files are skipped with a note (documentation pages are far smaller)."""


CHANGED_NOTE = "it changed while being indexed; the next run picks it up"
"""The end of the note for a file replaced or growing between the walk and the read (its
indexed version, if any, stays until then)."""

_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)  # a FIFO swapped in after the walk must not block the open
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)


def read_document(
    path: Path | str, limit: int = MAX_FILE_BYTES, expected: Candidate | None = None
) -> tuple[bytes, str] | str:
    """(raw bytes, text) of a document, or a note saying why it is skipped.

    The file may have changed since the walk saw it (``expected``): it is opened without
    following symlinks and without blocking, must still be a regular file (a FIFO, socket,
    device or folder swapped in is skipped), the same file and size as walked (a file replaced
    or growing is skipped now and picked up by the next run), and is read at most ``limit + 1``
    bytes, so no change under the walk can hang a run or make it read without bound."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return f"skipping {path}: it is a symlink now (symlinks are not followed)"
        if exc.errno == errno.ENXIO:  # opening a socket
            return f"skipping {path}: it is a socket now, not a regular file"
        return f"skipping {path}: {exc.strerror or exc}"
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return f"skipping {path}: it is {kind_of(st.st_mode)} now, not a regular file"
        if st.st_size > limit:
            return f"skipping {path}: larger than {limit // 1024} KiB"
        if expected is not None and (st.st_ino != expected.inode or st.st_size != expected.size):
            return f"skipping {path}: {CHANGED_NOTE}"
        raw = read_bounded(fd, limit)
    except OSError as exc:
        return f"skipping {path}: {exc.strerror or exc}"
    finally:
        os.close(fd)
    if len(raw) > limit:
        return f"skipping {path}: larger than {limit // 1024} KiB"
    if expected is not None and len(raw) != expected.size:
        return f"skipping {path}: {CHANGED_NOTE}"
    return decode_document(path, raw)


def decode_document(path: Path | str, raw: bytes) -> tuple[bytes, str] | str:
    """(raw, text) for UTF-8 text (the chunker drops a BOM), else a note naming what it is."""
    for bom, name in _UTF16_32_BOMS:
        if raw.startswith(bom):
            return f"skipping {path}: {name} text (only UTF-8 is indexed; convert it to UTF-8)"
    if b"\x00" in raw:
        return f"skipping {path}: binary file (contains NUL bytes)"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return f"skipping {path}: not valid UTF-8"
    return raw, text


# Longest first: the UTF-32 LE BOM starts with the UTF-16 LE one.
_UTF16_32_BOMS = (
    (codecs.BOM_UTF32_LE, "UTF-32 LE"),
    (codecs.BOM_UTF32_BE, "UTF-32 BE"),
    (codecs.BOM_UTF16_LE, "UTF-16 LE"),
    (codecs.BOM_UTF16_BE, "UTF-16 BE"),
)
