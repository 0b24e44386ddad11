"""Where inside a hit the answer is: the part of a chunk that best matches the query.

A chunk holds up to ~1,500 characters, often several paragraphs and (for merged small sections)
several headings. ``locate`` splits its body into parts (paragraphs, lists, whole code fences,
headings), finds the query's terms in each with the index's own tokenizer (porter stemming, so a
word is highlighted exactly when the index matched it; CJK by the same bigrams the index uses),
and returns the best part's source lines, the heading path it sits under, a snippet around the
matched words and their character ranges in that snippet. A hit no query term reaches (found by
vectors alone) lands on the chunk's first part.

Pure apart from the tokenizer it is given; no database access, no file reads.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from itertools import accumulate
from typing import Any, NamedTuple

from .fts import cjk_bigrams, cjk_runs, has_cjk
from .question import Asked
from .sanitize import CONTROLS as _CONTROLS
from .sanitize import SNIPPET_CHARS
from .schema import FTS_TOKENIZER

Tokenizer = Callable[[str], list[tuple[int, int, str]]]
"""Text → (start byte, end byte, token) in UTF-8 byte offsets, as FTS5 tokenizes documents."""

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")


class Spot(NamedTuple):
    """Where a word starts in the source file."""

    line: int
    """1-based source line."""
    before: str
    """That line's text before the word: its column is this text's length in whatever unit a
    front end counts (code points, UTF-16 code units, UTF-8 bytes)."""


class Match(NamedTuple):
    """Where in a hit's chunk the query matched, and the snippet shown for it."""

    lines: tuple[int, int]
    """1-based, inclusive source lines of the part that matched."""
    section: str
    """Heading path of that part (for a merged chunk: of the merged section it is in)."""
    snippet: str
    """Text around the matched words (control characters removed, whitespace collapsed)."""
    highlights: tuple[tuple[int, int], ...]
    """[start, end) character ranges of matched words in ``snippet``."""
    terms: tuple[str, ...]
    """The matched words as written in the document, each once, in order of appearance."""
    offset: int = 0
    """Character offset in the chunk body where the part that matched starts."""
    first_word: Spot | None = None
    """Where the part's first matched word starts (None when no query word matched). Exact
    when the chunk's text is its source lines, as it is unless a paragraph too long for one
    chunk was split: then it may fall short of the word on its line."""
    end: int = 0
    """Character offset in the chunk body where the part that matched ends (``offset`` to
    ``end`` is its text, trailing newlines dropped)."""


class _Part(NamedTuple):
    """A paragraph-like part of a chunk body (:func:`parts`)."""

    text: str
    first: int  # 0-based line offsets inside the body, inclusive
    last: int
    section: str


def parts(body: str, section: str) -> list[_Part]:
    """Paragraph-like parts of a chunk body. A heading (of a merged section) starts a new
    section path and travels with the paragraph under it; a code fence is one part."""
    lines = body.split("\n")
    before = _lengths_before(lines)
    return [
        _Part(body[before[first] + first : before[last + 1] + last].rstrip("\n"), first, last, name)
        for first, last, name in _spans(lines, section)
    ]


def _lengths_before(lines: list[str]) -> list[int]:
    """For each line (and one past the last), the characters of the lines before it: line ``i``
    starts at ``before[i] + i`` in the text they were split from, and ends at
    ``before[i + 1] + i``."""
    return list(accumulate(map(len, lines), initial=0))


_MAY_OPEN = frozenset(" #`~")  # first characters of a heading or fence line


