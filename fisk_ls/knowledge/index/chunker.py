"""Markdown/text → chunks with line spans. Pure: no I/O, no database.

Sections come from the block scanner (``blocks.py``: CommonMark's headings, fences, HTML blocks
and containers); YAML/TOML front matter is not body text: it is read once (``title``,
``description``, ``tags``: front_matter.py), and BOM and CR/CRLF line endings are handled
here.

Packing: blocks of one section are packed up to ``TARGET_CHARS``; a paragraph longer than
``MAX_CHARS`` is split on sentence, then line, then word boundaries; a long fence is split at line
boundaries and every piece is re-wrapped in the opening and closing fence, so each piece is still
a valid code block. Sizes are counted in characters (code points), so a split can never cut a
UTF-8 sequence.

Packing and labels are one algorithm (where a chunk ends and what it is called); the block
scanner is in blocks.py, the front matter in front_matter.py, the cutting of one long block in
split.py.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from ..display import display_text
from . import split
from .blocks import (
    MAX_HEADING_CHARS,
    MAX_LABEL_CHARS,
    Block,
    Heading,
    clean_heading,
    label_text,
    scan,
)
from .front_matter import FrontMatter, front_matter

TARGET_CHARS = 1200
"""Blocks of one section are packed into a chunk until adding the next would pass this."""

MAX_CHARS = 1500
"""No chunk body is longer than this; longer blocks are split."""

MIN_CHARS = 350
"""A chunk smaller than this takes in the next section too (headings are soft boundaries)."""

_COLONS = (":", "：")


@dataclass(frozen=True, slots=True)
class Chunk:
    """One searchable piece of a document.

    ``text`` is the body without the heading breadcrumb; ``section`` the breadcrumb
    ("A > B > C"); ``start_line``/``end_line`` are 1-based and inclusive in the source file, and
    include the section's heading line for the first chunk of a section.
    """

    ordinal: int
    section: str
    text: str
    start_line: int
    end_line: int

    @property
    def content(self) -> str:
        return display_text(self.section, self.text)


@dataclass(frozen=True, slots=True)
class Document:
    title: str
    chunks: list[Chunk]
    description: str = ""
    """The front matter's ``description`` (a one-line summary many doc sites keep)."""
    tags: tuple[str, ...] = ()
    """The front matter's ``tags``, normalised (``settings_checks.normal_tag``): a search
    filter."""
    problem: str = ""
    """What of the front matter could not be read and was dropped ("" when all of it was): the
    index run's note."""


@dataclass(slots=True)
class _Section:
    names: list[str]  # the breadcrumb, outermost first
    heading_line: int  # 0 when the section has no heading (text before the first heading)
    heading_end: int  # last line of the heading (a setext heading spans several)
    blocks: list[Block]
    level: int

    @property
    def path(self) -> str:
        return " > ".join(self.names)


def split_lines(text: str) -> list[str]:
    """Lines of ``text`` with BOM removed and CRLF / lone CR treated as line ends."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _sections(lines: list[str], first: int, title: str) -> list[_Section]:
    stack: list[tuple[int, str]] = []
    events = list(scan(lines, first))
    has_h1 = any(isinstance(e, Heading) and e.level == 1 for e in events)
    root = title if title and not has_h1 else ""
    sections = [_Section([root] if root else [], 0, 0, [], 0)]
    for event in events:
        if isinstance(event, Heading):
            while stack and stack[-1][0] >= event.level:
                stack.pop()
            name = label_text(event.text)
            if name:
                stack.append((event.level, name))
            names = [t for _, t in stack]
            if root:
                names.insert(0, root)
            sections.append(_Section(names, event.start, event.end, [], event.level))
        else:
            sections[-1].blocks.append(event)
    return sections


def headings(text: str) -> list[tuple[int, str, int]]:
    """(level, text, 1-based line) of every heading, as the chunker sees them."""
    lines = split_lines(text)
    skip = front_matter(lines).lines
    return [(e.level, e.text, e.start) for e in scan(lines, skip) if isinstance(e, Heading)]


def chunk_document(text: str) -> Document:
    """Split markdown or plain text into chunks (see the module docstring)."""
    lines = split_lines(text)
    front = front_matter(lines)
    title, chunks = chunk_body(lines, front)
    return Document(
        title=front.title or title,
        chunks=chunks,
        description=front.description,
        tags=front.tags,
        problem=front.problem,
    )


def chunk_body(lines: list[str], front: FrontMatter) -> tuple[str, list[Chunk]]:
    """The chunks of ``lines`` after ``front``, and the title the headings give (the first
    level-1 heading's, else the first heading's). Both depend on nothing but ``body_key``'s
    parts: the lines after the front matter, how many lines it takes and its title."""
    sections = _sections(lines, front.lines, clean_heading(front.title))
    title = next((s.names[-1] for s in sections if s.heading_line and s.level == 1 and s.names), "")
    if not title:
        title = next((s.names[-1] for s in sections if s.heading_line and s.names), "")
    packer = _Packer(lines)
    for section in sections:
        packer.add_section(section)
    packer.flush()
    return title, packer.chunks


def body_key(lines: list[str], front: FrontMatter) -> bytes:
    """A digest of what ``chunk_body`` reads: two documents with the same key have the same
    chunks (versioned documentation repeats a page under new front matter)."""
    h = hashlib.blake2b(f"{front.lines}:{len(front.title)}:{front.title}:".encode(), digest_size=16)
    h.update("\n".join(lines[front.lines :]).encode("utf-8", "surrogatepass"))
    return h.digest()


MIN_INTRO_ROOM = 300
"""A long code block after an introduction ("...add the following:") starts in the
introduction's chunk when at least this much room is left there."""


