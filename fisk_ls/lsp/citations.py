"""Citation tokens (``relpath#ordinal``) in open documents: documentLink, definition, hover.

A token is resolved in the project of the document that contains it first, then in the other
workspace folders in order. Tokens that match no indexed chunk get no link.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lsprotocol import types
from pygls.workspace import TextDocument

from ..knowledge import CitedChunk, KnowledgeError, parse_citation
from .convert import (
    chunk_lines,
    file_uri,
    hover_markdown,
    hover_plain,
    location_link,
    uri_path,
)
from .project import Project
from .server import FiskLanguageServer

TOKEN = re.compile(
    r"(?<![^\s`'\"<>()\[\]{}|,;:*_])(?!/)"
    r"([^\s`'\"<>()\[\]{}|,;:*]+?\.(?:md|markdown|txt|text)#\d+)(?![\w])",
    re.IGNORECASE,
)


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
    ls: FiskLanguageServer, params: types.DocumentLinkParams
) -> list[types.DocumentLink] | None:
    """Links from the index alone: no target file is read (a document may cite one file many
    times; each distinct citation is looked up once)."""
    doc = ls.workspace.get_text_document(params.text_document.uri)
    found: dict[str, tuple[Project, CitedChunk] | None] = {}
    links: list[types.DocumentLink] = []
    for token in tokens(doc):
        if token.citation not in found:
            found[token.citation] = _resolve(ls, doc, token.citation, check_file=False)
        if (hit := found[token.citation]) is not None:
            links.append(_link(ls, token, *hit))
    return links or None


def definition(
    ls: FiskLanguageServer, params: types.DefinitionParams
) -> list[types.LocationLink] | list[types.Location] | None:
    doc = ls.workspace.get_text_document(params.text_document.uri)
    if (found := _resolve_at(ls, doc, params.position)) is None:
        return None
    token, project, chunk = found
    link = location_link(project.root / chunk.path, chunk_lines(chunk), token.range)
    if _link_support(ls):
        return [link]
    return [types.Location(uri=link.target_uri, range=link.target_selection_range)]


def hover(ls: FiskLanguageServer, params: types.HoverParams) -> types.Hover | None:
    """The cited chunk's heading path and first lines, then the next chunk's first lines (what
    comes after it in the document, bounded: convert.HOVER_NEXT_LINES)."""
    doc = ls.workspace.get_text_document(params.text_document.uri)
    token = _token_at(doc, params.position)
    if token is None:
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


# -- tokens ------------------------------------------------------------------------------------


def find_tokens(line: str) -> list[tuple[int, int, str]]:
    """(start, end, citation) of each token in one line, in code points."""
    return [(m.start(1), m.end(1), m.group(1)) for m in TOKEN.finditer(line)]


def tokens(doc: TextDocument, only_line: int | None = None) -> list[Token]:
    lines = doc.lines
    found: list[Token] = []
    numbers = range(len(lines)) if only_line is None else [only_line]
    for number in numbers:
        if number >= len(lines) or "#" not in lines[number]:
            continue
        for start, end, citation in find_tokens(lines[number]):
            server = types.Range(
                start=types.Position(line=number, character=start),
                end=types.Position(line=number, character=end),
            )
            found.append(Token(citation, doc.position_codec.range_to_client_units(lines, server)))
    return found


def _token_at(doc: TextDocument, position: types.Position) -> Token | None:
    for token in tokens(doc, position.line):
        if token.range.start.character <= position.character <= token.range.end.character:
            return token
    return None


def _resolve(
    ls: FiskLanguageServer, doc: TextDocument, citation: str, *, check_file: bool = True
) -> tuple[Project, CitedChunk] | None:
    ls.wait_ready()
    try:
        return ls.projects.show(citation, prefer=uri_path(doc.uri), check_file=check_file)
    except KnowledgeError:
        return None


def _resolve_at(
    ls: FiskLanguageServer, doc: TextDocument, position: types.Position
) -> tuple[Token, Project, CitedChunk] | None:
    token = _token_at(doc, position)
    if token is None or (found := _resolve(ls, doc, token.citation)) is None:
        return None
    return token, *found


def _link(
    ls: FiskLanguageServer, token: Token, project: Project, chunk: CitedChunk
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