def _spans(lines: list[str], section: str, until: int | None = None) -> list[tuple[int, int, str]]:
    """The parts of a body split into ``lines`` (see ``parts``) as (first line, last line,
    section), 0-based and inclusive, in order; with ``until``, only those up to the one that
    holds that line. One pass over the lines, no text copied: a part is a run of lines."""
    stop = len(lines) if until is None else until
    out: list[tuple[int, int, str]] = []
    names = section.split(" > ") if section else []
    current = section
    pending = False  # lines start..(this one) belong to a part not yet closed
    start = 0
    fence: str | None = None
    heading_only = False  # the open part holds a heading (and blank lines) waiting for text
    for i, line in enumerate(lines):
        if fence is not None:
            if line.strip().startswith(fence):
                out.append((start, i, current))
                if i >= stop:
                    return out
                fence, pending, start = None, False, i + 1
            continue
        if not line or line.isspace():
            if not heading_only:
                if pending:
                    out.append((start, i - 1, current))
                    if i - 1 >= stop:
                        return out
                    pending = False
                start = i + 1
            continue
        if line[0] in _MAY_OPEN:
            if m := _ATX.match(line):
                if pending:
                    out.append((start, i - 1, current))
                    if i - 1 >= stop:
                        return out
                names = _descend(names, len(m.group(1)), m.group(2).strip())
                current = " > ".join(names)
                pending, start, heading_only = True, i, True
                continue
            if m := _FENCE.match(line):
                if not heading_only:
                    if pending:
                        out.append((start, i - 1, current))
                        if i - 1 >= stop:
                            return out
                    start = i
                fence, heading_only, pending = m.group(1), False, True
                continue
        if not pending:
            start, pending = i, True
        heading_only = False
    if pending:
        out.append((start, len(lines) - 1, current))
    return out


def _descend(names: list[str], level: int, text: str) -> list[str]:
    """The heading path after a level-``level`` heading: it replaces the entries at its level
    and below (levels of the chunk's own path are taken as 1, 2, …)."""
    keep = min(level - 1, len(names))
    return [*names[:keep], text] if text else names[:keep]


def fts_tokenizer(conn: Any) -> Tokenizer:
    """The index's document tokenizer (``schema.FTS_TOKENIZER``) on an apsw connection."""
    import apsw

    name, *args = FTS_TOKENIZER.split()
    tok = conn.fts5_tokenizer(name, args)

    def tokenize(text: str) -> list[tuple[int, int, str]]:
        tokens: list[tuple[int, int, str]] = tok(
            text.encode("utf-8"),
            apsw.FTS5_TOKENIZE_DOCUMENT,
            None,
            include_offsets=True,
            include_colocated=False,
        )
        return tokens

    return tokenize


def query_tokens(query: str, tokenize: Tokenizer) -> tuple[set[str], set[str]]:
    """(stemmed tokens, CJK bigrams) of a query, as the index would match them."""
    return terms_tokens(Asked.of(query).search_terms(), tokenize)


def terms_tokens(terms: Sequence[str], tokenize: Tokenizer) -> tuple[set[str], set[str]]:
    """(stemmed tokens, CJK bigrams) of search terms (``Asked.search_terms``, parsed once:
    query.py), as the index would match them."""
    stems: set[str] = set()
    grams: set[str] = set()
    for term in terms:
        if has_cjk(term):
            grams.update(cjk_bigrams(term))
            continue
        stems.update(token for _, _, token in tokenize(term))
    return stems, grams


def _chars(raw: bytes, offsets: set[int]) -> dict[int, int]:
    """Byte offsets (UTF-8, at character boundaries, as the tokenizer reports) → character
    offsets: the text is decoded once, piece by piece between the offsets in order."""
    out: dict[int, int] = {}
    byte = char = 0
    for offset in sorted(offsets):
        char += len(raw[byte:offset].decode("utf-8"))
        byte, out[offset] = offset, char
    return out


