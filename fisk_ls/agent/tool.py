"""`knowledge_search`: the one model-facing tool (handler, budget, framing, note; its schemas
are schema.py's).

Any Python agent can use it in-process (``KnowledgeTool(settings).call(args)``); the MCP server
serves it when allowlisted. The answer is JSON ``{tier, status, note?, indexing?, results:
[{citation, section, lines, content}]}`` (``note``: the core's sentence, notices.py). Its
*whole* text — envelope, citations, sections, framing — fits ``max_injected_tokens`` × 4
characters; the last hit that does not fit whole is trimmed at a clean boundary instead of
being dropped, and a huge first hit no longer goes in whole.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..knowledge import (
    CitationError,
    CitedChunk,
    Deadline,
    Knowledge,
    KnowledgeError,
    Project,
    ProjectSet,
    SearchRequest,
    SearchResult,
    SettingError,
    Settings,
    Spelling,
    bounded,
    check_request,
    one_line,
    search_notice,
    shown,
)
from .schema import DESCRIPTION, INPUT_SCHEMA, NAME, OUTPUT_SCHEMA, SYSTEM_NOTE

CHARS_PER_TOKEN = 4
MIN_TRIMMED_CHARS = 120
"""A hit trimmed to fit keeps at least this much text, else it is left out."""

FRAME_OPEN = "<<<untrusted reference data from {citation}>>>\n"
FRAME_CLOSE = "\n<<<end of untrusted reference data>>>"
_FRAME_MARKER = re.compile(r"<<<\s*(end of )?untrusted", re.IGNORECASE)

DEGRADED_NOTE = "the embeddings server was unreachable, so only the lexical tier was used"


class ToolInputError(ValueError):
    """The arguments do not match the input schema."""


FIELDS = ("query", "top_k", "also", "paths", "tags", "context")
"""The tool's arguments: the request's fields of the same names."""

SPELLING = Spelling(**{f: f"`{f}`" for f in FIELDS}, excludes="`paths`")
"""The tool's names of a request's fields, as its messages quote them."""


def parse_args(
    raw: Mapping[str, Any] | str | None,
    root: Path | None = None,
    deadline: Deadline | None = None,
) -> SearchRequest:
    """The request of the tool's arguments, checked as the schema says (also when a client
    does not); an absolute path in ``paths`` inside the project ``root`` is taken relative to
    it (without a ``root``, none may be absolute)."""
    if raw is None or raw == "":
        raw = {}
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ToolInputError(f"invalid {NAME} input: not JSON ({exc.msg})") from exc
    if not isinstance(raw, Mapping):
        raise ToolInputError(f"invalid {NAME} input: expected an object")
    extra = sorted(set(raw) - set(FIELDS))
    if extra:
        raise ToolInputError(f"invalid {NAME} input: unknown field(s) {shown(extra)}")
    try:
        request = check_request(raw, SPELLING, root=root, absolute=False, deadline=deadline)
    except SettingError as exc:
        raise ToolInputError(bounded(f"invalid {NAME} input: {exc}")) from None
    if not request.query.strip():
        raise ToolInputError(f"invalid {NAME} input: `query` must be a non-empty string")
    return request


def trace(raw: Mapping[str, Any] | str | SearchRequest | None) -> str:
    """The one-line call trace shown to an operator (sanitised, capped)."""
    try:
        args = raw if isinstance(raw, SearchRequest) else parse_args(raw)
    except ToolInputError:
        return NAME
    text = f"{NAME}({json.dumps(one_line(args.query, 200), ensure_ascii=False)}"
    if args.also:
        text += f", also={len(args.also)}"
    if args.top_k:
        text += f", top_k={args.top_k}"
    if args.paths:
        shown = list(args.paths)
        text += f", paths={one_line(json.dumps(shown, ensure_ascii=False), 200)}"
    if args.tags:
        text += f", tags={one_line(json.dumps(list(args.tags), ensure_ascii=False), 200)}"
    return text + ")"


def _frame(citation: str, text: str) -> str:
    # A document must not be able to close the frame early and speak as the system.
    safe = _FRAME_MARKER.sub("<<< quoted untrusted", text)
    return FRAME_OPEN.format(citation=citation) + safe + FRAME_CLOSE


def _dumps(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def _trim(text: str, room: int, focus: int = 0) -> str:
    """``text`` cut to at most ``room`` characters at the cleanest boundary available, keeping
    the text from ``focus`` (where the query matched) rather than the start."""
    if len(text) <= room:
        return text
    start = min(max(focus, 0), max(len(text) - room + 2, 0))
    if start > 0:
        return "… " + _trim(text[start:], room - 2)
    cut = text[:room]
    for sep in ("\n\n", "\n", ". ", " "):
        at = cut.rfind(sep)
        if at >= room // 2:
            return cut[: at + (1 if sep == ". " else 0)].rstrip() + " …"
    return cut[: max(room - 2, 0)] + " …"


def _excerpt(citation: str, section: str, lines: str, text: str) -> dict[str, Any]:
    item = {"citation": citation, "section": section, "lines": lines}
    if not section:
        del item["section"]
    return item | {"content": _frame(citation, text)}


def build_outcome(
    result: SearchResult,
    budget_chars: int,
    neighbours: Mapping[str, Sequence[CitedChunk]] | None = None,
    found_by: bool = False,
) -> dict[str, Any]:
    """The tool's JSON object for a search result, within ``budget_chars`` of JSON text;
    ``found_by``: each result says which search strings found it (the call sent ``also``).

    ``neighbours`` (a hit's citation → the chunks around it, as ``Knowledge.around``): each hit
    placed whole is followed by its neighbours, each whole or not at all, in a ``context`` list
    (document order) before the next hit is placed: the budget goes to the best hits' context
    first."""
    out: dict[str, Any] = {"tier": result.tier, "status": result.status}
    notes = [search_notice(result), DEGRADED_NOTE if result.degraded else None]
    if note := "; ".join(n for n in notes if n):
        out["note"] = note
    if result.indexing is not None:
        out["indexing"] = result.indexing.as_dict()
    out["results"] = []
    used = len(_dumps(out))
    for hit in result.hits:
        item: dict[str, Any] = {
            "citation": hit.citation,
            "section": hit.section,
            "lines": f"{hit.start_line}-{hit.end_line}",
            "content": _frame(hit.citation, hit.text),
        }
        if hit.project:
            item["project"] = hit.project
        if not hit.section:
            del item["section"]
        if found_by:
            item["found_by"] = list(hit.found_by)
        size = len(_dumps(item)) + (1 if out["results"] else 0)
        if used + size <= budget_chars:
            out["results"].append(item)
            used += size
            for chunk in (neighbours or {}).get(hit.citation, ()):
                if chunk.citation == hit.citation:
                    continue
                lines = f"{chunk.start_line}-{chunk.end_line}"
                near = _excerpt(chunk.citation, chunk.section, lines, chunk.text)
                before = len(_dumps(item))
                item.setdefault("context", []).append(near)
                grown = len(_dumps(item)) - before
                if used + grown > budget_chars:
                    item["context"].pop()
                    if not item["context"]:
                        del item["context"]
                    break
                used += grown
            continue
        # Trim this hit's text to the room left (JSON escaping can grow text; measure, shrink).
        room = budget_chars - used - (size - len(_dumps(item["content"])))
        text_room = room - len(FRAME_OPEN.format(citation=hit.citation)) - len(FRAME_CLOSE) - 4
        while text_room >= MIN_TRIMMED_CHARS:
            focus = hit.match.offset if hit.match else 0
            item["content"] = _frame(hit.citation, _trim(hit.text, text_room, focus))
            item["truncated"] = True
            size = len(_dumps(item)) + (1 if out["results"] else 0)
            if used + size <= budget_chars:
                out["results"].append(item)
                used += size
                break
            text_room -= max(size - (budget_chars - used), 16)
        break
    return out


class KnowledgeTool:
    """``knowledge_search`` over one project's index, for an agent (in-process or MCP); with
    ``more`` (other projects' settings), over all of them as one: hits merged by score, each
    naming its project (the core's ``ProjectSet``)."""

    def __init__(
        self,
        settings: Settings,
        knowledge: Knowledge | None = None,
        more: Sequence[Settings] = (),
    ) -> None:
        self.settings = settings
        self.project = Project(settings, reader=knowledge)
        self.knowledge = self.project.reader
        self.group = ProjectSet([self.project, *(Project(s) for s in more)]) if more else None
        self.budget_chars = settings.max_injected_tokens * CHARS_PER_TOKEN

    @property
    def projects(self) -> list[Project]:
        """The projects it searches."""
        return self.group.projects if self.group is not None else [self.project]

    def parse(
        self, raw: Mapping[str, Any] | str | None, deadline: Deadline | None = None
    ) -> SearchRequest:
        """The request of the arguments ``raw`` (ToolInputError when they are bad): paths
        relative to the project's root (over several projects, to each one's)."""
        root = None if self.group is not None else self.settings.project_root
        return parse_args(raw, root, deadline)

    def call(
        self, raw: Mapping[str, Any] | str | None, deadline: Deadline | None = None
    ) -> dict[str, Any]:
        """Run the tool; ToolInputError for bad arguments, KnowledgeError for real failures
        (SearchCancelled once ``deadline`` has passed: the search stops where it is)."""
        return self.search(self.parse(raw, deadline))

    def search(self, request: SearchRequest) -> dict[str, Any]:
        """The tool's answer to a checked ``request`` (:meth:`parse`)."""
        if self.group is not None:
            result = self.group.search(request)
        else:
            result = self.project.search(request)
        context = request.context
        neighbours = {
            hit.citation: self._around(hit.citation, context)
            for hit in (result.hits if context else [])
        }
        return build_outcome(result, self.budget_chars, neighbours, found_by=bool(request.also))

    def _around(self, citation: str, context: int) -> list[CitedChunk]:
        try:
            if self.group is not None:
                return self.group.around(citation, context, check_file=False)[1]
            return self.project.read(lambda kn: kn.around(citation, context, check_file=False))
        except CitationError:  # re-indexed since the search: the hit stands alone
            return []

    def call_json(self, raw: Mapping[str, Any] | str | None) -> str:
        return _dumps(self.call(raw))

    def close(self) -> None:
        if self.group is not None:
            self.group.close()
        else:
            self.project.close()


__all__ = [
    "DESCRIPTION",
    "INPUT_SCHEMA",
    "NAME",
    "OUTPUT_SCHEMA",
    "SYSTEM_NOTE",
    "KnowledgeError",
    "KnowledgeTool",
    "ToolInputError",
    "build_outcome",
    "parse_args",
    "trace",
]
