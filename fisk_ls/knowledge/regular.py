"""Opening a file the product expects to be a regular file, whatever is really there.

A FIFO, socket or device where a file is expected (a marker, a lock file, an ignore file,
agent.yaml, a model file), or a symlink to one (``/dev/stdin``, ``/proc/self/fd/0``), must never
block a command: the file is opened with ``O_NONBLOCK`` (a FIFO opens at once), checked with
``fstat`` on the open descriptor (no race between a check and the open), and refused unless it
is a regular file. ``follow=False`` adds ``O_NOFOLLOW`` where a symlink has no business.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class NotRegular(OSError):
    """The path is not a regular file (a FIFO, socket, device, folder, or a symlink where none
    is allowed); ``strerror`` says what it is."""


def kind_of(mode: int) -> str:
    """What a file of this mode is, for messages ("a FIFO", "a device", ...)."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISLNK(mode):
        return "a symlink"
    return "not a regular file"


def open_regular(path: Path | str, *, follow: bool = True, flags: int = 0) -> int:
    """A descriptor on ``path``, which must be a regular file (``NotRegular`` otherwise, or the
    ``OSError`` of the open). ``flags`` are added (``O_RDWR | O_CREAT`` for a lock file). The
    descriptor is left non-blocking, which changes nothing for a regular file."""
    how = _FLAGS | flags | (0 if follow else _NOFOLLOW)
    try:
        fd = os.open(path, how, 0o600)
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow:
            raise NotRegular(errno.ELOOP, "it is a symlink (not followed)", str(path)) from None
        if exc.errno == errno.ENXIO:  # a socket
            raise NotRegular(errno.ENXIO, "it is a socket, not a regular file", str(path)) from None
        raise
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        os.close(fd)
        raise
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise NotRegular(
            errno.EINVAL, f"it is {kind_of(mode)}, not a regular file", str(path)
        ) from None
    return fd


def read_regular(path: Path | str, limit: int, *, follow: bool = True) -> bytes:
    """At most ``limit + 1`` bytes of the regular file ``path`` (one more than allowed tells
    "too large" apart); ``NotRegular`` or ``OSError`` when it cannot be read as one."""
    fd = open_regular(path, follow=follow)
    try:
        return read_bounded(fd, limit)
    finally:
        os.close(fd)


def read_bounded(fd: int, limit: int) -> bytes:
    """At most ``limit + 1`` bytes of the open file ``fd`` (one more than allowed tells "too
    large" apart)."""
    parts: list[bytes] = []
    left = limit + 1
    while left > 0:
        part = os.read(fd, min(left, 1 << 16))
        if not part:
            break
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


def describe(exc: OSError) -> str:
    """The reason of an ``OSError`` from this module, in a few words."""
    return exc.strerror or str(exc)