def _is_intro(block: Block) -> bool:
    """A paragraph ending in a colon introduces the block that follows it."""
    if block.fence is not None or block.heading:
        return False
    last = block.text[-1:]  # asked of every block twice: no copy unless it ends in a space
    if last in _COLONS:
        return True
    return last.isspace() and block.text.rstrip().endswith(_COLONS)


def label(owners: list[list[str]]) -> str:
    """The section label of a chunk holding the sections ``owners`` (breadcrumbs, in order).

    One section: its breadcrumb. Several: their common breadcrumb, then every merged heading
    ("Traces > Context Propagation; Spans"); an ancestor is named by its descendants'
    breadcrumbs ("Cmd > SYNOPSIS; SYNTAX" for [Cmd > SYNOPSIS, Cmd > SYNTAX] and for
    [Cmd, Cmd > SYNOPSIS, Cmd > SYNTAX] alike; "A > B > C" for [A, A > B, A > B > C]).
    """
    distinct = list(dict.fromkeys(tuple(o) for o in owners))
    # An ancestor's text is named by its descendant's breadcrumb: [A, A > B] reads "A > B".
    ancestors = {p[:i] for p in distinct for i in range(len(p))}  # every proper prefix
    distinct = [o for o in distinct if o not in ancestors]
    if not distinct:
        return ""
    prefix = _common_prefix([list(o) for o in distinct])
    if len(distinct) == 1:
        return " > ".join(distinct[0])
    rests = [" > ".join(o[len(prefix) :]) for o in distinct]
    rests = [r for r in rests if r]
    head = " > ".join(prefix)
    text = f"{head} > {'; '.join(rests)}" if head else "; ".join(rests)
    if len(text) > MAX_LABEL_CHARS:
        text = text[: MAX_LABEL_CHARS - 1].rstrip() + "…"
    return text