def find_terms(
    text: str, stems: set[str], grams: set[str], tokenize: Tokenizer
) -> list[tuple[int, int]]:
    """[start, end) character ranges in ``text`` of words the query's terms match."""
    found: list[tuple[int, int]] = []
    if stems:
        found = [(start, end) for start, end, token in tokenize(text) if token in stems]
        if found and not text.isascii():
            chars = _chars(text.encode("utf-8"), {at for span in found for at in span})
            found = [(chars[start], chars[end]) for start, end in found]
    if grams and not text.isascii():  # CJK is never ASCII
        for run in cjk_runs().finditer(text):
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
    matched); parts are then scored by the distinct query words they hold (the first of equal
    parts wins; a part without a query word never does)."""
    start_line, end_line = lines
    body_lines = body.split("\n")
    # The body is the chunk's source lines ending at end_line (headings of merged sections
    # included); clamp in case a split paragraph made it longer than its span.
    body_first = max(start_line, end_line - (len(body_lines) - 1))
    stems, grams = query_tokens(query, tokenize) if isinstance(query, str) else query
    found = find_terms(body, stems, grams, tokenize) if stems or grams else []
    # parts after the one holding the last matched word cannot win
    spans = _spans(body_lines, section, body.count("\n", 0, found[-1][0]) if found else 0)
    blank = not spans  # then the whole body is the part, as it is
    before = _lengths_before(body_lines)
    best, best_score = (spans or [(0, 0, section)])[0], (0, 0)
    best_ranges: list[tuple[int, int]] = []
    k, n = 0, len(found)  # found is in order, each range on one line, so in at most one part
    for span in spans:
        if k == n:
            break
        a, b = before[span[0]] + span[0], before[span[1] + 1] + span[1]
        while k < n and found[k][0] < a:
            k += 1
        inside: list[tuple[int, int]] = []
        while k < n and found[k][1] <= b:
            x, y = found[k]
            inside.append((x - a, y - a))
            k += 1
        if inside:
            score = (len({body[a + x : a + y].casefold() for x, y in inside}), len(inside))
            if score > best_score:
                best, best_score, best_ranges = span, score, inside
    first_part, last_part, part_section = best
    first = min(body_first + first_part, end_line)
    last = min(max(body_first + last_part, first), end_line)
    if not best_ranges and first_part == 0 and start_line < body_first:
        first = start_line  # nothing matched: the section heading above the body
    a = before[first_part] + first_part
    text = body if blank else body[a : before[last_part + 1] + last_part].rstrip("\n")
    snippet, highlights = _snippet(text, best_ranges)
    words = tuple(dict.fromkeys(snippet[x:y] for x, y in highlights))
    spot = _spot(body, a + best_ranges[0][0], body_first, end_line) if best_ranges else None
    return Match((first, last), part_section, snippet, highlights, words, a, spot, a + len(text))


def _spot(body: str, at: int, body_first: int, end_line: int) -> Spot:
    """The source line and the text before character ``at`` of ``body`` (whose first line is
    source line ``body_first``) on its line."""
    line_start = body.rfind("\n", 0, at) + 1
    line = min(body_first + body.count("\n", 0, line_start), end_line)
    return Spot(line, body[line_start:at])


_SPACES = re.compile(r"\s+")
_CONTROL_CHAR = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # what every CONTROLS match holds
_OPEN, _CLOSE = "\x00", "\x01"  # marks around matched words, in text without control characters


def _snippet(
    text: str, ranges: Sequence[tuple[int, int]], limit: int = SNIPPET_CHARS
) -> tuple[str, tuple[tuple[int, int], ...]]:
    """Control sequences removed, whitespace collapsed, cut around the first match; ``ranges``
    (in order, disjoint) moved into the result. Works on a window of the text around the first
    match, so its cost does not grow with the part."""
    centre = ranges[0][0] if ranges else 0
    lo, hi = max(0, centre - limit), min(len(text), centre + 2 * limit)
    if _CONTROL_CHAR.search(text, lo, hi) is None:
        joined, moved = _collapse_marked(text, ranges, lo, hi)
    else:
        joined, moved = _collapse_pieces(text, ranges, lo, hi)
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


def _collapse_pieces(
    text: str, ranges: Sequence[tuple[int, int]], lo: int, hi: int
) -> tuple[str, list[tuple[int, int]]]:
    """``text[lo:hi]`` cleaned piece by piece (plain text, matched word, plain text, …), so a
    control sequence never swallows a matched word: the text and the matched words' ranges."""
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
    return "".join(out).rstrip(), moved


def _collapse_marked(
    text: str, ranges: Sequence[tuple[int, int]], lo: int, hi: int
) -> tuple[str, list[tuple[int, int]]]:
    """``_collapse_pieces`` for a window without control characters, in one pass: matched words
    hold no whitespace, so collapsing the whole window with each matched word between two marks
    (control characters, hence absent from the window) gives the same text and ranges."""
    marked: list[str] = []
    at = lo
    for a, b in ranges:
        if b > hi:
            break
        if a >= at:
            marked += [text[at:a], _OPEN, text[a:b], _CLOSE]
            at = b
    marked.append(text[at:hi])
    flat = " ".join("".join(marked).split())  # the leading space goes, as the trailing one will
    moved: list[tuple[int, int]] = []
    pos = flat.find(_OPEN)
    while pos >= 0:
        close = flat.index(_CLOSE, pos)
        shift = 2 * len(moved)
        moved.append((pos - shift, close - shift - 1))
        pos = flat.find(_OPEN, close)
    return flat.replace(_OPEN, "").replace(_CLOSE, ""), moved
