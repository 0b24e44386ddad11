"""Markdown block scanner: lines → headings and blocks in document order. Pure.

It follows CommonMark's block structure for the parts that decide where sections and chunks
begin and end: ATX headings (``#`` needs a space, closing ``#``s stripped, up to three spaces of
indent), setext headings, fenced code (closes only on the same character with at least the same
length and no info string), indented code, HTML blocks (``<!-- ... -->``, ``<details>`` ...: the
seven kinds of the spec, with their end conditions), and the two containers, list items and
block quotes, whose content (a ``# comment`` in an item, a ``---`` under a quoted line) is never a
top-level heading. Lazy continuation lines stay in their container. It is a line scanner rather
than a full parser because it must be fast (tens of MB per second);
``tests/knowledge/index/test_chunker_commonmark`` checks it against markdown-it-py.

Over 400 lines on purpose: one CommonMark block scanner, one state machine.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import NamedTuple

MAX_HEADING_CHARS = 200
"""Headings longer than this are cut in breadcrumbs (a 5 MB heading line must not travel)."""
MAX_LABEL_CHARS = 400
"""A merged chunk's label (every merged heading) is cut here, and so is a front-matter field."""

_ATTR_SUFFIX = re.compile(r"\s*\{\s*[#.][^{}]*\}\s*$")
_INLINE_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>")
_INLINE_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")
_SPECIAL_START = frozenset(" \t#`~=-+*_>|<0123456789")
# The first characters each kind of line can start with (a space: up to three of indent).
_FENCE_START = frozenset(" `~")
_ATX_START = frozenset(" #")
_SETEXT_START = frozenset(" =-")
_BREAK_START = frozenset(" -*_")
_HTML_START = frozenset(" <")
_QUOTE_START = frozenset(" >")
_ITEM_START = frozenset(" -+*0123456789")
_LIST_ITEM = re.compile(r"([-+*]|[0-9]{1,9}[.)])(?=[ \t]|$)")

_BLOCK_NAMES = (
    "address|article|aside|base|basefont|blockquote|body|caption|center|col|colgroup|dd|"
    "details|dialog|dir|div|dl|dt|fieldset|figcaption|figure|footer|form|frame|frameset|"
    "h1|h2|h3|h4|h5|h6|head|header|hr|html|iframe|legend|li|link|main|menu|menuitem|nav|"
    "noframes|ol|optgroup|option|p|param|search|section|summary|table|tbody|td|tfoot|th|"
    "thead|title|tr|track|ul"
)
_ATTRIBUTE = (
    r"(?:\s+[a-zA-Z_:][a-zA-Z0-9:._-]*"
    r"(?:\s*=\s*(?:[^\"'=<>`\x00-\x20]+|'[^']*'|\"[^\"]*\"))?)"
)
_OPEN_CLOSE_TAG = (
    r"^(?:<[A-Za-z][A-Za-z0-9\-]*" + _ATTRIBUTE + r"*\s*/?>|</[A-Za-z][A-Za-z0-9\-]*\s*>)\s*$"
)
# (start, end, can interrupt a paragraph); an end of None means "a blank line ends it".
_HTML_KINDS: tuple[tuple[re.Pattern[str], re.Pattern[str] | None, bool], ...] = (
    (
        re.compile(r"^<(?:script|pre|style|textarea)(?=\s|>|$)", re.IGNORECASE),
        re.compile(r"</(?:script|pre|style|textarea)>", re.IGNORECASE),
        True,
    ),
    (re.compile(r"^<!--"), re.compile(r"-->"), True),
    (re.compile(r"^<\?"), re.compile(r"\?>"), True),
    (re.compile(r"^<![A-Za-z]"), re.compile(r">"), True),
    (re.compile(r"^<!\[CDATA\["), re.compile(r"\]\]>"), True),
    (re.compile(r"^</?(?:" + _BLOCK_NAMES + r")(?=\s|/?>|$)", re.IGNORECASE), None, True),
    (re.compile(_OPEN_CLOSE_TAG), None, False),
)


