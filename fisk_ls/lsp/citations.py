"""Citation tokens (``relpath#ordinal``) in open documents: documentLink, definition, hover.

A token is resolved in the project of the document that contains it first, then in the other
workspace folders in order. Tokens that match no indexed chunk get no link.

Every feature is linear in the document and bounded: tokens are found in one pass (a
backtracking pattern was quadratic in a line's length: 30 s for one line of 5,000 citations),
positions are converted to the client's units once per line, hover and definition look only
near the position, and documentLink looks up at most ``MAX_LINK_CITATIONS`` distinct
citations within ``LINK_SECONDS``; past a cap it answers with the links found so far and says
so once. A document the client never opened is read only when it is a regular file inside an
open project, without following a link, without blocking, and at most 1 MiB.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from urllib.parse import unquote

from lsprotocol import types
from pygls.workspace import TextDocument
from pygls.workspace.position_codec import PositionCodec

from ..knowledge import CitedChunk, KnowledgeError, parse_citation, read_document
from .convert import (
    chunk_lines,
    file_uri,
    hover_markdown,
    hover_plain,
    location_link,
    uri_path,
)
from .project import WorkspaceProject
from .server import FiskLanguageServer

log = logging.getLogger(__name__)

_SEPARATORS = r"\s`'\"<>()\[\]{}|,;:*"
RUN = re.compile(f"[^{_SEPARATORS}]+")
"""A stretch of characters a citation can be made of; a separator ends it."""
ANCHOR = re.compile(r"\.(?:md|markdown|txt|text)#\d+(?!\w)", re.IGNORECASE)
"""The end of a citation: a document extension, ``#`` and the ordinal."""

MAX_TOKEN_CHARS = 4096
"""Hover and definition look this far either side of the position (no path is longer)."""
MAX_LINK_CITATIONS = 1000
"""Distinct citations one documentLink request looks up in the index."""
MAX_LINKS = 5000
"""Links one documentLink answer carries."""
LINK_SECONDS = 1.5
"""Time one documentLink request spends looking citations up."""


@dataclass(frozen=True)
class Token:
    citation: str
    range: types.Range
    """In the client's position units."""


def register(ls: FiskLanguageServer) -> None:
    ls.thread()(ls.feature(types.TEXT_DOCUMENT_DOCUMENT_LINK)(document_link))
    ls.thread()(ls.feature(types.TEXT_DOCUMENT_DEFINITION)(definition))
    ls.thread()(ls.feature(types.TEXT_DOCUMENT_HOVER)(hover))


def document_link(
    ls: FiskLanguageServer,
    params: types.DocumentLinkParams,
    clock: Callable[[], float] = time.monotonic,
) -> list[types.DocumentLink] | None:
    """Links from the index alone: no target file is read (a document may cite one file many
    times; each distinct citation is looked up once)."""
    doc = document(ls, params.text_document.uri)
    if doc is None:
        return None
    deadline = clock() + LINK_SECONDS
    found: dict[str, tuple[WorkspaceProject, CitedChunk] | None] = {}
    links: list[types.DocumentLink] = []
    cut: str | None = None
    for token in tokens(doc):
        if token.citation not in found:
            if len(found) >= MAX_LINK_CITATIONS:
                cut = f"more than {MAX_LINK_CITATIONS:,} distinct citations"
                break
            if clock() > deadline:
                cut = f"looking citations up took over {LINK_SECONDS:g}s"
                break
            found[token.citation] = _resolve(ls, doc, token.citation, check_file=False)
        if (hit := found[token.citation]) is not None:
            if len(links) >= MAX_LINKS:
                cut = f"more than {MAX_LINKS:,} links"
                break
            links.append(_link(ls, token, *hit))
    if cut is not None:
        last = links[-1].range.end.line + 1 if links else 0
        ls.show_once(
            f"fisk: {doc.filename}: citation links shown up to line {last} only ({cut})",
            types.MessageType.Info,
            key=f"links:{doc.uri}",
        )
    return links or None


