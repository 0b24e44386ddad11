"""A frozen copy of ``fisk_ls.knowledge.match.locate`` as it was before its speed work
(main at bd65b7b), kept so a property test can prove the faster one gives identical output.

Do not edit to follow changes in match.py: a behaviour change there must show up as a failing
comparison, and then this copy is updated on purpose, in the same commit, with the reason.

Updated on purpose since: ``Match.first_word`` (where the first matched word starts, so editors
land on the word), computed here from the line starts independently of match.py.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from fisk_ls.knowledge.fts import cjk_bigrams, has_cjk
from fisk_ls.knowledge.match import Match, Spot
from fisk_ls.knowledge.sanitize import CONTROLS as _CONTROLS
from tests.support.question import search_terms

Tokenizer = Callable[[str], list[tuple[int, int, str]]]
"""Text → (start byte, end byte, token) in UTF-8 byte offsets, as FTS5 tokenizes documents."""

SNIPPET_CHARS = 200
"""The snippet is about this long: the part's text around its first matched word."""

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_CJK_RUN = re.compile(
    "[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002fa1f]+"
)


@dataclass(frozen=True, slots=True)
class _Part:
    text: str
    first: int  # 0-based line offsets inside the body, inclusive
    last: int
    section: str


def parts(body: str, section: str) -> list[_Part]:
    """Paragraph-like parts of a chunk body. A heading (of a merged section) starts a new
    section path and travels with the paragraph under it; a code fence is one part."""
    lines = body.split("\n")
    out: list[_Part] = []
    names = section.split(" > ") if section else []
    current = section
    buf: list[str] = []
    start = 0
    fence: str | None = None
    heading_only = False  # buf holds a heading (and blank lines) waiting for its paragraph

    def flush(end: int) -> None:
        nonlocal buf, heading_only
        if any(line.strip() for line in buf):
            out.append(_Part("\n".join(buf).rstrip("\n"), start, end, current))
        buf, heading_only = [], False

    for i, line in enumerate(lines):
        if fence is not None:
            buf.append(line)
            if line.strip().startswith(fence):
                fence = None
                flush(i)
                start = i + 1
            continue
        if m := _ATX.match(line):
            flush(i - 1)
            names = _descend(names, len(m.group(1)), m.group(2).strip())
            current = " > ".join(names)
            buf, start, heading_only = [line], i, True
            continue
        if m := _FENCE.match(line):
            if not heading_only:
                flush(i - 1)
                start = i
            fence, heading_only = m.group(1), False
            buf.append(line)
            continue
        if not line.strip():
            if heading_only:
                buf.append(line)
                continue
            flush(i - 1)
            start = i + 1
            continue
        if not buf:
            start = i
        buf.append(line)
        heading_only = False
    flush(len(lines) - 1)
    return out


def _descend(names: list[str], level: int, text: str) -> list[str]:
    """The heading path after a level-``level`` heading: it replaces the entries at its level
    and below (levels of the chunk's own path are taken as 1, 2, …)."""
    keep = min(level - 1, len(names))
    return [*names[:keep], text] if text else names[:keep]


def query_tokens(query: str, tokenize: Tokenizer) -> tuple[set[str], set[str]]:
    """(stemmed tokens, CJK bigrams) of a query, as the index would match them."""
    stems: set[str] = set()
    grams: set[str] = set()
    for term in search_terms(query):  # the terms are an input, not what is compared
        if has_cjk(term):
            grams.update(cjk_bigrams(term))
            continue
        stems.update(token for _, _, token in tokenize(term))
    return stems, grams


def _char_offsets(text: str) -> Callable[[int], int]:
    """Byte offset (UTF-8) → character offset in ``text``."""
    if text.isascii():
        return lambda b: b
    table: dict[int, int] = {}
    at = 0
    for i, ch in enumerate(text):
        table[at] = i
        at += len(ch.encode("utf-8"))
    table[at] = len(text)
    return lambda b: table.get(b, len(text))


def find_terms(
    text: str, stems: set[str], grams: set[str], tokenize: Tokenizer
) -> list[tuple[int, int]]:
    """[start, end) character ranges in ``text`` of words the query's terms match."""
    found: list[tuple[int, int]] = []
    if stems:
        to_char = _char_offsets(text)
        for start, end, token in tokenize(text):
            if token in stems:
                found.append((to_char(start), to_char(end)))
    if grams:
        for run in _CJK_RUN.finditer(text):
            s = run.group(0)
            for i in range(max(len(s) - 1, 1)):
                if s[i : i + 2] in grams or (len(s) == 1 and s in grams):
                    found.append((run.start() + i, run.start() + min(i + 2, len(s))))
    return _merge(found)