class Heading(NamedTuple):
    level: int
    text: str
    start: int
    """1-based first line (a setext heading starts at its first text line)."""
    end: int
    """1-based last line (the underline of a setext heading)."""


@dataclass(slots=True)
class Block:
    text: str
    start: int  # 1-based line numbers, inclusive
    end: int
    fence: tuple[str, str] | None = None  # (opening line, closing line) when a fenced block
    whole: bool = True  # False for a piece of a split block
    heading: bool = False  # a heading line kept in the text of a merged chunk


Event = Heading | Block


def indent(line: str) -> int:
    n = 0
    for ch in line:
        if ch == " ":
            n += 1
        elif ch == "\t":
            n += 4 - n % 4
        else:
            break
    return n


def clean_heading(text: str) -> str:
    """Heading text without its ``{#anchor .class}`` suffix, cut at ``MAX_HEADING_CHARS``."""
    text = text[: MAX_HEADING_CHARS * 4]
    if "{" in text:  # the suffix holds one; most headings have none
        text = _ATTR_SUFFIX.sub("", text)
    return text.strip()[:MAX_HEADING_CHARS]


def label_text(heading: str) -> str:
    """A heading as a breadcrumb shows it: no inline HTML tags (an icon ``<img ...>`` after
    "Processors"), no link targets (``[text](url)`` → text); code spans are kept as written."""
    text = heading
    if "<" in text or "](" in text:
        parts = text.split("`")  # code spans (odd parts) keep their text: `List<String>`
        for i in range(0, len(parts), 2):
            parts[i] = _INLINE_LINK.sub(r"\1", _INLINE_TAG.sub("", parts[i]))
        text = "`".join(parts)
    return " ".join(text.split())


def atx(line: str) -> tuple[int, str] | None:
    """(level, text) when ``line`` is an ATX heading."""
    s = line.lstrip(" ")
    if len(line) - len(s) > 3 or not s.startswith("#"):
        return None
    level = len(s) - len(s.lstrip("#"))
    if level > 6:
        return None
    rest = s[level:]
    if rest and rest[0] not in " \t":
        return None
    rest = _CLOSING_HASHES.sub("", rest.strip(" \t")) if "#" in rest else rest.strip(" \t")
    return level, clean_heading(rest)


def fence_open(line: str) -> tuple[str, int] | None:
    """(char, length) when ``line`` opens a fenced code block."""
    s = line.lstrip(" ")
    if len(line) - len(s) > 3 or not s or s[0] not in "`~":
        return None
    ch = s[0]
    n = len(s) - len(s.lstrip(ch))
    if n < 3:
        return None
    if ch == "`" and "`" in s[n:]:
        return None
    return ch, n


def fence_closes(line: str, ch: str, n: int) -> bool:
    s = line.lstrip(" ")
    if len(line) - len(s) > 3 or not s.startswith(ch * n):
        return False
    return s.rstrip(" \t").strip(ch) == ""


def setext_level(line: str) -> int:
    s = line.strip()
    if len(line) - len(line.lstrip(" ")) > 3 or not s:
        return 0
    if s.strip("=") == "":
        return 1
    if s.strip("-") == "":
        return 2
    return 0


def thematic_break(line: str) -> bool:
    s = line.strip()
    if len(s) < 3 or len(line) - len(line.lstrip(" ")) > 3:
        return False
    ch = s[0]
    bare = s.replace(" ", "").replace("\t", "")
    return ch in "-*_" and bare == ch * len(bare)


class HtmlEnd(NamedTuple):
    pattern: re.Pattern[str] | None
    """The block ends on the line this matches; None: at the next blank line (not included)."""


def html_start(line: str, in_paragraph: bool) -> HtmlEnd | None:
    """How the HTML block that ``line`` opens ends, or None when it opens none."""
    s = line.lstrip(" ")
    if len(line) - len(s) > 3 or not s.startswith("<"):
        return None
    for start, end, interrupts in _HTML_KINDS:
        if start.search(s):
            return HtmlEnd(end) if interrupts or not in_paragraph else None
    return None


