"""Core results → LSP shapes: URIs, ranges, LocationLinks, hover text.

Core lines are 1-based and inclusive; LSP ranges are 0-based with an exclusive end, so a chunk
covering lines 3–5 is ``(2,0)–(5,0)``: the end is the start of the line after the chunk. A search
hit's selection starts at its first matched word, the column counted in the position encoding
negotiated at ``initialize`` (UTF-16 unless the client offers UTF-8 or UTF-32).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsprotocol import types
from lsprotocol.converters import get_converter
from pygls.uris import from_fs_path, to_fs_path

from ..knowledge import CitedChunk, Hit, Spot

_converter = get_converter()

Units = Callable[[str], int]
"""The length of a text in the client's position encoding."""


def units(encoding: str | None) -> Units:
    """How ``encoding`` (a ``PositionEncodingKind``; None: UTF-16, the protocol's default)
    counts a text."""
    if encoding == types.PositionEncodingKind.Utf8:
        return lambda text: len(text.encode("utf-8"))
    if encoding == types.PositionEncodingKind.Utf32:
        return len
    return lambda text: len(text.encode("utf-16-le")) // 2


def file_uri(path: Path) -> str:
    return from_fs_path(str(path)) or path.as_uri()


def uri_path(uri: str) -> Path | None:
    """The local path of a ``file:`` URI (None for other schemes); its folder resolved."""
    if not uri.startswith("file:"):
        return None
    path = to_fs_path(uri)
    if not path:
        return None
    p = Path(os.path.abspath(path))
    return Path(os.path.realpath(p.parent)) / p.name  # the folder as the roots spell it


def chunk_range(start_line: int, end_line: int) -> types.Range:
    return types.Range(
        start=types.Position(line=max(start_line - 1, 0), character=0),
        end=types.Position(line=max(end_line, start_line), character=0),
    )


def first_line_range(start_line: int) -> types.Range:
    """The chunk's first line (its heading, for the first chunk of a section)."""
    return chunk_range(start_line, start_line)


def selection_range(
    lines: tuple[int, int], word: Spot | None, count: Units, shift: int = 0
) -> types.Range:
    """``lines`` (1-based, inclusive), starting at ``word`` when it is on them: a matched word
    (its line moved by ``shift``), its column the text before it counted by ``count``."""
    rng = chunk_range(*lines)
    if word is not None and lines[0] <= word.line + shift <= lines[1]:
        rng.start = types.Position(line=word.line + shift - 1, character=count(word.before))
    return rng


def location_link(
    file: Path,
    lines: tuple[int, int],
    origin: types.Range | None = None,
    selection: types.Range | None = None,
) -> types.LocationLink:
    """``lines``: the chunk; ``selection``: the range to select (default its first line)."""
    start, end = lines
    return types.LocationLink(
        target_uri=file_uri(file),
        target_range=chunk_range(start, end),
        target_selection_range=selection or first_line_range(start),
        origin_selection_range=origin,
    )


def hit_lines(hit: Hit | CitedChunk) -> tuple[int, int]:
    return hit.start_line, hit.end_line


def chunk_lines(chunk: CitedChunk) -> tuple[int, int]:
    """Where the chunk is now: its indexed lines, or where its text moved when stale."""
    return chunk.current_lines or hit_lines(chunk)


def unstructure(value: Any) -> Any:
    return _converter.unstructure(value)


HOVER_LINES = 12
"""A hover shows the cited chunk's first this many lines."""

HOVER_NEXT_LINES = 3
"""... and the next chunk's first this many (each cut at ``HOVER_NEXT_CHARS``)."""

HOVER_NEXT_CHARS = 160


def _first_lines(text: str, most: int, width: int | None = None) -> str:
    lines = text.strip("\n").splitlines()
    shown = [ln if width is None or len(ln) <= width else ln[:width] + "…" for ln in lines[:most]]
    return "\n".join(shown) + ("\n\n…" if len(lines) > most else "")


_IMAGE = re.compile(r"!\[([^\]\n]*)\]\(\s*<?([^)\s>]*)>?(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
_URL_SCHEME = re.compile(r"^(https?|data):", re.IGNORECASE)


def without_relative_images(text: str) -> str:
    """Markdown images whose target is not an http(s) or data URL (a path relative to the cited
    file, or an absolute one) as ``*[image: alt]*``: a hover is shown away from the file, where
    such a link is a broken image."""

    def shown(match: re.Match[str]) -> str:
        if _URL_SCHEME.match(match.group(2)):
            return match.group(0)
        alt = match.group(1).strip()
        return f"*[image: {alt}]*" if alt else "*[image]*"

    return _IMAGE.sub(shown, text)


def hover_markdown(chunk: CitedChunk, following: CitedChunk | None = None) -> str:
    """Heading path and the chunk's first lines, as markdown; then, when ``following`` (the
    document's next chunk) is given, its heading path and first few lines. Relative images are
    left out (``without_relative_images``)."""
    body = without_relative_images(_first_lines(chunk.text, HOVER_LINES))
    title = f"**{chunk.section}**" if chunk.section else f"`{chunk.citation}`"
    stale = "  \n*(file changed since it was indexed)*" if chunk.stale else ""
    text = f"{title}  \n`{chunk.citation}`{stale}\n\n---\n\n{body}"
    if following is not None:
        name = f"**{following.section}**  \n" if following.section else ""
        lines = without_relative_images(
            _first_lines(following.text, HOVER_NEXT_LINES, HOVER_NEXT_CHARS)
        )
        text += f"\n\n---\n\n*Next:* {name}`{following.citation}`\n\n{lines}"
    return text


def hover_plain(chunk: CitedChunk, following: CitedChunk | None = None) -> str:
    """The same as ``hover_markdown`` for plaintext-only clients: no markup characters."""
    body = _first_lines(chunk.text, HOVER_LINES)
    title = chunk.section or chunk.citation
    stale = "\n(file changed since it was indexed)" if chunk.stale else ""
    text = f"{title}\n{chunk.citation}{stale}\n\n{body}"
    if following is not None:
        name = f"{following.section} " if following.section else ""
        lines = _first_lines(following.text, HOVER_NEXT_LINES, HOVER_NEXT_CHARS)
        text += f"\n\nNext: {name}({following.citation})\n{lines}"
    return text
