"""``workspace/symbol`` as a knowledge search over headings and content.

Registered at ``initialize`` only when ``workspaceSymbols`` is on (the VS Code client turns it
off: VS Code already fills that box with markdown headings); a folder's configuration can still
turn it off later, and then the handler answers nothing.
"""

from __future__ import annotations

from lsprotocol import types

from ..knowledge import QUERY, KnowledgeError, SearchRequest
from .convert import Units, file_uri, first_line_range, selection_range, units
from .project import Found
from .server import FiskLanguageServer


def enable(ls: FiskLanguageServer) -> None:
    ls.thread()(ls.feature(types.WORKSPACE_SYMBOL)(workspace_symbol))


def workspace_symbol(
    ls: FiskLanguageServer, params: types.WorkspaceSymbolParams
) -> list[types.SymbolInformation] | None:
    ls.wait_ready()
    if len(params.query) > (QUERY.max_length or 0):  # the length rule every front end shares
        return None
    if not params.query.strip() or not any(p.options.workspace_symbols for p in ls.projects):
        return None
    try:
        merged = ls.projects.search(SearchRequest(params.query))
    except KnowledgeError:
        return None
    count = units(ls.workspace.position_encoding)
    return [symbol(found, count) for found in merged.found] or None


def symbol(found: Found, count: Units) -> types.SymbolInformation:
    """A hit as a symbol whose location is where the search's LocationLink selects: the part
    that matched, from its first matched word on."""
    hit = found.hit
    name = hit.section.rsplit(" > ", 1)[-1] if hit.section else hit.citation
    match = hit.match
    location = types.Location(
        uri=file_uri(found.project.root / hit.path),
        range=(
            selection_range(match.lines, match.first_word, count)
            if match
            else first_line_range(hit.start_line)
        ),
    )
    return types.SymbolInformation(
        name=name, kind=types.SymbolKind.String, location=location, container_name=hit.citation
    )