def list_item(line: str, in_paragraph: bool) -> int:
    """The content indent of the list item ``line`` opens, or 0."""
    ind = indent(line)
    if ind > 3:
        return 0
    s = line.lstrip(" \t")
    m = _LIST_ITEM.match(s)
    if m is None:
        return 0
    marker = m.group(1)
    rest = s[m.end() :]
    empty = not rest.strip()
    if in_paragraph and (empty or (marker[-1] in ".)" and marker[:-1] != "1")):
        return 0  # cannot interrupt a paragraph
    spaces = indent(rest)
    if empty or spaces > 4:
        spaces = 1
    return ind + len(marker) + spaces


def interrupts(line: str) -> bool:
    """True when ``line`` starts a block that ends an open paragraph (so it is not lazy)."""
    return bool(
        atx(line)
        or fence_open(line)
        or thematic_break(line)
        or (line.lstrip(" ").startswith(">") and indent(line) <= 3)
        or list_item(line, True)
        or html_start(line, True) is not None
    )


def _strip_indent(line: str, width: int) -> str:
    """``line`` without its first ``width`` columns of indentation."""
    col = 0
    for i, ch in enumerate(line):
        if col >= width or ch not in " \t":
            return " " * (col - width) + line[i:]
        col += 4 - col % 4 if ch == "\t" else 1
    return ""


def _quote_content(line: str) -> str | None:
    s = line.lstrip(" ")
    if len(line) - len(s) > 3 or not s.startswith(">"):
        return None
    s = s[1:]
    return s[1:] if s[:1] == " " else s


_LAZY = "\x00lazy"


class _Container:
    """The open list item or block quote and the state of its innermost content."""

    def __init__(self, width: int) -> None:
        self.width = width  # content indent of a list item; 0 for a block quote
        self.paragraph = False
        self.fence: tuple[str, int] | None = None
        self.empty = False  # a list item whose first line has no content yet

    def content(self, line: str) -> str | None:
        """The part of ``line`` inside this container, or None when the line is not in it."""
        blank = not line.strip()
        if self.width:
            if blank:
                if self.empty:
                    return None  # an item may begin with at most one blank line
                self.paragraph = False
                return ""
            self.empty = False
            if indent(line) >= self.width:
                return _strip_indent(line, self.width)
        else:
            inner = _quote_content(line)
            if inner is not None:
                return inner
            if blank:
                return None
        if list_item(line, False):
            return None  # the next item of this list, or a new list: never lazy
        if self.paragraph and self.fence is None and not interrupts(line):
            return _LAZY  # a lazy continuation line: more of the open paragraph
        return None

    def feed(self, content: str) -> None:
        """Track fences and paragraphs inside the container (for lazy continuation)."""
        if content is _LAZY:
            return
        if self.fence is not None:
            if fence_closes(content, *self.fence):
                self.fence = None
            return
        if not content.strip():
            self.paragraph = False
            return
        opened = fence_open(content)
        if opened:
            self.fence, self.paragraph = opened, False
        elif indent(content) >= 4 and not self.paragraph:
            pass  # indented code
        elif atx(content) or thematic_break(content) or (self.paragraph and setext_level(content)):
            self.paragraph = False
        else:
            self.paragraph = True