def definition(
    ls: FiskLanguageServer, params: types.DefinitionParams
) -> list[types.LocationLink] | list[types.Location] | None:
    doc = document(ls, params.text_document.uri)
    if doc is None or (found := _resolve_at(ls, doc, params.position)) is None:
        return None
    token, project, chunk = found
    link = location_link(project.root / chunk.path, chunk_lines(chunk), token.range)
    if _link_support(ls):
        return [link]
    return [types.Location(uri=link.target_uri, range=link.target_selection_range)]


def hover(ls: FiskLanguageServer, params: types.HoverParams) -> types.Hover | None:
    """The cited chunk's heading path and first lines, then the next chunk's first lines (what
    comes after it in the document, bounded: convert.HOVER_NEXT_LINES)."""
    doc = document(ls, params.text_document.uri)
    if doc is None or (token := _token_at(doc, params.position)) is None:
        return None
    ls.wait_ready()
    try:
        _, chunks = ls.projects.around(token.citation, 1, prefer=uri_path(doc.uri))
    except KnowledgeError:
        return None
    ordinal = parse_citation(token.citation)[1]
    chunk = next(c for c in chunks if c.ordinal == ordinal)
    following = next((c for c in chunks if c.ordinal == ordinal + 1), None)
    if _hover_kind(ls) == types.MarkupKind.PlainText:
        value, kind = hover_plain(chunk, following), types.MarkupKind.PlainText
    else:
        value, kind = hover_markdown(chunk, following), types.MarkupKind.Markdown
    return types.Hover(contents=types.MarkupContent(kind=kind, value=value), range=token.range)


def _hover_kind(ls: FiskLanguageServer) -> types.MarkupKind:
    """The client's first preferred hover format we can write (markdown when it says none)."""
    text = ls.client_capabilities.text_document
    formats = text.hover.content_format if text and text.hover else None
    for kind in formats or [types.MarkupKind.Markdown]:
        if kind in (types.MarkupKind.Markdown, types.MarkupKind.PlainText):
            return kind
    return types.MarkupKind.PlainText


# -- documents ---------------------------------------------------------------------------------


def document(ls: FiskLanguageServer, uri: str) -> TextDocument | None:
    """The open document, else the file when it is a document of an open project: a regular
    file (no FIFO, device or link; opened without blocking), at most 1 MiB. pygls would read
    any path (``/etc/shadow``, a FIFO that blocks the thread forever) whole."""
    opened: TextDocument | None = ls.workspace.text_documents.get(unquote(uri))
    if opened is not None:
        return opened
    path = uri_path(uri)
    if path is None or not any(path.is_relative_to(p.root) for p in ls.projects):
        return None
    read = read_document(path)
    if isinstance(read, str):
        log.info("not reading %s: %s", uri, read)
        return None
    return TextDocument(uri, read[1], position_codec=ls.workspace.position_codec)


# -- tokens ------------------------------------------------------------------------------------


def iter_tokens(line: str, start: int = 0, end: int | None = None) -> Iterator[tuple[int, int]]:
    """(start, end) of each token in ``line[start:end]``, in code points, in one pass.

    The same tokens as the pattern ``(?<![^SEP_])(?!/)([^SEP]+?\\.(md|…)#\\d+)(?!\\w)``
    (a test compares them): a token starts where a run of non-separators starts, or after an
    ``_`` inside one, never at a ``/``, and ends at the first citation end after its start."""
    for run in RUN.finditer(line, start, len(line) if end is None else end):
        first, last = run.span()
        at = first  # no token starts before this
        for anchor in ANCHOR.finditer(line, first, last):
            begin = _token_start(line, first, at, anchor.start())
            if begin is None:
                at = max(at, anchor.start())
            else:
                yield begin, anchor.end()
                at = anchor.end()


