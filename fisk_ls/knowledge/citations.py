"""Citation tokens ``relpath#ordinal``: format, parse, resolve.

The path is relative to the project root with ``/`` separators; the last ``#`` splits, so paths
may themselves contain ``#``. Resolving only ever looks a citation up among indexed documents, so
no token can reach a file outside them.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import NamedTuple

from .display import display_text
from .errors import CitationError
from .settings_checks import shown

EXAMPLE = "docs/guide.md#3"


def format_citation(path: str, ordinal: int) -> str:
    return f"{path}#{ordinal}"


def parse_citation(token: str) -> tuple[str, int]:
    """(path key, ordinal) of a citation; CitationError when malformed or escaping the root."""
    token = token.strip()
    path, sep, ordinal = token.rpartition("#")
    if not sep or not path or not ordinal.isdigit() or not ordinal.isascii() or len(ordinal) > 9:
        raise CitationError(
            f"malformed citation {shown(token)}: expected relpath#ordinal, e.g. {EXAMPLE}"
        )
    if "\x00" in path or "\n" in path:
        raise CitationError("malformed citation: control characters in the path")
    posix = path.replace("\\", "/")
    while posix.startswith("./"):
        posix = posix[2:]
    pure = PurePosixPath(posix)
    if (
        pure.is_absolute()
        or posix.startswith("/")
        or ".." in pure.parts
        or (len(posix) > 1 and posix[1] == ":")
    ):
        raise CitationError(
            f"citation {shown(token)} points outside the project's indexed documents; "
            "citations are relative to the project root"
        )
    return pure.as_posix(), int(ordinal)


class CitedChunk(NamedTuple):
    """A chunk a citation points at, and whether its file changed since it was indexed."""

    citation: str
    path: str
    ordinal: int
    section: str
    text: str
    start_line: int
    end_line: int
    stale: bool = False
    moved_to: tuple[int, int] | None = None
    """When stale: the lines (1-based, inclusive) where the same text is now, if found."""

    @property
    def content(self) -> str:
        return display_text(self.section, self.text)

    @property
    def current_lines(self) -> tuple[int, int] | None:
        """Where to open the file now: the indexed lines, or where the text moved, or None."""
        if not self.stale:
            return self.start_line, self.end_line
        return self.moved_to


def check_freshness(chunk: CitedChunk, file_path: Path, indexed_hash: str) -> CitedChunk:
    """Mark ``chunk`` stale when its file changed, and find where its text is now."""
    return check_freshness_all([chunk], file_path, indexed_hash)[0]


def check_freshness_all(
    chunks: list[CitedChunk], file_path: Path, indexed_hash: str
) -> list[CitedChunk]:
    """:func:`check_freshness` for chunks of one file (a chunk and its neighbours), reading it
    once."""
    try:
        raw = file_path.read_bytes()
    except OSError:
        return [c._replace(stale=True, moved_to=None) for c in chunks]
    import hashlib  # here: hashlib loads OpenSSL, which a search never needs (digests.py)

    if hashlib.sha256(raw).hexdigest() == indexed_hash:
        return chunks
    text = raw.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
    return [c._replace(stale=True, moved_to=locate(text, c.text)) for c in chunks]


def locate(text: str, body: str) -> tuple[int, int] | None:
    """Lines (1-based, inclusive) of ``body`` inside ``text``, or None when it is gone."""
    body = body.strip("\n")
    if not body:
        return None
    at = text.find(body)
    if at < 0:
        first = body.split("\n", 1)[0].strip()
        if len(first) < 12:
            return None
        at = text.find(first)
        if at < 0:
            return None
        start = text.count("\n", 0, at) + 1
        return start, start
    start = text.count("\n", 0, at) + 1
    return start, start + body.count("\n")
