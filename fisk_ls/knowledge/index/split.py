"""A block too long for one chunk → pieces. Pure.

A paragraph is split on sentence, then line, then word, then character boundaries; a long fence
at line boundaries, every piece re-wrapped in the opening and closing fence so each is still a
valid code block. Sizes are counted in characters (code points), so a split never cuts a UTF-8
sequence.
"""

from __future__ import annotations

import re

from .blocks import Block

_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|(?<=[。！？])")


def pieces(block: Block, limit: int, first_limit: int = 0) -> list[Block]:
    """``block`` cut into pieces of at most ``limit`` characters (a fence's first piece at most
    ``first_limit`` when that is given: it joins an introduction)."""
    if len(block.text) <= limit:
        return [block]
    if block.fence is not None:
        return _split_fence(block, limit, first_limit)
    return _split_text(block, limit)


def _split_text(block: Block, limit: int) -> list[Block]:
    """Split a long paragraph on sentence, then line, then word, then character boundaries."""
    text = block.text
    if len(text) <= limit:
        return [block]
    pieces: list[tuple[int, int]] = []  # (start offset, end offset) in text
    table = all(s.lstrip().startswith("|") for s in text.split("\n"))
    _split_range(text, 0, len(text), limit, 0 if not table else 1, pieces)
    out = []
    for a, b in pieces:
        piece = text[a:b].strip()
        if not piece:
            continue
        lead = len(text[a:b]) - len(text[a:b].lstrip())
        start = block.start + text.count("\n", 0, a + lead)
        end = start + piece.count("\n")
        out.append(Block(piece, start, end, None, False))
    return out


_SPLITTERS: tuple[re.Pattern[str], ...] = (
    _SENTENCE_END,
    re.compile(r"\n"),
    re.compile(r"\s+"),
)


def _split_range(
    text: str, a: int, b: int, limit: int, level: int, out: list[tuple[int, int]]
) -> None:
    if b - a <= limit:
        out.append((a, b))
        return
    if level >= len(_SPLITTERS):
        for s in range(a, b, limit):
            out.append((s, min(s + limit, b)))
        return
    # Greedy: cut at the last boundary of this kind that keeps the piece within the limit.
    pattern = _SPLITTERS[level]
    cuts = [m.end() for m in pattern.finditer(text, a, b)]
    start = a
    pending_end = -1
    for cut in cuts:
        if cut - start <= limit:
            pending_end = cut
            continue
        if pending_end > start:
            out.append((start, pending_end))
            start = pending_end
            if cut - start <= limit:
                pending_end = cut
                continue
        # Even the first boundary is too far: split this stretch with a finer splitter.
        _split_range(text, start, cut, limit, level + 1, out)
        start = cut
        pending_end = -1
    if b - start <= limit:
        out.append((start, b))
    elif pending_end > start:
        out.append((start, pending_end))
        _split_range(text, pending_end, b, limit, level + 1, out)
    else:
        _split_range(text, start, b, limit, level + 1, out)


def _split_fence(block: Block, limit: int, first_limit: int = 0) -> list[Block]:
    """Split a long fenced block at line boundaries; each piece is a complete fence. The first
    piece is at most ``first_limit`` long when that is given (it joins an introduction)."""
    assert block.fence is not None
    opening, closing = block.fence
    lines = block.text.split("\n")
    closed = len(lines) > 1 and lines[-1] == closing
    inner = lines[1:-1] if closed else lines[1:]
    overhead = len(opening) + len(closing) + 2
    full = max(limit - overhead, 40)
    room = max(first_limit - overhead, 40) if first_limit else full
    out: list[Block] = []
    buf: list[str] = []
    size = 0
    first_line = block.start + 1

    def flush() -> None:
        nonlocal buf, size, first_line, room
        if buf:
            text = "\n".join([opening, *buf, closing])
            out.append(Block(text, first_line, first_line + len(buf) - 1, block.fence, False))
            first_line += len(buf)
            buf, size, room = [], 0, full

    for line in inner:
        while len(line) > room:  # a single enormous line: cut it (characters, never bytes)
            flush()
            buf, size = [line[:room]], room
            flush()
            first_line -= 1  # the rest is still on the same source line
            line = line[room:]
        if size + len(line) + 1 > room:
            flush()
        buf.append(line)
        size += len(line) + 1
    flush()
    if out:
        # The first piece starts at the opening fence line, the last ends at the closing one.
        out[0].start = block.start
        out[-1].end = block.end
    return out or [block]