def _token_start(line: str, run_start: int, at: int, anchor: int) -> int | None:
    """The first place in ``[at, anchor)`` a token may start, if any."""
    if at == run_start and at < anchor and line[at] != "/":
        return at
    underscore = line.find("_", max(at - 1, run_start), anchor - 1)
    while underscore != -1:
        if line[underscore + 1] != "/":
            return underscore + 1
        underscore = line.find("_", underscore + 1, anchor - 1)
    return None


def find_tokens(line: str) -> list[tuple[int, int, str]]:
    """(start, end, citation) of each token in one line, in code points."""
    return [(s, e, line[s:e]) for s, e in iter_tokens(line)]


def tokens(doc: TextDocument) -> Iterator[Token]:
    """Every token of the document, in order (a generator: a capped caller stops early)."""
    codec = doc.position_codec
    for number, line in enumerate(doc.lines):
        if "#" not in line:
            continue
        units = _Units(codec, line)
        for start, end in iter_tokens(line):
            yield Token(line[start:end], _range(number, units(start), units(end)))


class _Units:
    """Code point offsets of one line → the client's units, for increasing offsets: each
    character is counted once (pygls counts from the line's start for every position)."""

    def __init__(self, codec: PositionCodec, line: str) -> None:
        self.codec = codec
        self.line = line
        self.offset = 0
        self.units = 0

    def __call__(self, offset: int) -> int:
        if offset < self.offset:
            self.offset = self.units = 0
        self.units += self.codec.client_num_units(self.line[self.offset : offset])
        self.offset = offset
        return self.units


def _range(line: int, start: int, end: int) -> types.Range:
    return types.Range(
        start=types.Position(line=line, character=start),
        end=types.Position(line=line, character=end),
    )


def _token_at(doc: TextDocument, position: types.Position) -> Token | None:
    lines = doc.lines
    if position.line >= len(lines):
        return None
    line = lines[position.line]
    codec = doc.position_codec
    column = codec.position_from_client_units(lines, position).character
    window = max(column - MAX_TOKEN_CHARS, 0)
    if window:  # start at a separator, so no token starts mid-word
        stop = RUN.match(line, window)
        window = stop.end() if stop else window
    for start, end in iter_tokens(line, window, column + MAX_TOKEN_CHARS):
        if start > column:
            break
        if column <= end:
            units = _Units(codec, line)
            return Token(line[start:end], _range(position.line, units(start), units(end)))
    return None


def _resolve(
    ls: FiskLanguageServer, doc: TextDocument, citation: str, *, check_file: bool = True
) -> tuple[WorkspaceProject, CitedChunk] | None:
    ls.wait_ready()
    try:
        return ls.projects.show(citation, prefer=uri_path(doc.uri), check_file=check_file)
    except KnowledgeError:
        return None


def _resolve_at(
    ls: FiskLanguageServer, doc: TextDocument, position: types.Position
) -> tuple[Token, WorkspaceProject, CitedChunk] | None:
    token = _token_at(doc, position)
    if token is None or (found := _resolve(ls, doc, token.citation)) is None:
        return None
    return token, *found


def _link(
    ls: FiskLanguageServer, token: Token, project: WorkspaceProject, chunk: CitedChunk
) -> types.DocumentLink:
    start = chunk_lines(chunk)[0]
    target = f"{file_uri(project.root / chunk.path)}#L{start}"
    tooltip = (chunk.section or chunk.citation) if _tooltip_support(ls) else None
    return types.DocumentLink(range=token.range, target=target, tooltip=tooltip)


def _tooltip_support(ls: FiskLanguageServer) -> bool:
    text = ls.client_capabilities.text_document
    return bool(text and text.document_link and text.document_link.tooltip_support)


def _link_support(ls: FiskLanguageServer) -> bool:
    text = ls.client_capabilities.text_document
    return bool(text and text.definition and text.definition.link_support)
