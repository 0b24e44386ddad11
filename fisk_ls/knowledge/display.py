"""How a chunk reads: its breadcrumb, a blank line, its body. Pure.

Its own module so that readers (search, citations, the vector backlog) need not import the
chunker and its block scanner, whose patterns cost start-up time for every search."""

from __future__ import annotations


def display_text(section: str, text: str) -> str:
    """The text a reader sees for a chunk: breadcrumb, blank line, body."""
    return f"{section}\n\n{text}" if section else text