def _merge(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for a, b in sorted(ranges):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def locate(
    body: str,
    section: str,
    lines: tuple[int, int],
    query: str | tuple[set[str], set[str]],
    tokenize: Tokenizer,
) -> Match:
    """The best-matching part of a chunk (``body`` under ``section``, source ``lines``).

    ``query`` is the query text, or its ``query_tokens`` (computed once for all hits). The body
    is tokenized once, as the index tokenized it (so what is highlighted is what the index
    matched); parts are then scored by the distinct query words they hold."""
    start_line, end_line = lines
    # The body is the chunk's source lines ending at end_line (headings of merged sections
    # included); clamp in case a split paragraph made it longer than its span.
    body_first = max(start_line, end_line - body.count("\n"))
    stems, grams = query_tokens(query, tokenize) if isinstance(query, str) else query
    found = find_terms(body, stems, grams, tokenize) if stems or grams else []
    candidates = parts(body, section) or [_Part(body, 0, 0, section)]
    line_starts = [0]
    for line in body.split("\n"):
        line_starts.append(line_starts[-1] + len(line) + 1)
    best, best_score, best_ranges = candidates[0], (0, 0), list[tuple[int, int]]()
    for part in candidates:
        a = line_starts[part.first]
        b = a + len(part.text)
        inside = [(x - a, y - a) for x, y in found if a <= x and y <= b]
        score = (len({body[a + x : a + y].casefold() for x, y in inside}), len(inside))
        if score > best_score:
            best, best_score, best_ranges = part, score, inside
    first = min(body_first + best.first, end_line)
    last = min(max(body_first + best.last, first), end_line)
    if not best_ranges and best.first == 0 and start_line < body_first:
        first = start_line  # nothing matched: the section heading above the body
    snippet, highlights = _snippet(best.text, best_ranges)
    words = tuple(dict.fromkeys(snippet[a:b] for a, b in highlights))
    spot = None
    if best_ranges:
        at = line_starts[best.first] + best_ranges[0][0]
        row = bisect.bisect_right(line_starts, at) - 1
        spot = Spot(min(body_first + row, end_line), body[line_starts[row] : at])
    at = line_starts[best.first]
    return Match(
        (first, last), best.section, snippet, highlights, words, at, spot, at + len(best.text)
    )


_SPACES = re.compile(r"\s+")


def _snippet(
    text: str, ranges: Sequence[tuple[int, int]], limit: int = SNIPPET_CHARS
) -> tuple[str, tuple[tuple[int, int], ...]]:
    """Control sequences removed, whitespace collapsed, cut around the first match; ``ranges``
    moved into the result. Works on a window of the text around the first match, piece by
    piece (plain text, matched word, plain text, …), so its cost does not grow with the part."""
    centre = ranges[0][0] if ranges else 0
    lo, hi = max(0, centre - limit), min(len(text), centre + 2 * limit)
    pieces: list[tuple[str, bool]] = []
    at = lo
    for a, b in ranges:
        if a >= at and b <= hi:
            pieces += [(text[at:a], False), (text[a:b], True)]
            at = b
    pieces.append((text[at:hi], False))
    out: list[str] = []
    moved: list[tuple[int, int]] = []
    length = 0
    for piece, matched in pieces:
        piece = _SPACES.sub(" ", _CONTROLS.sub("", piece))
        if piece.startswith(" ") and (not out or out[-1].endswith(" ")):
            piece = piece[1:]
        if matched and piece:
            moved.append((length, length + len(piece)))
        out.append(piece)
        length += len(piece)
    joined = "".join(out).rstrip()
    moved = [(a, min(b, len(joined))) for a, b in moved if a < len(joined)]
    if len(joined) <= limit and lo == 0 and hi == len(text):
        return joined, tuple(moved)
    first = moved[0][0] if moved else 0
    begin = max(0, min(first - limit // 3, len(joined) - limit))
    if begin:
        cut = joined.rfind(" ", 0, begin + 1)
        begin = cut + 1 if cut > begin - 20 else begin
    end = min(len(joined), begin + limit)
    if end < len(joined):
        cut = joined.rfind(" ", begin, end)
        end = cut if cut > end - 30 else end
    lead = "…" if begin or lo else ""
    tail = "…" if end < len(joined) or hi < len(text) else ""
    shift = len(lead) - begin
    kept = tuple((a + shift, b + shift) for a, b in moved if a >= begin and b <= end)
    return lead + joined[begin:end] + tail, kept
