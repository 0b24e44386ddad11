"""Turning core results into terminal text and JSON objects for the CLI.

All corpus text passes through ``strip_controls`` before it is printed. Progress goes to stderr
(a rich progress bar on a terminal, plain notes otherwise); results go to stdout.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..knowledge import SNIPPET_CHARS, one_line, parse_citation, strip_controls

if TYPE_CHECKING:
    from ..knowledge import (
        Check,
        CitedChunk,
        Expansion,
        Hit,
        IndexStats,
        SearchResult,
        Settings,
        Source,
        StoreStats,
    )


def tier(settings: Settings, dimension: int | None = None) -> str:
    """The tier line: from the core (it reads the index's manifest) unless ``dimension`` is
    already known."""
    from ..knowledge import tier_line, tier_of

    if settings.embeddings is None or dimension is None:
        return tier_of(settings)
    return tier_line(settings.embeddings.model, dimension)


def tier_text(line: str) -> str:
    """A tier line for stderr (the answer on stdout never starts with it)."""
    return strip_controls(line)


def where_lines(settings: Settings) -> list[str]:
    """Which project and store a command read, and why (stats, doctor)."""
    lines = [f"Root:      {settings.project_root}"]
    if settings.root_reason:
        lines.append(f"           ({settings.root_reason})")
    if settings.config_path is not None:
        lines.append(f"Config:    {settings.config_path}")
    lines.append(f"Store:     {settings.store_dir}")
    if settings.store_reason:
        lines.append(f"           ({settings.store_reason})")
    return lines


def where_json(settings: Settings) -> dict[str, Any]:
    return {
        "root": str(settings.project_root),
        "root_reason": settings.root_reason,
        "config": str(settings.config_path) if settings.config_path else None,
        "store": str(settings.store_dir),
        "store_reason": settings.store_reason,
    }


def first_hybrid_build(settings: Settings) -> str:
    cfg = settings.embeddings
    assert cfg is not None
    where = (
        f"the built-in model {cfg.model} in this process"
        if cfg.builtin
        else f"{cfg.model} at {cfg.base_url}"
    )
    return (
        f"adding vectors: every chunk without one will be embedded by {where}; files are "
        "searchable lexically as soon as they are written (run with --dry-run to see how many "
        "chunks that is)"
    )


def download_progress() -> Callable[[str, int, int], None]:
    """Progress of a built-in model's one-time download, as lines on stderr (every 10%)."""
    shown: dict[str, int] = {}

    def report(name: str, done: int, total: int) -> None:
        step = done * 10 // total if total else 10
        if shown.get(name, -1) < step:
            shown[name] = step
            print(
                f"downloading {name}: {done / 1e6:.1f} of {total / 1e6:.1f} MB",
                file=sys.stderr,
                flush=True,
            )

    return report


def index_summary(stats: IndexStats) -> str:
    verb = "would index" if stats.dry_run else "indexed"
    tail = ""
    if stats.backlog:
        tail += f", {stats.backlog} chunks waiting for vectors"
    if stats.embeddings:
        requests = -(-stats.embeddings // 64)
        tail = f", {stats.embeddings} embeddings"
        if stats.dry_run:
            tail += f" in about {requests} request{'s' if requests != 1 else ''}"
    adopted = ""
    if stats.adopted is not None:
        a = stats.adopted
        adopted = (
            f"adopted from the pack: {a['documents']} documents, {a['vectors']} vectors "
            f"({a['current']} already current, {a['differ']} differ from the pack)\n"
        )
    return adopted + (
        f"{verb}: added={stats.added} updated={stats.updated} skipped={stats.skipped} "
        f"removed={stats.removed} ({stats.files} files, {stats.chunks} chunks{tail})"
    )


def pack_summary(stats: Any) -> str:
    """What ``knowledge pack`` wrote."""
    ratio = f" ({stats.bytes / stats.store_bytes:.0%} of the store)" if stats.store_bytes else ""
    return f"wrote {stats.path}: {stats.bytes:,} bytes{ratio}; {stats.manifest.describe()}"


def hit_json(hit: Any) -> dict[str, Any]:
    """``match_lines``: the lines of the part that matched; ``highlights``: [start, end)
    character ranges of the matched words in ``snippet``; ``match_section``: its heading path."""
    match = hit.match
    project = {"project": hit.project} if hit.project else {}
    return project | {
        "citation": hit.citation,
        "path": hit.path,
        "ordinal": hit.ordinal,
        "section": hit.section,
        "start_line": hit.start_line,
        "end_line": hit.end_line,
        "score": hit.score,
        "retrievers": dict(hit.retrievers),
        "found_by": list(hit.found_by),
        "match_lines": list(match.lines) if match else [hit.start_line, hit.start_line],
        "match_section": match.section if match else hit.section,
        "snippet": match.snippet if match else one_line(hit.text, SNIPPET_CHARS),
        "highlights": [list(r) for r in match.highlights] if match else [],
        "content": hit.content,
        "copies": [
            {
                "citation": a.citation,
                "path": a.path,
                "ordinal": a.ordinal,
                "start_line": a.start_line,
                "end_line": a.end_line,
                "match_lines": list(a.match.lines) if a.match is not None else None,
            }
            for a in hit.copies
        ],
    }


def emphasise(snippet: str, highlights: Any, bold: bool) -> str:
    """The snippet with matched words in bold (ANSI) when ``bold``; plain otherwise. The snippet
    itself never holds control characters (the core strips them)."""
    if not bold or not highlights:
        return snippet
    out, at = [], 0
    for a, b in highlights:
        out += [snippet[at:a], "\x1b[1m", snippet[a:b], "\x1b[22m"]
        at = b
    return "".join([*out, snippet[at:]])


def search_json(result: SearchResult) -> dict[str, Any]:
    """``note``: the core's sentence for the outcome (null when hits need none); ``indexing``:
    the index run going on ({files, total}; total null while it counts), else null;
    ``expansion`` and ``expansion_strings`` when expansion was asked for."""
    from ..knowledge import search_notice  # here: --help never loads the search

    run = result.indexing
    out: dict[str, Any] = {
        "tier": result.tier,
        "status": result.status,
        "note": search_notice(result),
        "indexing": run.as_dict() if run is not None else None,
        "degraded": result.degraded,
        "reason": result.reason,
        "results": [hit_json(h) for h in result.hits],
    }
    if result.expansion is not None:
        out["expansion"] = result.expansion.describe()
        out["expansion_strings"] = list(result.expansion.strings)
    return out


def expansion_text(expansion: Expansion) -> str:
    """The expansion's line on stderr: what it did and the strings it searched beside the
    question."""
    line = f"expansion: {expansion.describe()}"
    if expansion.strings:
        line += "".join(f"\n  + {one_line(s, 160)}" for s in expansion.strings)
    return line


def search_text(result: SearchResult, *, full: bool = False, bold: bool = False) -> str:
    """The answer only (the tier line, and the note of results found during an index run, are
    printed to stderr by the caller: ``search_note``). Without hits, the core's sentence says
    why."""
    from ..knowledge import search_notice

    lines: list[str] = []
    if not result.hits:
        return search_notice(result) or "no results"
    for hit in result.hits:
        if lines:
            lines.append("")
        match = hit.match
        a, b = match.lines if match else (hit.start_line, hit.end_line)
        lines.append(f"{hit.citation}  (lines {a}-{b}, score {hit.score:.2f})")
        section = match.section if match else hit.section
        if section:
            lines.append(f"  Section: {strip_controls(section)}")
        if full:
            lines.extend("  " + ln for ln in strip_controls(hit.text).split("\n"))
        elif match is not None and match.snippet:
            lines.append("  " + emphasise(match.snippet, match.highlights, bold))
        else:
            lines.append("  " + one_line(hit.text or hit.section, SNIPPET_CHARS))
        if hit.copies:
            lines.append("  " + copies_line(hit))
    return "\n".join(lines)


def search_note(result: SearchResult) -> str | None:
    """The note to print beside hits (to stderr): during an index run, that they are the results
    so far; None otherwise (without hits the sentence is the answer: ``search_text``)."""
    from ..knowledge import search_notice

    return search_notice(result) if result.hits else None


def copies_line(hit: Hit, shown: int = 3) -> str:
    """The other copies of a collapsed hit: "Also in 3 files: a.md#2, b.md#2, c.md#2"."""
    files = {a.path for a in hit.copies if a.path != hit.path}
    where = (
        f"{len(files)} {'file' if len(files) == 1 else 'files'}"
        if files
        else f"{len(hit.copies)} more {'place' if len(hit.copies) == 1 else 'places'}"
    )
    cited = [strip_controls(a.citation) for a in hit.copies[:shown]]
    more = f", and {len(hit.copies) - shown} more" if len(hit.copies) > shown else ""
    return f"Also in {where}: {', '.join(cited)}{more}"


def show_json(chunk: CitedChunk) -> dict[str, Any]:
    return {
        "citation": chunk.citation,
        "path": chunk.path,
        "ordinal": chunk.ordinal,
        "section": chunk.section,
        "start_line": chunk.start_line,
        "end_line": chunk.end_line,
        "stale": chunk.stale,
        "current_lines": list(chunk.current_lines) if chunk.current_lines else None,
        "content": chunk.content,
    }


def stale_note(chunk: CitedChunk) -> str:
    if chunk.moved_to:
        a, b = chunk.moved_to
        return f"note: {chunk.path} changed since it was indexed; this text is now at lines {a}-{b}"
    return (
        f"note: {chunk.path} changed since it was indexed and this text is no longer in it; "
        "run `fisk-ai knowledge index`"
    )


def show_text(chunk: CitedChunk) -> str:
    head = f"# {strip_controls(chunk.section)}\n\n" if chunk.section else ""
    return head + strip_controls(chunk.text)


def around_json(chunks: list[CitedChunk], citation: str) -> dict[str, Any]:
    """The cited chunk as ``show --json`` prints it, with its neighbours in ``before`` and
    ``after`` (each the same object), nearest last and first."""
    _, ordinal = parse_citation(citation)
    (cited,) = [c for c in chunks if c.ordinal == ordinal]
    return {
        **show_json(cited),
        "before": [show_json(c) for c in chunks if c.ordinal < ordinal],
        "after": [show_json(c) for c in chunks if c.ordinal > ordinal],
    }


def around_text(chunks: list[CitedChunk], citation: str) -> str:
    """Each chunk under a line naming its citation and lines; the cited one marked."""
    _, ordinal = parse_citation(citation)
    parts = []
    for c in chunks:
        mark = "  <- cited" if c.ordinal == ordinal else ""
        head = f"== {strip_controls(c.citation)} (lines {c.start_line}-{c.end_line}){mark}"
        parts.append(f"{head}\n{show_text(c)}")
    return "\n\n".join(parts)


def _when(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts)) if ts else "-"


def sources_json(settings: Settings, sources: list[Source] | None) -> dict[str, Any]:
    from ..knowledge import Status

    return {
        "tier": tier(settings),
        "status": Status.INDEX_NOT_BUILT if sources is None else Status.OK,
        "sources": [
            {"path": s.path, "title": s.title, "chunks": s.chunks, "indexed_at": s.indexed_at}
            for s in sources or []
        ],
    }


def sources_text(settings: Settings, sources: list[Source] | None) -> str:
    lines: list[str] = []
    if sources is None:
        from ..knowledge import Status

        lines.append(Status.INDEX_NOT_BUILT.sentence)
    elif not sources:
        lines.append("no indexed files")
    else:
        width = max(len(s.path) for s in sources)
        lines.append(f"{'Path':<{width}}  Chunks  Indexed at")
        for s in sources:
            lines.append(f"{strip_controls(s.path):<{width}}  {s.chunks:>6}  {_when(s.indexed_at)}")
    return "\n".join(lines)


def _iec(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def stats_tier(settings: Settings, stats: StoreStats) -> str:
    """The tier line of what ``stats`` read: the index's own vector space and coverage."""
    if settings.embeddings is None:
        return tier(settings)
    from ..knowledge import Coverage, tier_line

    cov = Coverage(stats.vectors, stats.chunks)
    if not stats.model:  # not built, or built lexical-only: vectors are still to be added
        return tier_line(settings.embeddings.model, 0, coverage=cov)
    return tier_line(stats.model, stats.dimension, coverage=cov)


def stats_json(
    settings: Settings, stats: StoreStats, model_files: str | None = None
) -> dict[str, Any]:
    from ..knowledge import Status

    out: dict[str, Any] = {"tier": stats_tier(settings, stats)}
    out.update(stats._asdict())
    out["model_files"] = model_files
    out.update(where_json(settings))
    out["backlog"] = stats.chunks - stats.vectors if stats.model else 0
    out["status"] = Status.OK if stats.built else Status.INDEX_NOT_BUILT
    return out


def stats_text(settings: Settings, stats: StoreStats, model_files: str | None = None) -> str:
    lines = [f"Tier:      {stats_tier(settings, stats)}", *where_lines(settings)]
    if model_files is not None:
        lines.append(f"Model files: {model_files}")
    if not stats.built:
        lines.append("Index:     not built; run `fisk-ai knowledge index`")
        return "\n".join(lines)
    lines += [
        f"Documents: {stats.documents}",
        f"Chunks:    {stats.chunks}",
        f"Vectors:   {stats.vectors}" + _waiting(stats),
    ]
    if settings.embeddings is not None:
        lines += [
            f"Model:     {stats.model or '-'}",
            f"Dimension: {stats.dimension}",
            f"Normalized: {str(stats.normalized).lower()}",
        ]
    lines += [f"DB size:   {_iec(stats.db_bytes)}", f"WAL size:  {_iec(stats.wal_bytes)}"]
    if stats.modified:
        lines.append(f"Modified:  {_when(stats.modified)}")
    return "\n".join(lines)


def _waiting(stats: StoreStats) -> str:
    if not stats.model or stats.vectors >= stats.chunks:
        return ""
    from ..knowledge import Coverage  # not needed by --help or search

    return f" ({Coverage(stats.vectors, stats.chunks).describe()}; the rest is being embedded)"


def doctor_json(settings: Settings, checks: list[Check], broken: bool) -> dict[str, Any]:
    return {
        "tier": tier(settings),
        **where_json(settings),
        "ok": not broken,
        "checks": [
            {"name": c.name, "ok": c.ok, "fatal": c.fatal, "detail": c.detail} for c in checks
        ],
    }


def doctor_text(settings: Settings, checks: list[Check]) -> str:
    lines = [f"Tier:      {tier(settings)}", *where_lines(settings), ""]
    width = max(len(c.name) for c in checks)
    for c in checks:
        mark = "[ok]  " if c.ok else ("[FAIL]" if c.fatal else "[warn]")
        lines.append(f"{c.name:<{width}}  {mark}  {strip_controls(c.detail)}")
    return "\n".join(lines)
