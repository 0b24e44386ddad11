"""Strip terminal control sequences from corpus text before anything prints it.

Documents are untrusted: an ESC sequence in a markdown file must not move the cursor, change the
title, or hide text on the reader's terminal. Tabs and newlines stay.
"""

from __future__ import annotations

import re

# CSI (ESC [ … final), OSC (ESC ] … BEL or ST), other ESC sequences, 8-bit C1 controls, and C0
# controls except tab and newline.
CONTROLS = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"
    r"|\x1b[@-Z\\-_]?"
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]"
)


def strip_controls(text: str) -> str:
    return CONTROLS.sub("", text)


SNIPPET_CHARS = 200
"""The length of a hit's snippet, in characters: the matched part's (match.py) and, for a hit
shown without one, its text on one line (``one_line``) in every front end."""


def one_line(text: str, limit: int) -> str:
    """Controls stripped, whitespace collapsed, cut to ``limit`` characters with an ellipsis."""
    flat = " ".join(strip_controls(text).split())
    return flat if len(flat) <= limit else flat[: max(limit - 3, 0)].rstrip() + "..."


MAX_MESSAGE_CHARS = 1000
"""An error message is cut to this many characters (``bounded``)."""
_LONG_RUN = re.compile(r"\S{301,}")


def bounded(message: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """An error message fit to show whatever input it quotes: each run of over 300 characters
    without a space (a huge value, never a real path or word) becomes its start and its length,
    and a message still over ``limit`` characters keeps its start and its end (where the fix
    is). Every front end passes its errors through this, after quoting values with
    ``settings_checks.shown`` where it builds them."""
    short = _LONG_RUN.sub(
        lambda m: f"{m.group(0)[:40]}... ({len(m.group(0)):,} characters)", message
    )
    if len(short) <= limit:
        return short
    keep = (limit - 5) // 2
    return f"{short[:keep]} ... {short[-keep:]}"