def scan(lines: list[str], first: int) -> Iterator[Event]:
    """Headings and blocks of ``lines[first:]`` in document order. (An open paragraph is closed
    inline where a line ends it, not through a nested generator: one per blank line was a
    tenth of the scan.)"""
    i = first
    n = len(lines)
    para_start = -1  # index of the first line of the open paragraph, or -1
    container: _Container | None = None

    while i < n:
        line = lines[i]
        if container is not None:
            inner = container.content(line)
            if inner is not None:
                # Inside a list item or block quote: text of the open block, never a heading.
                container.feed(inner)
                if not line.strip() and container.fence is None:
                    if para_start >= 0:  # the open paragraph ends
                        yield Block("\n".join(lines[para_start:i]), para_start + 1, i)
                        para_start = -1
                elif para_start < 0:
                    para_start = i
                i += 1
                continue
            container = None  # the container's text ends; this line is top level
            if para_start >= 0:  # the open paragraph ends
                yield Block("\n".join(lines[para_start:i]), para_start + 1, i)
                para_start = -1
        c = line[:1]
        if c and c not in _SPECIAL_START:
            # The common case: ordinary text starts or continues a paragraph.
            if para_start < 0:
                para_start = i
            i += 1
            continue
        # From here ``c`` is one of _SPECIAL_START (or ""): each test below is asked only of
        # lines whose first character it can accept (a line that starts with anything but a
        # space or tab is not blank, not indented, and has no spaces to strip before its sign).
        spaced = c == " " or c == "\t" or not c
        if spaced and not line.strip():
            if para_start >= 0:  # the open paragraph ends
                yield Block("\n".join(lines[para_start:i]), para_start + 1, i)
                para_start = -1
            i += 1
            continue
        if spaced and indent(line) >= 4:
            if para_start >= 0:  # indented text continues a paragraph (lazy continuation)
                i += 1
                continue
            j = i + 1
            while j < n and (not lines[j].strip() or indent(lines[j]) >= 4):
                j += 1
            while j > i + 1 and not lines[j - 1].strip():
                j -= 1
            yield Block("\n".join(lines[i:j]), i + 1, j)
            i = j
            continue
        fence = fence_open(line) if c in _FENCE_START else None
        if fence:
            if para_start >= 0:  # the open paragraph ends
                yield Block("\n".join(lines[para_start:i]), para_start + 1, i)
                para_start = -1
            ch, length = fence
            marker = ch * length  # a closing line holds it: test that first (most lines fail)
            j = i + 1
            while j < n and (marker not in lines[j] or not fence_closes(lines[j], ch, length)):
                j += 1
            closed = j < n
            end = j + 1 if closed else n
            closing = lines[j] if closed else line.lstrip(" ")[:length]
            yield Block("\n".join(lines[i:end]), i + 1, end, (line, closing))
            i = end
            continue
        heading = atx(line) if c in _ATX_START else None
        if heading:
            if para_start >= 0:  # the open paragraph ends
                yield Block("\n".join(lines[para_start:i]), para_start + 1, i)
                para_start = -1
            yield Heading(heading[0], heading[1], i + 1, i + 1)
            i += 1
            continue
        if para_start >= 0 and c in _SETEXT_START:
            level = setext_level(line)
            if level:
                text = " ".join(s.strip() for s in lines[para_start:i])
                start = para_start
                para_start = -1
                yield Heading(level, clean_heading(text), start + 1, i + 1)
                i += 1
                continue
        if c in _BREAK_START and thematic_break(line):
            if para_start >= 0:  # the open paragraph ends
                yield Block("\n".join(lines[para_start:i]), para_start + 1, i)
                para_start = -1
            i += 1
            continue
        html = html_start(line, para_start >= 0) if c in _HTML_START else None
        if html is not None:
            if para_start >= 0:  # the open paragraph ends
                yield Block("\n".join(lines[para_start:i]), para_start + 1, i)
                para_start = -1
            j = i
            if html.pattern is None:
                while j < n and lines[j].strip():
                    j += 1
            else:
                while j < n and not html.pattern.search(lines[j]):
                    j += 1
                j = min(j + 1, n)
            yield Block("\n".join(lines[i:j]), i + 1, j)
            i = j
            continue
        quoted = _quote_content(line) if c in _QUOTE_START else None
        width = list_item(line, para_start >= 0) if quoted is None and c in _ITEM_START else 0
        if quoted is not None or width:
            # A block quote or list item opens; its lines are one text block (with the
            # paragraph it interrupts, if any) until the container closes.
            container = _Container(width)
            if quoted is None:
                rest = _LIST_ITEM.sub("", line.lstrip(" \t"), count=1)
                quoted = "    " + rest.lstrip(" \t") if indent(rest) > 4 else rest.lstrip(" \t")
            container.feed(quoted)
            container.empty = bool(width) and not quoted.strip()
            if para_start < 0:
                para_start = i
            i += 1
            continue
        if para_start < 0:
            para_start = i
        i += 1
    if para_start >= 0:  # the open paragraph ends
        yield Block("\n".join(lines[para_start:n]), para_start + 1, n)
        para_start = -1
