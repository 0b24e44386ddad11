"""Bounded JSON-RPC framing on stdio: pygls 2.1 trusts the ``Content-Length`` header.

A header of ``Content-Length: 99999999999`` made it allocate the whole body (``MemoryError``, the
server died); a non-numeric, negative or lower-case header never matched its pattern, so the
body was read as more header lines and the server went silent forever. ``FrameGuard`` sits
between stdin and pygls' reader: header lines are bounded, a valid length is passed on in the
canonical spelling, and anything else — a length over ``MAX_FRAME_BYTES``, not a number, a
header line without an end — is logged as one clear error and ends the input, so the server
shuts down cleanly instead of dying or hanging (the stream cannot be resynchronised).
"""

from __future__ import annotations

import logging
import re
from typing import BinaryIO

MAX_FRAME_BYTES = 16 * 1024 * 1024
"""The largest message body accepted (a 5 MB query still fits; the query itself is refused)."""

MAX_HEADER_LINE = 8192

_LENGTH = re.compile(rb"^content-length\s*:\s*(.*?)\s*$", re.IGNORECASE)
log = logging.getLogger(__name__)


class FrameError(Exception):
    """A frame header that cannot be honoured."""


def check_header(line: bytes) -> bytes:
    """A header line as pygls should see it; ``FrameError`` for a bad length."""
    if len(line) > MAX_HEADER_LINE or (line and not line.endswith(b"\n")):
        raise FrameError(f"a header line longer than {MAX_HEADER_LINE} bytes")
    match = _LENGTH.match(line.rstrip(b"\r\n"))
    if match is None:
        return line
    raw = match.group(1)
    if not raw.isdigit():
        shown = raw[:40].decode("ascii", "replace")
        raise FrameError(f"Content-Length {shown!r} is not a non-negative whole number")
    length = int(raw)
    if length > MAX_FRAME_BYTES:
        raise FrameError(f"Content-Length {length} is over the {MAX_FRAME_BYTES}-byte limit")
    return b"Content-Length: %d\r\n" % length


class FrameGuard:
    """A stdin wrapper with pygls' reader interface (``readline``, ``read``)."""

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream
        self.closed_reason: str | None = None

    def readline(self) -> bytes:
        if self.closed_reason is not None:
            return b""
        line = self.stream.readline(MAX_HEADER_LINE + 1)
        try:
            return check_header(line)
        except FrameError as exc:
            self.closed_reason = str(exc)
            log.error("fisk-ls: refusing a message frame: %s; closing the connection", exc)
            return b""

    def read(self, n: int) -> bytes:
        if self.closed_reason is not None:
            return b""
        return self.stream.read(min(n, MAX_FRAME_BYTES))
