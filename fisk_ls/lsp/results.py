"""The result objects of the four commands (shapes in docs/lsp-protocol.md)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..knowledge import (
    SNIPPET_CHARS,
    CitedChunk,
    Hit,
    IndexStats,
    KnowledgeError,
    Location,
    one_line,
    parse_citation,
    search_notice,
)
from .convert import (
    Units,
    chunk_lines,
    hit_lines,
    location_link,
    selection_range,
    unstructure,
)
from .project import Merged, Projects, WorkspaceProject

STAT_KEYS = ("files", "added", "updated", "skipped", "removed", "chunks")


def hit_result(hit: Hit, root: Path, count: Units) -> dict[str, Any]:
    """A hit lands on the part that matched: its heading path, a snippet around the matched
    words (``highlights``: [start, end) code-point ranges in it) and, as the link's selection,
    its lines from the first matched word on (``count``: the client's position encoding)."""
    match = hit.match
    selection = selection_range(match.lines, match.first_word, count) if match else None
    link = location_link(root / hit.path, hit_lines(hit), selection=selection)
    return {
        "citation": hit.citation,
        "section": match.section if match else hit.section,
        "snippet": match.snippet if match else one_line(hit.text, SNIPPET_CHARS),
        "highlights": [list(r) for r in match.highlights] if match else [],
        "score": round(hit.score, 4),
        "foundBy": list(hit.found_by),
        "location": unstructure(link),
        "copies": [copy_result(where, hit, root, count) for where in hit.copies],
    }


def copy_result(where: Location, hit: Hit, root: Path, count: Units) -> dict[str, Any]:
    """Another location of a collapsed hit's text: its citation and a LocationLink to its
    chunk. A near-identical copy selects the lines at the same offset as the hit's matched lines
    (the copies' text is the same), kept inside that chunk, from the same column on; a chunk
    around the same matched paragraph (``where.match``) selects that paragraph's lines in it."""
    lines = (where.start_line, where.end_line)
    selection = None
    if where.match is not None:
        selection = selection_range(where.match.lines, where.match.first_word, count)
    elif match := hit.match:
        shift = where.start_line - hit.start_line
        moved = copy_lines(match.lines, hit_lines(hit), lines)
        selection = selection_range(moved, match.first_word, count, shift)
    return {
        "citation": where.citation,
        "location": unstructure(location_link(root / where.path, lines, selection=selection)),
    }


def copy_lines(
    matched: tuple[int, int], chunk: tuple[int, int], copy: tuple[int, int]
) -> tuple[int, int]:
    """``matched`` (lines inside ``chunk``) moved to the same offset inside ``copy``, clamped to
    the copy's lines (all 1-based, inclusive)."""
    shift = copy[0] - chunk[0]
    start = min(max(matched[0] + shift, copy[0]), copy[1])
    end = min(max(matched[1] + shift, start), copy[1])
    return start, end


def show_result(chunk: CitedChunk, root: Path) -> dict[str, Any]:
    return {
        "citation": chunk.citation,
        "section": chunk.section,
        "content": chunk.content,
        "location": unstructure(location_link(root / chunk.path, chunk_lines(chunk))),
        "stale": chunk.stale,
    }


def around_result(chunks: list[CitedChunk], citation: str, root: Path) -> dict[str, Any]:
    """The cited chunk as :func:`show_result` gives it, with its neighbours (the same objects)
    in ``before`` and ``after``, in document order (as the CLI's ``show --context --json``)."""
    ordinal = parse_citation(citation)[1]
    (cited,) = [c for c in chunks if c.ordinal == ordinal]
    return {
        **show_result(cited, root),
        "before": [show_result(c, root) for c in chunks if c.ordinal < ordinal],
        "after": [show_result(c, root) for c in chunks if c.ordinal > ordinal],
    }


def search_result(merged: Merged, count: Units) -> dict[str, Any]:
    """``count``: text length in the client's position encoding (``convert.units``)."""
    run = merged.indexing
    return {
        "tier": merged.tier,
        "status": merged.status,
        "note": search_notice(merged.as_result()),
        "indexing": run.as_dict() if run is not None else None,
        "degraded": merged.degraded,
        "reason": merged.reason,
        "results": [hit_result(f.hit, f.project.root, count) for f in merged.found],
        "expansion": merged.expansion.describe() if merged.expansion else "off",
        "expansionStrings": list(merged.expansion.strings) if merged.expansion else [],
    }


def stats_result(runs: Iterable[IndexStats]) -> dict[str, int]:
    total = dict.fromkeys(STAT_KEYS, 0)
    for stats in runs:
        values = stats.as_dict()
        for key in STAT_KEYS:
            total[key] += int(values[key])  # type: ignore[call-overload]
    return total


def status_result(projects: Projects, opening: bool = False) -> dict[str, Any]:
    """``opening``: the workspace folders are still being opened (their first runs are about
    to be scheduled), so the server is indexing even before any root is listed."""
    roots = [root_status(project) for project in projects]
    tiers = [project.reader.tier() for project in projects]
    return {
        "tier": "; ".join(dict.fromkeys(tiers)) or "no workspace folder is open",
        "roots": roots,
        "indexing": opening or any(r["indexing"] for r in roots),
    }


def root_status(project: WorkspaceProject) -> dict[str, Any]:
    """``run``: the full index run going on (scheduled or running, here or in another process),
    {files, total} (total null until its walk is counted), else null."""
    run = project.indexing()
    entry: dict[str, Any] = {
        "root": str(project.root),
        "indexing": project.busy or run is not None,
        "run": run.as_dict() if run is not None else None,
        "embedding": project.embedding,
    }
    try:
        stats = project.read(lambda kn: kn.stats())
        cov = project.read(lambda kn: kn.coverage())
    except KnowledgeError as exc:
        store = str(project.settings.store_dir)
        return {
            **entry,
            "store": store,
            "documents": 0,
            "chunks": 0,
            "vectors": None,
            "built": False,
            "error": str(exc),
        }
    return {
        **entry,
        "store": stats.store,
        "documents": stats.documents,
        "chunks": stats.chunks,
        "vectors": cov.as_dict() if cov is not None else None,
        "built": stats.built,
        "error": None,
    }