class _Packer:
    """Packs blocks into chunks. Headings are soft boundaries: a section starts a new chunk
    unless the chunk so far is smaller than ``MIN_CHARS``, so runs of tiny sections (a one-line
    synopsis, parameter stubs) share a chunk instead of each becoming a near-empty one.

    Within a section, a chunk may grow past ``TARGET_CHARS`` (never past ``MAX_CHARS``) when that
    ends it at the section's end, and an introduction ending in ":" moves to the chunk of the
    block it introduces rather than ending a chunk."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.chunks: list[Chunk] = []
        self.parts: list[Block] = []
        self.size = 0
        self.owners: list[list[str]] = []
        self.start = 0  # heading line the open chunk begins at, or 0
        self.first_heading: Block | None = None  # that heading, shown when sections merge
        self.first_names: list[str] = []  # breadcrumb of the first heading in the open chunk

    def add_section(self, section: _Section) -> None:
        blocks = section.blocks
        first = min(len(blocks[0].text), MAX_CHARS) if blocks else 0
        if self.parts and (self.size >= MIN_CHARS or self.size + first + 2 > TARGET_CHARS):
            self.flush()
        if line := section.heading_line:
            end = section.heading_end  # a setext heading spans lines; an ATX heading is one
            heading = self.lines[line - 1] if end == line else "\n".join(self.lines[line - 1 : end])
            whole = len(heading) <= MAX_HEADING_CHARS
            block = Block(
                heading if whole else heading[:MAX_HEADING_CHARS],
                section.heading_line,
                section.heading_end,
                None,
                whole,
                heading=True,
            )
            if self.parts or self.start:
                self._append(block)
            else:
                self.start, self.first_heading = section.heading_line, block
            if not self.first_names:
                self.first_names = section.names
        if blocks:
            # Only sections that bring content name the chunk: "# A" then "## B" + text is "A > B".
            self.owners.append(section.names)
        sizes = [len(b.text) + 2 for b in blocks]
        rest = sum(sizes)
        for block, size in zip(blocks, sizes, strict=True):
            if size - 2 <= MAX_CHARS:  # one piece (most blocks)
                if self.parts and self.size + size > TARGET_CHARS:
                    self._place(block, rest, section)
                else:
                    self.parts.append(block)
                    self.size += size
                rest -= size
                continue
            room = MAX_CHARS - self.size - 2
            intro = bool(self.parts) and _is_intro(self.parts[-1])
            pieces = split.pieces(block, MAX_CHARS, room if intro and room >= MIN_INTRO_ROOM else 0)
            for piece in pieces:
                self._place(piece, rest if len(pieces) == 1 else len(piece.text) + 2, section)
            rest -= size

    def _place(self, piece: Block, rest: int, section: _Section) -> None:
        """Append ``piece``; ``rest`` is what is left of the section from it on."""
        need = len(piece.text) + 2
        if self.parts and self.size + need > TARGET_CHARS:
            intro = _is_intro(self.parts[-1])
            if self.size + rest <= MAX_CHARS or (intro and self.size + need <= MAX_CHARS):
                pass  # finish the section here, or keep an introduction with its block
            else:
                carry = None
                movable = intro and len(self.parts[-1].text) + 2 + need <= MAX_CHARS
                if movable and any(not p.heading for p in self.parts[:-1]):
                    carry = self.parts.pop()
                    self.size -= len(carry.text) + 2
                self.flush()
                self.owners.append(section.names)
                if carry is not None:
                    self._append(carry)
        self._append(piece)

    def _append(self, block: Block) -> None:
        self.parts.append(block)
        self.size += len(block.text) + 2

    def flush(self) -> None:
        if not self.parts and not self.start:
            return
        owners = self.owners
        if owners and owners.count(owners[0]) == len(owners):  # one section: its breadcrumb
            merged, section = False, " > ".join(owners[0])
        else:
            merged = len({tuple(o) for o in owners}) > 1
            section = label(owners) if owners else " > ".join(self.first_names)
        parts = self.parts
        body: str | None = None
        if merged and self.first_heading is not None:
            # The label names every merged section; the text keeps the first one's heading too,
            # unless that would take it past MAX_CHARS (``size`` does not count that heading).
            shown = [self.first_heading, *parts]
            if len(text := self._body(shown)) <= MAX_CHARS:
                parts, body = shown, text
        if body is None:
            body = self._body(parts) if parts else ""
        if not parts:  # a heading with nothing under it: its own (heading-only) chunk
            line = self.start
            self.chunks.append(Chunk(len(self.chunks), section, "", line, line))
        else:
            start = self.start or parts[0].start
            self.chunks.append(
                Chunk(
                    ordinal=len(self.chunks),
                    section=section,
                    text=body,
                    start_line=start,
                    end_line=max(parts[-1].end, start),
                )
            )
        self.parts, self.size, self.owners, self.start = [], 0, [], 0
        self.first_names, self.first_heading = [], None

    def _body(self, parts: list[Block]) -> str:
        """The chunk text of ``parts``: their source lines when all are whole and that fits
        ``MAX_CHARS``, else their texts joined by blank lines."""
        if all(p.whole for p in parts):
            body = "\n".join(self.lines[parts[0].start - 1 : parts[-1].end]).strip("\n")
            if len(body) <= MAX_CHARS:
                return body
        return "\n\n".join(p.text for p in parts)


def _common_prefix(paths: list[list[str]]) -> list[str]:
    if not paths:
        return []
    prefix = paths[0]
    for path in paths[1:]:
        n = 0
        while n < len(prefix) and n < len(path) and prefix[n] == path[n]:
            n += 1
        prefix = prefix[:n]
    return list(prefix)
